"""CEL string and bytes literals decoded as cel-go's `parser/unescape.go` does, with its error texts."""
from __future__ import annotations

SIMPLE = {'a': '\a', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v', '\\': '\\',
          "'": "'", '"': '"', '`': '`', '?': '?'}
HEX = '0123456789abcdefABCDEF'


def unescape(value: str, is_bytes: bool) -> str:
    """The literal's text (quotes and prefixes included) decoded; bytes come back as latin-1 text."""
    value = value.replace('\r\n', '\n').replace('\r', '\n')
    if len(value) < 2:
        raise ValueError('unable to unescape string')
    raw = value[0] in 'rR'
    if raw:
        value = value[1:]
    n = len(value)
    if value[0] != value[-1] or value[0] not in '"\'':
        raise ValueError('unable to unescape string')
    if n >= 6 and (value.startswith("'''") or value.startswith('"""')):
        if not value.endswith(value[:3]):
            raise ValueError('unable to unescape string')
        value = '"' + value[3:-3] + '"'
    value = value[1:-1]
    if raw or '\\' not in value:
        return value.encode().decode('latin-1') if is_bytes else value
    out: list[str] = []
    i = 0
    while i < len(value):
        ch = value[i]
        if ch != '\\':
            out.append(ch.encode().decode('latin-1') if is_bytes else ch)
            i += 1
            continue
        text, i = escape_at(value, i + 1, is_bytes)
        out.append(text)
    return ''.join(out)


def escape_at(value: str, i: int, is_bytes: bool) -> tuple[str, int]:
    if i >= len(value):
        raise ValueError("unable to unescape string, found '\\' as last character")
    c = value[i]
    i += 1
    if c in SIMPLE:
        return SIMPLE[c], i
    if c in 'xXuU':
        width = {'x': 2, 'X': 2, 'u': 4, 'U': 8}[c]
        if is_bytes and c in 'uU':
            raise ValueError('unable to unescape string')
        digits = value[i:i + width]
        if len(digits) < width or any(d not in HEX for d in digits):
            raise ValueError('unable to unescape string')
        code = int(digits, 16)
        if is_bytes:
            return chr(code), i + width
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            raise ValueError('invalid unicode code point')
        return chr(code), i + width
    if c in '0123':
        digits = value[i:i + 2]
        if len(digits) < 2 or any(d not in '01234567' for d in digits):
            raise ValueError('unable to unescape octal sequence in string')
        code = int(c + digits, 8)
        if not is_bytes and 0xD800 <= code <= 0xDFFF:
            raise ValueError('invalid unicode code point')
        return chr(code), i + 2
    raise ValueError('unable to unescape string')
