"""The one place that calls the schema layer: pruning, defaulting, validation, structural checks.

The schema layer (`kopf._shared.schemas`, `kopf._cluster.openapi.validation`, `kopf._cluster.openapi.kindschemas`) is
owned separately; everything the emulator needs from it goes through here, in the API server's order
for a write: default → (fieldValidation=Strict: reject unknown fields) → prune → validate.
"""
from collections.abc import Mapping
from typing import Any

from kopf._cluster import statuses
from kopf._cluster.openapi import gotypes, kindschemas, structural, validation
from kopf._shared import schemas
from kopf._shared.resourcetable import Resource


def schema_of(resource: Resource) -> Mapping[str, Any] | None:
    if resource.custom:
        return resource.schema
    return kindschemas.schema_for(resource.group, resource.version, resource.kind)


def check_structural(schema: Any, field: str) -> list[dict[str, Any]]:
    return list(structural.check_structural(schema, field=field))


def check_rules(schema: Any, field: str) -> list[dict[str, Any]]:
    """Why a CRD's `x-kubernetes-validations` (CEL) make a real server refuse it; [] if they do not."""
    from kopf._cluster.cel import crdchecks
    return crdchecks.rule_causes(schema, field)


def check_cel(obj: dict[str, Any], old: Mapping[str, Any] | None, schema: Mapping[str, Any],
              causes: list[dict[str, Any]]) -> list[str]:
    """The CRD's CEL rules over the object, after its schema validation; ratcheting warnings are returned.

    As the real server does, the rules are not evaluated when a blocking schema error (required,
    unsupported, too long, too many, wrong type) was found: one cause says so instead.
    """
    from kopf._cluster.cel import crdrules, crdvalidation
    if not crdrules.has_rules(schema):
        return []
    if any(c.get('reason') in BLOCKING for c in causes):
        causes.append(statuses.cause('FieldValueInvalid', '<nil>', 'Invalid value: null: some validation rules were '
                                     'not checked because the object was invalid; correct the existing errors to '
                                     'complete validation'))
        return []
    found, warnings = crdvalidation.validate(schema, obj, old)
    causes.extend(found)
    return warnings


BLOCKING = frozenset({'FieldValueNotSupported', 'FieldValueRequired', 'FieldValueTooLong', 'FieldValueTooMany',
                      'FieldValueTypeInvalid'})


TOP = ('apiVersion', 'kind', 'metadata')
OPAQUE_KEYWORDS = frozenset({'type', 'description', 'nullable', 'x-kubernetes-preserve-unknown-fields'})
_opaque_cache: dict[int, tuple[Mapping[str, Any], frozenset[str]]] = {}


def opaque_keys(schema: Mapping[str, Any]) -> frozenset[str]:
    """Top-level properties with nothing to prune, default or validate inside: bare preserve-unknown objects.

    For those, the schema layer only needs to see that the value is an object, so it gets an empty
    one in their place (kopf-style CRDs declare spec and status exactly like this: the hot path).
    """
    cached = _opaque_cache.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    properties = schema.get('properties') or {}
    keys = frozenset(key for key, sub in properties.items()
                     if isinstance(sub, Mapping) and sub.get('type') == 'object'
                     and sub.get('x-kubernetes-preserve-unknown-fields') is True and set(sub) <= OPAQUE_KEYWORDS)
    _opaque_cache[id(schema)] = (schema, keys)   # the schema is kept alive, so its id is never reused
    return keys


SCALAR_META = frozenset(schemas.OBJECT_META_FIELDS - {'labels', 'annotations', 'finalizers', 'ownerReferences',
                                                      'managedFields'})
OWNER_REFERENCE_KEYS = frozenset(schemas.OBJECT_META_SCHEMA['properties']['ownerReferences']['items']['properties'])
ENTRY_KEYS = frozenset({'manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1', 'subresource'})


def normalise_metadata(obj: dict[str, Any], old: Mapping[str, Any] | None = None) -> list[tuple[str, ...]]:
    """`schemas.normalise_metadata`, with a shortcut for the usual metadata that has nothing to drop.

    `old`: the stored object (an update's): a metadata value that is its very value was pruned when stored."""
    meta = obj.get('metadata')
    stored = old.get('metadata') if old is not None else None
    if isinstance(meta, dict) and _plain_metadata(meta, stored if isinstance(stored, dict) else None):
        return []
    return schemas.normalise_metadata(obj)


def _plain_metadata(meta: dict[str, Any], stored: dict[str, Any] | None = None) -> bool:
    """Only ObjectMeta's keys, scalars where it has scalars, flat maps and lists where it has them.

    Pruning by ObjectMeta's schema drops nothing from such metadata (it only looks inside maps and
    lists, and managedFields' `fieldsV1` is free-form); anything else (unknown keys, nested values) takes
    the full walk. The very values of the `stored` metadata (pruned when stored) are not looked into again.
    """
    for key, value in meta.items():
        if stored is not None and stored.get(key, meta) is value:
            continue
        if key in SCALAR_META:
            if isinstance(value, dict | list):
                return False
        elif key == 'labels' or key == 'annotations':
            if not isinstance(value, dict) or any(isinstance(item, dict | list) for item in value.values()):
                return False
        elif key == 'finalizers':
            if not isinstance(value, list) or any(isinstance(item, dict | list) for item in value):
                return False
        elif key == 'ownerReferences':
            if not isinstance(value, list):
                return False
            for ref in value:
                if not isinstance(ref, dict) or not ref.keys() <= OWNER_REFERENCE_KEYS or any(
                        isinstance(item, dict | list) for item in ref.values()):
                    return False
        elif key == 'managedFields':   # nothing to prune in entries of known keys (fieldsV1 is free-form)
            if not isinstance(value, list) or any(not isinstance(entry, dict) or not entry.keys() <= ENTRY_KEYS
                                                  for entry in value):
                return False
        else:
            return False
    return True


def conform(obj: dict[str, Any], resource: Resource, field_validation: str,
            old: Mapping[str, Any] | None = None) -> list[str]:
    """Default, prune and validate an object about to be stored; returns Warning texts.

    `field_validation` is the `fieldValidation` parameter: Strict rejects unknown fields (400),
    Ignore prunes silently, Warn (the default) prunes with one warning per pruned path.
    Built-ins are pruned but not schema-validated: real servers decode them into Go structs.
    """
    schema = schema_of(resource)
    if schema is None:
        normalise_metadata(obj, old)
        return []
    if not resource.custom:
        gotypes.check(obj, schema, resource)   # Go structs: a wrong JSON type is a 400
    opaque = opaque_keys(schema)
    if opaque and _trivial(schema, opaque) and all(isinstance(obj[key], dict) for key in opaque if key in obj):
        return _conform_trivially(obj, schema, resource, field_validation, old)
    if opaque and any(key in obj for key in opaque) and 'x-kubernetes-validations' not in schema:
        view = {key: {} if key in opaque and isinstance(value, dict) else value for key, value in obj.items()}
        warnings = _conform(view, schema, resource, field_validation)
        for key in [key for key in obj if key not in view]:
            del obj[key]
        obj.update({key: value for key, value in view.items() if key not in opaque or key not in obj})
        return warnings
    return _conform(obj, schema, resource, field_validation, old)


def _trivial(schema: Mapping[str, Any], opaque: frozenset[str]) -> bool:
    """A root that declares only opaque objects (kopf-style CRDs): nothing to default or validate below it."""
    return set(schema) <= {'type', 'properties', 'description'} and set(schema.get('properties') or {}) == opaque


def _conform_trivially(obj: dict[str, Any], schema: Mapping[str, Any], resource: Resource,
                       field_validation: str, old: Mapping[str, Any] | None = None) -> list[str]:
    """The same outcome as the full walk for trivial roots: only unknown top-level fields go."""
    properties = schema.get('properties') or {}
    unknown: list[tuple[str, ...]] = [(key,) for key in obj if key not in properties and key not in TOP]
    unknown += normalise_metadata(obj, old)
    if unknown and field_validation == 'Strict':
        message = (f'{resource.kind} in version "{resource.version}" cannot be handled as a {resource.kind}: '
                   f'{validation.strict_decoding_message(unknown)}')
        raise statuses.bad_request(message)
    for path in unknown:
        if len(path) == 1:
            del obj[path[0]]
    return [] if field_validation == 'Ignore' else validation.unknown_field_warnings(unknown)


def _conform(obj: dict[str, Any], schema: Mapping[str, Any], resource: Resource, field_validation: str,
             old: Mapping[str, Any] | None = None) -> list[str]:
    validation.apply_defaults(obj, schema)
    unknown = schemas.prune(obj, schema) + normalise_metadata(obj, old)   # a candidate: safe in place
    if unknown and field_validation == 'Strict':
        message = (f'{resource.kind} in version "{resource.version}" cannot be handled as a {resource.kind}: '
                   f'{validation.strict_decoding_message(unknown)}')
        raise statuses.bad_request(message)
    warnings = [] if field_validation == 'Ignore' else validation.unknown_field_warnings(unknown)
    if resource.custom:
        causes = validation.validate(obj, schema)
        warnings += check_cel(obj, old, schema, causes)
        if causes:
            meta = obj.get('metadata') or {}
            raise statuses.invalid(resource.kind, resource.group, meta.get('name') or '', causes)
    return warnings
