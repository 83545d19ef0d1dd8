"""Uniform access to a Kubernetes object in any of the shapes operator authors build it in.

Shapes: a plain (mutable) mapping; a pykube-ng object (its `.obj` dict); a model of the official
`kubernetes` client or of `kubernetes_asyncio` (attributes in snake_case, nested models, e.g.
`metadata` a `V1ObjectMeta`). Models are recognised by duck-typing (`attribute_map` and
`openapi_types` on the class), so neither client is ever imported here; the model classes needed
to fill absent fields are taken from the package of the model being filled (already imported).

Fields are always named as in the Kubernetes API (camelCase: `generateName`, `ownerReferences`);
for models they are translated to attributes (`generate_name`). Some models (the pydantic-based
`kubernetes` client ≥ 35) copy a dict or list on assignment: `ensure()` therefore re-reads the
field after setting it, and callers mutate what `ensure()` returns.
"""
import re
import sys
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

_CAMEL_HUMP = re.compile(r'(?<=[a-z0-9])([A-Z])')
_TYPE_NAME = re.compile(r'^(?:list|List)\[(\w+)\]$|^(\w+)$')


def is_model(obj: Any) -> bool:
    """A generated model of the `kubernetes` or `kubernetes_asyncio` client (or alike)."""
    cls = type(obj)
    return (not isinstance(obj, Mapping)
            and isinstance(getattr(cls, 'attribute_map', None), dict)
            and isinstance(getattr(cls, 'openapi_types', None), dict))


def is_pykube(obj: Any) -> bool:
    """A pykube-ng object: the raw body is its `.obj` dict."""
    return not isinstance(obj, Mapping) and not is_model(obj) and isinstance(getattr(obj, 'obj', None), MutableMapping)


def is_object(obj: Any) -> bool:
    return isinstance(obj, Mapping) or is_model(obj) or is_pykube(obj)


def unwrap(obj: Any) -> Any:
    """The node to read & write: the `.obj` dict of a pykube object, else the object itself."""
    return obj.obj if is_pykube(obj) else obj


def iterate(objs: Any) -> Iterator[Any]:
    """Every object in `objs`: one object, or (nested) iterables of them; pykube objects unwrapped."""
    if is_object(objs):
        yield unwrap(objs)
    elif isinstance(objs, (str, bytes)) or not hasattr(objs, '__iter__'):
        raise TypeError(f'Expected a Kubernetes object or an iterable of them, got {type(objs).__name__}: {objs!r}')
    else:
        for obj in objs:
            yield from iterate(obj)


def _attribute(node: Any, field: str) -> str:
    """The model's attribute for an API field name (`generateName` → `generate_name`)."""
    attribute_map: dict[str, str] = type(node).attribute_map
    if field in attribute_map:
        return field
    for attribute, api_name in attribute_map.items():
        if api_name == field:
            return attribute
    return _CAMEL_HUMP.sub(r'_\1', field).lower()


def get(node: Any, field: str, default: Any = None) -> Any:
    """The field's value, or `default` if absent or None."""
    node = unwrap(node)
    if isinstance(node, Mapping):
        value = node.get(field)
    elif is_model(node):
        value = getattr(node, _attribute(node, field), None)
    else:
        value = None
    return default if value is None else value


def resolve(node: Any, path: tuple[str, ...]) -> Any:
    """The value at a path of API field names, or None if anything on the way is absent."""
    for field in path:
        if not is_object(node):
            return None
        node = get(node, field)
    return node


def put(node: Any, field: str, value: Any) -> Any:
    """Set the field; return the value as stored (models may copy or convert it on assignment)."""
    node = unwrap(node)
    if isinstance(node, MutableMapping):
        node[field] = value
        return node[field]
    if is_model(node):
        attribute = _attribute(node, field)
        setattr(node, attribute, value)
        return getattr(node, attribute)
    raise TypeError(f'Cannot modify a read-only or unsupported object: {type(node).__name__}')


def drop(node: Any, field: str) -> None:
    """Remove the field (for models: set it to None)."""
    node = unwrap(node)
    if isinstance(node, MutableMapping):
        node.pop(field, None)
    elif is_model(node):
        attribute = _attribute(node, field)
        if getattr(node, attribute, None) is not None:
            setattr(node, attribute, None)
    else:
        raise TypeError(f'Cannot modify a read-only or unsupported object: {type(node).__name__}')


def ensure(node: Any, field: str) -> Any:
    """The field's value, created empty if absent: a dict/list, or a model of the field's declared type."""
    value = get(node, field)
    if value is None:
        value = put(node, field, _empty(node, field))
    return value


def make_item(node: Any, field: str, data: Mapping[str, Any]) -> Any:
    """An item for the node's list field built from an API-shaped dict: a model if the node is a model."""
    if not is_model(node):
        return dict(data)
    cls = _model_class(node, _declared_type(node, field))
    inverse = {api_name: attribute for attribute, api_name in cls.attribute_map.items()}
    return cls(**{inverse.get(key, key): value for key, value in data.items()})


def _declared_type(node: Any, field: str) -> str:
    declared: str = type(node).openapi_types.get(_attribute(node, field), '')
    return declared.replace(' ', '')


def _empty(node: Any, field: str) -> Any:
    if not is_model(node):
        return [] if field == 'ownerReferences' else {}
    declared = _declared_type(node, field)
    if declared.lower().startswith('list'):
        return []
    if declared.lower().startswith('dict') or declared in ('', 'object'):
        return {}
    return _model_class(node, declared)()


def _model_class(node: Any, declared: str) -> Any:
    """The model class named by a declared type (`V1ObjectMeta`, `list[V1OwnerReference]`) near the node's class."""
    match = _TYPE_NAME.match(declared)
    name = (match.group(1) or match.group(2)) if match else None
    package = type(node).__module__  # e.g. kubernetes.client.models.v1_pod, then its parents
    while name and package:
        cls = getattr(sys.modules.get(package), name, None)
        if isinstance(cls, type):
            return cls
        package = package.rpartition('.')[0]
    raise TypeError(f'Cannot find the model class {declared!r} for {type(node).__name__}.')
