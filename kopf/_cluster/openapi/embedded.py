"""Validation of `x-kubernetes-embedded-resource` objects in custom resources, as upstream's objectmeta validation.

An embedded resource needs `apiVersion` and `kind` (`Required value: must not be empty`); the
apiVersion must parse as a group-version, the kind must be a DNS-1035 label up to case; its
`metadata.name`/`generateName` must be usable as a path segment (no `/`, no `%`, not `.` or `..`).
"""
import re
from typing import Any

from kopf._cluster.openapi.fielderrors import Cause, invalid, required
from kopf._shared.fields import FieldPath

DNS1035 = re.compile(r'[a-z]([-a-z0-9]*[a-z0-9])?')
DNS1035_MESSAGE = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                   "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
                   "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")


def causes(value: dict[str, Any], path: FieldPath) -> list[Cause]:
    result: list[Cause] = [required(path + (key,), 'must not be empty') for key in ('apiVersion', 'kind')
                           if key not in value]
    for key in ('apiVersion', 'kind'):
        if key in value and not isinstance(value[key], str):
            result.append(invalid(path + (key,), value[key], 'must be a string'))
        elif key in value and not value[key]:
            result.append(invalid(path + (key,), value[key], 'must not be empty'))
    api_version, kind = value.get('apiVersion'), value.get('kind')
    if isinstance(api_version, str) and api_version.count('/') > 1:
        result.append(invalid(path + ('apiVersion',), api_version, f'unexpected GroupVersion string: {api_version}'))
    if isinstance(kind, str) and kind and (len(kind) > 63 or not DNS1035.fullmatch(kind.lower())):
        detail = f'may have mixed case, but should otherwise match: {DNS1035_MESSAGE}'
        result.append(invalid(path + ('kind',), kind, detail))
    metadata = value.get('metadata')
    if isinstance(metadata, dict):
        for key in ('name', 'generateName'):
            name = metadata.get(key)
            if isinstance(name, str) and name:
                result.extend(invalid(path + ('metadata', key), name, text) for text in _segment(name, key == 'name'))
    return result


def _segment(name: str, exact: bool) -> list[str]:
    texts = [f"may not be '{name}'"] if exact and name in ('.', '..') else []
    return texts + [f"may not contain '{char}'" for char in ('/', '%') if char in name]
