"""Why a real server refuses a CRD for its rules: the causes' fields, reasons and texts."""
from typing import Any

import pytest

from kopf._cluster.cel import crdchecks

FIELD = 'spec.versions[0].schema.openAPIV3Schema'
PROPS = {'n': {'type': 'integer'}, 'a': {'type': 'string'}, 'list': {'type': 'array', 'items': {'type': 'string'}}}


def spec_rules(*rules: Any, properties: dict[str, Any] | None = None) -> dict[str, Any]:
    return {'type': 'object', 'properties': {'spec': {
        'type': 'object', 'properties': properties or PROPS,
        'x-kubernetes-validations': [r if isinstance(r, dict) else {'rule': r} for r in rules]}}}


AT = f'{FIELD}.properties[spec].x-kubernetes-validations[0]'
CASES = [
    ({'rule': ' '}, 'FieldValueRequired', f'{AT}.rule', 'Required value: rule is not specified'),
    ({'rule': 'true', 'message': ' '}, 'FieldValueInvalid', f'{AT}.message',
     'Invalid value: " ": must be non-empty if specified'),
    ({'rule': 'true', 'message': 'a\nb'}, 'FieldValueInvalid', f'{AT}.message',
     'Invalid value: "a\\nb": must not contain line breaks'),
    ({'rule': 'true &&\ntrue'}, 'FieldValueRequired', f'{AT}.message',
     'Required value: message must be specified if rule contains line breaks'),
    ({'rule': 'true', 'reason': 'Nope'}, 'FieldValueNotSupported', f'{AT}.reason',
     'Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", '
     '"FieldValueInvalid", "FieldValueRequired"'),
    ({'rule': 'true', 'fieldPath': '.x'}, 'FieldValueInvalid', f'{AT}.fieldPath',
     'Invalid value: ".x": must be a valid path'),
    ({'rule': 'self.n > 0', 'optionalOldSelf': True}, 'FieldValueInvalid', f'{AT}.optionalOldSelf',
     'Invalid value: true: may not be set if oldSelf is not used in rule'),
    ({'rule': 'self.n'}, 'FieldValueInvalid', f'{AT}.rule',
     'Invalid value: {"Rule":"self.n","Message":"","MessageExpression":"","Reason":null,"FieldPath":"",'
     '"OptionalOldSelf":null}: cel expression must evaluate to a bool'),
    ({'rule': 'self.n > 0', 'messageExpression': 'self.n'}, 'FieldValueInvalid', f'{AT}.messageExpression',
     'Invalid value: {"Rule":"self.n \\u003e 0","Message":"","MessageExpression":"self.n","Reason":null,'
     '"FieldPath":"","OptionalOldSelf":null}: messageExpression must evaluate to a string'),
    ('self.list.all(x, self.list.all(y, x == y))', 'FieldValueForbidden', f'{AT}.rule',
     'Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or '
     'adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)'),
]


@pytest.mark.parametrize('rule, reason, field, message', CASES)
def test_refusals(rule: Any, reason: str, field: str, message: str) -> None:
    causes = crdchecks.rule_causes(spec_rules(rule), FIELD)
    assert {'reason': reason, 'field': field, 'message': message} in causes


def test_valid_rules_pass() -> None:
    assert crdchecks.rule_causes(spec_rules('self.n > 0', {'rule': 'self.a != "x"', 'fieldPath': '.a'}), FIELD) == []


def test_a_schema_without_rules_is_not_compiled() -> None:
    assert crdchecks.rule_causes({'type': 'object'}, FIELD) == []


def test_old_self_under_atomic_lists_is_refused() -> None:
    properties = {'list': {'type': 'array', 'maxItems': 2, 'items': {
        'type': 'string', 'maxLength': 2, 'x-kubernetes-validations': [{'rule': 'self == oldSelf'}]}}}
    causes = crdchecks.rule_causes(spec_rules('true', properties=properties), FIELD)
    assert causes == [{'reason': 'FieldValueInvalid',
                       'field': f'{FIELD}.properties[spec].properties[list].items.x-kubernetes-validations[0].rule',
                       'message': 'Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable '
                                  f'portion of the schema within {FIELD}.properties[spec].properties[list]'}]


def test_the_total_cost_of_a_schema_is_limited() -> None:
    rules = [f"self.limited.all(x, x.matches('^[a-z]{{{i}}}$'))" for i in range(1, 13)]   # ~8.4M each
    properties = {'limited': {'type': 'array', 'maxItems': 7000, 'items': {'type': 'string', 'maxLength': 1000}}}
    causes = crdchecks.rule_causes(spec_rules(*rules, properties=properties), FIELD)
    assert [c['message'] for c in causes[:-1]] == ['Forbidden: contributed to estimated rule cost total exceeding '
                                                   'cost limit for entire OpenAPIv3 schema'] * 4
    assert causes[-1]['field'] == FIELD
    assert causes[-1]['message'].startswith('Forbidden: x-kubernetes-validations estimated rule cost total for entire '
                                            'OpenAPIv3 schema exceeds budget by factor of ')


def test_cost_factors_below_one_and_a_half_show_six_decimals() -> None:
    assert crdchecks.cost_message('c', 12_000_000, 10_000_000).startswith('c exceeds budget by factor of 1.200000x')
    assert crdchecks.cost_message('c', 25_000_000, 10_000_000).startswith('c exceeds budget by factor of 2.5x')
