"""`allOf`, `anyOf`, `oneOf` and `not` in CRD schemas, as kube-openapi's schema validator applies them.

A failed junctor is one cause on the whole object (`field: "<nil>"`, as apiextensions reports kube-openapi's
composite errors) whose text names the path: `"spec.mode" must validate at least one schema (anyOf)`;
the causes of the alternative that came closest follow it (anyOf, oneOf), or the causes of every failed
schema precede it (allOf).
"""
from collections.abc import Callable, Mapping
from typing import Any

from kopf._cluster.openapi.fielderrors import Cause
from kopf._shared.fields import FieldPath
from kopf._shared.schemas import format_path

JUNCTORS = frozenset({'allOf', 'anyOf', 'oneOf', 'not'})
Validate = Callable[[Any, Mapping[str, Any], FieldPath, list[Cause]], None]


def composite(text: str) -> Cause:
    return {'reason': 'FieldValueInvalid', 'message': f'Invalid value: "": {text}', 'field': '<nil>'}


def check(value: Any, schema: Mapping[str, Any], path: FieldPath, causes: list[Cause], validate: Validate) -> None:
    """Append the causes of the schema's junctors for a value already of the right type."""
    name = format_path(path)

    def results(key: str) -> list[list[Cause]]:
        found: list[list[Cause]] = []
        for sub in schema.get(key) or []:
            sub_causes: list[Cause] = []
            if isinstance(sub, Mapping):
                validate(value, sub, path, sub_causes)
            found.append(sub_causes)
        return found

    if schema.get('anyOf'):
        alternatives = results('anyOf')
        if all(alternatives):
            causes.append(composite(f'"{name}" must validate at least one schema (anyOf)'))
            causes.extend(fewest(alternatives))
    if schema.get('oneOf'):
        alternatives = results('oneOf')
        valid = sum(1 for found in alternatives if not found)
        if valid != 1:
            more = 'Found none valid' if valid == 0 else f'Found {valid} valid alternatives'
            causes.append(composite(f'"{name}" must validate one and only one schema (oneOf). {more}'))
            if valid == 0:
                causes.extend(fewest(alternatives))
    if schema.get('allOf'):
        alternatives = results('allOf')
        for found in alternatives:
            causes.extend(found)
        valid = sum(1 for found in alternatives if not found)
        if valid != len(alternatives):
            causes.append(composite(f'"{name}" must validate all the schemas (allOf)'
                                    + ('. None validated' if valid == 0 else '')))
    negated = schema.get('not')
    if isinstance(negated, Mapping):
        found = []
        validate(value, negated, path, found)
        if not found:
            causes.append(composite(f'"{name}" must not validate the schema (not)'))


def fewest(alternatives: list[list[Cause]]) -> list[Cause]:
    """The failed alternative that came closest (kube-openapi's best match count, approximated by fewest causes)."""
    return min(alternatives, key=lambda causes: len(causes))
