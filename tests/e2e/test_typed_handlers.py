"""Typed handlers end to end: parsed `spec`/`status`/`body`/`old`/`new`, a decorator naming the resource class,
the status written through a model, and a body that does not parse: a permanent error of that handler only."""
import dataclasses
import datetime
import logging
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

import kopf

from .conftest import Kube, Starter, eventually, example, get_example

Obj = dict[str, Any]


class ExampleSpec(BaseModel):
    """The spec of examples/crd.yaml's KopfExample (free-form there): as a typed operator reads it."""
    field: str = ''
    items: list[str] = []
    count: Annotated[int, Field(ge=0)] = 0


@dataclasses.dataclass
class ExampleStatus:
    phase: str | None = None
    seen: datetime.datetime | None = None


class ReportedStatus(BaseModel):
    phase: str | None = None
    items: int = 0


@kopf.custom_resource('kopf.dev', 'v1', kind='KopfExample')
class KopfExample(BaseModel):
    spec: ExampleSpec = ExampleSpec()
    status: ExampleStatus | None = None


def status_of(cluster: Any, name: str = 'kopf-example-1') -> Obj:
    return dict((get_example(cluster, name) or {}).get('status') or {})


async def test_annotated_parameters_are_parsed_and_the_status_is_written_through_a_model(
        cluster: Any, registry: kopf.OperatorRegistry, start_operator: Starter, kube: Kube) -> None:
    seen: list[Any] = []

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(spec: ExampleSpec, status: ExampleStatus | None, patch: kopf.Patch, **_: Any) -> None:
        seen.append((spec, status))
        patch.status = ReportedStatus(items=len(spec.items))   # only what was set: `phase` is not written

    await start_operator()
    await kube.create(example(field='value', items=['a', 'b']))
    await eventually(lambda: status_of(cluster).get('items') == 2)
    assert seen == [(ExampleSpec(field='value', items=['a', 'b']), ExampleStatus())]
    assert 'phase' not in status_of(cluster)


async def test_the_decorator_names_the_resource_class(
        cluster: Any, registry: kopf.OperatorRegistry, start_operator: Starter, kube: Kube) -> None:
    seen: list[Any] = []

    @kopf.on.create(KopfExample, registry=registry)
    def create_fn(body, spec, status, patch, **_):  # type: ignore[no-untyped-def]
        seen.append((type(body), spec, status))
        patch.status = ExampleStatus(phase='Created')

    @kopf.on.update(KopfExample, registry=registry)
    def update_fn(old, new, **_):  # type: ignore[no-untyped-def]
        seen.append((old.spec.field, new.spec.field))

    await start_operator()
    await kube.create(example(field='value'))
    await eventually(lambda: status_of(cluster).get('phase') == 'Created')
    await kube.patch('kopf-example-1', {'spec': {'field': 'changed'}})
    await eventually(lambda: len(seen) == 2)
    assert seen == [(KopfExample, ExampleSpec(field='value'), ExampleStatus()),
                    ('value', 'changed')]
    with pytest.raises(TypeError, match=r'a resource class \(KopfExample\) names the resource'):
        kopf.on.create(KopfExample, 'v1', registry=registry)


async def test_a_body_that_does_not_parse_fails_that_handler_permanently(
        cluster: Any, registry: kopf.OperatorRegistry, start_operator: Starter, kube: Kube,
        caplog: pytest.LogCaptureFixture) -> None:
    called: list[str] = []

    @kopf.on.create('kopfexamples', id='typed_fn', registry=registry)
    def typed_fn(spec: ExampleSpec, **_: Any) -> None:
        called.append('typed')

    @kopf.on.create('kopfexamples', registry=registry)
    def untyped_fn(spec: kopf.Spec, **_: Any) -> None:
        called.append('untyped')

    await start_operator()
    await kube.create(example(count=-1, items=['a', 2]))   # the CRD preserves anything; the model does not
    await eventually(lambda: 'untyped' in called)
    await eventually(lambda: any('failed permanently' in r.getMessage() for r in caplog.records))
    assert called == ['untyped']
    [record] = [r for r in caplog.records if 'failed permanently' in r.getMessage()]
    assert record.levelno == logging.ERROR
    assert record.getMessage() == (
        "[default/kopf-example-1] Handler 'typed_fn' failed permanently: the spec does not parse as ExampleSpec: "
        "spec.items[1]: Input should be a valid string (got 2); "
        "spec.count: Input should be greater than or equal to 0 (got -1)")
