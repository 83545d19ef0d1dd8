"""allOf/anyOf/oneOf/not in CRD schemas, with kube-openapi's composite errors."""
from typing import Any

import pytest

from kopf._cluster.openapi import validation

SCHEMA = {'type': 'object', 'properties': {'spec': {'type': 'object', 'properties': {
    'choice': {'type': 'object', 'properties': {'a': {'type': 'string'}, 'b': {'type': 'string'}},
               'oneOf': [{'required': ['a']}, {'required': ['b']}]},
    'either': {'type': 'string', 'anyOf': [{'pattern': '^x'}, {'maxLength': 2}]},
    'both': {'type': 'integer', 'allOf': [{'minimum': 1}, {'maximum': 5}]},
    'never': {'type': 'string', 'not': {'enum': ['bad']}},
}}}}


def composite(text: str) -> dict[str, str]:
    return {'reason': 'FieldValueInvalid', 'field': '<nil>', 'message': f'Invalid value: "": {text}'}


CASES = [
    ({'choice': {'a': '1'}, 'either': 'xyz', 'both': 3, 'never': 'good'}, []),
    ({'either': 'ab'}, []),
    ({'choice': {}}, [composite('"spec.choice" must validate one and only one schema (oneOf). Found none valid'),
                      {'reason': 'FieldValueRequired', 'field': 'spec.choice.a', 'message': 'Required value'}]),
    ({'choice': {'a': '1', 'b': '2'}},
     [composite('"spec.choice" must validate one and only one schema (oneOf). Found 2 valid alternatives')]),
    ({'either': 'abc'}, [composite('"spec.either" must validate at least one schema (anyOf)'),
                         {'reason': 'FieldValueInvalid', 'field': 'spec.either',
                          'message': 'Invalid value: "abc": spec.either in body should match \'^x\''}]),
    ({'both': 9}, [{'reason': 'FieldValueInvalid', 'field': 'spec.both',
                    'message': 'Invalid value: 9: spec.both in body should be less than or equal to 5'},
                   composite('"spec.both" must validate all the schemas (allOf)')]),
    ({'never': 'bad'}, [composite('"spec.never" must not validate the schema (not)')]),
]


@pytest.mark.parametrize('spec, causes', CASES)
def test_junctors(spec: dict[str, Any], causes: list[dict[str, str]]) -> None:
    assert validation.validate({'spec': spec}, SCHEMA) == causes
