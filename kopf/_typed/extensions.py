"""The markers' extensions on a generated OpenAPI node, and the refusals of a marker where it does not fit
(the API server's own rules for the `x-kubernetes-*` extensions, said before it is asked). Pure."""
from typing import Any

from kopf._typed import markers

Schema = dict[str, Any]
SCALARS = {'string', 'integer', 'number', 'boolean'}


class SchemaError(ValueError):
    """A model with no structural schema: the message names the class, the field, and what to use instead."""


def apply(marker: markers.Marker, schema: Schema, where: str) -> None:
    name = type(marker).__name__
    if isinstance(marker, markers.Rule):
        schema.setdefault('x-kubernetes-validations', []).append(marker.as_openapi())
    elif isinstance(marker, markers.ListSet):
        items = _array_items(schema, name, where)
        if not _is_scalar(items):
            raise SchemaError(f'{where}: kopf.ListSet needs scalar items (strings, numbers, booleans); '
                              f'for objects, use kopf.ListMap("key").')
        _set_once(schema, 'x-kubernetes-list-type', 'set', where)
    elif isinstance(marker, markers.ListMap):
        _list_map(marker, schema, where)
    elif isinstance(marker, markers.Atomic):
        if schema.get('type') == 'array':
            _set_once(schema, 'x-kubernetes-list-type', 'atomic', where)
        else:
            _set_once(_object(schema, name, where), 'x-kubernetes-map-type', 'atomic', where)
    elif isinstance(marker, markers.Granular):
        _set_once(_object(schema, name, where), 'x-kubernetes-map-type', 'granular', where)
    elif isinstance(marker, markers.PreserveUnknownFields):
        _object(schema, name, where)['x-kubernetes-preserve-unknown-fields'] = True
    elif isinstance(marker, markers.EmbeddedResource):
        _object(schema, name, where)['x-kubernetes-embedded-resource'] = True
        if 'properties' not in schema and 'additionalProperties' not in schema:
            schema['x-kubernetes-preserve-unknown-fields'] = True
    elif isinstance(marker, markers.Format):
        if schema.get('type') != 'string':
            raise SchemaError(f'{where}: kopf.Format({marker.name!r}) applies to strings only.')
        schema['format'] = marker.name
    else:
        raise SchemaError(f'{where}: {marker!r} is not a schema marker.')


def _list_map(marker: markers.ListMap, schema: Schema, where: str) -> None:
    items = _array_items(schema, 'ListMap', where)
    properties = items.get('properties') or {}
    if items.get('type') != 'object' or not properties:
        raise SchemaError(f'{where}: kopf.ListMap needs items that are models (objects with the key fields).')
    for key in marker.keys:
        if key not in properties:
            raise SchemaError(f'{where}: kopf.ListMap key {key!r} is not a field of the items '
                              f'(their fields: {", ".join(properties)}).')
        if not _is_scalar(properties[key]):
            raise SchemaError(f'{where}: kopf.ListMap key {key!r} must be a scalar (a string, number or boolean).')
        if key not in items.get('required', ()) and 'default' not in properties[key]:
            raise SchemaError(f'{where}: kopf.ListMap key {key!r} must be a required field of the items '
                              f'or have a default (the server cannot key an item without it).')
    _set_once(schema, 'x-kubernetes-list-type', 'map', where)
    schema['x-kubernetes-list-map-keys'] = list(marker.keys)


def _array_items(schema: Schema, name: str, where: str) -> Schema:
    if schema.get('type') != 'array':
        raise SchemaError(f'{where}: kopf.{name} applies to lists only.')
    items: Schema = schema['items']
    return items


def _object(schema: Schema, name: str, where: str) -> Schema:
    if schema.get('type') != 'object':
        raise SchemaError(f'{where}: kopf.{name} applies to models and dicts only.')
    return schema


def _is_scalar(schema: Schema) -> bool:
    return schema.get('type') in SCALARS or bool(schema.get('x-kubernetes-int-or-string'))


def _set_once(schema: Schema, key: str, value: str, where: str) -> None:
    if schema.get(key, value) != value:
        raise SchemaError(f'{where}: {key} is both {schema[key]!r} and {value!r}: keep one marker.')
    schema[key] = value
