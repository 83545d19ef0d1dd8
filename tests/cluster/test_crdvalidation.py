"""CRD rules evaluated over objects as kube-apiserver evaluates them (answers recorded from its code)."""
import pytest

from kopf._cluster.cel import crdvalidation

from .cel_recorded import EVALS, OBJECT, SCHEMA


@pytest.mark.parametrize('rule, errors', EVALS, ids=[r for r, _ in EVALS])
def test_evaluation_results_are_the_real_servers(rule: str, errors: list[str]) -> None:
    schema = dict(SCHEMA, **{'x-kubernetes-validations': [{'rule': rule}]})
    causes, warnings = crdvalidation.validate(schema, OBJECT)
    prefix = 'Invalid value: "object": '
    assert [c['message'].removeprefix(prefix) for c in causes] == errors
    assert all(c['field'] == '<nil>' for c in causes)
    assert warnings == []


LEVELS = {'type': 'object', 'properties': {'spec': {'type': 'object', 'x-kubernetes-validations': [
    {'rule': 'self.min <= self.max', 'message': 'min > max'},
    {'rule': 'self.name.size() < 5', 'messageExpression': "'name ' + self.name + ' too long'", 'fieldPath': '.name'},
    {'rule': 'self.min >= 0', 'reason': 'FieldValueForbidden', 'message': 'negative'},
    {'rule': 'self.max < 100', 'reason': 'FieldValueRequired'},
    {'rule': 'self.max != 50', 'reason': 'FieldValueDuplicate'},
    {'rule': 'self.min == oldSelf.min', 'message': 'min is immutable'},
    {'rule': '!oldSelf.hasValue() || self.max >= oldSelf.value().max', 'optionalOldSelf': True,
     'message': 'max may only grow'},
    {'rule': "self.name != 'boom'", 'messageExpression': 'self.name + string(1/0)'},
], 'properties': {
    'min': {'type': 'integer'}, 'max': {'type': 'integer'}, 'name': {'type': 'string', 'maxLength': 10},
    'tags': {'type': 'array', 'maxItems': 4, 'items': {'type': 'string', 'maxLength': 10,
                                                        'x-kubernetes-validations': [{'rule': 'self != "bad"'}]}},
    'byKey': {'type': 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['k'], 'maxItems': 4,
              'items': {'type': 'object', 'required': ['k'], 'properties': {
                  'k': {'type': 'string', 'maxLength': 5}, 'v': {'type': 'integer'}},
                  'x-kubernetes-validations': [{'rule': '!has(oldSelf.v) || self.v == oldSelf.v',
                                                'message': 'v is fixed'}]}},
}}}}


def spec(**fields: object) -> dict[str, object]:
    return {'spec': {'min': 1, 'max': 2, 'name': 'a', 'tags': [], 'byKey': [], **fields}}


# The causes recorded from the real validator for these objects (field: message).
CASES = [
    (spec(), None, []),
    (spec(min=3, name='abcdef', tags=['bad']), None, [
        'spec: Invalid value: "object": min > max',
        'spec.name: Invalid value: "object": name abcdef too long',
        'spec.tags[0]: Invalid value: "string": failed rule: self != "bad"']),
    (spec(min=-1, max=200, name='boom'), None, [
        'spec: Forbidden: negative', 'spec: Required value: failed rule: self.max < 100',
        'spec: Invalid value: "object": failed rule: self.name != \'boom\'']),
    (spec(max=50), None, ['spec: Duplicate value: "object"']),
    (spec(byKey=[{'k': 'a', 'v': 1}]), spec(min=2, max=3, byKey=[{'k': 'a', 'v': 2}]), [
        'spec: Invalid value: "object": min is immutable', 'spec: Invalid value: "object": max may only grow',
        'spec.byKey[0]: Invalid value: "object": v is fixed']),
]


@pytest.mark.parametrize('obj, old, expected', CASES)
def test_levels_messages_reasons_and_transitions(obj: object, old: object, expected: list[str]) -> None:
    causes, _ = crdvalidation.validate(LEVELS, obj, old)
    assert sorted(f"{c['field']}: {c['message']}" for c in causes) == sorted(expected)


def test_unchanged_values_ratchet_into_warnings() -> None:
    bad = spec(min=3)
    causes, warnings = crdvalidation.validate(LEVELS, bad, bad)
    assert causes == []
    assert warnings == ['spec: Invalid value: "object": min > max']


def test_changed_values_do_not_ratchet() -> None:
    causes, warnings = crdvalidation.validate(LEVELS, spec(min=3, max=2, name='b'), spec(min=3, max=2))
    assert [c['message'] for c in causes] == ['Invalid value: "object": min > max']
    assert warnings == []


def test_null_values_are_not_validated() -> None:
    schema = {'type': 'object', 'properties': {'a': {'type': 'string', 'nullable': True,
                                                     'x-kubernetes-validations': [{'rule': "self == 'x'"}]}}}
    assert crdvalidation.validate(schema, {'a': None}) == ([], [])
