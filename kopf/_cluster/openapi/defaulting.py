"""Defaulting of objects by OpenAPI v3 schemas, as the API server does before validation.

`apply_defaults(obj, schema)` sets the `default` of every absent property whose parent exists (and
of non-nullable nulls), top-down, so defaults inside defaults apply too; non-nullable nulls without
a default are dropped (upstream's PruneNonNullableNullsWithoutDefaults). No defaults under metadata.
"""
import copy
from collections.abc import Mapping
from typing import Any

from kopf._shared.schemas import EMBEDDED, RESOURCE_KEYS


def apply_defaults(obj: Any, schema: Mapping[str, Any] | None) -> None:
    """Set `default` values of absent properties (and of non-nullable nulls), in place, top-down.

    Non-nullable nulls without a default are dropped, as the API server does before validation.
    The root `apiVersion`, `kind` and `metadata` are never defaulted (the API server defaults nothing in
    metadata).
    """
    if schema is not None:
        _default(obj, schema, root=True)


def _default(value: Any, schema: Mapping[str, Any], *, root: bool = False) -> None:
    if isinstance(value, dict):
        properties: Mapping[str, Any] = schema.get('properties') or {}
        skipped = RESOURCE_KEYS if root or schema.get(EMBEDDED) else frozenset()
        for key, default in _defaults_of(schema):
            absent = key not in value or (value[key] is None and not properties[key].get('nullable'))
            if absent and key not in skipped:
                value[key] = copy.deepcopy(default)
        additional = schema.get('additionalProperties')
        for key, child in list(value.items()):
            if key in skipped:
                continue
            sub = properties.get(key)
            if child is None and isinstance(sub, Mapping) and not sub.get('nullable'):
                del value[key]  # a non-nullable null without a default
            elif isinstance(child, dict | list):
                sub = sub if sub is not None else additional
                if isinstance(sub, Mapping):
                    _default(child, sub)
    elif isinstance(value, list):
        items = schema.get('items')
        if isinstance(items, Mapping):
            for item in value:
                if isinstance(item, dict | list):
                    _default(item, items)


# The defaulted properties of each schema node seen, keyed by id; the node is kept to pin its id.
_DEFAULTS: dict[int, tuple[Mapping[str, Any], tuple[tuple[str, Any], ...]]] = {}


def _defaults_of(schema: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    cached = _DEFAULTS.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    properties: Mapping[str, Any] = schema.get('properties') or {}
    found = tuple((key, sub['default']) for key, sub in properties.items()
                  if isinstance(sub, Mapping) and 'default' in sub)
    if len(_DEFAULTS) > 10_000:  # schemas of deleted or updated CRDs: forget them all, rarely
        _DEFAULTS.clear()
    _DEFAULTS[id(schema)] = (schema, found)
    return found

