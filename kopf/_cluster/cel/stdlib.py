"""CEL's standard library (cel-go's `common/stdlib`), with Kubernetes' options: cross-type numeric
comparisons and the standard macros' helper functions.

Each operator is one generic implementation over the runtime values (as cel-go's singleton bindings are);
type mismatches that the checker let through (`dyn`) fail with cel-go's "no such overload".
"""
from __future__ import annotations

import math
import re
from typing import Any

from kopf._cluster.cel import celtypes
from kopf._cluster.cel.celvalues import (
    Duration,
    EvalError,
    Timestamp,
    UInt,
    check_int,
    check_uint,
    compare,
    equals,
    int_div,
    int_mod,
    map_lookup,
    parse_duration,
    parse_timestamp,
    to_text,
    type_of,
)
from kopf._cluster.cel.decls import Env, Overload

B, BY, D, DUR, DYN = celtypes.BoolType, celtypes.BytesType, celtypes.DoubleType, celtypes.DurationType, celtypes.DynType
INT, S, TS, U = celtypes.IntType, celtypes.StringType, celtypes.TimestampType, celtypes.UintType
A, Bp = celtypes.param('A'), celtypes.param('B')
LIST_A = celtypes.list_of(A)
MAP_AB = celtypes.map_of(A, Bp)
NO_OVERLOAD = 'no such overload'
TS_MIN, TS_MAX = -62135596800 * 10 ** 9, 253402300799 * 10 ** 9 + 999_999_999
DUR_MAX = 2 ** 63 - 1


def fail() -> EvalError:
    return EvalError(NO_OVERLOAD)


# ---- arithmetic ----

def add(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return check_int(a + b)
    if ta is float and tb is float:
        return a + b
    if ta is str and tb is str:
        return a + b
    if ta is UInt and tb is UInt:
        return check_uint(a + b)
    if ta in (list, tuple) and tb in (list, tuple):
        return [*a, *b]
    if ta is bytes and tb is bytes:
        return a + b
    if ta is Duration and tb is Duration:
        return duration(a.nanos + b.nanos)
    if ta is Timestamp and tb is Duration:
        return timestamp(a.nanos + b.nanos)
    if ta is Duration and tb is Timestamp:
        return timestamp(a.nanos + b.nanos)
    raise fail()


def duration(nanos: int) -> Duration:
    if not -DUR_MAX <= nanos <= DUR_MAX:
        raise EvalError('integer overflow')
    return Duration(nanos)


def timestamp(nanos: int) -> Timestamp:
    if not TS_MIN <= nanos <= TS_MAX:
        raise EvalError('timestamp overflow')
    return Timestamp(nanos)


def subtract(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return check_int(a - b)
    if ta is float and tb is float:
        return a - b
    if ta is UInt and tb is UInt:
        return check_uint(a - b)
    if ta is Duration and tb is Duration:
        return duration(a.nanos - b.nanos)
    if ta is Timestamp and tb is Duration:
        return timestamp(a.nanos - b.nanos)
    if ta is Timestamp and tb is Timestamp:
        return duration(a.nanos - b.nanos)
    raise fail()


def multiply(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return check_int(a * b)
    if ta is float and tb is float:
        return a * b
    if ta is UInt and tb is UInt:
        return check_uint(a * b)
    raise fail()


def divide(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return int_div(a, b)
    if ta is float and tb is float:
        if b == 0:
            if a == 0 or a != a:
                return math.nan
            return math.copysign(math.inf, a) * math.copysign(1.0, b)
        return a / b
    if ta is UInt and tb is UInt:
        if b == 0:
            raise EvalError('division by zero')
        return UInt(a // b)
    raise fail()


def modulo(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return int_mod(a, b)
    if ta is UInt and tb is UInt:
        if b == 0:
            raise EvalError('modulus by zero')
        return UInt(a % b)
    raise fail()


def negate(a: Any) -> Any:
    if type(a) is int:
        return check_int(-a)
    if type(a) is float:
        return -a
    raise fail()


def logical_not(a: Any) -> Any:
    if type(a) is bool:
        return not a
    raise fail()


def ordering(predicate: str) -> Any:
    def op(a: Any, b: Any) -> bool:
        try:
            c = compare(a, b)
        except EvalError:
            raise fail() from None
        if c == 2:
            return False
        return {'<': c < 0, '<=': c <= 0, '>': c > 0, '>=': c >= 0}[predicate]
    return op


def in_(a: Any, container: Any) -> bool:
    if type(container) in (list, tuple):
        return any(equals(a, x) for x in container)
    if type(container) is dict:
        return map_lookup(container, a)[0]
    raise fail()


def index(container: Any, key: Any) -> Any:
    tc = type(container)
    if tc in (list, tuple):
        tk = type(key)
        if tk is float:
            if not key.is_integer():
                raise EvalError(f'unsupported index value {key} in list')
            key = int(key)
        elif tk not in (int, UInt):
            raise EvalError(f'unsupported index type \'{type_of(key).name}\' in list')
        if key < 0 or key >= len(container):
            raise EvalError(f'index out of bounds: {key}')
        return container[key]
    if tc is dict:
        found, value = map_lookup(container, key)
        if not found:
            raise EvalError(f'no such key: {key_text(key)}')
        return value
    raise fail()


def key_text(key: Any) -> str:
    if type(key) is bool:
        return 'true' if key else 'false'
    return str(key)


def size(value: Any) -> int:
    t = type(value)
    if t is str:
        return len(value)
    if t in (list, tuple, dict, bytes):
        return len(value)
    raise fail()


# ---- conversions ----

def to_int(v: Any) -> int:
    t = type(v)
    if t is int:
        return int(v)
    if t is UInt:
        return check_int(int(v))
    if t is float:
        if v != v or v <= -9.223372036854776e18 or v >= 9.223372036854776e18:
            raise EvalError('integer overflow')
        return int(v)
    if t is str:
        if not re.fullmatch(r'[+-]?[0-9]+', v):
            raise EvalError("type conversion error from 'string' to 'int'")
        return check_int(int(v))
    if t is Duration:
        return int(v.nanos)
    if t is Timestamp:
        return int(v.nanos // 1_000_000_000)
    raise fail()


def to_uint(v: Any) -> UInt:
    t = type(v)
    if t in (int, UInt):
        return check_uint(int(v))
    if t is float:
        if v != v or v < 0 or v >= 1.8446744073709552e19:
            raise EvalError('unsigned integer overflow')
        return UInt(int(v))
    if t is str:
        if not re.fullmatch(r'[+]?[0-9]+', v):
            raise EvalError("type conversion error from 'string' to 'uint'")
        return check_uint(int(v))
    raise fail()


def to_double(v: Any) -> float:
    t = type(v)
    if t in (int, UInt, float):
        return float(v)
    if t is str:
        try:
            return float(v)
        except ValueError:
            raise EvalError("type conversion error from 'string' to 'double'") from None
    raise fail()


def to_bool(v: Any) -> bool:
    if type(v) is bool:
        return v
    if type(v) is str:
        if v in ('1', 't', 'T', 'TRUE', 'true', 'True'):
            return True
        if v in ('0', 'f', 'F', 'FALSE', 'false', 'False'):
            return False
        raise EvalError("type conversion error from 'string' to 'bool'")
    raise fail()


def to_bytes(v: Any) -> bytes:
    if type(v) is bytes:
        return v
    if type(v) is str:
        return v.encode()
    raise fail()


def to_duration(v: Any) -> Duration:
    if type(v) is Duration:
        return v
    if type(v) is int:
        return Duration(v)
    if type(v) is str:
        try:
            return parse_duration(v)
        except ValueError as e:
            raise EvalError("type conversion error from 'string' to 'google.protobuf.Duration'") from e
    raise fail()


def to_timestamp(v: Any) -> Timestamp:
    if type(v) is Timestamp:
        return v
    if type(v) is int:
        return timestamp(v * 1_000_000_000)
    if type(v) is str:
        try:
            return timestamp(parse_timestamp(v).nanos)
        except ValueError as e:
            raise EvalError("type conversion error from 'string' to 'google.protobuf.Timestamp'") from e
    raise fail()


def type_value(v: Any) -> celtypes.Type:
    return type_of(v)


# ---- strings ----

def contains(s: Any, sub: Any) -> bool:
    if type(s) is str and type(sub) is str:
        return sub in s
    raise fail()


def starts_with(s: Any, p: Any) -> bool:
    if type(s) is str and type(p) is str:
        return s.startswith(p)
    raise fail()


def ends_with(s: Any, p: Any) -> bool:
    if type(s) is str and type(p) is str:
        return s.endswith(p)
    raise fail()


def matches(s: Any, pattern: Any) -> bool:
    if type(s) is not str or type(pattern) is not str:
        raise fail()
    from kopf._cluster.cel.regex import compile_re2
    return compile_re2(pattern).search(s) is not None


def not_strictly_false(v: Any) -> bool:
    return v is not False


# ---- time accessors ----

def time_getter(part: str) -> Any:
    def get(value: Any, tz: Any = None) -> int:
        from kopf._cluster.cel.timeparts import duration_part, timestamp_part
        if type(value) is Duration and tz is None:
            return duration_part(value, part)
        if type(value) is Timestamp:
            return timestamp_part(value, part, tz)
        raise fail()
    return get


def declare(env: Env) -> None:
    """The standard declarations and implementations, in cel-go's order."""
    f = env.add_function
    f('_?_:_', Overload('conditional', [B, A, A], A, non_strict=True))
    f('_&&_', Overload('logical_and', [B, B], B, non_strict=True))
    f('_||_', Overload('logical_or', [B, B], B, non_strict=True))
    f('!_', Overload('logical_not', [B], B, logical_not))
    f('@not_strictly_false', Overload('not_strictly_false', [B], B, not_strictly_false, non_strict=True))
    f('_==_', Overload('equals', [A, A], B, equals))
    f('_!=_', Overload('not_equals', [A, A], B, lambda a, b: not equals(a, b)))
    LA = celtypes.list_of(A)
    f('_+_', *[Overload(i, [t, t2], r, add) for i, t, t2, r in [
        ('add_bytes', BY, BY, BY), ('add_double', D, D, D), ('add_duration_duration', DUR, DUR, DUR),
        ('add_duration_timestamp', DUR, TS, TS), ('add_timestamp_duration', TS, DUR, TS),
        ('add_int64', INT, INT, INT), ('add_list', LA, LA, LA), ('add_string', S, S, S), ('add_uint64', U, U, U)]])
    f('_/_', *[Overload(f'divide_{n}', [t, t], t, divide) for n, t in [('double', D), ('int64', INT), ('uint64', U)]])
    f('_%_', *[Overload(f'modulo_{n}', [t, t], t, modulo) for n, t in [('int64', INT), ('uint64', U)]])
    f('_*_', *[Overload(f'multiply_{n}', [t, t], t, multiply) for n, t in [('double', D), ('int64', INT),
                                                                             ('uint64', U)]])
    f('-_', Overload('negate_double', [D], D, negate), Overload('negate_int64', [INT], INT, negate))
    f('_-_', *[Overload(i, [t, t2], r, subtract) for i, t, t2, r in [
        ('subtract_double', D, D, D), ('subtract_duration_duration', DUR, DUR, DUR), ('subtract_int64', INT, INT, INT),
        ('subtract_timestamp_duration', TS, DUR, TS), ('subtract_timestamp_timestamp', TS, TS, DUR),
        ('subtract_uint64', U, U, U)]])
    for op, name in (('<', 'less'), ('<=', 'less_equals'), ('>', 'greater'), ('>=', 'greater_equals')):
        impl = ordering(op)
        f(f'_{op}_', *[Overload(f'{name}_{n}', [t, t2], B, impl) for n, t, t2 in [
            ('bool', B, B), ('int64', INT, INT), ('int64_double', INT, D), ('int64_uint64', INT, U), ('uint64', U, U),
            ('uint64_double', U, D), ('uint64_int64', U, INT), ('double', D, D), ('double_int64', D, INT),
            ('double_uint64', D, U), ('string', S, S), ('bytes', BY, BY), ('timestamp', TS, TS),
            ('duration', DUR, DUR)]])
    f('_[_]', Overload('index_list', [LIST_A, INT], A, index), Overload('index_map', [MAP_AB, A], Bp, index))
    f('@in', Overload('in_list', [A, LIST_A], B, in_), Overload('in_map', [A, MAP_AB], B, in_))
    f('size', *[Overload(i, [t], INT, size, member=m) for i, t, m in [
        ('size_bytes', BY, False), ('bytes_size', BY, True), ('size_list', LIST_A, False),
        ('list_size', LIST_A, True), ('size_map', MAP_AB, False), ('map_size', MAP_AB, True),
        ('size_string', S, False), ('string_size', S, True)]])
    f('type', Overload('type', [A], celtypes.type_of(A), type_value))
    conversions(env)
    f('contains', Overload('contains_string', [S, S], B, contains, member=True))
    f('endsWith', Overload('ends_with_string', [S, S], B, ends_with, member=True))
    f('startsWith', Overload('starts_with_string', [S, S], B, starts_with, member=True))
    f('matches', Overload('matches', [S, S], B, matches), Overload('matches_string', [S, S], B, matches, member=True))
    time_functions(env)
    for t in (B, BY, D, DUR, INT, celtypes.list_of(A), celtypes.map_of(A, Bp), celtypes.NullType, S, TS,
              celtypes.TypeType, U):
        name = {'google.protobuf.Duration': 'google.protobuf.Duration',
                'google.protobuf.Timestamp': 'google.protobuf.Timestamp'}.get(t.name, t.name)
        env.add_ident(name, celtypes.type_of(t), t)


def conversions(env: Env) -> None:
    f = env.add_function
    f('bool', Overload('bool_to_bool', [B], B, to_bool), Overload('string_to_bool', [S], B, to_bool))
    f('bytes', Overload('bytes_to_bytes', [BY], BY, to_bytes), Overload('string_to_bytes', [S], BY, to_bytes))
    f('double', *[Overload(f'{n}_to_double', [t], D, to_double) for n, t in [
        ('double', D), ('int64', INT), ('string', S), ('uint64', U)]])
    f('duration', *[Overload(f'{n}_to_duration', [t], DUR, to_duration) for n, t in [
        ('duration', DUR), ('int64', INT), ('string', S)]])
    f('dyn', Overload('to_dyn', [A], DYN, lambda v: v))
    f('int', *[Overload(f'{n}_to_int64', [t], INT, to_int) for n, t in [
        ('int64', INT), ('double', D), ('duration', DUR), ('string', S), ('timestamp', TS), ('uint64', U)]])
    f('string', *[Overload(f'{n}_to_string', [t], S, to_text) for n, t in [
        ('string', S), ('bool', B), ('bytes', BY), ('double', D), ('duration', DUR), ('int64', INT),
        ('timestamp', TS), ('uint64', U)]])
    f('timestamp', *[Overload(f'{n}_to_timestamp', [t], TS, to_timestamp) for n, t in [
        ('timestamp', TS), ('int64', INT), ('string', S)]])
    f('uint', *[Overload(f'{n}_to_uint64', [t], U, to_uint) for n, t in [
        ('uint64', U), ('double', D), ('int64', INT), ('string', S)]])


def time_functions(env: Env) -> None:
    parts = [('getFullYear', 'year', False), ('getMonth', 'month', False), ('getDayOfYear', 'day_of_year', False),
             ('getDayOfMonth', 'day_of_month', False), ('getDate', 'date', False),
             ('getDayOfWeek', 'day_of_week', False), ('getHours', 'hours', True), ('getMinutes', 'minutes', True),
             ('getSeconds', 'seconds', True), ('getMilliseconds', 'milliseconds', True)]
    for name, part, with_duration in parts:
        impl = time_getter(part)
        overloads = [Overload(f'timestamp_to_{part}', [TS], INT, impl, member=True),
                     Overload(f'timestamp_to_{part}_with_tz', [TS, S], INT, impl, member=True)]
        if with_duration:
            overloads.append(Overload(f'duration_to_{part}', [DUR], INT, impl, member=True))
        env.add_function(name, *overloads)
