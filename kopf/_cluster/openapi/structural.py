"""Structural-schema checks for accepting a CRD: every schema of a served version must be
structural (types everywhere, no value validations at the root of metadata, defaults valid by their schema).

`check_structural(openAPIV3Schema, field='spec.versions[i].schema.openAPIV3Schema') -> [cause]`.
"""
import re
from collections.abc import Mapping
from typing import Any

from kopf._cluster.openapi import validation
from kopf._cluster.openapi.fielderrors import Cause, forbidden, invalid, required
from kopf._shared.schemas import EMBEDDED, INT_OR_STRING, PRESERVE


def check_structural(schema: Any, *, field: str = 'spec.versions[0].schema.openAPIV3Schema') -> list[Cause]:
    """Causes for which a CRD version's `openAPIV3Schema` is not structural; [] if it is.

    `field` is the path of the schema in the CRD, used as the prefix of the causes' fields.
    Follows `apiextensions-apiserver/pkg/apiserver/schema/validation.go` (structural invariants)
    plus the CRD API validation's `$ref`/`uniqueItems`/mutual-exclusion rules; like upstream, the
    causes are sorted by their text. Value validations under `anyOf`/`allOf`/`oneOf`/`not` are not
    checked (the rest of this module does not evaluate them either).
    """
    if not isinstance(schema, Mapping):
        return [required(field, 'schemas are required')]
    causes: list[Cause] = []
    _check_node(schema, field, causes, level='root')
    if not causes:  # defaults are checked only in structural schemas, as upstream does
        _check_defaults(schema, field, causes)
    return sorted(causes, key=lambda cause: f'{cause["field"]}: {cause["message"]}')


def _check_defaults(schema: Mapping[str, Any], field: str, causes: list[Cause]) -> None:
    """Every `default` must be valid by the schema it stands in (upstream rejects the CRD otherwise)."""
    if 'default' in schema:
        for cause in validation.validate_value(schema['default'], schema):
            sub = cause['field']
            causes.append({**cause, 'field': f'{field}.default' + (f'.{sub}' if sub and sub[0] != '[' else sub)})
    for key, sub_schema in (schema.get('properties') or {}).items():
        if isinstance(sub_schema, Mapping):
            _check_defaults(sub_schema, f'{field}.properties[{key}]', causes)
    for key in ('items', 'additionalProperties'):
        if isinstance(schema.get(key), Mapping):
            _check_defaults(schema[key], f'{field}.{key}', causes)


_FORBIDDEN_KEYWORDS = ('$ref', 'definitions', 'dependencies', 'patternProperties', 'additionalItems', 'id', '$schema')
_UNTYPED_DETAILS = {
    'root': 'must not be empty at the root',
    'items': 'must not be empty for specified array items',
    'fields': 'must not be empty for specified object fields',
}


def _check_node(schema: Mapping[str, Any], field: str, causes: list[Cause], *, level: str) -> None:
    properties = schema.get('properties')
    properties = properties if isinstance(properties, Mapping) else {}
    _check_children(schema, properties, field, causes, level=level)
    _check_keywords(schema, field, causes)
    _check_type(schema, properties, field, causes, level=level)


def _check_children(schema: Mapping[str, Any], properties: Mapping[str, Any], field: str, causes: list[Cause], *,
                    level: str) -> None:
    """The items, properties and additionalProperties: each checked as a node, and how they may combine."""
    additional = schema.get('additionalProperties')
    items = schema.get('items')
    if schema.get('type') == 'array' and not isinstance(items, Mapping):
        causes.append(required(f'{field}.items', 'must be specified'))
    if isinstance(items, Mapping):
        _check_node(items, f'{field}.items', causes, level='items')
    for key, sub in properties.items():
        if isinstance(sub, Mapping):
            _check_node(sub, f'{field}.properties[{key}]', causes, level='fields')
    if additional is not None and level == 'root':
        causes.append(forbidden(f'{field}.additionalProperties', 'must not be used at the root'))
    if isinstance(additional, Mapping):
        _check_node(additional, f'{field}.additionalProperties', causes, level='fields')
    if properties and (additional is False or isinstance(additional, Mapping)):
        causes.append(forbidden(f'{field}.additionalProperties',
                                'additionalProperties and properties are mutual exclusive'))


def _check_keywords(schema: Mapping[str, Any], field: str, causes: list[Cause]) -> None:
    """The extensions that exclude each other, the unsupported keywords, `uniqueItems`, an invalid `pattern`."""
    embedded = bool(schema.get(EMBEDDED))
    preserve = schema.get(PRESERVE)
    if schema.get(INT_OR_STRING) and preserve:
        causes.append(invalid(f'{field}.{PRESERVE}', True, f'must be false if {INT_OR_STRING} is true'))
    if schema.get(INT_OR_STRING) and embedded:
        causes.append(invalid(f'{field}.{EMBEDDED}', True, f'must be false if {INT_OR_STRING} is true'))
    if preserve is False:
        causes.append(invalid(f'{field}.{PRESERVE}', False, 'must be true or undefined'))
    for keyword in _FORBIDDEN_KEYWORDS:
        if keyword in schema:
            causes.append(forbidden(f'{field}.{keyword}', f'{keyword} is not supported'))
    if schema.get('uniqueItems') is True:
        causes.append(forbidden(f'{field}.uniqueItems',
                                'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'))
    pattern = schema.get('pattern')
    if isinstance(pattern, str):
        try:
            re.compile(pattern)
        except re.error as e:
            causes.append(invalid(f'{field}.pattern', pattern, f"must be a valid regular expression, but isn't: {e}"))


def _check_type(schema: Mapping[str, Any], properties: Mapping[str, Any], field: str, causes: list[Cause], *,
                level: str) -> None:
    """The type where one is required, embedded resources, the root's object and its metadata."""
    kind = schema.get('type')
    embedded = bool(schema.get(EMBEDDED))
    preserve = schema.get(PRESERVE)
    if embedded and kind != 'object':
        detail = f'must be object if {EMBEDDED} is true'
        causes.append(invalid(f'{field}.type', kind, detail) if kind else required(f'{field}.type', detail))
    elif not kind and not schema.get(INT_OR_STRING) and not preserve:
        causes.append(required(f'{field}.type', _UNTYPED_DETAILS[level]))
    if embedded and schema.get('additionalProperties') is not None:
        causes.append(forbidden(f'{field}.additionalProperties', f'must not be used if {EMBEDDED} is set'))
    if level == 'root' and kind and kind != 'object':
        causes.append(invalid(f'{field}.type', kind, 'must be object at the root'))
    if level == 'root' or embedded:
        for key, expected in (('kind', 'string'), ('apiVersion', 'string'), ('metadata', 'object')):
            sub = properties.get(key)
            if isinstance(sub, Mapping) and sub.get('type') != expected:
                causes.append(invalid(f'{field}.properties[{key}].type', sub.get('type') or '', f'must be {expected}'))
    metadata = properties.get('metadata')
    if level == 'root' and isinstance(metadata, Mapping) and not _only_names(metadata):
        causes.append(forbidden(f'{field}.properties[metadata]',
                                'must not specify anything other than name and generateName, '
                                'but metadata is implicitly specified'))
    if embedded and not preserve and not properties:
        causes.append(required(f'{field}.properties', f'must not be empty if {EMBEDDED} is true '
                                                      f'without {PRESERVE}'))


def _only_names(metadata: Mapping[str, Any]) -> bool:
    """Whether a root `metadata` schema restricts nothing but `name` and `generateName`."""
    properties = metadata.get('properties') or {}
    extra = set(metadata) - {'type', 'properties', 'description'}
    return not extra and set(properties) <= {'name', 'generateName'}

