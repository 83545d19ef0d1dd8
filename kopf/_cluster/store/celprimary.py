"""CEL's `primary` rule (identifiers, calls, parentheses, lists, maps, messages, literals) for `celparser`.

As cel-go's ANTLR parser decides it: an identifier followed by `.name` links up to a `{` is a message,
else an identifier (whose selections the member rule takes); `(` after it makes a global call. The
literals' values are unescaped and range-checked as cel-go's visitor does it, after the syntax.
"""
from collections.abc import Callable
from typing import Any, Protocol

from kopf._cluster.store import celnodes as n
from kopf._cluster.store import celtokens as t
from kopf._cluster.store.celnodes import CelError, Follow, Node

LITERALS = frozenset({t.MINUS, t.NUM_INT, t.NUM_UINT, t.NUM_FLOAT, t.STRING, t.BYTES, t.TRUE, t.FALSE, t.NULL})
ENDED: Follow = (frozenset(), True)   # what follows the end of `primary` is what follows it in `member`
FIELD_START = frozenset({t.QUESTION, t.IDENTIFIER, t.ESC_IDENTIFIER})
INT64 = 1 << 63


class Rules(Protocol):
    """What the primary rule uses of `celparser`'s parser: its tokens, its error reporting, the other rules."""

    tokens: t.Tokens
    later: list[str]

    def sync(self, expected: frozenset[int]) -> None: ...
    def match(self, kind: int, after: Follow) -> t.Token: ...
    def no_viable(self, start: t.Token, stop: t.Token) -> CelError: ...
    def call(self, follow: Follow, rule: Callable[..., Any], *args: Any) -> Any: ...
    def expr(self) -> Node: ...
    def arguments(self, after: Follow) -> tuple[Node, ...]: ...
    def escaped_ident(self) -> str: ...


def primary(p: Rules) -> Node:
    p.sync(n.MEMBER_START)
    kind = p.tokens.la()
    if kind in (t.DOT, t.IDENTIFIER):
        at = 2 if kind == t.DOT else 1
        if p.tokens.la(at) != t.IDENTIFIER:
            raise p.no_viable(p.tokens.lt(), p.tokens.lt(at))
        nxt = p.tokens.la(at + 1)
        if nxt == t.LPAREN:
            return _global_call(p)
        k = at + 1
        while p.tokens.la(k) == t.DOT and p.tokens.la(k + 1) == t.IDENTIFIER:
            k += 2
        return _message(p) if p.tokens.la(k) == t.LBRACE else _ident(p)
    if kind == t.LPAREN:
        p.tokens.consume()
        inner: Node = p.call((frozenset({t.RPAREN}), False), p.expr)
        p.match(t.RPAREN, ENDED)
        return inner
    if kind == t.LBRACKET:
        return _list(p)
    if kind == t.LBRACE:
        return _map(p)
    return _literal(p)


def _name(p: Rules) -> str:
    p.sync(frozenset({t.DOT, t.IDENTIFIER}))
    dot = '.' if p.tokens.la() == t.DOT and p.tokens.consume() else ''
    name = p.tokens.consume().text
    if name in n.RESERVED:
        p.later.append(f'reserved identifier: {name}')
    return dot + name


def _ident(p: Rules) -> Node:
    return Node(n.IDENT, _name(p))


def _global_call(p: Rules) -> Node:
    name = _name(p)
    p.tokens.consume()
    return Node(n.CALL, name, p.arguments(ENDED))


def _list(p: Rules) -> Node:
    p.tokens.consume()
    p.sync(n.EXPR_START | {t.QUESTION, t.COMMA, t.RBRACKET})
    items = []
    if p.tokens.la() in n.EXPR_START | {t.QUESTION}:
        items.append(_optional(p, (frozenset({t.COMMA, t.RBRACKET}), False)))
        while p.tokens.la() == t.COMMA and p.tokens.la(2) in n.EXPR_START | {t.QUESTION}:
            p.tokens.consume()
            items.append(_optional(p, (frozenset({t.COMMA, t.RBRACKET}), False)))
    _closing(p, t.RBRACKET)
    return Node(n.LIST, args=tuple(items))


def _optional(p: Rules, follow: Follow) -> Node:
    """An element that may be marked optional (`?x`): optional syntax is not enabled, an error once it is parsed."""
    p.sync(n.EXPR_START | {t.QUESTION})
    optional = p.tokens.la() == t.QUESTION and bool(p.tokens.consume())
    node: Node = p.call(follow, p.expr)
    if optional:
        p.later.append("unsupported syntax '?'")
    return node


def _closing(p: Rules, kind: int) -> None:
    """An optional trailing comma, then the closing bracket or brace."""
    p.sync(frozenset({t.COMMA, kind}))
    if p.tokens.la() == t.COMMA:
        p.tokens.consume()
    p.match(kind, ENDED)


def _map(p: Rules) -> Node:
    p.tokens.consume()
    p.sync(n.EXPR_START | {t.QUESTION, t.COMMA, t.RBRACE})
    entries = []
    while p.tokens.la() in n.EXPR_START | {t.QUESTION}:
        p.sync(n.EXPR_START | {t.QUESTION})
        if p.tokens.la() == t.QUESTION:
            p.tokens.consume()
            p.later.append("unsupported syntax '?'")
        entries.append(p.call((frozenset({t.COLON}), False), p.expr))
        p.match(t.COLON, (n.EXPR_START, False))
        entries.append(p.call((frozenset({t.COMMA, t.RBRACE}), False), p.expr))
        if not (p.tokens.la() == t.COMMA and p.tokens.la(2) in n.EXPR_START | {t.QUESTION}):
            break
        p.tokens.consume()
    _closing(p, t.RBRACE)
    return Node(n.MAP, args=tuple(entries))


def _message(p: Rules) -> Node:
    name = _name(p)
    p.sync(frozenset({t.DOT, t.LBRACE}))
    while p.tokens.la() == t.DOT:
        p.tokens.consume()
        name += '.' + p.match(t.IDENTIFIER, (frozenset({t.DOT, t.LBRACE}), False)).text
        p.sync(frozenset({t.DOT, t.LBRACE}))
    p.match(t.LBRACE, (FIELD_START | {t.COMMA, t.RBRACE}, False))
    p.sync(FIELD_START | {t.COMMA, t.RBRACE})
    values = []
    while p.tokens.la() in FIELD_START:
        p.sync(FIELD_START)
        if p.tokens.la() == t.QUESTION:
            p.tokens.consume()
            p.later.append("unsupported syntax '?'")
        p.call((frozenset({t.COLON}), False), p.escaped_ident)
        p.match(t.COLON, (n.EXPR_START, False))
        values.append(p.call((frozenset({t.COMMA, t.RBRACE}), False), p.expr))
        if not (p.tokens.la() == t.COMMA and p.tokens.la(2) in FIELD_START):
            break
        p.tokens.consume()
    _closing(p, t.RBRACE)
    return Node(n.STRUCT, name, tuple(values))


def _literal(p: Rules) -> Node:
    p.sync(LITERALS)
    first = p.tokens.lt()
    sign = ''
    if first.type == t.MINUS:
        if p.tokens.la(2) not in (t.NUM_INT, t.NUM_FLOAT):
            raise p.no_viable(first, p.tokens.lt(2))
        sign = p.tokens.consume().text
    token = p.tokens.consume()
    text = sign + token.text
    if token.type == t.NUM_INT:
        return _number(p, text.replace('0x', '', 1), 16 if '0x' in text else 10, -INT64, INT64, 'int64')
    if token.type == t.NUM_UINT:
        body = text[:-1]
        return _number(p, body.replace('0x', '', 1), 16 if '0x' in body else 10, 0, 2 * INT64, 'uint64')
    if token.type == t.NUM_FLOAT:
        value = float(text)
        if value in (float('inf'), float('-inf')):
            p.later.append('invalid double literal')
        return Node(n.LITERAL, value=value, gotype='float64')
    if token.type in (t.STRING, t.BYTES):
        as_bytes = token.type == t.BYTES
        return Node(n.LITERAL, value=_unescape(p, token.text[1:] if as_bytes else token.text, as_bytes),
                    gotype='[]uint8' if as_bytes else 'string')
    if token.type == t.NULL:
        return Node(n.LITERAL, value=None, gotype='structpb.NullValue')
    return Node(n.LITERAL, value=token.type == t.TRUE, gotype='bool')


def _number(p: Rules, text: str, base: int, low: int, high: int, gotype: str) -> Node:
    value = int(text, base)
    if not low <= value < high:
        p.later.append(f'invalid {gotype[:-2]} literal')
    return Node(n.LITERAL, value=value, gotype=gotype)


def _unescape(p: Rules, text: str, as_bytes: bool) -> str:
    """cel-go's `unescape` of a string literal's text (quotes included); its errors come after the syntax's."""
    try:
        return t.unescape(text, as_bytes)
    except ValueError as exc:
        p.later.append(str(exc))
        return text

