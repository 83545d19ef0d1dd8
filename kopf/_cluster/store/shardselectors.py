"""Shard selectors (`shardSelector=`, Kubernetes 1.36+, feature gate `ShardedListAndWatch`), as in kube-apiserver 1.37.

    shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(...)

Parsed as k8s.io/apiserver's `pkg/sharding` parses them: the text is a CEL expression (`celparser`)
whose tree may only be `shardRange(field, 'start', 'end')` calls joined by `||`; the field is
`object.metadata.uid` or `object.metadata.namespace`, the same in every range; the bounds are string
literals of `0x` and exactly 16 lowercase hex digits (only `'0x10000000000000000'`, 2⁶⁴, has 17), start
< end. An object matches if the 64-bit FNV-1a hash of that field falls in `[start, end)` of any range
(k8s.io/apimachinery's `pkg/sharding`). `str()` of a selector is its normal form, which lists
echo in `metadata.shardInfo.selector`. A bad selector is `ShardSelectorError` with the server's words.
"""
import dataclasses
import functools
from collections.abc import Mapping
from typing import Any

from kopf._cluster.store import celparser
from kopf._cluster.store.celnodes import CALL, IDENT, LITERAL, SELECT, CelError, Node

FIELDS = ('object.metadata.uid', 'object.metadata.namespace')
FULL = '0x10000000000000000'
FNV_OFFSET, FNV_PRIME, MASK = 0xcbf29ce484222325, 0x100000001b3, (1 << 64) - 1
#: What Go's strings.TrimSpace removes (unicode.IsSpace), unlike Python's str.strip() (which also takes \x1c-\x1f).
GO_SPACES = '\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a' \
            '\u2028\u2029\u202f\u205f\u3000'


class ShardSelectorError(ValueError):
    """A selector kube-apiserver refuses; the text it puts after "invalid shard selector: "."""


@dataclasses.dataclass(frozen=True)
class Range:
    key: str
    start: str   # 0x + 16 lowercase hex digits (or 2⁶⁴'s 17)
    end: str


@dataclasses.dataclass(frozen=True)
class Selector:
    ranges: tuple[Range, ...]

    def __str__(self) -> str:
        return ' || '.join(f"shardRange({r.key}, '{r.start}', '{r.end}')" for r in self.ranges)

    def matches(self, obj: Mapping[str, Any]) -> bool:
        meta = obj.get('metadata') or {}
        field = self.ranges[0].key.rpartition('.')[2]
        value = '0x' + hash_field(str(meta.get(field) or ''))
        return any(not _less(value, r.start) and _less(value, r.end) for r in self.ranges)


def hash_field(value: str) -> str:
    """64-bit FNV-1a of the value's UTF-8 bytes, as 16 lowercase hex digits (`sharding.HashField`)."""
    h = FNV_OFFSET
    for byte in value.encode('utf-8', 'surrogatepass'):
        h = ((h ^ byte) * FNV_PRIME) & MASK
    return f'{h:016x}'


def _less(a: str, b: str) -> bool:
    """`sharding.HexLess`: bounds are normalised, so shorter is smaller, else the text decides."""
    return len(a) < len(b) if len(a) != len(b) else a < b


@functools.lru_cache(maxsize=256)   # an operator sends the same few selectors with every list and watch
def parse(text: str) -> Selector:
    text = text.strip(GO_SPACES)
    if not text:
        raise ShardSelectorError('empty shard selector is not allowed; omit the parameter for unfiltered lists')
    try:
        tree = celparser.parse(text)
    except CelError as exc:
        raise ShardSelectorError(f'CEL parse error: {exc}') from None
    ranges = _walk(tree)
    for other in ranges[1:]:
        if other.key != ranges[0].key:
            raise ShardSelectorError(f'all shard ranges must use the same field, got {go_quote(ranges[0].key)} '
                                     f'and {go_quote(other.key)}')
    return Selector(tuple(ranges))


def _walk(node: Node) -> list[Range]:
    if node.kind != CALL:
        raise ShardSelectorError(f'unexpected expression kind {node.kind}; expected shardRange() call or || operator')
    if node.name == '_||_':
        return [found for arg in node.args for found in _walk(arg)]
    if node.name != 'shardRange':
        raise ShardSelectorError(f'unsupported function {go_quote(node.name)}; only shardRange() and || are allowed')
    if len(node.args) != 3:
        raise ShardSelectorError(f'shardRange() requires exactly 3 arguments, got {len(node.args)}')
    key = _path(node.args[0])
    if key not in FIELDS:
        raise ShardSelectorError(f'unsupported field path {go_quote(key)}; supported: {", ".join(FIELDS)}')
    start, end = _hex(node.args[1], 'hexStart'), _hex(node.args[2], 'hexEnd')
    if not _less(start, end):
        raise ShardSelectorError(f'shard range start {start} must be less than end {end}')
    return [Range(key, start, end)]


def _path(node: Node) -> str:
    if node.kind == IDENT:
        return node.name
    if node.kind == SELECT:
        return f'{_path(node.args[0])}.{node.name}'
    raise ShardSelectorError(f'shardRange() first argument: expected field path (e.g. object.metadata.uid), '
                             f'got expression kind {node.kind}')


def _hex(node: Node, name: str) -> str:
    if node.kind != LITERAL:
        raise ShardSelectorError(f"{name} must be a string literal (e.g. '0xff'), got expression kind {node.kind}")
    if node.gotype != 'string':
        raise ShardSelectorError(f'{name} must be a string literal, got {node.gotype}')
    text: str = node.value
    if not text.startswith('0x'):
        raise ShardSelectorError(f"{name} must have '0x' prefix, got {go_quote(text)}")
    digits = text[2:]
    size = len(digits.encode('utf-8', 'surrogatepass'))   # Go counts bytes
    if not digits:
        raise ShardSelectorError(f"{name}: hex value is required after '0x'")
    if size > 17:
        raise ShardSelectorError(f'{name}: hex value too long ({size} chars, max 17): {go_quote(digits)}')
    for char in digits:
        if char not in '0123456789abcdef':
            raise ShardSelectorError(f'{name}: invalid hex character {go_quote(char)} in {go_quote(text)}')
    if size == 17 and text != FULL:
        raise ShardSelectorError(f"{name}: 17-digit hex value must be '{FULL}' (2^64), got {go_quote(text)}")
    if size < 16:
        padded = '0x' + '0' * (16 - size) + digits
        raise ShardSelectorError(f'{name} must be a 0x-prefixed 16-digit hex value, got {go_quote(text)} '
                                 f'(did you mean {go_quote(padded)}?)')
    return text


_GO_ESCAPES = {'\a': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v',
               '\\': '\\\\', '"': '\\"'}


def go_quote(text: str) -> str:
    """Go's `%q` of a string (strconv.Quote): double quotes, Go escapes, printable characters as they are."""
    out = []
    for char in text:
        code = ord(char)
        if char in _GO_ESCAPES:
            out.append(_GO_ESCAPES[char])
        elif char.isprintable():
            out.append(char)
        elif 0xd800 <= code <= 0xdfff:   # not in a Go string: decoding made it U+FFFD
            out.append('\ufffd')
        elif code < 0x80:
            out.append(f'\\x{code:02x}')
        else:
            out.append(f'\\u{code:04x}' if code < 0x10000 else f'\\U{code:08x}')
    return '"' + ''.join(out) + '"'
