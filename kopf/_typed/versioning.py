"""May two versions of one kind convert without a webhook (`conversion: None`)? And Kubernetes' version order.

With the strategy None, the API server converts by rewriting `apiVersion` only: an object stored in
one version is served as it is in another. That is right only if both versions hold the same stored
fields: a field present in both must have the same shape (type, items, properties, recursively), a
field present in one only must be optional there, and a required field must be required in both.
Constraints (`maximum`, `pattern`, CEL rules) may differ: that is validation, not conversion. Pure.
"""
import re
from typing import Any

Schema = dict[str, Any]
VERSION = re.compile(r'^v(\d+)(?:(alpha|beta)(\d+))?$')


def differences(a: Schema, b: Schema, path: str = '') -> list[str]:
    """What in the two schemas needs a conversion, as `(path, what it is in a, what it is in b)` sentences."""
    if _free(a) or _free(b):   # a free-form side keeps whatever the other one stores
        return []
    if _shape(a) != _shape(b):
        return [f'{path or "the object"} is {_shape(a)} in {{a}} and {_shape(b)} in {{b}}']
    found: list[str] = []
    if 'items' in a and 'items' in b:
        found += differences(a['items'], b['items'], f'{path}[]')
    if 'additionalProperties' in a and 'additionalProperties' in b:
        found += differences(a['additionalProperties'], b['additionalProperties'], f'{path}{{}}')
    props_a, props_b = a.get('properties') or {}, b.get('properties') or {}
    for name in props_a.keys() & props_b.keys():
        found += differences(props_a[name], props_b[name], f'{path}.{name}'.lstrip('.'))
    found += _required(a, b, path, '{a}', '{b}') + _required(b, a, path, '{b}', '{a}')
    return found


def _required(one: Schema, other: Schema, path: str, one_name: str, other_name: str) -> list[str]:
    found = []
    for name in one.get('required', []):
        if name not in other.get('required', []):
            absent = name not in (other.get('properties') or {})
            state = 'absent' if absent else 'optional'
            found.append(f'{path}.{name}'.lstrip('.') + f' is required in {one_name} and {state} in {other_name}')
    return found


def _free(schema: Schema) -> bool:
    preserved = schema.get('x-kubernetes-preserve-unknown-fields')
    return bool(preserved) and 'properties' not in schema and 'additionalProperties' not in schema


def _shape(schema: Schema) -> str:
    if schema.get('x-kubernetes-int-or-string'):
        return 'an integer or a string'
    if schema.get('x-kubernetes-embedded-resource'):
        return 'an embedded object'
    kind = schema.get('type', 'free-form')
    if kind == 'object' and 'additionalProperties' in schema:
        return 'a map'
    return {'object': 'an object', 'array': 'a list', 'integer': 'an integer'}.get(kind, f'a {kind}')


def priority(version: str) -> tuple[int, int, int, str]:
    """Kubernetes' order of versions (the first is the preferred): GA > beta > alpha > others by name."""
    match = VERSION.match(version)
    if match is None:
        return (0, 0, 0, _reversed(version))   # after all the kube-like ones, alphabetically
    major, stage, minor = match.groups()
    return (3 if stage is None else 2 if stage == 'beta' else 1, int(major), int(minor or 0), '')


def _reversed(text: str) -> str:
    """A key that sorts names alphabetically when the sort is in reverse order."""
    return ''.join(chr(0x10FFFE - ord(char)) for char in text) + chr(0x10FFFF)   # a prefix sorts first
