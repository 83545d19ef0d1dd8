"""cel-go's extension libraries in Kubernetes 1.34's versions: strings v2, lists v3, sets, and the
two-variable comprehensions' helper (`cel.@mapInsert`).
"""
from __future__ import annotations

from typing import Any

from kopf._cluster.cel import celtypes
from kopf._cluster.cel.celtypes import BoolType as B
from kopf._cluster.cel.celtypes import IntType as I
from kopf._cluster.cel.celtypes import StringType as S
from kopf._cluster.cel.celvalues import EvalError, compare, equals, map_lookup
from kopf._cluster.cel.decls import Env, Overload
from kopf._cluster.cel.stdlib import fail

T = celtypes.param('T')
LIST_T = celtypes.list_of(T)
LIST_S = celtypes.list_of(S)


# ---- strings (ext.Strings, version 2) ----

def char_at(s: str, i: int) -> str:
    if i < 0 or i > len(s):
        raise EvalError(f'index out of range: {i}')
    return s[i] if i < len(s) else ''


def index_of(s: str, sub: str, offset: int = 0) -> int:
    if sub == '':
        return offset
    if offset < 0:
        raise EvalError(f'index out of range: {offset}')
    if offset >= len(s):
        return -1
    return s.find(sub, offset)


def last_index_of(s: str, sub: str, offset: int | None = None) -> int:
    if offset is None:
        if sub == '':
            return len(s)
        if len(s.encode()) < len(sub.encode()):
            return -1
        offset = len(s) - 1
    if sub == '':
        return offset
    if offset < 0:
        raise EvalError(f'index out of range: {offset}')
    if offset >= len(s):
        return -1
    return s.rfind(sub, 0, min(offset, len(s) - len(sub)) + len(sub))


def lower_ascii(s: str) -> str:
    return ''.join(c.lower() if c < '\x80' else c for c in s)


def upper_ascii(s: str) -> str:
    return ''.join(c.upper() if c < '\x80' else c for c in s)


def replace(s: str, old: str, new: str, n: int = -1) -> str:
    if n < 0:
        return go_replace_all(s, old, new)
    return go_replace_n(s, old, new, n)


def go_replace_all(s: str, old: str, new: str) -> str:
    if old == '':
        return new + new.join(s) + new if s else new
    return s.replace(old, new)


def go_replace_n(s: str, old: str, new: str, n: int) -> str:
    if n == 0:
        return s
    if old == '':
        chars = list(s)
        out = []
        for i in range(len(chars) + 1):
            if i < n:
                out.append(new)
            if i < len(chars):
                out.append(chars[i])
        return ''.join(out)
    return s.replace(old, new, n)


def split(s: str, sep: str, n: int = -1) -> list[str]:
    if n == 0:
        return []
    if sep == '':
        chars = list(s)
        if n > 0 and len(chars) > n:
            chars = chars[:n - 1] + [''.join(chars[n - 1:])]
        return chars
    return s.split(sep, n - 1) if n > 0 else s.split(sep)


def substring(s: str, start: int, end: int | None = None) -> str:
    if end is None:
        if start < 0 or start > len(s):
            raise EvalError(f'index out of range: {start}')
        return s[start:]
    if start > end:
        raise EvalError(f'invalid substring range. start: {start}, end: {end}')
    if start < 0 or start > len(s):
        raise EvalError(f'index out of range: {start}')
    if end < 0 or end > len(s):
        raise EvalError(f'index out of range: {end}')
    return s[start:end]


GO_SPACE = '\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a' \
           '\u2028\u2029\u202f\u205f\u3000'


def trim(s: str) -> str:
    return s.strip(GO_SPACE)


def join(items: Any, sep: str = '') -> str:
    for item in items:
        if type(item) is not str:
            raise EvalError(f'join: invalid input: {item}')
    return sep.join(items)


def quote(s: str) -> str:
    escapes = {'\a': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v',
               '\\': '\\\\', '"': '\\"'}
    return '"' + ''.join(escapes.get(c, c) for c in s) + '"'


def strings_lib(env: Env) -> None:
    f = env.add_function
    m = {'member': True}
    f('charAt', Overload('string_char_at_int', [S, I], S, char_at, **m))
    f('indexOf', Overload('string_index_of_string', [S, S], I, index_of, **m),
      Overload('string_index_of_string_int', [S, S, I], I, index_of, **m))
    f('lastIndexOf', Overload('string_last_index_of_string', [S, S], I, last_index_of, **m),
      Overload('string_last_index_of_string_int', [S, S, I], I, last_index_of, **m))
    f('lowerAscii', Overload('string_lower_ascii', [S], S, lower_ascii, **m))
    f('replace', Overload('string_replace_string_string', [S, S, S], S, replace, **m),
      Overload('string_replace_string_string_int', [S, S, S, I], S, replace, **m))
    f('split', Overload('string_split_string', [S, S], LIST_S, split, **m),
      Overload('string_split_string_int', [S, S, I], LIST_S, split, **m))
    f('substring', Overload('string_substring_int', [S, I], S, substring, **m),
      Overload('string_substring_int_int', [S, I, I], S, substring, **m))
    f('trim', Overload('string_trim', [S], S, trim, **m))
    f('upperAscii', Overload('string_upper_ascii', [S], S, upper_ascii, **m))
    from kopf._cluster.cel.formatting import string_format
    f('format', Overload('string_format', [S, celtypes.list_of(celtypes.DynType)], S, string_format, **m))
    f('strings.quote', Overload('strings_quote', [S], S, quote))
    f('join', Overload('list_join', [LIST_S], S, join, **m),
      Overload('list_join_string', [LIST_S, S], S, join, **m))


# ---- lists (ext.Lists, version 3) ----

def list_slice(items: Any, start: int, end: int) -> list[Any]:
    if start < 0 or end < 0:
        raise EvalError(f'cannot slice({start}, {end}), negative indexes not supported')
    if start > end:
        raise EvalError(f'cannot slice({start}, {end}), start index must be less than or equal to end index')
    if len(items) < end:
        raise EvalError(f'cannot slice({start}, {end}), list is length {len(items)}')
    return list(items[start:end])


def flatten(items: Any, depth: int = 1) -> list[Any]:
    if depth < 0:
        raise EvalError('level must be non-negative')
    out: list[Any] = []
    for item in items:
        if type(item) in (list, tuple) and depth > 0:
            out.extend(flatten(item, depth - 1))
        else:
            out.append(item)
    return out


def sort_list(items: Any) -> list[Any]:
    import functools
    for item in items:
        if type(item) is not type(items[0]):
            raise EvalError('list elements must have the same type')
    return sorted(items, key=functools.cmp_to_key(compare))


def sort_by_keys(items: Any, keys: Any) -> list[Any]:
    import functools
    if len(items) != len(keys):
        raise EvalError(f'@sortByAssociatedKeys() expected a list of the same size as the associated keys list, '
                        f'but got {len(items)} and {len(keys)} elements respectively.')
    order = sorted(range(len(keys)), key=functools.cmp_to_key(lambda a, b: compare(keys[a], keys[b])))
    return [items[i] for i in order]


def lists_range(n: int) -> list[int]:
    return list(range(n))


def distinct(items: Any) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if not any(equals(item, seen) for seen in out):
            out.append(item)
    return out


def lists_lib(env: Env) -> None:
    f = env.add_function
    m = {'member': True}
    list_list = celtypes.list_of(LIST_T)
    dyn_list = celtypes.list_of(celtypes.DynType)
    f('slice', Overload('list_slice', [LIST_T, I, I], LIST_T, list_slice, **m))
    f('flatten', Overload('list_flatten', [list_list], LIST_T, flatten, **m),
      Overload('list_flatten_int', [dyn_list, I], dyn_list, flatten, **m))
    comparable = [celtypes.BoolType, celtypes.BytesType, celtypes.DoubleType, celtypes.DurationType,
                  celtypes.IntType, celtypes.StringType, celtypes.TimestampType, celtypes.UintType]
    f('sort', *[Overload(f'list_{t.name}_sort', [celtypes.list_of(t)], celtypes.list_of(t), sort_list, **m)
                for t in comparable])
    f('@sortByAssociatedKeys', *[Overload(f'list_{t.name}_sortByAssociatedKeys', [LIST_T, celtypes.list_of(t)],
                                          LIST_T, sort_by_keys, **m) for t in comparable])
    f('lists.range', Overload('lists_range', [I], celtypes.list_of(I), lists_range))
    f('reverse', Overload('list_reverse', [LIST_T], LIST_T, lambda items: list(reversed(items)), **m))
    f('distinct', Overload('list_distinct', [LIST_T], LIST_T, distinct, **m))
    f('first', Overload('list_first', [LIST_T], celtypes.optional_of(T), first, **m))
    f('last', Overload('list_last', [LIST_T], celtypes.optional_of(T), last, **m))


def first(items: Any) -> Any:
    from kopf._cluster.cel.celvalues import NONE, Optional
    return Optional(items[0]) if items else NONE


def last(items: Any) -> Any:
    from kopf._cluster.cel.celvalues import NONE, Optional
    return Optional(items[-1]) if items else NONE


# ---- sets (ext.Sets) ----

def sets_contains(a: Any, b: Any) -> bool:
    return all(any(equals(x, y) for y in a) for x in b)


def sets_equivalent(a: Any, b: Any) -> bool:
    return sets_contains(a, b) and sets_contains(b, a)


def sets_intersects(a: Any, b: Any) -> bool:
    return any(any(equals(x, y) for y in a) for x in b)


def sets_lib(env: Env) -> None:
    f = env.add_function
    f('sets.contains', Overload('list_sets_contains_list', [LIST_T, LIST_T], B, sets_contains))
    f('sets.equivalent', Overload('list_sets_equivalent_list', [LIST_T, LIST_T], B, sets_equivalent))
    f('sets.intersects', Overload('list_sets_intersects_list', [LIST_T, LIST_T], B, sets_intersects))


# ---- two-variable comprehensions ----

def map_insert(m: Any, key: Any, value: Any = None, *rest: Any) -> dict[Any, Any]:
    if type(m) is not dict:
        raise fail()
    if type(key) is dict and value is None:
        out = dict(m)
        for k, v in key.items():
            if map_lookup(out, k)[0]:
                raise EvalError(f'insert failed: key {k} already exists')
            out[k] = v
        return out
    if map_lookup(m, key)[0]:
        raise EvalError(f'insert failed: key {key} already exists')
    out = dict(m)
    out[key] = value
    return out


def comprehensions_lib(env: Env) -> None:
    K, V = celtypes.param('K'), celtypes.param('V')
    kv = celtypes.map_of(K, V)
    env.add_function('cel.@mapInsert', Overload('@mapInsert_map_key_value', [kv, K, V], kv, map_insert),
                     Overload('@mapInsert_map_map', [kv, kv], kv, map_insert))
