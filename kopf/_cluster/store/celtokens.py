"""The tokens of CEL as cel-go's ANTLR lexer makes them (`CEL.g4`), with its failures worded as ANTLR words them.

Longest match wins, the earlier rule on a tie (`in` is `IN`, `inx` an `IDENTIFIER`). A character no rule
can take ends a token: if some rule accepted a prefix, that prefix is the token; if none did, it is
ANTLR's "token recognition error at: '…'" whose text runs from the token's start through the first
character no rule could take (the quote of an unterminated string runs to the end). Whitespace and
`//` comments are hidden tokens: they count in "no viable alternative" texts only.
"""
import dataclasses
from collections.abc import Callable

# Token types (cel-go's parser/gen/CEL.tokens); EOF is -1.
EOF = -1
FIXED = ['==', '!=', 'in', '<', '<=', '>=', '>', '&&', '||', '[', ']', '{', '}', '(', ')', '.', ',', '-', '!', '?',
         ':', '+', '*', '/', '%', 'true', 'false', 'null']   # types 1..28, in this order
TYPE = {text: number for number, text in enumerate(FIXED, start=1)}
(EQUALS, NOT_EQUALS, IN, LESS, LESS_EQUALS, GREATER_EQUALS, GREATER, AND, OR, LBRACKET, RBRACKET, LBRACE, RBRACE,
 LPAREN, RPAREN, DOT, COMMA, MINUS, EXCLAM, QUESTION, COLON, PLUS, STAR, SLASH, PERCENT, TRUE, FALSE,
 NULL) = range(1, 29)
WHITESPACE, COMMENT, NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER, ESC_IDENTIFIER = range(29, 38)
SYMBOLIC = {29: 'WHITESPACE', 30: 'COMMENT', 31: 'NUM_FLOAT', 32: 'NUM_INT', 33: 'NUM_UINT', 34: 'STRING',
            35: 'BYTES', 36: 'IDENTIFIER', 37: 'ESC_IDENTIFIER'}
HIDDEN = frozenset({WHITESPACE, COMMENT})

DIGITS = frozenset('0123456789')
HEX = frozenset('0123456789abcdefABCDEF')
LETTERS = frozenset('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ')
SPACES = frozenset('\t \r\n\f')
ESCAPED_IDENT = LETTERS | DIGITS | frozenset('_./ -')
SIMPLE_ESCAPES = frozenset('abfnrtv"\'\\?`')


class LexError(Exception):
    """The first character sequence no token rule takes: ANTLR's message (without cel-go's prefix)."""


@dataclasses.dataclass(frozen=True)
class Token:
    type: int
    text: str
    index: int   # in the whole token list, hidden ones included


def display(token_type: int) -> str:
    """A token type as ANTLR's expected-token sets print it: `'('`, `IDENTIFIER`, `<EOF>`."""
    if token_type == EOF:
        return '<EOF>'
    return f"'{FIXED[token_type - 1]}'" if token_type <= len(FIXED) else SYMBOLIC[token_type]


def scan(text: str, i: int) -> tuple[int, int]:
    """(type, end) of the token at `i`: the longest match, the earlier rule on a tie; LexError if none."""
    best_type, best_end, furthest = 0, -1, i
    for number, rule in _RULES:
        end, dead = rule(text, i)
        furthest = max(furthest, dead)
        if end > best_end:
            best_type, best_end = number, end
    if best_end > i:
        return best_type, best_end
    raise LexError(f"token recognition error at: '{text[i:furthest + 1]}'")


# Each rule: (end of its longest match or -1, the index of the first character it could not take).

def _fixed(word: str) -> Callable[[str, int], tuple[int, int]]:
    def rule(text: str, i: int) -> tuple[int, int]:
        n = 0
        while n < len(word) and i + n < len(text) and text[i + n] == word[n]:
            n += 1
        return (i + n if n == len(word) else -1), i + n
    return rule


def _run(text: str, i: int, chars: frozenset[str]) -> int:
    while i < len(text) and text[i] in chars:
        i += 1
    return i


def _whitespace(text: str, i: int) -> tuple[int, int]:
    end = _run(text, i, SPACES)
    return (end if end > i else -1), end


def _comment(text: str, i: int) -> tuple[int, int]:
    if not text.startswith('//', i):
        return -1, i + (1 if text.startswith('/', i) else 0)
    end = text.find('\n', i)
    end = len(text) if end < 0 else end
    return end, end


def _exponent(text: str, i: int) -> int:
    """The end of `[eE][+-]?DIGIT+` at i, or -1."""
    if i >= len(text) or text[i] not in 'eE':
        return -1
    j = i + 1 + (1 if i + 1 < len(text) and text[i + 1] in '+-' else 0)
    end = _run(text, j, DIGITS)
    return end if end > j else -1


def _float(text: str, i: int) -> tuple[int, int]:
    digits = _run(text, i, DIGITS)
    fraction = digits if (digits > i or text.startswith('.', i)) and text.startswith('.', digits) else -1
    best = -1
    if fraction >= 0:
        end = _run(text, fraction + 1, DIGITS)
        if end > fraction + 1:
            best = max(end, _exponent(text, end))
    if digits > i:
        best = max(best, _exponent(text, digits))
    return best, max(best, digits)


def _int(text: str, i: int, suffix: bool) -> tuple[int, int]:
    digits = _run(text, i, DIGITS)
    ends = [digits] if digits > i else []
    if text.startswith('0x', i):
        hexes = _run(text, i + 2, HEX)
        ends += [hexes] if hexes > i + 2 else []
    if suffix:
        ends = [end + 1 for end in ends if end < len(text) and text[end] in 'uU']
    return max(ends, default=-1), max(ends + [digits], default=i)


def _escape(text: str, i: int) -> int:
    """The end of the escape sequence at `text[i] == '\\'`, or -(the index where it fails) - 1."""
    nxt = text[i + 1] if i + 1 < len(text) else ''
    if nxt and nxt in SIMPLE_ESCAPES:
        return i + 2
    if nxt and nxt in '0123':
        for k, allowed in ((i + 2, '01234567'), (i + 3, '01234567')):
            if k >= len(text) or text[k] not in allowed:
                return -k - 1
        return i + 4
    width = {'x': 2, 'X': 2, 'u': 4, 'U': 8}.get(nxt, -1)
    if width < 0:
        return -(i + 1) - 1
    for k in range(i + 2, i + 2 + width):
        if k >= len(text) or text[k] not in HEX:
            return -k - 1
    return i + 2 + width


def _quoted(text: str, i: int, raw: bool) -> tuple[int, int]:
    """A string literal's body from its opening quote at i: (end, dead) over the 1- and 3-quote forms."""
    if i >= len(text) or text[i] not in '"\'':
        return -1, i
    quote, best, furthest = text[i], -1, i
    for triple in (False, True):
        opening = quote * (3 if triple else 1)
        if not text.startswith(opening, i):   # the 3-quote form dies at the first non-quote of the three
            furthest = max(furthest, i + _quotes(text, i, quote))
            continue
        j = i + len(opening)
        while True:
            if j >= len(text):
                furthest = max(furthest, j)
                break
            if text.startswith(opening, j):
                best = max(best, j + len(opening))
                break
            if not triple and text[j] in '\n\r':
                furthest = max(furthest, j)
                break
            if text[j] == '\\' and not raw:
                k = _escape(text, j)
                if k < 0:
                    furthest = max(furthest, -k - 1)
                    break
                j = k
                continue
            j += 1
    return best, max(furthest, best)


def _quotes(text: str, i: int, quote: str) -> int:
    """How many of `quote` (at most 3) there are at i."""
    n = 0
    while n < 3 and text.startswith(quote, i + n):
        n += 1
    return n


def _string(text: str, i: int) -> tuple[int, int]:
    plain = _quoted(text, i, raw=False)
    if i < len(text) and text[i] in 'rR':
        raw = _quoted(text, i + 1, raw=True)
        return max(plain[0], raw[0]), max(plain[1], raw[1])
    return plain


def _bytes(text: str, i: int) -> tuple[int, int]:
    if i >= len(text) or text[i] not in 'bB':
        return -1, i
    return _string(text, i + 1)


def _identifier(text: str, i: int) -> tuple[int, int]:
    if i >= len(text) or not (text[i] in LETTERS or text[i] == '_'):
        return -1, i
    end = _run(text, i + 1, LETTERS | DIGITS | {'_'})
    return end, end


def _escaped_identifier(text: str, i: int) -> tuple[int, int]:
    if not text.startswith('`', i):
        return -1, i
    end = _run(text, i + 1, ESCAPED_IDENT)
    if end > i + 1 and text.startswith('`', end):
        return end + 1, end + 1
    return -1, end


_RULES: list[tuple[int, Callable[[str, int], tuple[int, int]]]] = [
    *[(TYPE[word], _fixed(word)) for word in FIXED],
    (WHITESPACE, _whitespace), (COMMENT, _comment), (NUM_FLOAT, _float),
    (NUM_INT, lambda text, i: _int(text, i, suffix=False)), (NUM_UINT, lambda text, i: _int(text, i, suffix=True)),
    (STRING, _string), (BYTES, _bytes), (IDENTIFIER, _identifier), (ESC_IDENTIFIER, _escaped_identifier),
]


class Tokens:
    """The token stream as ANTLR's CommonTokenStream fills it: lazily, so lexer errors come when reached."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.all: list[Token] = []    # every token made so far, hidden ones too
        self.pos = 0                  # in `text`
        self.current = -1             # the index (in `all`) of the current visible token

    def _next_visible(self, after: int) -> int:
        k = after + 1
        while True:
            while k >= len(self.all):
                self._lex()
            if self.all[k].type not in HIDDEN:
                return k
            k += 1

    def _lex(self) -> None:
        if self.all and self.all[-1].type == EOF:
            self.all.append(self.all[-1])
            return
        if self.pos >= len(self.text):
            self.all.append(Token(EOF, '<EOF>', len(self.all)))
            return
        kind, end = scan(self.text, self.pos)
        self.all.append(Token(kind, self.text[self.pos:end], len(self.all)))
        self.pos = end

    def lt(self, k: int = 1) -> Token:
        """The k-th visible token ahead (k=1: the current one)."""
        if self.current < 0:
            self.current = self._next_visible(-1)
        index = self.current
        for _ in range(k - 1):
            if self.all[index].type == EOF:
                break
            index = self._next_visible(index)
        return self.all[index]

    def la(self, k: int = 1) -> int:
        return self.lt(k).type

    def consume(self) -> Token:
        token = self.lt(1)
        if token.type != EOF:
            self.current = self._next_visible(self.current)   # ANTLR fetches the next visible token now
        return token

    def between(self, start: Token, stop: Token) -> str:
        """The text of the tokens from start to stop, hidden ones included (EOF adds nothing)."""
        return ''.join(t.text for t in self.all[start.index:stop.index + 1] if t.type != EOF)


_SIMPLE = {'a': '\a', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v', '\\': '\\', "'": "'",
           '"': '"', '`': '`', '?': '?'}


def unescape(text: str, as_bytes: bool = False) -> str:
    """A string literal's value from its text (quotes, `r` prefix), as cel-go's `unescape`; ValueError as it fails."""
    text = text.replace('\r\n', '\n').replace('\r', '\n')
    raw = text[:1] in ('r', 'R')
    text = text[1:] if raw else text
    quote = 3 if len(text) >= 6 and text[:3] in ("'''", '"""') else 1
    body = text[quote:-quote]
    if raw or '\\' not in body:
        return body
    out, i = [], 0
    while i < len(body):
        if body[i] != '\\':
            out.append(body[i])
            i += 1
            continue
        char, i = _unescape_one(body, i + 1, as_bytes)
        out.append(char)
    return ''.join(out)


def _unescape_one(body: str, i: int, as_bytes: bool) -> tuple[str, int]:
    """One escape after its backslash (the lexer let only well-formed ones through): the character, the next index."""
    c = body[i]
    if c in _SIMPLE:
        return _SIMPLE[c], i + 1
    if c in 'uU' and as_bytes:
        raise ValueError('unable to unescape string')
    width = {'x': 2, 'X': 2, 'u': 4, 'U': 8}.get(c)
    digits, base = (body[i + 1:i + 1 + width], 16) if width else (body[i:i + 3], 8)
    value = int(digits, base)
    if not as_bytes and (0xd800 <= value <= 0xdfff or value > 0x10ffff):
        raise ValueError('invalid unicode code point')
    return chr(value) if value <= 0x10ffff else '\ufffd', i + (1 + width if width else 3)
