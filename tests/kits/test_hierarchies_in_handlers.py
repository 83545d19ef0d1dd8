"""The default owner inside real handler invocations (sync handlers run in the executor, async in the loop)."""
import logging
from typing import Any

import pytest

import kopf
from kopf._core import handlers, registries
from kopf._core.bodies import Body
from kopf._core.causes import Reason
from kopf._core.kwargs import ChangingCause
from kopf._core.outcomes import OutcomeKind
from kopf._core.patches import Patch
from kopf._core.resources import Resource
from kopf._engine import invoking
from kopf._kits import hierarchies

OWNER = Body({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
              'metadata': {'name': 'kex', 'namespace': 'ns1', 'uid': 'uid-1', 'labels': {'app': 'demo'}}})
EXPECTED = {'ownerReferences': [kopf.build_owner_reference(OWNER)], 'generateName': 'kex-',
            'namespace': 'ns1', 'labels': {'app': 'demo'}}


def _handler(decorator: Any, flavour: str, child: dict[str, Any]) -> handlers.BaseHandler:
    def sync_fn(**_: Any) -> None:
        kopf.adopt(child)

    async def async_fn(**_: Any) -> None:
        kopf.adopt(child)

    registry = kopf.OperatorRegistry()
    decorator('kex', registry=registry)(sync_fn if flavour == 'sync' else async_fn)
    return registry.handlers[0]


@pytest.mark.parametrize('flavour', ['sync', 'async'])
async def test_change_handlers_adopt_into_the_handled_object(flavour: str) -> None:
    child: dict[str, Any] = {}
    handler = _handler(kopf.on.create, flavour, child)
    assert isinstance(handler, handlers.ChangingHandler)
    cause = ChangingCause(logger=logging.getLogger('test'), memo=kopf.Memo(),
                          resource=Resource('kopf.dev', 'v1', 'kex'), body=OWNER, patch=Patch(), reason=Reason.CREATE)
    context = registries.SubhandlingContext(parent=handler, cause=cause)
    outcome = await invoking.invoke_handler(handler, kwargs={}, subhandling=context)
    assert outcome.kind is OutcomeKind.SUCCESS, outcome.exception
    assert child['metadata'] == EXPECTED


@pytest.mark.parametrize('flavour', ['sync', 'async'])
async def test_other_resource_handlers_adopt_when_the_reactor_sets_the_owner(flavour: str) -> None:
    child: dict[str, Any] = {}
    handler = _handler(kopf.on.validate, flavour, child)  # errors are not ignored: a failure shows
    with hierarchies.owner_context(OWNER):
        outcome = await invoking.invoke_handler(handler, kwargs={})
    assert outcome.kind is OutcomeKind.SUCCESS, outcome.exception
    assert child['metadata'] == EXPECTED


@pytest.mark.parametrize('flavour', ['sync', 'async'])
async def test_no_owner_without_the_reactors_context(flavour: str) -> None:
    handler = _handler(kopf.on.validate, flavour, {})
    outcome = await invoking.invoke_handler(handler, kwargs={})
    assert isinstance(outcome.exception, LookupError)
