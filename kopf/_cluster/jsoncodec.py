"""The emulator's JSON: the runtime's one codec (`kopf._shared.encoding`: orjson when installed), bounded.

Nesting is bounded: `MAX_DEPTH` levels per object, so that every object the server keeps can also be
sent inside its wrappers (watch events, lists, Tables, admission reviews, state snapshots), which
orjson's encoder allows up to 254 levels in all.
"""
from typing import Any

from kopf._shared import encoding
from kopf._shared.encoding import fast, loads

MAX_DEPTH = 200   # levels of nesting of one object (a real API server parses up to 10000)


#: What Go's encoding/json escapes in strings beyond JSON's needs (HTML-safe, and JavaScript line separators).
GO_ESCAPES = ((b'<', b'\\u003c'), (b'>', b'\\u003e'), (b'&', b'\\u0026'),
              ('\u2028'.encode(), b'\\u2028'), ('\u2029'.encode(), b'\\u2029'))


def dumps(obj: Any) -> bytes:
    """Compact JSON bytes, escaped as kube-apiserver's (Go's) encoder escapes them: `<` is `\\u003c`, etc.

    These bytes occur only inside strings, so a replacement over the whole text is exact (and at C speed).
    """
    return go_escaped(encoding.dumps(obj))


def go_escaped(data: bytes) -> bytes:
    """JSON bytes with what Go escapes (and JSON does not need) escaped."""
    for raw, escaped in GO_ESCAPES[:3] if b'\xe2' not in data else GO_ESCAPES:   # E2: U+2028/9's first byte
        if raw in data:
            data = data.replace(raw, escaped)
    return data


class TooDeep(ValueError):
    """An object nests deeper than `MAX_DEPTH` levels."""


def dumps_kept(obj: Any) -> bytes:
    """`dumps()` of an object about to be stored; raises `TooDeep` instead of keeping what cannot be sent."""
    try:
        data = dumps(obj)
    except (TypeError, RecursionError, ValueError):   # "Recursion limit reached" (else bad strings: re-raised)
        if nests_deeper(obj):
            raise TooDeep() from None
        raise
    if may_nest_deeper(data) and nests_deeper(obj):
        raise TooDeep()
    return data


def may_nest_deeper(data: bytes) -> bool:
    """A quick bound (at C speed): JSON with fewer brackets than `MAX_DEPTH` cannot nest deeper than that."""
    return data.count(b'{') + data.count(b'[') > MAX_DEPTH


def nests_deeper(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether a JSON-like value nests deeper than `limit` levels (`{"a": 1}` is one level); not recursive."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if level > limit:
            return True
        stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return False


__all__ = ['MAX_DEPTH', 'TooDeep', 'clone', 'dumps', 'dumps_kept', 'fast', 'go_escaped', 'loads', 'may_nest_deeper',
           'nests_deeper']


def clone(obj: Any) -> Any:
    """A deep copy of a JSON-compatible value, through the JSON codec (not `copy.deepcopy`)."""
    return loads(dumps(obj))
