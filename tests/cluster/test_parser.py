"""The CEL parser: trees (as `nodes.debug` renders them), macros, and syntax errors in ANTLR's words
(the error texts checked against cel-go v0.26 as kube-apiserver 1.34 runs it)."""
import pytest

from kopf._cluster.cel import nodes, parser

TREES = [
    ('a && b && c && d', '_&&_(_&&_(a, b), _&&_(c, d))'),
    ('a || b && c', '_||_(a, _&&_(b, c))'),
    ('1 + 2 * 3 - 4', '_-_(_+_(1, _*_(2, 3)), 4)'),
    ('a < b == c', '_==_(_<_(a, b), c)'),
    ('-1', '-1'), ('--1', '1'), ('-x', '-_(x)'), ('!!x', 'x'), ('!x', '!_(x)'),
    ('a ? b : c ? d : e', '_?_:_(a, b, _?_:_(c, d, e))'),
    ('a.b.c', 'a.b.c'), ('a[0]', '_[_](a, 0)'), ('a.f(1, 2)', 'a.f(1, 2)'), ('f()', 'f()'),
    ('has(a.b)', 'a.b~test-only~'), ('a.?b', "_?._(a, 'b')"), ('a[?0]', '_[?_](a, 0)'),
    ('[1, 2]', '[1, 2]'), ('1u', '1u'), ('0x10', '16'), ('1.5e3', '1500.0'), ("'\\x41'", "'A'"),
    ("b'\\xff'", "b'\\xff'"), ("r'\\n'", "'\\\\n'"), ('x in [1]', '@in(x, [1])'),
    ('a.`b.c`', 'a.b.c'),
]


@pytest.mark.parametrize('text, tree', TREES)
def test_trees(text: str, tree: str) -> None:
    expr, _, issues = parser.parse(text)
    assert not issues
    assert nodes.debug(expr) == tree


@pytest.mark.parametrize('text', ['l.all(x, x > 0)', 'l.exists(x, x)', 'l.exists_one(x, x)', 'l.map(x, x)',
                                  'l.map(x, x > 0, x)', 'l.filter(x, x)', 'm.all(k, v, v)', 'l.existsOne(x, x)',
                                  'l.transformList(i, v, v)', 'm.transformMap(k, v, v)', 'o.optMap(x, x)'])
def test_macros_become_comprehensions(text: str) -> None:
    expr, _, issues = parser.parse(text)
    assert not issues
    assert 'comprehension' in nodes.debug(expr) or expr.kind == nodes.CALL


ERRORS = [
    ('1 +', "ERROR: <input>:1:4: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', "
            "'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | 1 +\n | ...^"),
    ('(a', "ERROR: <input>:1:3: Syntax error: missing ')' at '<EOF>'\n | (a\n | ..^"),
    ('a b', "ERROR: <input>:1:3: Syntax error: extraneous input 'b' expecting <EOF>\n | a b\n | ..^"),
    ('a # b', "ERROR: <input>:1:3: Syntax error: token recognition error at: '#'\n | a # b\n | ..^\n"
              "ERROR: <input>:1:5: Syntax error: extraneous input 'b' expecting <EOF>\n | a # b\n | ....^"),
    ('a.', "ERROR: <input>:1:3: Syntax error: no viable alternative at input '.'\n | a.\n | ..^"),
    ('var', "ERROR: <input>:1:1: reserved identifier: var\n | var\n | ^"),
    ('l.all(1, x)', "ERROR: <input>:1:7: argument must be a simple name\n | l.all(1, x)\n | ......^"),
    ('has(a)', "ERROR: <input>:1:5: invalid argument to has() macro\n | has(a)\n | ....^"),
    ("'\\z'", "ERROR: <input>:1:1: Syntax error: token recognition error at: ''\\z'\n | '\\z'\n | ^\n"
              "ERROR: <input>:1:4: Syntax error: token recognition error at: '''\n | '\\z'\n | ...^\n"
              "ERROR: <input>:1:5: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', "
              "'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | '\\z'\n | ....^"),
]


@pytest.mark.parametrize('text, error', ERRORS)
def test_syntax_errors(text: str, error: str) -> None:
    _, _, issues = parser.parse(text)
    assert str(issues) == error


def test_wide_characters_are_marked_wide() -> None:
    _, _, issues = parser.parse('"ä" +')
    assert str(issues).endswith(' | "ä" +\n | .\uff0e...^')   # a FULLWIDTH FULL STOP under the wide letter
