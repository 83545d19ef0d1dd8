"""Python types → structural OpenAPI schemas: one row per mapping of docs/models.md, and the refusals."""
import dataclasses
import datetime
import enum
import uuid
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

import pytest
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

import kopf
from kopf._typed import generating
from kopf._typed.extensions import SchemaError


class Colour(enum.Enum):
    RED = 'red'
    BLUE = 'blue'


class Level(enum.IntEnum):
    ONE = 1
    TWO = 2


class Leaf(BaseModel):
    value: int


def _schema(tp: Any) -> dict[str, Any]:
    return generating.type_schema(tp).schema


@pytest.mark.parametrize('tp, expected', [
    (str, {'type': 'string'}),
    (int, {'type': 'integer'}),
    (float, {'type': 'number'}),
    (bool, {'type': 'boolean'}),
    (int | None, {'type': 'integer', 'nullable': True}),
    (list[str], {'type': 'array', 'items': {'type': 'string'}}),
    (tuple[int, ...], {'type': 'array', 'items': {'type': 'integer'}}),
    (Sequence[int], {'type': 'array', 'items': {'type': 'integer'}}),
    (dict[str, int], {'type': 'object', 'additionalProperties': {'type': 'integer'}}),
    (Mapping[str, bool], {'type': 'object', 'additionalProperties': {'type': 'boolean'}}),
    (Literal['a', 'b'], {'type': 'string', 'enum': ['a', 'b']}),
    (Literal[1, 2], {'type': 'integer', 'enum': [1, 2]}),
    (Colour, {'type': 'string', 'enum': ['red', 'blue']}),
    (Level, {'type': 'integer', 'enum': [1, 2]}),
    (datetime.datetime, {'type': 'string', 'format': 'date-time'}),
    (datetime.date, {'type': 'string', 'format': 'date'}),
    (uuid.UUID, {'type': 'string', 'format': 'uuid'}),
    (int | str, {'x-kubernetes-int-or-string': True}),
    (str | int, {'x-kubernetes-int-or-string': True}),
    (Any, {'x-kubernetes-preserve-unknown-fields': True}),
    (dict[str, Any], {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True}),
    (list[Any], {'type': 'array', 'items': {'x-kubernetes-preserve-unknown-fields': True}}),
    (Annotated[int, Field(ge=1, le=9)], {'type': 'integer', 'minimum': 1, 'maximum': 9}),
    (Annotated[int, Field(gt=0, lt=10)], {'type': 'integer', 'minimum': 0, 'exclusiveMinimum': True,
                                          'maximum': 10, 'exclusiveMaximum': True}),
    (Annotated[float, Field(multiple_of=0.5)], {'type': 'number', 'multipleOf': 0.5}),
    (Annotated[str, Field(min_length=1, max_length=5, pattern='^a')],
     {'type': 'string', 'minLength': 1, 'maxLength': 5, 'pattern': '^a'}),
    (Annotated[list[int], Field(min_length=1, max_length=3)],
     {'type': 'array', 'items': {'type': 'integer'}, 'minItems': 1, 'maxItems': 3}),
    (Annotated[dict[str, int], Field(max_length=2)],
     {'type': 'object', 'additionalProperties': {'type': 'integer'}, 'maxProperties': 2}),
    (Annotated[int, Field(ge=0)] | Annotated[str, Field(max_length=3)],
     {'x-kubernetes-int-or-string': True, 'minimum': 0, 'maxLength': 3}),
    (Annotated[str, Field(description='Described.')], {'type': 'string', 'description': 'Described.'}),
], ids=repr)
def test_types_map_to_schemas(tp: Any, expected: dict[str, Any]) -> None:
    assert _schema(tp) == expected


@pytest.mark.parametrize('tp, expected', [
    (Annotated[int, kopf.Rule('self > 0', message='positive')],
     {'type': 'integer', 'x-kubernetes-validations': [{'rule': 'self > 0', 'message': 'positive'}]}),
    (Annotated[str, kopf.Rule('self == oldSelf', message_expression="'was ' + oldSelf", reason='FieldValueForbidden',
                              field_path='.x', optional_old_self=True)],
     {'type': 'string', 'x-kubernetes-validations': [{
         'rule': 'self == oldSelf', 'messageExpression': "'was ' + oldSelf", 'reason': 'FieldValueForbidden',
         'fieldPath': '.x', 'optionalOldSelf': True}]}),
    (Annotated[list[str], kopf.ListSet()], {'type': 'array', 'items': {'type': 'string'},
                                             'x-kubernetes-list-type': 'set'}),
    (Annotated[list[str], kopf.Atomic()], {'type': 'array', 'items': {'type': 'string'},
                                            'x-kubernetes-list-type': 'atomic'}),
    (Annotated[dict[str, str], kopf.Atomic()], {'type': 'object', 'additionalProperties': {'type': 'string'},
                                                 'x-kubernetes-map-type': 'atomic'}),
    (Annotated[dict[str, str], kopf.Granular()], {'type': 'object', 'additionalProperties': {'type': 'string'},
                                                   'x-kubernetes-map-type': 'granular'}),
    (Annotated[dict[str, Any], kopf.EmbeddedResource()],
     {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True, 'x-kubernetes-embedded-resource': True}),
    (Annotated[str, kopf.Format('hostname')], {'type': 'string', 'format': 'hostname'}),
    (Annotated[list[str], kopf.ListSet(), Field(max_length=3)],   # pydantic's constraint after the marker
     {'type': 'array', 'items': {'type': 'string'}, 'x-kubernetes-list-type': 'set', 'maxItems': 3}),
], ids=repr)
def test_markers_map_to_extensions(tp: Any, expected: dict[str, Any]) -> None:
    assert _schema(tp) == expected


def test_models_map_to_objects_with_descriptions_defaults_and_aliases() -> None:
    class Spec(BaseModel):
        """The spec."""
        model_config = ConfigDict(alias_generator=lambda name: name.replace('_', '-'))
        ready_count: int
        leaf: Leaf = Leaf(value=3)
        names: list[str] = Field(default_factory=lambda: ['a'])
        colour: Colour = Colour.BLUE
        maybe: int | None = None
        """Not given: None."""

    assert _schema(Spec) == {
        'description': 'The spec.', 'type': 'object', 'required': ['ready-count'], 'properties': {
            'ready-count': {'type': 'integer'},
            'leaf': {'type': 'object', 'properties': {'value': {'type': 'integer'}}, 'required': ['value'],
                     'default': {'value': 3}},
            'names': {'type': 'array', 'items': {'type': 'string'}, 'default': ['a']},
            'colour': {'type': 'string', 'enum': ['red', 'blue'], 'default': 'blue'},
            'maybe': {'description': 'Not given: None.', 'type': 'integer', 'nullable': True},
        }}


def test_dataclasses_and_class_markers() -> None:
    @kopf.Rule('self.a <= self.b')
    @kopf.PreserveUnknownFields()
    @dataclasses.dataclass
    class Pair:
        a: int
        b: int = 0

    assert _schema(Pair) == {'type': 'object', 'required': ['a'],
                             'properties': {'a': {'type': 'integer'}, 'b': {'type': 'integer', 'default': 0}},
                             'x-kubernetes-preserve-unknown-fields': True,
                             'x-kubernetes-validations': [{'rule': 'self.a <= self.b'}]}


def test_extra_allow_preserves_unknown_fields() -> None:
    class Open(BaseModel):
        model_config = ConfigDict(extra='allow')
        x: int = 0
    assert _schema(Open)['x-kubernetes-preserve-unknown-fields'] is True


def test_list_map_keys() -> None:
    class Port(BaseModel):
        name: str
        protocol: str = 'TCP'
    assert _schema(Annotated[list[Port], kopf.ListMap('name', 'protocol')])['x-kubernetes-list-map-keys'] == [
        'name', 'protocol']


def test_python_validators_are_skipped_with_a_warning() -> None:
    generated = generating.type_schema(Annotated[int, AfterValidator(lambda x: x)])
    assert generated.schema == {'type': 'integer'}
    assert len(generated.warnings) == 1 and 'has no OpenAPI form' in generated.warnings[0]


class Recursive(BaseModel):
    children: list['Recursive'] = []


class BadDefault(BaseModel):
    x: Annotated[int, Field(ge=5)] = 1


class KeyedWrongly(BaseModel):
    name: str | None = None


@pytest.mark.parametrize('tp, message', [
    (set[str], 'use Annotated[list[X], kopf.ListSet()]'),
    (frozenset[str], 'kopf.ListSet()'),
    (bytes, 'bytes'),
    (datetime.timedelta, 'timedelta'),
    (tuple[int, int], 'a fixed-length tuple'),
    (int | float, 'a union (int | float)'),
    (Leaf | KeyedWrongly, 'a union'),
    (Literal['a', 1], 'not all of one JSON type'),
    (dict[int, str], "a dict's keys must be plain str"),
    (Recursive, 'Recursive contains itself'),
    (BadDefault, 'the default 1 is not valid for its own type'),
    (Annotated[list[KeyedWrongly], kopf.ListMap('name')], 'must be a required field of the items or have a default'),
    (Annotated[list[KeyedWrongly], kopf.ListMap('nope')], "key 'nope' is not a field of the items"),
    (Annotated[list[Leaf], kopf.ListSet()], 'kopf.ListSet needs scalar items'),
    (Annotated[int, kopf.ListSet()], 'applies to lists only'),
    (Annotated[int, kopf.Granular()], 'applies to models and dicts only'),
    (Annotated[int, kopf.Format('hostname')], 'applies to strings only'),
    (Annotated[list[str], kopf.ListSet(), kopf.Atomic()], "is both 'set' and 'atomic'"),
], ids=repr)
def test_types_with_no_structural_form_are_refused(tp: Any, message: str) -> None:
    with pytest.raises(SchemaError, match=None) as info:
        generating.type_schema(tp)
    assert message in str(info.value)


def test_the_refusal_names_the_class_and_the_field() -> None:
    class Spec(BaseModel):
        window: tuple[int, int]
    with pytest.raises(SchemaError) as info:
        generating.type_schema(Spec)
    where = f'{__name__}:test_the_refusal_names_the_class_and_the_field.<locals>.Spec.window'
    assert str(info.value).startswith(f'{where}: a fixed-length tuple has no structural schema')


def test_one_name_per_field() -> None:
    class Spec(BaseModel):
        x: Annotated[int, Field(validation_alias='a', serialization_alias='b')] = 0
    with pytest.raises(SchemaError, match="read as 'a' but written as 'b'"):
        generating.type_schema(Spec)


def test_the_list_markers_are_checked_by_pydantic_too() -> None:
    import pydantic

    class Port(BaseModel):
        name: str

    class Spec(BaseModel):
        tags: Annotated[list[str], kopf.ListSet()] = []
        ports: Annotated[list[Port], kopf.ListMap('name')] = []

    Spec.model_validate({'tags': ['a', 'b'], 'ports': [{'name': 'a'}, {'name': 'b'}]})
    with pytest.raises(pydantic.ValidationError, match=r"duplicate item \[1\]: 'a'"):
        Spec.model_validate({'tags': ['a', 'a']})
    with pytest.raises(pydantic.ValidationError, match=r"duplicate key \[1\]: \{'name': 'a'\}"):
        Spec.model_validate({'ports': [{'name': 'a'}, {'name': 'a'}]})


def test_a_resource_schema_has_the_servers_top_fields() -> None:
    class Thing(BaseModel):
        spec: Leaf
        metadata: dict[str, Any] = {}
    schema = generating.resource_schema(Thing).schema
    assert list(schema['properties']) == ['apiVersion', 'kind', 'metadata', 'spec']
    assert schema['properties']['metadata'] == {'type': 'object'}
    assert schema['required'] == ['spec']
