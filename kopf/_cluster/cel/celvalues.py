"""CEL's runtime values in Python, and cel-go's semantics for them: equality, ordering, overflow, texts.

Plain Python values stand for most CEL values (bool, int, float, str, bytes, None, list, dict); `UInt`,
`Duration`, `Timestamp`, `Optional` and `celtypes.Type` (a type as a value) stand for the rest, and the
Kubernetes libraries add their own classes. An evaluation error is the `EvalError` exception, with
cel-go's text.
"""
from __future__ import annotations

import datetime
import math
import re
from typing import Any

from kopf._cluster.cel import celtypes
from kopf._cluster.cel.celtypes import Type

INT_MIN, INT_MAX = -2 ** 63, 2 ** 63 - 1
UINT_MAX = 2 ** 64 - 1


class EvalError(Exception):
    """A CEL evaluation error; its text is cel-go's."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class CostExceeded(EvalError):
    pass


class UInt(int):
    __slots__ = ()

    def __repr__(self) -> str:
        return f'{int(self)}u'


class Duration:
    __slots__ = ('nanos',)

    def __init__(self, nanos: int) -> None:
        self.nanos = nanos

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Duration) and other.nanos == self.nanos

    def __hash__(self) -> int:
        return hash(self.nanos)

    def __repr__(self) -> str:
        return f'duration({format_duration(self)!r})'


class Timestamp:
    __slots__ = ('nanos',)   # nanoseconds since the Unix epoch, UTC

    def __init__(self, nanos: int) -> None:
        self.nanos = nanos

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Timestamp) and other.nanos == self.nanos

    def __hash__(self) -> int:
        return hash(self.nanos)

    def __repr__(self) -> str:
        return f'timestamp({format_timestamp(self)!r})'


class Optional:
    __slots__ = ('present', 'value')

    def __init__(self, value: Any = None, present: bool = True) -> None:
        self.value = value
        self.present = present

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Optional) or other.present != self.present:
            return False
        return not self.present or equals(self.value, other.value)

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f'optional.of({self.value!r})' if self.present else 'optional.none()'


NONE = Optional(None, False)

_PY_TYPES: dict[type, Type] = {
    bool: celtypes.BoolType, int: celtypes.IntType, UInt: celtypes.UintType, float: celtypes.DoubleType,
    str: celtypes.StringType, bytes: celtypes.BytesType, type(None): celtypes.NullType,
    list: celtypes.list_of(celtypes.DynType), tuple: celtypes.list_of(celtypes.DynType),
    dict: celtypes.map_of(celtypes.DynType, celtypes.DynType), Duration: celtypes.DurationType,
    Timestamp: celtypes.TimestampType, Optional: celtypes.optional_of(celtypes.DynType),
    Type: celtypes.TypeType,
}


def register_type(cls: type, t: Type) -> None:
    _PY_TYPES[cls] = t


def type_of(value: Any) -> Type:
    t = _PY_TYPES.get(type(value))
    if t is not None:
        return t
    for cls, t in _PY_TYPES.items():
        if isinstance(value, cls):
            return t
    raise EvalError(f'unsupported type conversion: {type(value).__name__}')


def type_name(value: Any) -> str:
    return type_of(value).name


# ---- arithmetic ----

def check_int(value: int) -> int:
    if value < INT_MIN or value > INT_MAX:
        raise EvalError('integer overflow')
    return value


def check_uint(value: int) -> UInt:
    if value < 0 or value > UINT_MAX:
        raise EvalError('unsigned integer overflow')
    return UInt(value)


def int_div(a: int, b: int) -> int:
    if b == 0:
        raise EvalError('division by zero')
    if a == INT_MIN and b == -1:
        raise EvalError('integer overflow')
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def int_mod(a: int, b: int) -> int:
    if b == 0:
        raise EvalError('modulus by zero')
    if a == INT_MIN and b == -1:
        raise EvalError('integer overflow')
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


# ---- equality and ordering (cel-go's heterogeneous equality) ----

def is_number(value: Any) -> bool:
    return type(value) in (int, float, UInt)


def equals(a: Any, b: Any) -> bool:
    ta, tb = type(a), type(b)
    if ta is bool or tb is bool:
        return ta is tb and a == b
    if ta in (int, UInt, float) and tb in (int, UInt, float):
        return bool(a == b)  # NaN != NaN as in Go
    if ta in (list, tuple) and tb in (list, tuple):
        return len(a) == len(b) and all(equals(x, y) for x, y in zip(a, b, strict=False))
    if ta is dict and tb is dict:
        if len(a) != len(b):
            return False
        for key, value in a.items():
            found, other = map_lookup(b, key)
            if not found or not equals(value, other):
                return False
        return True
    if ta is not tb and not (isinstance(a, Type) and isinstance(b, Type)):
        return False
    if isinstance(a, Type):
        return bool(a.name == b.name)
    return bool(a == b)


def map_lookup(m: dict[Any, Any], key: Any) -> tuple[bool, Any]:
    """A key in a map, with CEL's numeric key equality (1, 1u and 1.0 find the same entry)."""
    tk = type(key)
    if tk is bool:
        for k, v in m.items():
            if type(k) is bool and k == key:
                return True, v
        return False, None
    if tk is float:
        if not key.is_integer():
            return False, None
        key = int(key)
        tk = int
    if tk in (int, UInt):
        for k, v in m.items():
            if type(k) in (int, UInt) and k == key:
                return True, v
        return False, None
    if key in m:
        return True, m[key]
    return False, None


def compare(a: Any, b: Any) -> int:
    """-1/0/1 for values CEL can order (cross-type numbers included); an `EvalError` otherwise."""
    ta, tb = type(a), type(b)
    if ta in (int, UInt, float) and tb in (int, UInt, float) and ta is not bool and tb is not bool:
        if (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
            return 2   # unordered: every comparison is false
        return int((a > b) - (a < b))
    if ta is tb and ta in (str, bytes, bool):
        return int((a > b) - (a < b))
    if ta is tb and ta in (Duration, Timestamp):
        return int((a.nanos > b.nanos) - (a.nanos < b.nanos))
    raise EvalError('no such overload')


# ---- texts ----

def format_double(value: float) -> str:
    """Go's `fmt.Sprintf("%g", v)`: the shortest digits, an exponent when it is < -4 or >= 6."""
    if math.isnan(value):
        return 'NaN'
    if math.isinf(value):
        return '+Inf' if value > 0 else '-Inf'
    if value == 0:
        return '-0' if math.copysign(1, value) < 0 else '0'
    digits, exp = shortest_digits(value)
    sign = '-' if value < 0 else ''
    if exp < -4 or exp >= 6:
        mant = digits[0] + ('.' + digits[1:] if len(digits) > 1 else '')
        return f'{sign}{mant}e{"-" if exp < 0 else "+"}{abs(exp):02d}'
    if exp < 0:
        return f'{sign}0.{"0" * (-exp - 1)}{digits}'
    if exp + 1 >= len(digits):
        return sign + digits + '0' * (exp + 1 - len(digits))
    return f'{sign}{digits[:exp + 1]}.{digits[exp + 1:]}'


def shortest_digits(value: float) -> tuple[str, int]:
    text = repr(abs(value))
    mant, _, e = text.partition('e')
    exp = int(e) if e else 0
    whole, _, frac = mant.partition('.')
    digits = (whole + frac).lstrip('0')
    exp += len(whole) - 1 - (len(whole + frac) - len((whole + frac).lstrip('0')))
    digits = digits.rstrip('0') or '0'
    return digits, exp


def format_duration(d: Duration) -> str:
    seconds = d.nanos / 1e9 if d.nanos % 1_000_000_000 else d.nanos // 1_000_000_000
    if isinstance(seconds, int):
        return f'{seconds}s'
    sign = '-' if d.nanos < 0 else ''
    whole, frac = divmod(abs(d.nanos), 1_000_000_000)
    return f'{sign}{whole}.{frac:09d}'.rstrip('0') + 's'


def format_timestamp(t: Timestamp) -> str:
    seconds, nanos = divmod(t.nanos, 1_000_000_000)
    moment = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(seconds=seconds)
    text = moment.strftime('%Y-%m-%dT%H:%M:%S')
    if nanos:
        text += f'.{nanos:09d}'.rstrip('0')
    return text + 'Z'


_DURATION_UNITS = {'ns': 1, 'us': 1_000, 'µs': 1_000, 'μs': 1_000, 'ms': 1_000_000, 's': 1_000_000_000,
                   'm': 60_000_000_000, 'h': 3_600_000_000_000}
_DURATION_PART = re.compile(r'([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)')


def parse_duration(text: str) -> Duration:
    """Go's `time.ParseDuration`."""
    original = text
    sign = 1
    if text[:1] in '+-' and text:
        sign = -1 if text[0] == '-' else 1
        text = text[1:]
    if text == '0':
        return Duration(0)
    if not text:
        raise ValueError(f'time: invalid duration "{original}"')
    total = 0
    pos = 0
    while pos < len(text):
        m = _DURATION_PART.match(text, pos)
        if m is None or m.group(1) in ('', '.'):
            if m is None and re.match(r'[0-9.]+$', text[pos:]):
                raise ValueError(f'time: missing unit in duration "{original}"')
            raise ValueError(f'time: invalid duration "{original}"')
        whole, _, frac = m.group(1).partition('.')
        unit = _DURATION_UNITS[m.group(2)]
        total += int(whole or '0') * unit + (int(frac) * unit // 10 ** len(frac) if frac else 0)
        pos = m.end()
    if total > INT_MAX:
        raise ValueError(f'time: invalid duration "{original}"')
    return Duration(sign * total)


_RFC3339 = re.compile(r'(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$')


def parse_timestamp(text: str) -> Timestamp:
    m = _RFC3339.match(text)
    if m is None:
        raise ValueError(f'parsing time "{text}" as "2006-01-02T15:04:05Z07:00": cannot parse "{text}" as "2006"')
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    moment = datetime.datetime(year, month, day, hour, minute, second, tzinfo=datetime.UTC)
    nanos = int((m.group(7) or '.0')[1:].ljust(9, '0')[:9])
    zone = m.group(8)
    offset = 0
    if zone not in ('Z', 'z'):
        offset = (int(zone[1:3]) * 60 + int(zone[4:6])) * 60 * (1 if zone[0] == '+' else -1)
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
    seconds = (moment - epoch) // datetime.timedelta(seconds=1) - offset
    return Timestamp(seconds * 1_000_000_000 + nanos)


def to_text(value: Any) -> str:
    """`string(x)` for the types that convert."""
    t = type(value)
    if t is str:
        return str(value)
    if t is bool:
        return 'true' if value else 'false'
    if t in (int, UInt):
        return str(int(value))
    if t is float:
        return format_double(value)
    if t is bytes:
        try:
            return str(value.decode('utf-8'))
        except UnicodeDecodeError:
            raise EvalError('invalid UTF-8 in bytes, cannot convert to string') from None
    if t is Duration:
        return format_duration(value)
    if t is Timestamp:
        return format_timestamp(value)
    raise EvalError(f"type conversion error from '{type_name(value)}' to 'string'")
