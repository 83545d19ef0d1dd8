"""A custom kind's schema in `/openapi/v2` (Swagger 2.0), as the apiextensions server's v2 builder makes it.

Swagger 2.0 (and kubectl's client-side validation that reads it) cannot say what OpenAPI v3 can, so the
server publishes less there than in `/openapi/v3`: a kind whose root preserves unknown fields (or that has
no schema) is only `type: object`, without even `apiVersion`, `kind` and `metadata`; elsewhere the
junctors (`allOf`, `oneOf`, `anyOf`, `not`) go, a nullable or field-preserving node loses its `type` (when
an object), `properties` and `items`, an array without `items` its type, and a nullable field is no longer
`required`. The metadata is a plain `$ref` (v3: `allOf: [$ref]`).

    schema = openapiv2.kind_schema(crd, version, v3_kind_schema)
"""
import copy
from collections.abc import Mapping
from typing import Any

PRESERVE = 'x-kubernetes-preserve-unknown-fields'
JUNCTORS = ('allOf', 'oneOf', 'anyOf', 'not')
TYPE_META = ('apiVersion', 'kind', 'metadata')


def kind_schema(crd: Mapping[str, Any], version: Mapping[str, Any], v3: Mapping[str, Any]) -> dict[str, Any]:
    """The v2 definition of a served version, from its CRD and the v3 definition made of the same."""
    schema = (version.get('schema') or {}).get('openAPIV3Schema')
    gvk = copy.deepcopy(v3['x-kubernetes-group-version-kind'])
    if not isinstance(schema, Mapping) or schema.get(PRESERVE) is True or crd['spec'].get('preserveUnknownFields'):
        return {'type': 'object', 'x-kubernetes-group-version-kind': gvk}
    result = structural(schema)
    properties = dict(result.get('properties') or {})
    for name in TYPE_META:
        if name in v3.get('properties', {}):
            properties[name] = _plain_ref(copy.deepcopy(v3['properties'][name]))
    result['properties'] = properties
    result['x-kubernetes-group-version-kind'] = gvk
    return result


def structural(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`ToStructuralOpenAPIV2`: the node first (with its children as they were), then its children."""
    node = {key: copy.deepcopy(value) for key, value in schema.items() if key not in JUNCTORS}
    if node.get('nullable'):
        for key in ('type', 'nullable', 'items', 'properties'):
            node.pop(key, None)
    preserving = node.get(PRESERVE) is True
    if preserving:
        node.pop('items', None)
        node.pop('properties', None)
    if 'items' not in node and node.get('type') == 'array':
        node.pop('type')
    if preserving and node.get('type') == 'object':
        node.pop('type')
    _unrequire_nullables(node)
    if isinstance(node.get('items'), Mapping):
        node['items'] = structural(node['items'])
    if isinstance(node.get('properties'), Mapping):
        node['properties'] = {name: structural(sub) if isinstance(sub, Mapping) else sub
                              for name, sub in node['properties'].items()}
    if isinstance(node.get('additionalProperties'), Mapping):
        node['additionalProperties'] = structural(node['additionalProperties'])
    return node


def _unrequire_nullables(node: dict[str, Any]) -> None:
    found = node.get('properties')
    properties: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    required = node.get('required')
    if isinstance(required, list):
        nullable = {name for name, sub in properties.items() if isinstance(sub, Mapping) and sub.get('nullable')}
        required = [name for name in required if name not in nullable]
        extra = node.get('additionalProperties')
        if isinstance(extra, Mapping) and extra.get('nullable'):
            required = []
        if required:
            node['required'] = required
        else:
            node.pop('required')


def _plain_ref(schema: dict[str, Any]) -> dict[str, Any]:
    """`{allOf: [{$ref}], ...}` (v3) -> `{$ref, ...}` (v2), as the builder refers to ObjectMeta there."""
    junction = schema.get('allOf')
    if isinstance(junction, list) and len(junction) == 1 and set(junction[0]) == {'$ref'}:
        schema.pop('allOf')
        return {'$ref': junction[0]['$ref'], **schema}
    return schema
