"""CEL's types as cel-go's checker sees them: kinds, names, parameters, assignability, unification.

`Type` mirrors cel-go's `types.Type`: a kind, a runtime type name, and type parameters; object types
(Kubernetes schemas' objects) carry their fields. The unification helpers (`is_assignable`,
`substitute`, `most_general`, ...) are cel-go's `checker/types.go` and `checker/mapping.go`; `format`
is `FormatCELType`, the text that error messages show.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

DYN, ANY, BOOL, BYTES, DOUBLE, INT, UINT, STRING, NULL = 'dyn', 'any', 'bool', 'bytes', 'double', 'int', 'uint', \
    'string', 'null'
DURATION, TIMESTAMP, LIST, MAP, STRUCT, OPAQUE, TYPE, TYPEPARAM, ERROR = 'duration', 'timestamp', 'list', 'map', \
    'struct', 'opaque', 'type', 'typeparam', 'error'


class Type:
    __slots__ = ('fields', 'kind', 'name', 'params')

    def __init__(self, kind: str, name: str, params: Sequence[Type] = (),
                 fields: Mapping[str, Type] | None = None) -> None:
        self.kind = kind
        self.name = name
        self.params = tuple(params)
        self.fields = fields   # object types: the declared fields (escaped names)

    def __repr__(self) -> str:
        return format(self)

    def exact(self, other: Type | None) -> bool:
        """cel-go's `IsExactType`."""
        if other is None:
            return False
        if self is other:
            return True
        if self.kind != other.kind or len(self.params) != len(other.params) or self.name != other.name:
            return False
        return all(a.exact(b) for a, b in zip(self.params, other.params, strict=False))

    def is_dyn(self) -> bool:
        return self.kind in (DYN, ANY, TYPEPARAM)

    def assignable_from(self, other: Type) -> bool:
        """cel-go's `defaultIsAssignableType`."""
        if self is other or self.is_dyn():
            return True
        if self.kind != other.kind or self.name != other.name or len(self.params) != len(other.params):
            return False
        return all(a.assignable_from(b) for a, b in zip(self.params, other.params, strict=False))


DynType = Type(DYN, 'dyn')
AnyType = Type(ANY, 'google.protobuf.Any')
BoolType = Type(BOOL, 'bool')
BytesType = Type(BYTES, 'bytes')
DoubleType = Type(DOUBLE, 'double')
IntType = Type(INT, 'int')
UintType = Type(UINT, 'uint')
StringType = Type(STRING, 'string')
NullType = Type(NULL, 'null_type')
DurationType = Type(DURATION, 'google.protobuf.Duration')
TimestampType = Type(TIMESTAMP, 'google.protobuf.Timestamp')
ErrorType = Type(ERROR, '*error*')
TypeType = Type(TYPE, 'type')


def list_of(elem: Type) -> Type:
    return Type(LIST, 'list', (elem,))


def map_of(key: Type, value: Type) -> Type:
    return Type(MAP, 'map', (key, value))


def type_of(param: Type) -> Type:
    return Type(TYPE, 'type', (param,))


def opaque(name: str, *params: Type) -> Type:
    return Type(OPAQUE, name, params)


def optional_of(param: Type) -> Type:
    return Type(OPAQUE, 'optional_type', (param,))


def param(name: str) -> Type:
    return Type(TYPEPARAM, name)


def object_type(name: str, fields: Mapping[str, Type]) -> Type:
    return Type(STRUCT, name, (), fields)


def format(t: Type) -> str:
    """cel-go's `FormatCELType`."""
    kind = t.kind
    if kind == ANY:
        return 'any'
    if kind == DURATION:
        return 'duration'
    if kind == ERROR:
        return '!error!'
    if kind == NULL:
        return 'null'
    if kind == TIMESTAMP:
        return 'timestamp'
    if kind == TYPEPARAM:
        return t.name
    if kind == OPAQUE and t.name == 'function':
        return format_function(t.params[0], t.params[1:], False)
    if not t.params:
        return t.name
    return f"{t.name}({', '.join(format(p) for p in t.params)})"


def format_function(result: Type | None, args: Sequence[Type], is_instance: bool) -> str:
    """cel-go's `formatFunctionDeclType`."""
    parts = [format(a) for a in args]
    if is_instance and parts:
        target, parts = parts[0], parts[1:]
        text = f"{target}.({', '.join(parts)})"
    else:
        text = f"({', '.join(parts)})"
    if result is not None:
        text += ' -> ' + format(result)
    return text


def is_dyn_or_error(t: Type) -> bool:
    return t.kind in (DYN, ANY, ERROR)


def unwrap_optional(t: Type) -> tuple[Type, bool]:
    if t.kind == OPAQUE and t.name == 'optional_type':
        return t.params[0], True
    return t, False


# ---- unification (cel-go checker/types.go, mapping.go) ----

class Mapping_:
    __slots__ = ('subs',)

    def __init__(self, subs: dict[str, Type] | None = None) -> None:
        self.subs = dict(subs or {})

    def add(self, frm: Type, to: Type) -> None:
        self.subs[format(frm)] = to

    def find(self, frm: Type) -> Type | None:
        return self.subs.get(format(frm))

    def copy(self) -> Mapping_:
        return Mapping_(self.subs)


def is_equal_or_less_specific(t1: Type, t2: Type) -> bool:
    if t1.kind in (DYN, ANY, TYPEPARAM):
        return True
    if t2.kind in (DYN, ANY, TYPEPARAM):
        return False
    if t1.kind != t2.kind:
        return False
    if t1.kind == OPAQUE:
        return (t1.name == t2.name and len(t1.params) == len(t2.params)
                and all(is_equal_or_less_specific(a, b) for a, b in zip(t1.params, t2.params, strict=False)))
    if t1.kind == LIST:
        return is_equal_or_less_specific(t1.params[0], t2.params[0])
    if t1.kind == MAP:
        return (is_equal_or_less_specific(t1.params[0], t2.params[0])
                and is_equal_or_less_specific(t1.params[1], t2.params[1]))
    if t1.kind == TYPE:
        return True
    return t1.exact(t2)


def internal_is_assignable(m: Mapping_, t1: Type, t2: Type) -> bool:
    kind1, kind2 = t1.kind, t2.kind
    if kind2 == TYPEPARAM:
        valid, has_sub = is_valid_type_substitution(m, t1, t2)
        if valid:
            return True
        if has_sub:
            return False
    if kind1 == TYPEPARAM:
        valid, _ = is_valid_type_substitution(m, t2, t1)
        return valid
    if is_dyn_or_error(t1) or is_dyn_or_error(t2):
        return True
    if kind1 == NULL:
        return is_nullable(t2)
    if kind2 == NULL:
        return is_nullable(t1)
    if kind1 in (BOOL, BYTES, DOUBLE, INT, STRING, UINT, ANY, DURATION, TIMESTAMP, STRUCT):
        return t2.assignable_from(t1)
    if kind1 == TYPE:
        return kind2 == TYPE
    if kind1 in (OPAQUE, LIST, MAP):
        return (kind1 == kind2 and t1.name == t2.name
                and internal_is_assignable_list(m, t1.params, t2.params))
    return False


def is_nullable(t: Type) -> bool:
    return t.kind in (OPAQUE, STRUCT, ANY, DURATION, TIMESTAMP)


def is_valid_type_substitution(m: Mapping_, t1: Type, t2: Type) -> tuple[bool, bool]:
    if t1.kind == t2.kind and t1.exact(t2):
        return True, True
    t2sub = m.find(t2)
    if t2sub is not None:
        if t1.kind == t2sub.kind and t1.exact(t2sub):
            return True, True
        if internal_is_assignable(m, t1, t2sub):
            t2new = most_general(t1, t2sub)
            if not_referenced_in(m, t2, t2new):
                m.add(t2, t2new)
            return True, True
        return False, True
    if not_referenced_in(m, t2, t1):
        m.add(t2, t1)
        return True, False
    return False, False


def internal_is_assignable_list(m: Mapping_, l1: Sequence[Type], l2: Sequence[Type]) -> bool:
    if len(l1) != len(l2):
        return False
    return all(internal_is_assignable(m, a, b) for a, b in zip(l1, l2, strict=False))


def is_assignable(m: Mapping_, t1: Type, t2: Type) -> Mapping_ | None:
    copy = m.copy()
    return copy if internal_is_assignable(copy, t1, t2) else None


def is_assignable_list(m: Mapping_, l1: Sequence[Type], l2: Sequence[Type]) -> Mapping_ | None:
    copy = m.copy()
    return copy if internal_is_assignable_list(copy, l1, l2) else None


def most_general(t1: Type, t2: Type) -> Type:
    return t1 if is_equal_or_less_specific(t1, t2) else t2


def not_referenced_in(m: Mapping_, t: Type, within: Type) -> bool:
    if t.exact(within):
        return False
    if within.kind == TYPEPARAM:
        sub = m.find(within)
        return True if sub is None else not_referenced_in(m, t, sub)
    if within.kind in (OPAQUE, LIST, MAP, TYPE):
        return all(not_referenced_in(m, t, p) for p in within.params)
    return True


def substitute(m: Mapping_, t: Type, to_dyn: bool) -> Type:
    sub = m.find(t)
    if sub is not None:
        return substitute(m, sub, to_dyn)
    kind = t.kind
    if to_dyn and kind == TYPEPARAM:
        return DynType
    if kind in (OPAQUE, LIST, MAP) or (kind == TYPE and t.params):
        return Type(kind, t.name, [substitute(m, p, to_dyn) for p in t.params], t.fields)
    return t
