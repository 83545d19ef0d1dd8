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
    """The tokens; an unrecognised input becomes an ERROR token carrying ANTLR's text for it, and lexing
    resumes after the character where the lexer failed (as ANTLR's lexer recovers)."""
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        m = _MASTER.match(text, pos)
        if m is None:
            fail = failure(text, pos)
            tokens.append(Token(ERROR, text[pos:fail + 1], pos))
            pos = fail + 1
            continue
        kind = m.lastgroup
        value = m.group()
        if kind in (STRING, BYTES) and not valid_escapes(value):
            fail = failure(text, pos)
            tokens.append(Token(ERROR, text[pos:fail + 1], pos))
            pos = fail + 1
            continue
        if kind == 'OP' or (kind == IDENT and value in KEYWORDS):
            tokens.append(Token(value, value, pos))
        elif kind not in ('WS', 'COMMENT'):
            assert kind is not None
            tokens.append(Token(kind, value, pos))
        pos = m.end()
    tokens.append(Token(EOF, '<EOF>', len(text)))
    return tokens


ESCAPES = set('abfnrtv"\'?`\\')
HEX = set('0123456789abcdefABCDEF')


def failure(text: str, pos: int) -> int:
    """Where ANTLR's lexer fails when no token matches at `pos` (the index of the offending character)."""
    ch = text[pos]
    if ch in '=&|':
        return min(pos + 1, len(text) - 1) if pos + 1 < len(text) else pos
    start = pos
    if ch in 'rRbB' and pos + 1 < len(text) and text[pos + 1] in '"\'':
        raw = ch in 'rR'
        pos += 1
    else:
        raw = False
    if text[pos] not in '"\'':
        return start if ch not in '`' else escaped_ident_failure(text, pos)
    return string_failure(text, pos, raw)


def string_failure(text: str, pos: int, raw: bool) -> int:
    quote = text[pos]
    triple = text.startswith(quote * 3, pos)
    i = pos + (3 if triple else 1)
    while i < len(text):
        c = text[i]
        if triple and text.startswith(quote * 3, i):
            return i
        if not triple and (c == quote):
            return i
        if not triple and c in '\r\n':
            return i
        if c == '\\' and not raw:
            end = escape_end(text, i)
            if end is None:
                return min(i + 1, len(text) - 1) if i + 1 < len(text) else len(text)
            i = end
            continue
        i += 1
    return len(text)


def escape_end(text: str, i: int) -> int | None:
    """The index after a valid escape at `i` (a backslash), or None if it is not one."""
    nxt = text[i + 1:i + 2]
    if nxt in ESCAPES and nxt:
        return i + 2
    widths = {'x': 2, 'X': 2, 'u': 4, 'U': 8}
    if nxt in widths:
        digits = text[i + 2:i + 2 + widths[nxt]]
        return i + 2 + len(digits) if len(digits) == widths[nxt] and set(digits) <= HEX else None
    if nxt in '0123' and nxt:
        digits = text[i + 2:i + 4]
        return i + 4 if len(digits) == 2 and set(digits) <= set('01234567') else None
    return None


def escaped_ident_failure(text: str, pos: int) -> int:
    i = pos + 1
    while i < len(text) and (text[i].isalnum() or text[i] in '_.-/ '):
        i += 1
    return min(i, len(text) - 1) if i < len(text) else len(text)


def valid_escapes(literal: str) -> bool:
    body = literal.lstrip('bB')
    if body[:1] in 'rR':
        return True
    i = 0
    while i < len(body):
        if body[i] == '\\':
            end = escape_end(body, i)
            if end is None:
                return False
            i = end
        else:
            i += 1
    return True
