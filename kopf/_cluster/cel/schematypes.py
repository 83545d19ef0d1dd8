"""CEL types of OpenAPI schemas, as k8s.io/apiserver's `SchemaDeclType` derives them, and the values.

`decl_type(schema, root)` returns a `Decl`: the CEL type of values at that schema (objects become
object types with their declared fields, escaped as Kubernetes escapes them; maps, lists, formats
become their CEL types), with the size facts the cost estimator needs (`max_elements`,
`min_serialized_size`). `Decl.convert(value)` turns a JSON value into the CEL value for that type:
numbers of `type: number` become doubles, `date-time`/`date` strings timestamps, `duration` strings
durations, `byte` strings bytes, and object keys their escaped names.
"""
from __future__ import annotations

import base64
import itertools
import re
from collections.abc import Callable, Mapping
from typing import Any

from kopf._cluster.cel import celtypes
from kopf._cluster.cel.celtypes import Type
from kopf._cluster.cel.celvalues import parse_duration, parse_timestamp

MAX_REQUEST_SIZE = 3 * 1024 * 1024
RESERVED = {'true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if',
            'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while'}
_counter = itertools.count(1)


class Decl:
    __slots__ = ('converter', 'elem', 'fields', 'key', 'max_elements', 'min_size', 'names', 'type')

    def __init__(self, t: Type, min_size: int, max_elements: int = 0) -> None:
        self.type = t
        self.min_size = min_size
        self.max_elements = max_elements
        self.fields: dict[str, Decl] = {}       # escaped name -> declaration (objects)
        self.names: dict[str, str] = {}         # escaped name -> the JSON property name
        self.elem: Decl | None = None
        self.key: Decl | None = None
        self.converter: Callable[[Any], Any] | None = None

    def convert(self, value: Any) -> Any:
        return value if self.converter is None else self.converter(value)


def escape(name: str) -> str | None:
    """Kubernetes' `Escape`: a property name as a CEL identifier, or None when it cannot be one."""
    if not name or name[0].isdigit():
        return None
    if name in RESERVED:
        return f'__{name}__'
    if not re.fullmatch(r'[a-zA-Z0-9_./-]*', name):
        return None
    if re.fullmatch(r'[a-zA-Z0-9_]*', name) and '__' not in name:
        return name

    def sub(m: re.Match[str]) -> str:
        return {'__': '__underscores__', '.': '__dot__', '-': '__dash__', '/': '__slash__'}[m.group()]
    return re.sub(r'__|[-./]', sub, name)


def with_type_and_object_meta(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    props = schema.get('properties') or {}
    meta = props.get('metadata') or {}
    meta_props = meta.get('properties') or {}
    if (props.get('kind', {}).get('type') == 'string' and props.get('apiVersion', {}).get('type') == 'string'
            and meta.get('type') == 'object' and meta_props.get('name', {}).get('type') == 'string'
            and meta_props.get('generateName', {}).get('type') == 'string'):
        return schema
    props = dict(props)
    props['kind'] = {'type': 'string'}
    props['apiVersion'] = {'type': 'string'}
    props['metadata'] = {'type': 'object', 'properties': {'name': {'type': 'string'},
                                                           'generateName': {'type': 'string'}}}
    return {**schema, 'properties': props}


def decl_type(schema: Mapping[str, Any] | None, root: bool = False, name: str | None = None) -> Decl | None:
    """The declaration of a schema's values; object types are named `name` (a fresh `selfTypeN` if None)."""
    decl = _decl(schema, root)
    if decl is not None:
        assign_names(decl, name or f'selfType{next(_counter)}')
    return decl


def assign_names(decl: Decl, name: str) -> None:
    t = decl.type
    if t.kind == celtypes.STRUCT:
        for field, sub in decl.fields.items():
            assign_names(sub, f'{name}.{field}')
        decl.type = celtypes.object_type(name, {k: v.type for k, v in decl.fields.items()})
    elif t.kind == celtypes.MAP and decl.elem is not None:
        assign_names(decl.elem, f'{name}.@elem')
        decl.type = celtypes.map_of(celtypes.StringType, decl.elem.type)
    elif t.kind == celtypes.LIST and decl.elem is not None:
        assign_names(decl.elem, f'{name}.@idx')
        decl.type = celtypes.list_of(decl.elem.type)


def _decl(schema: Mapping[str, Any] | None, root: bool) -> Decl | None:
    if schema is None:
        return None
    if schema.get('x-kubernetes-int-or-string'):
        max_length = schema.get('maxLength')
        dyn = Decl(celtypes.DynType, 1, max(max_length, 0) * 4 if max_length is not None else MAX_REQUEST_SIZE - 2)
        return dyn
    if root:
        schema = with_type_and_object_meta(schema)
    kind = schema.get('type')
    if kind == 'array':
        return _array(schema)
    if kind == 'object':
        return _object(schema)
    if kind == 'string':
        return _string(schema)
    if kind == 'boolean':
        return Decl(celtypes.BoolType, 4)
    if kind == 'number':
        decl = Decl(celtypes.DoubleType, 1)
        decl.converter = lambda v: float(v) if type(v) is int else v
        return decl
    if kind == 'integer':
        return Decl(celtypes.IntType, 1)
    return None


def _array(schema: Mapping[str, Any]) -> Decl | None:
    items = schema.get('items')
    if not isinstance(items, Mapping):
        return None
    elem = _decl(items, bool(items.get('x-kubernetes-embedded-resource')))
    if elem is None:
        return None
    max_items = schema.get('maxItems')
    max_elements = max(max_items, 0) if max_items is not None else (MAX_REQUEST_SIZE - 2) // (elem.min_size + 1)
    decl = Decl(celtypes.list_of(elem.type), 2, max_elements)
    decl.elem = elem
    if elem.converter is not None:
        convert = elem.converter
        decl.converter = lambda v: [convert(x) for x in v] if type(v) is list else v
    return decl


def _object(schema: Mapping[str, Any]) -> Decl | None:
    additional = schema.get('additionalProperties')
    if isinstance(additional, Mapping):
        elem = _decl(additional, bool(additional.get('x-kubernetes-embedded-resource')))
        if elem is None:
            return None
        max_props = schema.get('maxProperties')
        max_elements = max(max_props, 0) if max_props is not None else (MAX_REQUEST_SIZE - 2) // (elem.min_size + 6)
        decl = Decl(celtypes.map_of(celtypes.StringType, elem.type), 2, max_elements)
        decl.elem = elem
        decl.key = Decl(celtypes.StringType, 2, MAX_REQUEST_SIZE - 2)
        if elem.converter is not None:
            convert = elem.converter
            decl.converter = lambda v: {k: convert(x) for k, x in v.items()} if type(v) is dict else v
        return decl
    required = set(schema.get('required') or ())
    min_size = 2
    decl = Decl(celtypes.object_type('object', {}), 2)
    for prop, sub in (schema.get('properties') or {}).items():
        if not isinstance(sub, Mapping):
            continue
        field = _decl(sub, bool(sub.get('x-kubernetes-embedded-resource')))
        if field is None:
            continue
        escaped = escape(prop)
        if escaped is not None:
            decl.fields[escaped] = field
            decl.names[escaped] = prop
        if prop in required and 'default' not in sub:
            min_size += len(prop) + field.min_size + 4
    decl.min_size = min_size
    decl.type = celtypes.object_type('object', {k: v.type for k, v in decl.fields.items()})
    decl.converter = object_converter(decl)
    return decl


def object_converter(decl: Decl) -> Callable[[Any], Any] | None:
    renamed = {prop: escaped for escaped, prop in decl.names.items() if prop != escaped}
    nested = {prop: decl.fields[escaped].converter for escaped, prop in decl.names.items()
              if decl.fields[escaped].converter is not None}
    if not renamed and not nested:
        return None

    def convert(value: Any) -> Any:
        if type(value) is not dict:
            return value
        out = {}
        for key, item in value.items():
            fn = nested.get(key)
            out[renamed.get(key, key)] = fn(item) if fn is not None and item is not None else item
        return out
    return convert


def _string(schema: Mapping[str, Any]) -> Decl:
    fmt = schema.get('format')
    per_request = MAX_REQUEST_SIZE - 2
    if fmt == 'byte':
        max_length = schema.get('maxLength')
        decl = Decl(celtypes.BytesType, 2, max(max_length, 0) if max_length is not None else per_request)
        decl.converter = lambda v: base64.b64decode(v) if type(v) is str else v
        return decl
    if fmt == 'duration':
        decl = Decl(celtypes.DurationType, 3, 32)
        decl.converter = lambda v: parse_duration(v) if type(v) is str else v
        return decl
    if fmt in ('date', 'date-time'):
        decl = Decl(celtypes.TimestampType, 12 if fmt == 'date' else 21, 12 if fmt == 'date' else 32)
        decl.converter = (lambda v: parse_timestamp(f'{v}T00:00:00Z') if type(v) is str else v) if fmt == 'date' \
            else (lambda v: parse_timestamp(v) if type(v) is str else v)
        return decl
    max_length = schema.get('maxLength')
    if max_length is not None:
        max_elements = max(max_length, 0) * 4
    elif schema.get('enum'):
        max_elements = max((len(e) for e in schema['enum'] if isinstance(e, str)), default=0)
    else:
        max_elements = per_request
    return Decl(celtypes.StringType, 2, max_elements)
