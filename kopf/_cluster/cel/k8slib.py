"""The Kubernetes CEL libraries (k8s.io/apiserver `pkg/cel/library`): lists and regex here;
quantity, URLs, IPs and CIDRs, formats, semver and the authorizer in their own modules.
"""
from __future__ import annotations

import functools
import itertools
from typing import Any

from kopf._cluster.cel import celtypes
from kopf._cluster.cel.celtypes import BoolType as B
from kopf._cluster.cel.celtypes import IntType as I
from kopf._cluster.cel.celtypes import StringType as S
from kopf._cluster.cel.celvalues import Duration, EvalError, UInt, compare, equals
from kopf._cluster.cel.decls import Env, Overload
from kopf._cluster.cel.regex import compile_re2
from kopf._cluster.cel.stdlib import add, fail

A = celtypes.param('A')
SUMMABLE = [('int', celtypes.IntType, 0), ('uint', celtypes.UintType, UInt(0)), ('double', celtypes.DoubleType, 0.0),
            ('duration', celtypes.DurationType, Duration(0))]
COMPARABLE = [('int', celtypes.IntType), ('uint', celtypes.UintType), ('double', celtypes.DoubleType),
              ('bool', celtypes.BoolType), ('duration', celtypes.DurationType),
              ('timestamp', celtypes.TimestampType), ('string', celtypes.StringType), ('bytes', celtypes.BytesType)]


def is_sorted(items: Any) -> bool:
    return all(compare(a, b) != 1 for a, b in itertools.pairwise(items))


def summer(zero: Any) -> Any:
    def total(items: Any) -> Any:
        acc = zero
        for item in items:
            acc = add(acc, item)
        return acc
    return total


def extreme(name: str, prefer: int) -> Any:
    def pick(items: Any) -> Any:
        if not items:
            raise EvalError(f'{name} called on empty list')
        return functools.reduce(lambda best, x: x if compare(best, x) == prefer else best, items)
    return pick


def list_index_of(items: Any, item: Any) -> int:
    if type(items) not in (list, tuple):
        raise fail()
    for i, x in enumerate(items):
        if equals(x, item):
            return i
    return -1


def list_last_index_of(items: Any, item: Any) -> int:
    if type(items) not in (list, tuple):
        raise fail()
    for i in range(len(items) - 1, -1, -1):
        if equals(items[i], item):
            return i
    return -1


def k8s_lists(env: Env) -> None:
    f = env.add_function
    m = {'member': True}
    f('isSorted', *[Overload(f'list_{n}_is_sorted_bool', [celtypes.list_of(t)], B, is_sorted, **m)
                    for n, t in COMPARABLE])
    f('sum', *[Overload(f'list_{n}_sum_{n}', [celtypes.list_of(t)], t, summer(z), **m) for n, t, z in SUMMABLE])
    f('max', *[Overload(f'list_{n}_max_{n}', [celtypes.list_of(t)], t, extreme('max', -1), **m)
               for n, t in COMPARABLE])
    f('min', *[Overload(f'list_{n}_min_{n}', [celtypes.list_of(t)], t, extreme('min', 1), **m)
               for n, t in COMPARABLE])
    f('indexOf', Overload('list_a_index_of_int', [celtypes.list_of(A), A], I, list_index_of, **m))
    f('lastIndexOf', Overload('list_a_last_index_of_int', [celtypes.list_of(A), A], I, list_last_index_of, **m))


def find(s: str, pattern: str) -> str:
    try:
        m = compile_re2(pattern).search(s)
    except EvalError as e:
        raise EvalError(f'Illegal regex: {e.message.removeprefix("Illegal regex: ")}') from None
    return m.group(0) if m else ''


def find_all(s: str, pattern: str, limit: int = -1) -> list[str]:
    try:
        regex = compile_re2(pattern)
    except EvalError as e:
        raise EvalError(f'Illegal regex: {e.message}') from None
    found = [m.group(0) for m in regex.finditer(s)]
    return found if limit < 0 else found[:limit]


def k8s_regex(env: Env) -> None:
    f = env.add_function
    m = {'member': True}
    f('find', Overload('string_find_string', [S, S], S, find, **m))
    f('findAll', Overload('string_find_all_string', [S, S], celtypes.list_of(S), find_all, **m),
      Overload('string_find_all_string_int', [S, S, I], celtypes.list_of(S), find_all, **m))
