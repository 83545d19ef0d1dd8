"""A listed object that needs nothing (`plans.quiet_at_first_sight`) has its first cycle inside `dispatch()`:
the same record steps as through the queue, without the queue, a runner or `process()` (the seam here)."""
import asyncio
import copy
from collections.abc import Callable
from typing import Any

import pytest

import kopf
from kopf._core import records
from kopf._engine import contexts, queueing, scopes
from tests.core.test_plans import F, make_body, make_rctx, with_diffbase

CREATE_UPDATE_DELETE = [{'on': 'create', 'id': 'c'}, {'on': 'update', 'id': 'u'}, {'on': 'delete', 'id': 'd'}]


class Recording(queueing.Dispatcher):
    """A dispatcher whose cycles through the queue are recorded (and end as "handled")."""
    processed: list[str]

    async def process(self, rctx: Any, record: records.ObjectRecord, event: Any, **_: Any) -> records.Done:
        self.processed.append(record.uid)
        return records.Done(event=event, now=asyncio.get_running_loop().time(), handled=True)


def listed(body: dict[str, Any], uid: str = 'u1') -> dict[str, Any]:
    body = copy.deepcopy(body)
    body['metadata']['uid'] = uid
    return {'type': None, 'object': body}


def handled(rctx: contexts.ResourceContext) -> dict[str, Any]:
    return with_diffbase(rctx, make_body(finalizers=[F]))


async def dispatched(rctx: contexts.ResourceContext, *events: dict[str, Any],
                     then: Callable[[], None] = lambda: None) -> Recording:
    """The events dispatched as a listing (`then()` right after them), until all is handled."""
    async with asyncio.TaskGroup() as tg:
        dispatcher = Recording(rctx, tg)
        dispatcher.processed = []
        for event in events:
            dispatcher.dispatch(event)
        then()
        dispatcher.listed()
        await asyncio.wait_for(_idle(dispatcher), timeout=5)
        dispatcher.closed = True
        for waiter in list(dispatcher.waiters):
            if not waiter.done():
                waiter.set_result(None)
    return dispatcher


async def _idle(dispatcher: queueing.Dispatcher) -> None:
    while dispatcher.ready or dispatcher.tasks or dispatcher.progress is not None:  # noqa: ASYNC110
        await asyncio.sleep(0.001)


async def test_an_unchanged_listed_object_is_handled_in_dispatch() -> None:
    rctx = make_rctx(CREATE_UPDATE_DELETE)
    dispatcher = await dispatched(rctx, listed(handled(rctx), 'u1'), listed(handled(rctx), 'u2'))
    assert dispatcher.processed == []
    assert not dispatcher.runners and dispatcher.active == 0  # no runner was ever started
    for uid in ['u1', 'u2']:
        record = rctx.records[uid]
        assert record.phase is records.Phase.IDLE and record.initial is False and record.work is None


async def test_a_changed_listed_object_goes_through_the_queue_as_first_seen() -> None:
    rctx = make_rctx(CREATE_UPDATE_DELETE)
    changed = with_diffbase(rctx, make_body(finalizers=[F]), of=make_body(spec={'x': 1}, finalizers=[F]))

    def queued() -> None:
        assert rctx.records['u1'].initial is None  # its cycle decides when taken (a newer event may come first)
        assert rctx.records['u1'].phase is records.Phase.QUEUED
    dispatcher = await dispatched(rctx, listed(changed), then=queued)
    assert dispatcher.processed == ['u1']


@pytest.mark.parametrize('event_type', ['ADDED', 'MODIFIED'])
async def test_a_watched_event_goes_through_the_queue(event_type: str) -> None:
    rctx = make_rctx(CREATE_UPDATE_DELETE)
    event = listed(handled(rctx)) | {'type': event_type}
    dispatcher = await dispatched(rctx, event)
    assert dispatcher.processed == ['u1']


async def test_while_paused_a_listed_object_goes_through_the_queue() -> None:
    rctx = make_rctx(CREATE_UPDATE_DELETE)
    rctx.operator.pausing.pause(scopes.WHOLE, 'test')
    dispatcher = await dispatched(rctx, listed(handled(rctx)))
    assert dispatcher.processed == ['u1']  # `process()` decides what a paused cycle does (feeds the indices)


async def test_a_resource_with_a_resume_handler_goes_through_the_queue() -> None:
    rctx = make_rctx([*CREATE_UPDATE_DELETE, {'on': 'resume', 'id': 'r'}])
    dispatcher = await dispatched(rctx, listed(handled(rctx)))
    assert dispatcher.processed == ['u1']


async def test_while_another_scope_is_paused_a_listed_object_of_an_active_one_is_handled_in_dispatch() -> None:
    rctx = make_rctx(CREATE_UPDATE_DELETE)
    rctx.operator.pausing.pause(scopes.Shard(3), 'test')  # not this object's (an unsharded record)
    dispatcher = await dispatched(rctx, listed(handled(rctx)))
    assert dispatcher.processed == []


async def test_a_storage_that_fails_goes_through_the_queue_and_breaks_nothing() -> None:
    class Broken(kopf.AnnotationsDiffBaseStorage):  # a user's storage: asked as `decide()` asks it
        def fetch(self, *, body: Any) -> Any:
            if body['metadata']['uid'] == 'u1':
                raise ValueError('a broken diff-base')
            return super().fetch(body=body)
    rctx = make_rctx(CREATE_UPDATE_DELETE)
    rctx.diffbase_storage = Broken()
    dispatcher = await dispatched(rctx, listed(handled(rctx), 'u1'), listed(handled(rctx), 'u2'))
    assert dispatcher.processed == ['u1']  # its cycle fails the usual way (named, retried); the next one is quiet
    assert rctx.records['u2'].initial is False


async def test_an_unreadable_diff_base_goes_through_the_queue_and_breaks_nothing() -> None:
    rctx = make_rctx(CREATE_UPDATE_DELETE)  # the framework's storages: compared without the essence built
    broken = handled(rctx)
    broken['metadata']['annotations'] = {key: '{not json' for key in broken['metadata']['annotations']}
    dispatcher = await dispatched(rctx, listed(broken, 'u1'), listed(handled(rctx), 'u2'))
    assert dispatcher.processed == ['u1']  # its cycle fails the usual way (named, retried); the next one is quiet
    assert rctx.records['u2'].initial is False
