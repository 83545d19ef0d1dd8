"""Built-ins are decoded into Go structs by real servers: a value of the wrong JSON type is a 400, not a 422.

`check(obj, resource)` finds the first such value by the kind's schema and answers as the API server
does: `Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal bool into Go struct
field Container.spec.containers.image of type string` (the innermost struct, then the field path
without list positions, as Go's encoding/json reports it). Custom resources are validated instead.
"""
from collections.abc import Mapping
from typing import Any

from kopf._cluster import statuses
from kopf._cluster.openapi import kindschemas
from kopf._shared.resourcetable import Resource

Node = Mapping[str, Any]
INT_OR_STRING = 'x-kubernetes-int-or-string'


def check(obj: Any, schema: Node, resource: Resource) -> None:
    found = _first(obj, schema, (), resource.kind)
    if found is not None:
        path, struct, actual, expected = found
        raise statuses.bad_request(
            f'{resource.kind} in version "{resource.version}" cannot be handled as a {resource.kind}: '
            f'json: cannot unmarshal {actual} into Go struct field {struct}.{".".join(path)} of type {expected}')


def _first(value: Any, node: Node, path: tuple[str, ...], struct: str) -> tuple[tuple[str, ...], str, str, str] | None:
    if value is None:
        return None
    if not _matches(value, node):
        return path, struct, _json_kind(value, node), _go_type(node)
    if isinstance(value, dict):
        name = kindschemas.go_type_name(node)
        inner = name.split('.')[-1] if name else struct
        properties: Mapping[str, Any] = node.get('properties') or {}
        additional = node.get('additionalProperties')
        for key, child in value.items():   # map keys are not in Go's field paths; struct fields are
            sub = properties.get(key)
            step = path + (key,) if sub is not None else path
            sub = sub if sub is not None else additional if isinstance(additional, Mapping) else None
            found = _first(child, sub, step, inner) if sub is not None else None
            if found is not None:
                return found
    elif isinstance(value, list) and isinstance(node.get('items'), Mapping):
        for item in value:
            found = _first(item, node['items'], path, struct)
            if found is not None:
                return found
    return None


def _matches(value: Any, node: Node) -> bool:
    if node.get(INT_OR_STRING):
        return isinstance(value, (int, str)) and not isinstance(value, bool)
    expected = node.get('type')
    if expected == 'string':
        return isinstance(value, str)
    if expected == 'integer':
        if isinstance(value, float):
            return value.is_integer()
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == 'number':
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected == 'boolean':
        return isinstance(value, bool)
    if expected == 'array':
        return isinstance(value, list)
    if expected == 'object':
        return isinstance(value, dict)
    return True


def _json_kind(value: Any, node: Node) -> str:
    """As Go's UnmarshalTypeError names the JSON value: `bool`, `string`, `number` (`number 1.5` for integers)."""
    if isinstance(value, bool):
        return 'bool'
    if isinstance(value, (int, float)):
        return f'number {value}' if node.get('type') == 'integer' else 'number'
    if isinstance(value, str):
        return 'string'
    return 'array' if isinstance(value, list) else 'object'


def _go_type(node: Node) -> str:
    name = kindschemas.go_type_name(node)
    if name:
        return name
    kind = node.get('type')
    if kind == 'integer':
        return 'int32' if node.get('format') == 'int32' else 'int64'
    if kind == 'array':
        items = node.get('items')
        return '[]' + (_go_type(items) if isinstance(items, Mapping) else 'interface {}')
    if kind == 'object':
        additional = node.get('additionalProperties')
        return 'map[string]' + (_go_type(additional) if isinstance(additional, Mapping) else 'interface {}')
    return {'string': 'string', 'number': 'float64', 'boolean': 'bool'}.get(str(kind), 'interface {}')
