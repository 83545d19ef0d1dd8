"""Field paths: parsing `'spec.x.y'` / `['spec', 'x']` into tuples, and reading/writing nested dicts by them."""
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any, Final, TypeGuard

#: A parsed field path: `('spec', 'x', 'y')`.
FieldPath = tuple[str, ...]
#: A field as the decorators and helpers take it: `'spec.x.y'`, or a sequence `['spec', 'x', 'y']`.
FieldSpec = str | Sequence[str]


class _Missing:
    def __repr__(self) -> str:
        return 'MISSING'


MISSING: Final[Any] = _Missing()  # a field that is absent, as distinct from a field that is None


def parse_field(spec: FieldSpec | None) -> FieldPath:
    """Turn a user's field spec (dotted string, list or tuple) into a tuple path; None is the root."""
    if spec is None:
        return ()
    if isinstance(spec, str):
        return tuple(part for part in spec.split('.') if part) if spec else ()
    if isinstance(spec, Sequence) and all(isinstance(part, str) for part in spec):
        return tuple(spec)
    raise TypeError(f'A field must be a dotted string or a sequence of strings, got {spec!r}.')


def is_mapping(value: Any) -> TypeGuard[Mapping[Any, Any]]:
    """`isinstance(value, Mapping)`, quick for dicts, their subclasses and None (no ABC check)."""
    return isinstance(value, dict) or (value is not None and isinstance(value, Mapping))


def is_mutable_mapping(value: Any) -> TypeGuard[MutableMapping[Any, Any]]:
    """`isinstance(value, MutableMapping)`, quick for dicts, their subclasses and None (no ABC check)."""
    return isinstance(value, dict) or (value is not None and isinstance(value, MutableMapping))


def resolve(obj: Mapping[str, Any] | None, path: FieldPath, default: Any = MISSING) -> Any:
    """The value at the path, or `default` if any key on the way is absent or not a mapping."""
    current: Any = obj
    for key in path:
        if type(current) is dict:  # the common case: no ABC check
            current = current.get(key, MISSING)
            if current is MISSING:
                return default
        elif is_mapping(current) and key in current:
            current = current[key]
        else:
            return default
    return current


def ensure(obj: MutableMapping[str, Any], path: FieldPath, value: Any) -> None:
    """Set the value at the path, creating the intermediate dicts as needed."""
    if not path:
        raise ValueError('Cannot replace the root of an object.')
    current: MutableMapping[str, Any] = obj
    for key in path[:-1]:
        child = current.get(key)
        if not is_mutable_mapping(child):
            child = current[key] = {}
        current = child
    current[path[-1]] = value


def remove(obj: MutableMapping[str, Any], path: FieldPath) -> None:
    """Delete the value at the path if it exists, and the parents it leaves empty."""
    if not path:
        raise ValueError('Cannot remove the root of an object.')
    parent = resolve(obj, path[:-1], None) if len(path) > 1 else obj
    if is_mutable_mapping(parent) and path[-1] in parent:
        del parent[path[-1]]
        if not parent and len(path) > 1:
            remove(obj, path[:-1])
