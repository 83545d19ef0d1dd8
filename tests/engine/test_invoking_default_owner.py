"""The default owner of `kopf.adopt()` & co. is the `body` kwarg of whatever handler is invoked now."""
from typing import Any

import pytest

import kopf
from kopf._core import registries
from kopf._core.bodies import Body
from kopf._core.outcomes import OutcomeKind
from kopf._engine import invoking

OWNER = Body({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
              'metadata': {'name': 'kex', 'namespace': 'ns1', 'uid': 'uid-1', 'labels': {'app': 'demo'}}})


@pytest.mark.parametrize('decorator', [kopf.on.event, kopf.on.delete])
@pytest.mark.parametrize('flavour', ['sync', 'async'])
async def test_handlers_with_a_body_adopt_into_it(decorator: Any, flavour: str) -> None:
    child: dict[str, Any] = {}

    def sync_fn(**_: Any) -> None:
        kopf.adopt(child)

    async def async_fn(**_: Any) -> None:
        kopf.adopt(child)

    registry = kopf.OperatorRegistry()
    decorator('kopfexamples', registry=registry)(sync_fn if flavour == 'sync' else async_fn)
    outcome = await invoking.invoke_handler(registry.handlers[0], kwargs={'body': OWNER})
    assert outcome.kind is OutcomeKind.SUCCESS, outcome.exception
    assert child['metadata']['ownerReferences'] == [kopf.build_owner_reference(OWNER)]
    assert child['metadata']['namespace'] == 'ns1'
    assert registries.execution.get() is None  # reset after the call


async def test_activity_handlers_have_no_owner() -> None:
    registry = kopf.OperatorRegistry()
    kopf.on.startup(registry=registry)(lambda **_: kopf.adopt({}))
    outcome = await invoking.invoke_handler(registry.handlers[0], kwargs={})
    assert isinstance(outcome.exception, LookupError)


@pytest.mark.parametrize('flavour', ['sync', 'async'])
async def test_one_execution_context_while_a_handler_runs(flavour: str) -> None:
    seen: list[registries.Execution | None] = []

    def sync_fn(**_: Any) -> None:
        seen.append(registries.execution.get())

    async def async_fn(**_: Any) -> None:
        sync_fn()

    registry = kopf.OperatorRegistry()
    kopf.on.event('kopfexamples', registry=registry)(sync_fn if flavour == 'sync' else async_fn)
    handler = registry.handlers[0]
    await invoking.invoke_handler(handler, kwargs={'body': OWNER})
    [execution] = seen
    assert execution is not None
    assert (execution.handler, execution.owner, execution.subhandling) == (handler, OWNER, None)
    assert registries.execution.get() is None
