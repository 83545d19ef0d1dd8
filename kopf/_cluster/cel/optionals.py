"""cel-go's optional types library (`cel.OptionalTypes()`), as Kubernetes 1.34 has it."""
from __future__ import annotations

from typing import Any

from kopf._cluster.cel import celtypes
from kopf._cluster.cel.celvalues import Duration, EvalError, Optional, Timestamp, UInt
from kopf._cluster.cel.decls import Env, Overload
from kopf._cluster.cel.stdlib import DYN, INT, LIST_A, MAP_AB, A, B, Bp, fail, index


def optional_lib(env: Env) -> None:
    """cel-go's optional types library (`cel.OptionalTypes()`), version 2 as Kubernetes 1.34 has it."""
    OA = celtypes.optional_of(A)
    f = env.add_function
    f('optional.of', Overload('optional_of', [A], OA, lambda v: Optional(v)))
    f('optional.ofNonZeroValue', Overload('optional_ofNonZeroValue', [A], OA, of_non_zero))
    f('optional.none', Overload('optional_none', [], OA, lambda: Optional(None, False)))
    f('value', Overload('optional_value', [OA], A, opt_value, member=True))
    f('hasValue', Overload('optional_hasValue', [OA], B, lambda o: o.present, member=True))
    f('or', Overload('optional_or_optional', [OA, OA], OA, lambda a, b: a if a.present else b, member=True))
    f('orValue', Overload('optional_orValue_value', [OA, A], A, lambda a, b: a.value if a.present else b,
                          member=True))
    f('_[?_]', Overload('list_optindex_optional_int', [LIST_A, INT], OA, opt_index),
      Overload('optional_list_optindex_optional_int', [celtypes.optional_of(LIST_A), INT], OA, opt_index),
      Overload('map_optindex_optional_value', [MAP_AB, A], celtypes.optional_of(Bp), opt_index),
      Overload('optional_map_optindex_optional_value', [celtypes.optional_of(MAP_AB), A],
               celtypes.optional_of(Bp), opt_index))
    f('_[_]', Overload('optional_list_index_int', [celtypes.optional_of(LIST_A), INT], OA, opt_index),
      Overload('optional_map_index_value', [celtypes.optional_of(MAP_AB), A], celtypes.optional_of(Bp),
               opt_index))
    env.add_ident('optional_type', celtypes.type_of(OA), celtypes.optional_of(DYN))


def of_non_zero(v: Any) -> Optional:
    zero = v is None or v is False or (type(v) in (int, UInt, float) and v == 0) or \
        (type(v) in (str, bytes, list, tuple, dict) and len(v) == 0) or \
        (type(v) in (Duration, Timestamp) and v.nanos == 0)
    return Optional(None, False) if zero else Optional(v)


def opt_value(o: Any) -> Any:
    if type(o) is not Optional:
        raise fail()
    if not o.present:
        raise EvalError('optional.none() dereference')
    return o.value


def opt_index(container: Any, key: Any) -> Optional:
    if type(container) is Optional:
        if not container.present:
            return container
        container = container.value
    try:
        return Optional(index(container, key))
    except EvalError as e:
        if e.message.startswith(('no such key', 'index out of bounds')):
            return Optional(None, False)
        raise
