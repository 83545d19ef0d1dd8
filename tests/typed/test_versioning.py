"""Which versions convert without a webhook, and Kubernetes' order of versions."""
from typing import Any

import pytest

from kopf._typed import versioning

INT = {'type': 'integer'}
STR = {'type': 'string'}


def obj(required: tuple[str, ...] = (), **properties: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {'type': 'object', 'properties': properties}
    if required:
        schema['required'] = list(required)
    return schema


@pytest.mark.parametrize('a, b, expected', [
    (obj(x=INT), obj(x=INT), []),
    (obj(x=INT), obj(x=INT, y=STR), []),                                    # an optional addition
    (obj(x=INT), obj(x={**INT, 'maximum': 3}), []),                          # constraints may differ
    (obj(x=INT), obj(x=STR), ['x is an integer in {a} and a string in {b}']),
    (obj(x=INT), obj(('y',), x=INT, y=STR), ['y is required in {b} and absent in {a}']),
    (obj(('x',), x=INT), obj(x=INT), ['x is required in {a} and optional in {b}']),
    (obj(x=obj(y=INT)), obj(x=obj(y=STR)), ['x.y is an integer in {a} and a string in {b}']),
    (obj(x={'type': 'array', 'items': INT}), obj(x={'type': 'array', 'items': STR}),
     ['x[] is an integer in {a} and a string in {b}']),
    (obj(x={'type': 'object', 'additionalProperties': INT}), obj(x=obj(y=INT)),
     ['x is a map in {a} and an object in {b}']),
    (obj(x={'x-kubernetes-int-or-string': True}), obj(x=INT),
     ['x is an integer or a string in {a} and an integer in {b}']),
    (obj(x={'x-kubernetes-preserve-unknown-fields': True}), obj(x=obj(y=INT)), []),   # free-form keeps it all
])
def test_differences(a: dict[str, Any], b: dict[str, Any], expected: list[str]) -> None:
    assert versioning.differences(a, b) == expected


def test_kubernetes_version_order() -> None:
    versions = ['v1alpha1', 'foo1', 'v2', 'v1beta2', 'v10', 'v1', 'v11alpha2', 'v1beta1', 'foo10', 'v12alpha1']
    ordered = sorted(versions, key=versioning.priority, reverse=True)
    # The order of the Kubernetes docs' example (CRD versioning: "version priority").
    assert ordered == ['v10', 'v2', 'v1', 'v1beta2', 'v1beta1', 'v12alpha1', 'v11alpha2', 'v1alpha1', 'foo1', 'foo10']
