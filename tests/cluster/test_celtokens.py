"""CEL's tokens as cel-go's ANTLR lexer makes them, and its recognition errors (more: test_shardselectors.py)."""
import pytest

from kopf._cluster.store import celtokens as t


def kinds(text: str) -> list[tuple[str, str]]:
    tokens = t.Tokens(text)
    found = []
    while (token := tokens.consume()).type != t.EOF:
        found.append((t.display(token.type), token.text))
    return found


@pytest.mark.parametrize('text, expected', [
    ('in inx', [("'in'", 'in'), ('IDENTIFIER', 'inx')]),
    ('1.5 .5 1e3 1. 0x1fu 7u', [('NUM_FLOAT', '1.5'), ('NUM_FLOAT', '.5'), ('NUM_FLOAT', '1e3'), ('NUM_INT', '1'),
                                ("'.'", '.'), ('NUM_UINT', '0x1fu'), ('NUM_UINT', '7u')]),
    ('0xg', [('NUM_INT', '0'), ('IDENTIFIER', 'xg')]),
    ("'''a'b'''", [('STRING', "'''a'b'''")]),
    ("''", [('STRING', "''")]),
    ("br'x' b", [('BYTES', "br'x'"), ('IDENTIFIER', 'b')]),
    ('a // note\n||`b.c`', [('IDENTIFIER', 'a'), ("'||'", '||'), ('ESC_IDENTIFIER', '`b.c`')]),
])
def test_tokens(text: str, expected: list[tuple[str, str]]) -> None:
    assert kinds(text) == expected


@pytest.mark.parametrize('text, shown', [
    ('a | b', '| '), ('$', '$'), ("'abc", "'abc"), ("'''abc", "'abc"), ("'\\q'", "'\\q"), ("'\\u00'", "'\\u00'"),
    ("'a\nb'", "'a\n"), ('`a', '`a'), ('Σ', 'Σ'),
])
def test_recognition_errors_show_up_to_the_character_no_rule_takes(text: str, shown: str) -> None:
    with pytest.raises(t.LexError) as err:
        kinds(text)
    assert str(err.value) == f"token recognition error at: '{shown}'"


def test_unescaping() -> None:
    assert t.unescape("'a\\tb'") == 'a\tb'
    assert t.unescape('"\\x41\\U0001F600"') == 'A\U0001F600'
    assert t.unescape("r'\\n'") == '\\n'
    assert t.unescape("'''a\r\nb'''") == 'a\nb'
