"""CEL trees as cel-go builds them (the parts a shard selector's parser reads); errors: test_shardselectors.py."""
import pytest

from kopf._cluster.store import celparser
from kopf._cluster.store.celnodes import CALL, IDENT, LIST, LITERAL, MAP, SELECT, STRUCT, CelError, Node


def shape(node: Node) -> object:
    if node.kind == CALL:
        return (node.name, *[shape(a) for a in node.args])
    if node.kind == SELECT:
        return (f'.{node.name}', shape(node.args[0]))
    if node.kind == IDENT:
        return node.name
    if node.kind == LITERAL:
        return (node.gotype, node.value)
    return {LIST: 'list', MAP: 'map', STRUCT: 'struct'}[node.kind]


@pytest.mark.parametrize('text, expected', [
    ('a || b || c', ('_||_', 'a', ('_||_', 'b', 'c'))),
    ('a || b || c || d', ('_||_', ('_||_', 'a', 'b'), ('_||_', 'c', 'd'))),
    ('a && b || c', ('_||_', ('_&&_', 'a', 'b'), 'c')),
    ('a < b == c', ('_==_', ('_<_', 'a', 'b'), 'c')),
    ('a + b * c - d', ('_-_', ('_+_', 'a', ('_*_', 'b', 'c')), 'd')),
    ('a ? b : c ? d : e', ('_?_:_', 'a', 'b', ('_?_:_', 'c', 'd', 'e'))),
    ('!!a', 'a'), ('!a', ('!_', 'a')), ('-a', ('-_', 'a')), ('--a', 'a'),
    ('-1', ('int64', -1)), ('1u', ('uint64', 1)), ('0x1F', ('int64', 31)), ('1.5e1', ('float64', 15.0)),
    ("'\\x41\\101\\u00e9'", ('string', 'AAé')), ("r'\\x41'", ('string', '\\x41')), ('"""a"b"""', ('string', 'a"b')),
    ("b'a'", ('[]uint8', 'a')), ('null', ('structpb.NullValue', None)), ('true', ('bool', True)),
    ('a.b.c', ('.c', ('.b', 'a'))), ('.a.b', ('.b', '.a')), ('a.`b-c`', ('.b-c', 'a')),
    ('f(x, 1)', ('f', 'x', ('int64', 1))), ('x.f(y)', ('f', 'y')), ('a[0]', ('_[_]', 'a', ('int64', 0))),
    ('(a)', 'a'), ('[1, 2,]', 'list'), ('{1: 2}', 'map'), ('a.B{c: 1}', 'struct'), ('a in b', ('@in', 'a', 'b')),
])
def test_trees(text: str, expected: object) -> None:
    assert shape(celparser.parse(text)) == expected


def test_a_member_call_keeps_its_target() -> None:
    node = celparser.parse('x.f(y)')
    assert node.target is not None and node.target.name == 'x'


@pytest.mark.parametrize('text, message', [
    ('if', 'reserved identifier: if'),
    ('9223372036854775808', 'invalid int literal'),
    ('-9223372036854775808', None),
    ('18446744073709551616u', 'invalid uint literal'),
    ('1e999', 'invalid double literal'),
    ("'\\ud800'", 'invalid unicode code point'),
    ("b'\\u0041'", 'unable to unescape string'),
    ('a.?b', "unsupported syntax '.?'"),
    ('a[?b]', "unsupported syntax '[?'"),
    ('[?a]', "unsupported syntax '?'"),
    ('if(9223372036854775808)', 'reserved identifier: if'),       # the visitor's order: the name, then the args
    ('x(9223372036854775808, if)', 'invalid int literal'),
    ('if(', "Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', ')', '.', '-', '!', 'true', 'false', "
            "'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"),   # the syntax's errors come first
])
def test_the_trees_errors_come_after_the_syntax(text: str, message: str | None) -> None:
    if message is None:
        celparser.parse(text)
        return
    with pytest.raises(CelError) as err:
        celparser.parse(text)
    assert str(err.value) == message


def test_the_size_limit() -> None:
    with pytest.raises(CelError, match=r'^expression code point size exceeds limit: size: 100001, limit 100000$'):
        celparser.parse('a' * 100_001)
