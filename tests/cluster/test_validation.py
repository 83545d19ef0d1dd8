"""Validation, defaulting, structural checks and unknown fields; a strict CRD's undeclared status fields
(pruned, with a warning, and a 200), wrong types and a missing spec (422 causes)."""
import copy
from typing import Any

import pytest

from kopf._cluster.openapi import structural, validation
from kopf._shared import schemas

STRICT: dict[str, Any] = {  # a strict CRD: spec required, spec.size an integer, status.phase the only status field
    'type': 'object',
    'required': ['spec'],
    'properties': {
        'spec': {'type': 'object', 'properties': {'size': {'type': 'integer'}}},
        'status': {'type': 'object', 'properties': {'phase': {'type': 'string'}}},
    },
}


def spec(**properties: Any) -> dict[str, Any]:
    return {'type': 'object', 'properties': {'spec': {'type': 'object', 'properties': properties}}}


def reasons(causes: list[dict[str, str]]) -> list[tuple[str, str]]:
    return [(cause['reason'], cause['field']) for cause in causes]


# --- the strict CRD at the function level: undeclared status fields, wrong types, missing spec ---

def test_status_kopf_pruned_with_warning_and_200() -> None:
    body = {'apiVersion': 'kopf.dev/v1', 'kind': 'Strict', 'metadata': {'name': 'x'},
            'spec': {'size': 1}, 'status': {'phase': 'ok', 'kopf': {'progress': {}}}}
    unknown = validation.unknown_fields(body, STRICT)
    assert validation.unknown_field_warnings(unknown) == ['unknown field "status.kopf"']
    schemas.prune(body, STRICT)
    assert body['status'] == {'phase': 'ok'}
    assert validation.validate(body, STRICT) == []  # no error: the request answers 200


def test_wrong_type() -> None:
    body = {'apiVersion': 'kopf.dev/v1', 'kind': 'Strict', 'metadata': {'name': 'x'}, 'spec': {'size': 'big'}}
    causes = validation.validate(body, STRICT)
    assert causes == [{
        'reason': 'FieldValueTypeInvalid',
        'field': 'spec.size',
        'message': 'Invalid value: "string": spec.size in body must be of type integer: "string"',
    }]


def test_missing_spec() -> None:
    body = {'apiVersion': 'kopf.dev/v1', 'kind': 'Strict', 'metadata': {'name': 'x'}}
    causes = validation.validate(body, STRICT)
    assert causes == [{'reason': 'FieldValueRequired', 'field': 'spec', 'message': 'Required value'}]


# --- validation, table-driven -------------------------------------------------------------------

VALIDATION: list[tuple[str, dict[str, Any], Any, list[tuple[str, str]]]] = [
    ('integer-ok', spec(n={'type': 'integer'}), {'n': 3}, []),
    ('integral-float-is-an-integer', spec(n={'type': 'integer'}), {'n': 3.0}, []),
    ('float-is-not-integer', spec(n={'type': 'integer'}), {'n': 3.5}, [('FieldValueTypeInvalid', 'spec.n')]),
    ('bool-is-not-integer', spec(n={'type': 'integer'}), {'n': True}, [('FieldValueTypeInvalid', 'spec.n')]),
    ('integer-is-a-number', spec(n={'type': 'number'}), {'n': 3}, []),
    ('string-not-boolean', spec(b={'type': 'boolean'}), {'b': 'true'}, [('FieldValueTypeInvalid', 'spec.b')]),
    ('object-not-array', spec(a={'type': 'array', 'items': {'type': 'string'}}), {'a': {}},
     [('FieldValueTypeInvalid', 'spec.a')]),
    ('array-item-type', spec(a={'type': 'array', 'items': {'type': 'string'}}), {'a': ['x', 1]},
     [('FieldValueTypeInvalid', 'spec.a[1]')]),
    ('null-not-nullable', spec(s={'type': 'string'}), {'s': None}, [('FieldValueTypeInvalid', 'spec.s')]),
    ('null-nullable', spec(s={'type': 'string', 'nullable': True}), {'s': None}, []),
    ('int-or-string-int', spec(p={'x-kubernetes-int-or-string': True}), {'p': 80}, []),
    ('int-or-string-string', spec(p={'x-kubernetes-int-or-string': True}), {'p': 'http'}, []),
    ('int-or-string-float', spec(p={'x-kubernetes-int-or-string': True}), {'p': 1.5},
     [('FieldValueTypeInvalid', 'spec.p')]),
    ('int-or-string-object', spec(p={'x-kubernetes-int-or-string': True}), {'p': {}},
     [('FieldValueTypeInvalid', 'spec.p')]),
    ('preserve-unknown-untyped-anything', spec(x={'x-kubernetes-preserve-unknown-fields': True}), {'x': [1, 'a']}, []),
    ('required-nested', spec(o={'type': 'object', 'required': ['a', 'b'], 'properties': {'a': {'type': 'string'}}}),
     {'o': {'a': 'x'}}, [('FieldValueRequired', 'spec.o.b')]),
    ('enum-ok', spec(m={'type': 'string', 'enum': ['a', 'b']}), {'m': 'a'}, []),
    ('enum-bad', spec(m={'type': 'string', 'enum': ['a', 'b']}), {'m': 'x'}, [('FieldValueNotSupported', 'spec.m')]),
    ('enum-int-ok', spec(m={'type': 'integer', 'enum': [1, 2]}), {'m': 1}, []),
    ('enum-bool-is-not-int', spec(m={'x-kubernetes-preserve-unknown-fields': True, 'enum': [1]}), {'m': True},
     [('FieldValueNotSupported', 'spec.m')]),
    ('max-length', spec(s={'type': 'string', 'maxLength': 3}), {'s': 'abcd'}, [('FieldValueTooLong', 'spec.s')]),
    ('min-length', spec(s={'type': 'string', 'minLength': 3}), {'s': 'ab'}, [('FieldValueInvalid', 'spec.s')]),
    ('pattern-ok', spec(s={'type': 'string', 'pattern': '^[a-z]+$'}), {'s': 'abc'}, []),
    ('pattern-bad', spec(s={'type': 'string', 'pattern': '^[a-z]+$'}), {'s': 'aB'}, [('FieldValueInvalid', 'spec.s')]),
    ('format-date-time-ok', spec(t={'type': 'string', 'format': 'date-time'}), {'t': '2024-05-01T12:00:00Z'}, []),
    ('format-date-time-bad', spec(t={'type': 'string', 'format': 'date-time'}), {'t': 'yesterday'},
     [('FieldValueInvalid', 'spec.t')]),
    ('format-unknown-ignored', spec(t={'type': 'string', 'format': 'quantity'}), {'t': 'whatever'}, []),
    ('format-uuid-bad', spec(t={'type': 'string', 'format': 'uuid'}), {'t': 'nope'}, [('FieldValueInvalid', 'spec.t')]),
    ('format-byte-bad', spec(t={'type': 'string', 'format': 'byte'}), {'t': '!!'}, [('FieldValueInvalid', 'spec.t')]),
    ('minimum', spec(n={'type': 'integer', 'minimum': 1}), {'n': 0}, [('FieldValueInvalid', 'spec.n')]),
    ('minimum-equal-ok', spec(n={'type': 'integer', 'minimum': 1}), {'n': 1}, []),
    ('exclusive-minimum', spec(n={'type': 'integer', 'minimum': 1, 'exclusiveMinimum': True}), {'n': 1},
     [('FieldValueInvalid', 'spec.n')]),
    ('maximum', spec(n={'type': 'number', 'maximum': 1.5}), {'n': 2}, [('FieldValueInvalid', 'spec.n')]),
    ('exclusive-maximum', spec(n={'type': 'number', 'maximum': 2, 'exclusiveMaximum': True}), {'n': 2},
     [('FieldValueInvalid', 'spec.n')]),
    ('multiple-of', spec(n={'type': 'integer', 'multipleOf': 5}), {'n': 7}, [('FieldValueInvalid', 'spec.n')]),
    ('max-items', spec(a={'type': 'array', 'maxItems': 1, 'items': {'type': 'integer'}}), {'a': [1, 2]},
     [('FieldValueTooMany', 'spec.a')]),
    ('min-items', spec(a={'type': 'array', 'minItems': 1, 'items': {'type': 'integer'}}), {'a': []},
     [('FieldValueInvalid', 'spec.a')]),
    ('unique-items', spec(a={'type': 'array', 'uniqueItems': True, 'items': {'type': 'integer'}}), {'a': [1, 1]},
     [('FieldValueInvalid', 'spec.a')]),
    ('list-type-set', spec(a={'type': 'array', 'x-kubernetes-list-type': 'set', 'items': {'type': 'string'}}),
     {'a': ['x', 'y', 'x']}, [('FieldValueDuplicate', 'spec.a[2]')]),
    ('list-type-map', spec(a={'type': 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'],
                              'items': {'type': 'object', 'properties': {'name': {'type': 'string'},
                                                                         'v': {'type': 'integer'}}}}),
     {'a': [{'name': 'a', 'v': 1}, {'name': 'b', 'v': 1}, {'name': 'a', 'v': 2}]},
     [('FieldValueDuplicate', 'spec.a[2]')]),
    ('list-type-atomic-allows-duplicates', spec(a={'type': 'array', 'x-kubernetes-list-type': 'atomic',
                                                   'items': {'type': 'string'}}), {'a': ['x', 'x']}, []),
    ('max-properties', spec(o={'type': 'object', 'maxProperties': 1, 'additionalProperties': {'type': 'string'}}),
     {'o': {'a': 'x', 'b': 'y'}}, [('FieldValueTooMany', 'spec.o')]),
    ('min-properties', spec(o={'type': 'object', 'minProperties': 1, 'additionalProperties': {'type': 'string'}}),
     {'o': {}}, [('FieldValueInvalid', 'spec.o')]),
    ('additional-properties-values', spec(o={'type': 'object', 'additionalProperties': {'type': 'string'}}),
     {'o': {'a': 1}}, [('FieldValueTypeInvalid', 'spec.o.a')]),
    ('several-causes-in-order',
     spec(d={'type': 'integer'}, m={'type': 'string', 'enum': ['a', 'b']}), {'d': 'string', 'm': 'x'},
     [('FieldValueTypeInvalid', 'spec.d'), ('FieldValueNotSupported', 'spec.m')]),
    ('type-error-stops-deeper-checks', spec(s={'type': 'string', 'maxLength': 1, 'enum': ['a']}), {'s': 5},
     [('FieldValueTypeInvalid', 'spec.s')]),
]


@pytest.mark.parametrize('schema, value, expected', [c[1:] for c in VALIDATION], ids=[c[0] for c in VALIDATION])
def test_validate(schema: dict[str, Any], value: Any, expected: list[tuple[str, str]]) -> None:
    assert reasons(validation.validate({'spec': value}, schema)) == expected


def test_emulator_doc_example_messages() -> None:
    schema = spec(duration={'type': 'integer'}, mode={'type': 'string', 'enum': ['a', 'b']})
    causes = validation.validate({'spec': {'duration': 'string', 'mode': 'x'}}, schema)
    assert causes == [
        {'reason': 'FieldValueTypeInvalid', 'field': 'spec.duration',
         'message': 'Invalid value: "string": spec.duration in body must be of type integer: "string"'},
        {'reason': 'FieldValueNotSupported', 'field': 'spec.mode',
         'message': 'Unsupported value: "x": supported values: "a", "b"'},
    ]
    assert validation.summarise(causes) == (
        '[spec.duration: Invalid value: "string": spec.duration in body must be of type integer: "string", '
        'spec.mode: Unsupported value: "x": supported values: "a", "b"]'
    )
    assert validation.summarise(causes[:1]) == (
        'spec.duration: Invalid value: "string": spec.duration in body must be of type integer: "string"'
    )


@pytest.mark.parametrize('value, schema, message', [
    ({'n': 0}, {'type': 'integer', 'minimum': 1},
     'Invalid value: 0: spec.n in body should be greater than or equal to 1'),
    ({'n': 'abcd'}, {'type': 'string', 'maxLength': 3}, 'Too long: may not be longer than 3'),
    ({'n': [1, 2, 3]}, {'type': 'array', 'maxItems': 2}, 'Too many: 3: must have at most 2 items'),
    ({'n': 'aB'}, {'type': 'string', 'pattern': '^[a-z]+$'},
     "Invalid value: \"aB\": spec.n in body should match '^[a-z]+$'"),
    ({'n': 3}, {'type': 'integer', 'enum': [1, 2]}, 'Unsupported value: 3: supported values: "1", "2"'),
    ({'n': {}}, {'type': 'integer'}, 'Invalid value: "object": spec.n in body must be of type integer: "object"'),
    ({'n': None}, {'type': 'string'}, 'Invalid value: "null": spec.n in body must be of type string: "null"'),
])
def test_messages(value: Any, schema: dict[str, Any], message: str) -> None:
    [cause] = validation.validate({'spec': value}, spec(n=schema))
    assert cause['message'] == message


def test_root_apiversion_kind_metadata_not_validated_by_schema() -> None:
    schema = {'type': 'object', 'required': ['apiVersion', 'kind', 'metadata'],
              'properties': {'apiVersion': {'type': 'integer'}}}
    assert validation.validate({'apiVersion': 'v1', 'kind': 'X'}, schema) == []


def test_root_metadata_name_constraints_apply() -> None:
    schema = {'type': 'object', 'properties': {
        'metadata': {'type': 'object', 'properties': {'name': {'type': 'string', 'maxLength': 5}}}}}
    causes = validation.validate({'metadata': {'name': 'too-long-name', 'labels': {'a': 'b'}}}, schema)
    assert reasons(causes) == [('FieldValueTooLong', 'metadata.name')]


def test_embedded_resource_keys_not_validated() -> None:
    schema = spec(t={'type': 'object', 'x-kubernetes-embedded-resource': True,
                     'properties': {'spec': {'type': 'object', 'required': ['x']}}})
    causes = validation.validate({'spec': {'t': {'apiVersion': 'v1', 'kind': 'Pod', 'spec': {}}}}, schema)
    assert reasons(causes) == [('FieldValueRequired', 'spec.t.spec.x')]


def test_no_schema_means_no_validation() -> None:
    assert validation.validate({'spec': 'anything'}, None) == []


def test_cyclic_schema_validation() -> None:
    node: dict[str, Any] = {'type': 'object', 'properties': {'name': {'type': 'string'}}}
    node['properties']['children'] = {'type': 'array', 'items': node}
    obj = {'name': 'a', 'children': [{'name': 'b', 'children': [{'name': 3}]}]}
    assert reasons(validation.validate(obj, node)) == [('FieldValueTypeInvalid', 'children[0].children[0].name')]


# --- defaulting -------------------------------------------------------------------------------

DEFAULTING: list[tuple[str, dict[str, Any], Any, Any]] = [
    ('absent-defaulted', spec(n={'type': 'integer', 'default': 3}), {}, {'n': 3}),
    ('present-kept', spec(n={'type': 'integer', 'default': 3}), {'n': 5}, {'n': 5}),
    ('null-not-nullable-defaulted', spec(n={'type': 'integer', 'default': 3}), {'n': None}, {'n': 3}),
    ('null-nullable-kept', spec(n={'type': 'integer', 'nullable': True, 'default': 3}), {'n': None}, {'n': None}),
    ('null-without-default-dropped', spec(n={'type': 'integer'}), {'n': None}, {}),
    ('nested-default-inside-default',
     spec(o={'type': 'object', 'default': {}, 'properties': {'a': {'type': 'string', 'default': 'x'}}}),
     {}, {'o': {'a': 'x'}}),
    ('array-items-defaulted',
     spec(l={'type': 'array', 'items': {'type': 'object', 'properties': {'a': {'type': 'integer', 'default': 1}}}}),
     {'l': [{}, {'a': 2}]}, {'l': [{'a': 1}, {'a': 2}]}),
    ('additional-properties-defaulted',
     spec(m={'type': 'object', 'additionalProperties': {'type': 'object', 'properties': {
         'a': {'type': 'integer', 'default': 1}}}}),
     {'m': {'k': {}}}, {'m': {'k': {'a': 1}}}),
    ('preserve-unknown-declared-defaulted',
     spec(p={'type': 'object', 'x-kubernetes-preserve-unknown-fields': True,
             'properties': {'a': {'type': 'integer', 'default': 1}}}),
     {'p': {'z': 0}}, {'p': {'z': 0, 'a': 1}}),
]


@pytest.mark.parametrize('schema, before, after', [c[1:] for c in DEFAULTING], ids=[c[0] for c in DEFAULTING])
def test_apply_defaults(schema: dict[str, Any], before: Any, after: Any) -> None:
    obj = {'spec': copy.deepcopy(before)}
    validation.apply_defaults(obj, schema)
    assert obj == {'spec': after}


def test_defaults_only_where_the_parent_exists() -> None:
    obj: dict[str, Any] = {}
    validation.apply_defaults(obj, spec(n={'type': 'integer', 'default': 3}))
    assert obj == {}


def test_defaults_are_copies() -> None:
    schema = spec(o={'type': 'object', 'default': {'a': []}, 'properties': {'a': {'type': 'array'}}})
    one: dict[str, Any] = {'spec': {}}
    validation.apply_defaults(one, schema)
    one['spec']['o']['a'].append(1)
    two: dict[str, Any] = {'spec': {}}
    validation.apply_defaults(two, schema)
    assert two == {'spec': {'o': {'a': []}}}


def test_no_defaults_under_metadata() -> None:
    schema = {'type': 'object', 'properties': {
        'metadata': {'type': 'object', 'properties': {'name': {'type': 'string', 'default': 'x'}}}}}
    obj: dict[str, Any] = {'metadata': {}}
    validation.apply_defaults(obj, schema)
    assert obj == {'metadata': {}}


# --- unknown fields & strict decoding ---------------------------------------------------------

def test_unknown_fields_do_not_modify() -> None:
    body = {'metadata': {'name': 'x', 'junk': 1}, 'spec': {'size': 1, 'junk': 2}}
    before = copy.deepcopy(body)
    assert validation.unknown_fields(body, STRICT) == [('spec', 'junk'), ('metadata', 'junk')]
    assert body == before


def test_strict_decoding_message() -> None:
    body = {'spec': {'list': [{'x': 1}], 'junk': 1}}
    schema = spec(list={'type': 'array', 'items': {'type': 'object'}})
    paths = validation.unknown_fields(body, schema)
    assert validation.strict_decoding_message(paths) == (
        'strict decoding error: unknown field "spec.junk", unknown field "spec.list[0].x"'
    )


def test_unknown_fields_without_schema() -> None:
    assert validation.unknown_fields({'a': 1}, None) == []


# --- structural checks (accepting a CRD) --------------------------------------------------------

KOPF_EXAMPLE_SCHEMA = {
    'type': 'object',
    'properties': {
        'spec': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True},
        'status': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True},
    },
}

STRUCTURAL: list[tuple[str, Any, list[tuple[str, str]]]] = [
    ('kopf-example-ok', KOPF_EXAMPLE_SCHEMA, []),
    ('strict-ok', STRICT, []),
    ('int-or-string-ok', spec(p={'x-kubernetes-int-or-string': True}), []),
    ('preserve-untyped-ok', spec(p={'x-kubernetes-preserve-unknown-fields': True}), []),
    ('metadata-name-ok', {'type': 'object', 'properties': {
        'metadata': {'type': 'object', 'properties': {'name': {'type': 'string', 'maxLength': 10}}}}}, []),
    ('missing-schema', None, [('FieldValueRequired', 'S')]),
    ('root-untyped', {'properties': {}}, [('FieldValueRequired', 'S.type')]),
    ('root-not-object', {'type': 'string'}, [('FieldValueInvalid', 'S.type')]),
    ('property-untyped', spec(x={'properties': {}}), [('FieldValueRequired', 'S.properties[spec].properties[x].type')]),
    ('items-untyped', spec(x={'type': 'array', 'items': {}}),
     [('FieldValueRequired', 'S.properties[spec].properties[x].items.type')]),
    ('array-without-items', spec(x={'type': 'array'}),
     [('FieldValueRequired', 'S.properties[spec].properties[x].items')]),
    ('metadata-other-field', {'type': 'object', 'properties': {
        'metadata': {'type': 'object', 'properties': {'labels': {'type': 'object'}}}}},
     [('FieldValueForbidden', 'S.properties[metadata]')]),
    ('metadata-not-object', {'type': 'object', 'properties': {'metadata': {'type': 'string'}}},
     [('FieldValueInvalid', 'S.properties[metadata].type')]),
    ('kind-not-string', {'type': 'object', 'properties': {'kind': {'type': 'integer'}}},
     [('FieldValueInvalid', 'S.properties[kind].type')]),
    ('additional-properties-at-root', {'type': 'object', 'additionalProperties': {'type': 'string'}},
     [('FieldValueForbidden', 'S.additionalProperties')]),
    ('additional-properties-true-with-properties-ok',
     spec(x={'type': 'object', 'properties': {'a': {'type': 'string'}}, 'additionalProperties': True}), []),
    ('embedded-without-properties', spec(x={'type': 'object', 'x-kubernetes-embedded-resource': True}),
     [('FieldValueRequired', 'S.properties[spec].properties[x].properties')]),
    ('embedded-with-preserve-ok', spec(x={'type': 'object', 'x-kubernetes-embedded-resource': True,
                                          'x-kubernetes-preserve-unknown-fields': True}), []),
    ('embedded-not-object', spec(x={'type': 'string', 'x-kubernetes-embedded-resource': True,
                                    'x-kubernetes-preserve-unknown-fields': True}),
     [('FieldValueInvalid', 'S.properties[spec].properties[x].type')]),
    ('int-or-string-with-preserve', spec(x={'x-kubernetes-int-or-string': True,
                                            'x-kubernetes-preserve-unknown-fields': True}),
     [('FieldValueInvalid', 'S.properties[spec].properties[x].x-kubernetes-preserve-unknown-fields')]),
    ('bad-pattern', spec(x={'type': 'string', 'pattern': '(unclosed'}),
     [('FieldValueInvalid', 'S.properties[spec].properties[x].pattern')]),
    ('unique-items-forbidden', spec(x={'type': 'array', 'uniqueItems': True, 'items': {'type': 'string'}}),
     [('FieldValueForbidden', 'S.properties[spec].properties[x].uniqueItems')]),
    ('default-valid', spec(n={'type': 'integer', 'default': 3}), []),
    ('default-wrong-type', spec(n={'type': 'integer', 'default': 'x'}),
     [('FieldValueTypeInvalid', 'S.properties[spec].properties[n].default')]),
    ('default-nested-invalid', spec(o={'type': 'object', 'default': {'a': 'x'}, 'properties': {
        'a': {'type': 'string', 'enum': ['y']}}}),
     [('FieldValueNotSupported', 'S.properties[spec].properties[o].default.a')]),
    ('several-sorted', spec(b={}, a={}),
     [('FieldValueRequired', 'S.properties[spec].properties[a].type'),
      ('FieldValueRequired', 'S.properties[spec].properties[b].type')]),
    ('preserve-false', spec(x={'type': 'object', 'x-kubernetes-preserve-unknown-fields': False}),
     [('FieldValueInvalid', 'S.properties[spec].properties[x].x-kubernetes-preserve-unknown-fields')]),
    ('ref-forbidden', spec(x={'type': 'object', '$ref': '#/definitions/x'}),
     [('FieldValueForbidden', 'S.properties[spec].properties[x].$ref')]),
    ('properties-and-additional', spec(x={'type': 'object', 'properties': {'a': {'type': 'string'}},
                                          'additionalProperties': {'type': 'string'}}),
     [('FieldValueForbidden', 'S.properties[spec].properties[x].additionalProperties')]),
]


@pytest.mark.parametrize('schema, expected', [c[1:] for c in STRUCTURAL], ids=[c[0] for c in STRUCTURAL])
def test_check_structural(schema: Any, expected: list[tuple[str, str]]) -> None:
    causes = structural.check_structural(schema, field='S')
    assert reasons(causes) == expected


def test_check_structural_default_field_prefix() -> None:
    [cause] = structural.check_structural(spec(x={}))
    assert cause['field'] == 'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[x].type'
    assert cause['message'] == 'Required value: must not be empty for specified object fields'


def test_type_names_in_messages_follow_go_decoding() -> None:
    [cause] = validation.validate({'spec': {'n': 3.0}}, spec(n={'type': 'string'}))
    assert cause['message'] == 'Invalid value: "number": spec.n in body must be of type string: "number"'
    [cause] = validation.validate({'spec': {'n': [1]}}, spec(n={'x-kubernetes-int-or-string': True}))
    assert cause['message'] == 'Invalid value: "array": spec.n in body must be of type integer,string: "array"'
