"""Structural pruning of objects by OpenAPI v3 schemas, as kube-apiserver does it.

Pure: dicts in, dicts out; no I/O. Shared by the emulator (which prunes what it stores) and by the
operator (which predicts what a write would lose before making it).

Usage::

    pruned = schemas.prune(body, crd_version['schema']['openAPIV3Schema'])   # in place
    pruned += schemas.normalise_metadata(body)                               # unknown metadata keys
    warnings = [f'unknown field "{schemas.format_path(p)}"' for p in pruned]
    if not schemas.survives(schema, ('status', 'kopf', 'progress', 'create_fn')): ...

Paths are `FieldPath` tuples of strings. Array positions are `Index` values: a `str` subclass
holding the decimal position (so `Index(0) == '0'`), which lets `format_path` render them as
`[0]` the way the API server writes them (`spec.containers[0].junk`).

Schemas are plain mappings in the OpenAPI v3 / `JSONSchemaProps` shape. They may be cyclic graphs
(built-in schemas link recursive types such as `JSONSchemaProps` to themselves): the algorithms
here only ever descend along the value, so cycles are harmless. `$ref` is not resolved here.

`schema=None` at the top level means "no schema known": nothing is pruned and everything survives
(the API server does not prune kinds without a structural schema). Inside a schema, a missing child
schema means "no schema for this value": every key of an object there is pruned.
"""
from collections.abc import Mapping, MutableMapping
from typing import Any, Final

from kopf._shared.fields import MISSING, FieldPath

_STR: Final[Mapping[str, Any]] = {'type': 'string'}
_INT: Final[Mapping[str, Any]] = {'type': 'integer'}
_BOOL: Final[Mapping[str, Any]] = {'type': 'boolean'}
_STR_MAP: Final[Mapping[str, Any]] = {'type': 'object', 'additionalProperties': _STR}

# ObjectMeta as a structural schema: what survives when metadata is decoded through the Go struct.
OBJECT_META_SCHEMA: Final[Mapping[str, Any]] = {'type': 'object', 'properties': {
    'name': _STR, 'generateName': _STR, 'namespace': _STR, 'selfLink': _STR, 'uid': _STR,
    'resourceVersion': _STR, 'generation': _INT, 'creationTimestamp': _STR, 'deletionTimestamp': _STR,
    'deletionGracePeriodSeconds': _INT, 'labels': _STR_MAP, 'annotations': _STR_MAP,
    'ownerReferences': {'type': 'array', 'items': {'type': 'object', 'properties': {
        'apiVersion': _STR, 'kind': _STR, 'name': _STR, 'uid': _STR, 'controller': _BOOL, 'blockOwnerDeletion': _BOOL,
    }}},
    'finalizers': {'type': 'array', 'items': _STR},
    'managedFields': {'type': 'array', 'items': {'type': 'object', 'properties': {
        'manager': _STR, 'operation': _STR, 'apiVersion': _STR, 'time': _STR, 'fieldsType': _STR,
        'fieldsV1': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True}, 'subresource': _STR,
    }}},
}}
OBJECT_META_FIELDS: Final[frozenset[str]] = frozenset(OBJECT_META_SCHEMA['properties'])

# The keys of a resource root (or an x-kubernetes-embedded-resource) that pruning never touches.
RESOURCE_KEYS: Final[frozenset[str]] = frozenset({'apiVersion', 'kind', 'metadata'})

PRESERVE = 'x-kubernetes-preserve-unknown-fields'
EMBEDDED = 'x-kubernetes-embedded-resource'
INT_OR_STRING = 'x-kubernetes-int-or-string'


class Index(str):
    """A position in an array, as a path element: a `str` (equal to `'3'`) that remembers it is one."""

    __slots__ = ()

    def __new__(cls, position: int) -> 'Index':
        return super().__new__(cls, str(position))


def format_path(path: FieldPath) -> str:
    """Render a path the way the API server does in warnings and causes: `spec.containers[0].name`."""
    text = ''
    for part in path:
        if isinstance(part, Index):
            text += f'[{part}]'
        else:
            text += f'.{part}' if text else part
    return text


def prune(obj: dict[str, Any], schema: Mapping[str, Any] | None, *, embedded_root: bool = True) -> list[FieldPath]:
    """Drop the fields the schema does not declare, in place; return the dropped paths in walk order.

    `embedded_root=True` treats `obj` as a resource root: its `apiVersion`, `kind` and `metadata` are
    never pruned here (see `normalise_metadata` for what happens to metadata). Pass False to prune a
    sub-value (e.g. a `status` alone, with the `status` sub-schema).
    """
    if schema is None:
        return []
    return _walk(obj, schema, embedded_root=embedded_root, mutate=True)


def unknown_fields(obj: Any, schema: Mapping[str, Any] | None, *, embedded_root: bool = True) -> list[FieldPath]:
    """The paths that `prune` would drop, without modifying `obj`."""
    if schema is None:
        return []
    return _walk(obj, schema, embedded_root=embedded_root, mutate=False)


def _walk(obj: Any, schema: Mapping[str, Any], *, embedded_root: bool, mutate: bool) -> list[FieldPath]:
    if embedded_root and not schema.get(EMBEDDED):
        schema = {**schema, EMBEDDED: True}
    pruned: list[FieldPath] = []
    _prune(obj, schema, (), pruned, mutate)
    return pruned


def normalise_metadata(obj: MutableMapping[str, Any]) -> list[FieldPath]:
    """Drop what ObjectMeta does not have from the root metadata (deeply, e.g. in ownerReferences); return the paths.

    Metadata of nested `x-kubernetes-embedded-resource` objects is normalised by `prune` itself.
    """
    return _walk_metadata(obj, mutate=True)


def unknown_metadata_fields(obj: Mapping[str, Any]) -> list[FieldPath]:
    """The paths that `normalise_metadata` would drop, without modifying `obj`."""
    return _walk_metadata(obj, mutate=False)


def _walk_metadata(obj: Mapping[str, Any], *, mutate: bool) -> list[FieldPath]:
    metadata = obj.get('metadata')
    if not isinstance(metadata, dict):
        return []
    pruned: list[FieldPath] = []
    _prune(metadata, OBJECT_META_SCHEMA, ('metadata',), pruned, mutate)
    return pruned


def survives(schema: Mapping[str, Any] | None, path: FieldPath, *, value: Any = MISSING) -> bool:
    """Would a value placed at this path of a resource survive pruning by this schema?

    By default, this answers for the key at the end of the path: the value stays, though its own
    contents may still be pruned if the schema there declares less than the value holds. Pass the
    intended `value` to also require that nothing inside it gets pruned. Array positions in the path
    are decimal strings (or `Index` values). `schema=None` (unknown) means nothing is ever pruned.
    """
    if schema is None:
        return True
    node: Mapping[str, Any] | None = schema
    inherited = False  # items of a preserve-unknown array keep unknown fields even without the flag
    for depth, key in enumerate(path):
        if node is None:
            return False
        if (depth == 0 or node.get(EMBEDDED)) and key in RESOURCE_KEYS:
            # Skipped by pruning if a string (apiVersion, kind) or a map (metadata, then normalised).
            if depth == len(path) - 1 and value is not MISSING and not _is_resource_key(key, value):
                return False
            if key != 'metadata':
                return depth == len(path) - 1
            node, inherited = OBJECT_META_SCHEMA, False
            continue
        preserving = inherited or bool(node.get(PRESERVE))
        child = _child_schema(node, key)
        if child is _UNDECLARED:
            return preserving  # kept untouched under preserve-unknown, dropped otherwise
        inherited = preserving and child is node.get('items') and not _is_declared(node, key)
        node = child
    if value is MISSING:
        return True
    return not _unknown_in_value(value, node, preserving=inherited)


def _is_declared(node: Mapping[str, Any], key: str) -> bool:
    properties = node.get('properties')
    return (isinstance(properties, Mapping) and key in properties) or 'additionalProperties' in node


_UNDECLARED: Final[Any] = object()  # a key that neither properties, nor additionalProperties, nor items cover


def _child_schema(node: Mapping[str, Any], key: str) -> Any:
    properties = node.get('properties')
    if isinstance(properties, Mapping) and key in properties:
        return properties[key]
    additional = node.get('additionalProperties')
    if isinstance(additional, Mapping):
        return additional
    if additional is True:
        return None  # the key is kept; its value is pruned as if it had no schema
    if key.isdigit() and ('items' in node or node.get('type') == 'array'):
        items = node.get('items')
        return items if isinstance(items, Mapping) else None
    return _UNDECLARED


def _unknown_in_value(value: Any, schema: Mapping[str, Any] | None, *, preserving: bool) -> bool:
    if not isinstance(value, dict | list):
        return False
    pruned: list[FieldPath] = []
    if preserving and schema is not None:
        _skip_prune(value, schema, (), pruned, mutate=False)
    else:
        _prune(value, schema, (), pruned, mutate=False)
    return bool(pruned)


def _prune(value: Any, schema: Mapping[str, Any] | None, path: FieldPath, pruned: list[FieldPath],
           mutate: bool = True) -> None:
    if schema is not None and schema.get(PRESERVE):
        _skip_prune(value, schema, path, pruned, mutate)
    elif isinstance(value, dict):
        if schema is None:
            pruned.extend(path + (key,) for key in value)
            if mutate:
                value.clear()
            return
        _prune_children(value, schema, path, pruned, mutate, keep_unknown=False)
    elif isinstance(value, list):
        items = schema.get('items') if schema is not None else None
        items = items if isinstance(items, Mapping) else None
        for position, item in enumerate(value):
            _prune(item, items, path + (Index(position),), pruned, mutate)


def _skip_prune(value: Any, schema: Mapping[str, Any], path: FieldPath, pruned: list[FieldPath],
                mutate: bool = True) -> None:
    """Under x-kubernetes-preserve-unknown-fields: keep unknown keys, but still prune declared children."""
    if isinstance(value, dict):
        _prune_children(value, schema, path, pruned, mutate, keep_unknown=True)
    elif isinstance(value, list):
        items = schema.get('items')
        if isinstance(items, Mapping):
            for position, item in enumerate(value):
                _skip_prune(item, items, path + (Index(position),), pruned, mutate)


def _prune_children(value: dict[str, Any], schema: Mapping[str, Any], path: FieldPath, pruned: list[FieldPath],
                    mutate: bool, *, keep_unknown: bool) -> None:
    """Prune an object's declared children; its unknown keys are dropped, or kept if `keep_unknown`.

    Under an embedded resource, `apiVersion`/`kind`/`metadata` are not the schema's: the metadata is
    decoded through ObjectMeta instead. When pruning, they count as such only if well-typed; under
    preserve-unknown, any such key is kept as it is.
    """
    embedded = bool(schema.get(EMBEDDED))
    properties = schema.get('properties') or {}
    additional = schema.get('additionalProperties')
    for key in list(value):
        child = value[key]
        if embedded and (key in RESOURCE_KEYS if keep_unknown else _is_resource_key(key, child)):
            if key == 'metadata' and path and isinstance(child, dict):
                _prune(child, OBJECT_META_SCHEMA, path + (key,), pruned, mutate)
            continue
        if key in properties:
            _prune(child, properties[key], path + (key,), pruned, mutate)
        elif isinstance(additional, Mapping) or additional is True:
            sub = additional if isinstance(additional, Mapping) else None
            _prune(child, sub, path + (key,), pruned, mutate)
        elif not keep_unknown:
            if mutate:
                del value[key]
            pruned.append(path + (key,))


def _is_resource_key(key: str, value: Any) -> bool:
    if key in ('apiVersion', 'kind'):
        return isinstance(value, str)
    if key == 'metadata':
        return isinstance(value, dict)
    return False
