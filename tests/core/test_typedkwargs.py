"""Typed handlers' kwargs: which parameters are typed, how they parse, how a bad body is described."""
import dataclasses
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

import kopf
from kopf._core import typedkwargs as parsing
from kopf._typed import declaring


class Spec(BaseModel):
    size: Annotated[int, Field(le=9)] = 1
    names: list[str] = []


@dataclasses.dataclass
class Status:
    phase: str | None = None
    ready: bool = False


@kopf.custom_resource('example.com', 'v1', kind='Parsed')
class Parsed(BaseModel):
    spec: Spec
    status: Status | None = None


def by_annotations(spec: Spec, status: Status | None, body: dict[str, Any], **_: Any) -> None: ...
def untyped(spec: kopf.Spec, status: Any, body: kopf.Body, old: Any, new: Any, **_: Any) -> None: ...
def unannotated(spec, status, body, old, new, **_): ...  # type: ignore[no-untyped-def]
def kwargs_only(**kwargs: Any) -> None: ...


@pytest.mark.parametrize('fn, resource, expected', [
    (by_annotations, None, [('spec', 'Spec'), ('status', 'Status')]),
    (by_annotations, Parsed, [('spec', 'Spec'), ('status', 'Status')]),   # annotations win; body stays a dict
    (untyped, None, []),
    (untyped, Parsed, []),                                                  # annotated untyped: left as they are
    (unannotated, None, []),
    (unannotated, Parsed, [('body', 'Parsed'), ('spec', 'Spec'), ('status', 'Status'), ('old', 'Parsed'),
                           ('new', 'Parsed')]),
    (kwargs_only, Parsed, []),
], ids=lambda v: getattr(v, '__name__', repr(v)))
def test_typed_params(fn: Any, resource: type | None, expected: list[tuple[str, str]]) -> None:
    assert [(p.name, p.title) for p in parsing.typed_params(fn, resource)] == expected


@pytest.mark.parametrize('field, expected', [
    (('spec',), [('body', 'Parsed'), ('spec', 'Spec'), ('status', 'Status'), ('old', 'Spec'), ('new', 'Spec')]),
    (('status',), [('body', 'Parsed'), ('spec', 'Spec'), ('status', 'Status'), ('old', 'Status'), ('new', 'Status')]),
    (('spec', 'size'), [('body', 'Parsed'), ('spec', 'Spec'), ('status', 'Status')]),   # an int: as it is
    (('metadata', 'labels'), [('body', 'Parsed'), ('spec', 'Spec'), ('status', 'Status')]),
])
def test_a_field_handlers_old_and_new_are_the_fields_type(field: tuple[str, ...],
                                                           expected: list[tuple[str, str]]) -> None:
    assert [(p.name, p.title) for p in parsing.typed_params(unannotated, Parsed, field)] == expected


BODY = {'apiVersion': 'example.com/v1', 'kind': 'Parsed', 'metadata': {'name': 'p1'},
        'spec': {'size': 3, 'names': ['a']}, 'status': {'phase': 'Ready'}}


def test_the_kopf_views_parse_into_the_models() -> None:
    body = kopf.Body(BODY)
    params = parsing.typed_params(unannotated, Parsed)
    kwargs = parsing.parsed(params, {'body': body, 'spec': body.spec, 'status': body.status, 'old': None,
                                     'new': BODY, 'logger': 'kept'})
    assert kwargs['spec'] == Spec(size=3, names=['a'])
    assert kwargs['status'] == Status(phase='Ready')
    assert kwargs['body'] == Parsed(spec=Spec(size=3, names=['a']), status=Status(phase='Ready'))
    assert kwargs['new'] == kwargs['body'] and kwargs['old'] is None and kwargs['logger'] == 'kept'


def test_an_absent_spec_parses_as_empty() -> None:
    body = kopf.Body({'metadata': {'name': 'p1'}})
    kwargs = parsing.parsed(parsing.typed_params(by_annotations), {'spec': body.spec, 'status': body.status,
                                                                   'body': body})
    assert kwargs['spec'] == Spec() and kwargs['status'] == Status()


@pytest.mark.parametrize('spec, message', [
    ({'size': 12}, 'the spec does not parse as Spec: spec.size: Input should be less than or equal to 9 (got 12)'),
    ({'names': ['a', 3]}, 'spec.names[1]: Input should be a valid string (got 3)'),
    ({'size': 'x', 'names': 'y'}, 'spec.size: Input should be a valid integer, unable to parse string as an integer '
                                  "(got 'x'); spec.names: Input should be a valid list (got 'y')"),
])
def test_a_bad_value_names_the_field_path_and_the_value(spec: dict[str, Any], message: str) -> None:
    body = kopf.Body({**BODY, 'spec': spec})
    with pytest.raises(parsing.ParseError) as info:
        parsing.parsed(parsing.typed_params(by_annotations), {'spec': body.spec, 'status': body.status,
                                                              'body': body})
    assert message in str(info.value)


def test_the_resource_class_as_a_selector() -> None:
    assert declaring.resource_of((Parsed,)) is Parsed
    assert declaring.resource_of(('example.com', 'v1', 'parseds')) is None
    assert declaring.resource_of(()) is None
