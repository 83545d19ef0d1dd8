"""CEL's tokens, as the CEL.g4 grammar of cel-go defines them.

`tokenize(text)` returns `Token`s with code-point offsets; an unrecognised character becomes an `ERROR`
token (ANTLR's "token recognition error"), which the parser reports in cel-go's words.
"""
from __future__ import annotations

import re

# Token kinds (the literal operator text is its own kind).
IDENT = 'IDENTIFIER'
ESC_IDENT = 'ESC_IDENTIFIER'
INT = 'NUM_INT'
UINT = 'NUM_UINT'
FLOAT = 'NUM_FLOAT'
STRING = 'STRING'
BYTES = 'BYTES'
EOF = '<EOF>'
ERROR = 'ERROR'

KEYWORDS = {'true', 'false', 'null', 'in'}

_STR = (r"""(?:[rR](?:'''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\"|'[^'\n\r]*'|"[^"\n\r]*")"""
        r"""|'''(?:\\[\s\S]|(?!''')[\s\S])*'''|\"\"\"(?:\\[\s\S]|(?!\"\"\")[\s\S])*\"\"\""""
        r"""|'(?:\\[\s\S]|[^'\\\n\r])*'|"(?:\\[\s\S]|[^"\\\n\r])*")""")
_EXP = r'[eE][+-]?[0-9]+'
_RULES = [
    ('WS', r'[ \t\r\n\f]+'),
    ('COMMENT', r'//[^\n]*'),
    (BYTES, r'[bB]' + _STR),
    (STRING, _STR),
    (FLOAT, rf'[0-9]+\.[0-9]+(?:{_EXP})?|[0-9]+{_EXP}|\.[0-9]+(?:{_EXP})?'),
    (UINT, r'0x[0-9a-fA-F]+[uU]|[0-9]+[uU]'),
    (INT, r'0x[0-9a-fA-F]+|[0-9]+'),
    (IDENT, r'[A-Za-z_][A-Za-z0-9_]*'),
    (ESC_IDENT, r'`[A-Za-z0-9_.\-/ ]+`'),
    ('OP', r'==|!=|<=|>=|&&|\|\||[<>\[\]{}().,\-!?:+*/%]'),
]
_MASTER = re.compile('|'.join(f'(?P<{name}>{pattern})' for name, pattern in _RULES))


class Token:
    __slots__ = ('kind', 'offset', 'text')

    def __init__(self, kind: str, text: str, offset: int) -> None:
        self.kind = kind
        self.text = text
        self.offset = offset

    def __repr__(self) -> str:
        return f'Token({self.kind}, {self.text!r}, {self.offset})'


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        m = _MASTER.match(text, pos)
        if m is None:
            tokens.append(Token(ERROR, text[pos], pos))
            pos += 1
            continue
        kind = m.lastgroup
        value = m.group()
        if kind == 'OP' or (kind == IDENT and value in KEYWORDS):
            tokens.append(Token(value, value, pos))
        elif kind not in ('WS', 'COMMENT'):
            assert kind is not None
            tokens.append(Token(kind, value, pos))
        pos = m.end()
    tokens.append(Token(EOF, '<EOF>', len(text)))
    return tokens
