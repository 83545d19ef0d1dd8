"""The queue of records and its runners: the newest body only, one cycle at a time, wake-ups on the scheduler.

The record's transitions are table-tested in tests/core/test_records.py; here the dispatcher carries
them out over real tasks, with cycles of the test's own (`Dispatcher.process`, the seam).
"""
import asyncio
import gc
import math
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

import kopf
from kopf._core import records
from kopf._engine import contexts, queueing
from tests.waiting import eventually

Process = Callable[..., Awaitable[records.Done]]


def event(rv: int, type_: str | None = 'MODIFIED') -> dict[str, Any]:
    return {'type': type_, 'object': {'metadata': {'uid': 'u1', 'name': 'n', 'namespace': 'ns',
                                                   'resourceVersion': str(rv)}}}


@pytest.fixture
def rctx() -> contexts.ResourceContext:
    settings = kopf.OperatorSettings()
    settings.queueing.idle_timeout = 0.05
    settings.persistence.consistency_timeout = 0.3
    operator = contexts.OperatorContext(settings=settings, registry=kopf.OperatorRegistry(), client=None,  # type: ignore[arg-type]
                                        memo=kopf.Memo(), lifecycle=kopf.lifecycles.asap)
    return contexts.ResourceContext(operator=operator, resource=kopf.Resource('g', 'v', 'p'),
                                    progress_storage=kopf.AnnotationsProgressStorage(),
                                    diffbase_storage=kopf.AnnotationsDiffBaseStorage())


def dispatcher_with(process: Process) -> type[queueing.Dispatcher]:
    class TestDispatcher(queueing.Dispatcher):
        pass
    TestDispatcher.process = staticmethod(process)  # type: ignore[method-assign,assignment]
    return TestDispatcher


def done(ev: dict[str, Any], **kwargs: Any) -> records.Done:
    return records.Done(event=ev, now=asyncio.get_running_loop().time(), **kwargs)


@pytest.fixture
def seen() -> list[str]:
    return []


@pytest.fixture
def Dispatcher(seen: list[str]) -> type[queueing.Dispatcher]:
    active = []

    async def process(rctx: Any, record: records.ObjectRecord, ev: Any, *, fresh: bool, logger: Any,
                      **_: Any) -> records.Done:
        assert not active, 'two cycles of one object at once'
        active.append(1)
        seen.append(ev['object']['metadata']['resourceVersion'])
        await asyncio.sleep(0.05)
        active.pop()
        return done(ev)

    return dispatcher_with(process)


async def test_newest_body_only_and_never_twice_at_once(
        rctx: contexts.ResourceContext, seen: list[str], Dispatcher: type[queueing.Dispatcher]) -> None:
    async with asyncio.TaskGroup() as tg:
        dispatcher = Dispatcher(rctx, tg)
        dispatcher.dispatch(event(1, None))
        await asyncio.sleep(0.01)  # the first cycle is running now
        for rv in (2, 3, 4):
            dispatcher.dispatch(event(rv))
    assert seen == ['1', '4']
    assert rctx.records['u1'].initial is True
    assert rctx.records['u1'].phase is records.Phase.IDLE


async def test_waits_for_our_own_patch_to_come_back(
        rctx: contexts.ResourceContext, seen: list[str], Dispatcher: type[queueing.Dispatcher]) -> None:
    rctx.remember('u1').work = records.Work(expected_rv='10')  # as after our patch
    async with asyncio.TaskGroup() as tg:
        dispatcher = Dispatcher(rctx, tg)
        dispatcher.dispatch(event(9))   # stale: older than our patch
        await eventually(lambda: rctx.records['u1'].phase is records.Phase.WAITING)  # taken, and not run
        assert seen == []
        dispatcher.dispatch(event(10))  # ours: consistent
    assert seen == ['10']


async def test_goes_on_after_the_consistency_timeout(
        rctx: contexts.ResourceContext, seen: list[str], Dispatcher: type[queueing.Dispatcher]) -> None:
    rctx.remember('u1').work = records.Work(expected_rv='10')  # as after our patch
    async with asyncio.TaskGroup() as tg:
        dispatcher = Dispatcher(rctx, tg)
        dispatcher.dispatch(event(9))
        await eventually(lambda: not dispatcher.active and rctx.records['u1'].phase is records.Phase.IDLE)
        dispatcher.close()
    assert seen == ['9']  # woken by the scheduler at the deadline, with no runner kept alive meanwhile
    assert rctx.records['u1'].work is None  # nothing awaited any more


async def test_deleted_objects_are_forgotten(
        rctx: contexts.ResourceContext, seen: list[str], Dispatcher: type[queueing.Dispatcher]) -> None:
    async with asyncio.TaskGroup() as tg:
        Dispatcher(rctx, tg).dispatch(event(1, 'DELETED'))
    assert seen == ['1']
    assert 'u1' not in rctx.records


async def test_the_object_logger_keeps_no_body(rctx: contexts.ResourceContext) -> None:
    used: list[Any] = []

    async def process(rctx: Any, record: records.ObjectRecord, ev: Any, *, fresh: bool, logger: Any,
                      **_: Any) -> records.Done:
        used.append(logger)
        return done(ev, wakeup=0.01 if len(used) == 1 else None)

    async with asyncio.TaskGroup() as tg:
        dispatcher = dispatcher_with(process)(rctx, tg)
        dispatcher.dispatch({'type': 'ADDED', 'object': {
            'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'spec': {'x': 1},
            'metadata': {'uid': 'u1', 'name': 'n', 'namespace': 'ns', 'resourceVersion': '1'}}})
        await eventually(lambda: len(used) == 2 and rctx.records['u1'].phase is records.Phase.IDLE)
        dispatcher.close()
    assert len(used) == 2  # one per cycle: made again when an event arrives, never kept with the record
    for one in used:
        assert one.body == {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
                            'metadata': {'name': 'n', 'namespace': 'ns', 'uid': 'u1'}}
        assert one.prefix == '[ns/n]'


async def test_unexpected_errors_are_retried_after_the_error_delays(
        rctx: contexts.ResourceContext, caplog: pytest.LogCaptureFixture) -> None:
    rctx.settings.queueing.error_delays = (0.01, 0.02)
    attempts: list[float] = []

    async def process(rctx: Any, record: records.ObjectRecord, ev: Any, *, fresh: bool, logger: Any,
                      **_: Any) -> records.Done:
        attempts.append(asyncio.get_running_loop().time())
        if len(attempts) < 3:
            raise RuntimeError('boom')
        return done(ev)

    async with asyncio.TaskGroup() as tg:
        dispatcher = dispatcher_with(process)(rctx, tg)
        dispatcher.dispatch(event(1))
        await eventually(lambda: len(attempts) == 3 and rctx.records['u1'].phase is records.Phase.IDLE)
        dispatcher.close()
    assert len(attempts) == 3
    assert 'Handling failed with an unexpected error (boom); retrying in 0.01s.' in caplog.text
    assert 'retrying in 0.02s.' in caplog.text


@pytest.mark.looptime
async def test_new_events_wait_out_the_error_throttling(rctx: contexts.ResourceContext) -> None:
    rctx.settings.queueing.error_delays = (10,)
    attempts: list[tuple[float, str]] = []

    async def process(rctx: Any, record: records.ObjectRecord, ev: Any, *, fresh: bool, logger: Any,
                      **_: Any) -> records.Done:
        attempts.append((asyncio.get_running_loop().time(), ev['object']['metadata']['resourceVersion']))
        if len(attempts) == 1:
            raise RuntimeError('boom')
        return done(ev)

    async with asyncio.TaskGroup() as tg:
        dispatcher = dispatcher_with(process)(rctx, tg)
        start = asyncio.get_running_loop().time()
        dispatcher.dispatch(event(1))
        await asyncio.sleep(1)
        dispatcher.dispatch(event(2))  # a new event during the throttling: not at once
        await asyncio.sleep(1)
        dispatcher.dispatch(event(3))
        await eventually(lambda: len(attempts) == 2 and rctx.records['u1'].phase is records.Phase.IDLE)
        dispatcher.close()
    assert [rv for _, rv in attempts] == ['1', '3']  # the newest body, once, after the delay
    assert attempts[1][0] - start >= 10


@pytest.mark.looptime
async def test_delayed_wake_ups_of_many_objects_share_one_scheduler(rctx: contexts.ResourceContext) -> None:
    woken: list[tuple[str, float]] = []

    async def process(rctx: Any, record: records.ObjectRecord, ev: Any, *, fresh: bool, logger: Any,
                      **_: Any) -> records.Done:
        if not fresh:
            woken.append((record.uid, asyncio.get_running_loop().time()))
            return done(ev)
        return done(ev, wakeup=float(record.uid))

    async with asyncio.TaskGroup() as tg:
        dispatcher = dispatcher_with(process)(rctx, tg)
        for delay in (30, 10, 20):
            dispatcher.dispatch({'type': None, 'object': {'metadata': {'uid': str(delay), 'resourceVersion': '1'}}})
        await asyncio.sleep(1)
        assert len(rctx.operator.scheduler) == 3  # no task, no timer handle per object: one heap
        await eventually(lambda: len(woken) == 3)
        dispatcher.close()
    assert [(uid, round(at)) for uid, at in woken] == [('10', 10), ('20', 20), ('30', 30)]
    assert len(rctx.operator.scheduler) == 0


# The watch brings an object's events in the order of their resourceVersions: our patch's echo (rv 5) comes
# after the events older than it, before the newer ones, and before or after the patch's answer is read.
@pytest.mark.parametrize('during, after, expected', [
    ([], [5], ['1']),          # the echo after the cycle: skipped
    ([4], [5], ['1']),         # an older event during the cycle, the echo after it: both skipped
    ([5], [], ['1']),          # the echo during the cycle (before its answer is read): nothing awaited after it
    ([5, 9], [], ['1', '9']),  # a newer event: decided on
])
async def test_a_settled_answer_is_not_rechecked(
        rctx: contexts.ResourceContext, during: list[int], after: list[int], expected: list[str]) -> None:
    seen: list[str] = []
    dispatcher: queueing.Dispatcher

    async def process(rctx: Any, record: records.ObjectRecord, ev: Any, *, fresh: bool, logger: Any,
                      **_: Any) -> records.Done:
        seen.append(ev['object']['metadata']['resourceVersion'])
        if len(seen) == 1:
            for rv in during:
                dispatcher.dispatch(event(rv))  # older or newer than our patch's answer (rv 5), or it
        await asyncio.sleep(0.01)
        return done(ev, answer=event(5)['object'] if len(seen) == 1 else None, settled=True)

    async with asyncio.TaskGroup() as tg:
        dispatcher = dispatcher_with(process)(rctx, tg)
        dispatcher.dispatch(event(1))
        await asyncio.sleep(0.1)
        for rv in after:
            dispatcher.dispatch(event(rv))
    assert seen == expected
    assert rctx.records['u1'].work is None  # idle: nothing awaited any more


# -- settings.queueing: worker_limit, exit_timeout ----------------------------------------------------

def many_events(count: int) -> list[dict[str, Any]]:
    return [{'type': None, 'object': {'metadata': {'uid': f'u{i}', 'name': f'n{i}', 'namespace': 'ns',
                                                   'resourceVersion': '1'}}} for i in range(count)]


@pytest.mark.parametrize('limit, expected', [(None, 300), (7, 7)])
async def test_worker_limit_none_means_unlimited(rctx: contexts.ResourceContext,
                                                 limit: int | None, expected: int) -> None:
    rctx.settings.queueing.worker_limit = limit
    running: list[str] = []
    release = asyncio.Event()

    async def process(rctx: Any, record: records.ObjectRecord, ev: Any, **_: Any) -> records.Done:
        running.append(record.uid)
        await release.wait()  # a cycle that holds its place (not an async handler: those free it)
        return done(ev)

    async with asyncio.TaskGroup() as tg:
        dispatcher = dispatcher_with(process)(rctx, tg)
        for ev in many_events(300):
            dispatcher.dispatch(ev)
        await eventually(lambda: len(running) >= expected)
        for _ in range(10):
            await asyncio.sleep(0)  # no more than the limit start, however long we wait
        assert len(running) == expected
        release.set()
    assert len(running) == 300


@pytest.mark.parametrize('threads, asynchronous, limit, expected', [
    (6, False, None, 200),      # sync handlers, the default executor's size: 200 at most
    (100, False, None, 400),    # a bigger executor: 4 cycles per thread
    (6, True, None, math.inf),  # async handlers free their place while they await: no limit
    (6, False, 7, 7),           # a limit given is the limit
])
def test_worker_limit_none_with_sync_handlers_follows_the_executor(
        rctx: contexts.ResourceContext, threads: int, asynchronous: bool, limit: int | None, expected: float) -> None:
    rctx.settings.queueing.worker_limit = limit
    rctx.settings.execution.max_workers = threads
    registry = rctx.registry

    if asynchronous:
        @kopf.on.create('g', 'v', 'p', registry=registry)
        async def fn_async(**_: Any) -> None: ...
    else:
        @kopf.on.create('g', 'v', 'p', registry=registry)
        def fn_sync(**_: Any) -> None: ...

    @kopf.timer('g', 'v', 'p', interval=1, registry=registry)
    def tick(**_: Any) -> None: ...  # a sync timer runs in a task of its own: it does not count

    assert queueing.Dispatcher(rctx, asyncio.TaskGroup()).limit == expected


@pytest.mark.looptime
@pytest.mark.parametrize('exit_timeout', [3.0, 7.5])
async def test_exit_timeout_bounds_the_running_cycles_when_the_stream_ends(
        rctx: contexts.ResourceContext, exit_timeout: float) -> None:
    rctx.settings.queueing.exit_timeout = exit_timeout
    rctx.settings.queueing.idle_timeout = 60  # idle runners exit at once anyway when the stream ends
    cancelled: list[float] = []
    finished: list[str] = []

    async def process(rctx: Any, record: records.ObjectRecord, ev: Any, **_: Any) -> records.Done:
        try:
            await asyncio.sleep(5 if record.uid == 'u0' else 100)
        except asyncio.CancelledError:
            cancelled.append(asyncio.get_running_loop().time())
            raise
        finished.append(record.uid)
        return done(ev)

    loop = asyncio.get_running_loop()
    async with asyncio.TaskGroup() as tg:
        dispatcher = dispatcher_with(process)(rctx, tg)
        for ev in many_events(2):
            dispatcher.dispatch(ev)
        await asyncio.sleep(1)
        start = loop.time()
        await dispatcher.drain(rctx.settings.queueing.exit_timeout)
        assert loop.time() - start == pytest.approx(exit_timeout)
    assert finished == (['u0'] if exit_timeout > 4 else [])  # the 5-second cycle fits into 7.5 s only
    assert len(cancelled) == (1 if exit_timeout > 4 else 2)
    assert loop.time() - start == pytest.approx(exit_timeout)  # nothing else waited: not the idle timeout


@pytest.mark.looptime
@pytest.mark.parametrize('idle_timeout', [2.0, 30.0])
async def test_idle_timeout_ends_idle_runners(rctx: contexts.ResourceContext, idle_timeout: float) -> None:
    rctx.settings.queueing.idle_timeout = idle_timeout

    async def process(rctx: Any, record: records.ObjectRecord, ev: Any, **_: Any) -> records.Done:
        return done(ev)

    async with asyncio.TaskGroup() as tg:
        dispatcher = dispatcher_with(process)(rctx, tg)
        dispatcher.dispatch(event(1, None))
        await asyncio.sleep(idle_timeout - 0.5)
        assert len(dispatcher.runners) == 1  # idle, waiting for more work
        await asyncio.sleep(1)
        assert len(dispatcher.runners) == 0


# -- shards (`--shards N`): a record's shard not ours keeps its newest event only; a takeover re-runs it

async def test_an_object_of_a_shard_not_ours_is_not_queued_and_taken_over_as_listed(
        rctx: contexts.ResourceContext, seen: list[str], Dispatcher: type[queueing.Dispatcher]) -> None:
    from kopf._engine import scopes
    from kopf._shards import assignment as shards
    rctx.operator.shards = 2
    rctx.operator.shard_of = lambda uid: shards.shard_of(uid, 2)
    shard = shards.shard_of('u1', 2)
    rctx.operator.pausing.pause(scopes.Shard(shard), 'lease')
    async with asyncio.TaskGroup() as tg:
        dispatcher = Dispatcher(rctx, tg)
        dispatcher.dispatch(event(1, None))
        dispatcher.dispatch(event(2))
        record = rctx.records['u1']
        assert (record.shard, record.phase, dispatcher.newest) == (shard, records.Phase.IDLE, {'u1': event(2)})
        rctx.operator.pausing.resume(scopes.Shard(shard), 'lease')
        dispatcher.take_over(record)
        await eventually(lambda: seen == ['2'])
        dispatcher.close()
    assert record.initial is True  # as listed: resume handlers run


class Relisting:
    """A selection whose streams re-list on a change of the shards (as `kopf._shards.membership.Selection`)."""

    def __init__(self, applies: bool) -> None:
        self._applies = applies

    def applies(self, ctx: Any, resource: Any) -> bool:
        return self._applies


@pytest.mark.parametrize('relisting, kept', [(True, False), (False, True)], ids=['relisting', 'not-relisting'])
async def test_the_newest_event_of_a_shard_held_is_kept_only_for_a_stream_that_does_not_relist(
        rctx: contexts.ResourceContext, seen: list[str], Dispatcher: type[queueing.Dispatcher],
        relisting: bool, kept: bool) -> None:
    from kopf._engine import scopes
    from kopf._shards import assignment as shards
    rctx.operator.shards = 2
    rctx.operator.shard_of = lambda uid: shards.shard_of(uid, 2)
    rctx.operator.selection = Relisting(relisting)  # type: ignore[assignment]
    shard = shards.shard_of('u1', 2)
    rctx.operator.pausing.pause(scopes.Shard(shard), 'lease')
    async with asyncio.TaskGroup() as tg:
        dispatcher = Dispatcher(rctx, tg)
        dispatcher.dispatch(event(1, None))
        assert dispatcher.newest == {'u1': event(1, None)}  # not ours: kept for a takeover, either way
        rctx.operator.pausing.resume(scopes.Shard(shard), 'lease')
        dispatcher.take_over(rctx.records['u1'])
        await eventually(lambda: seen == ['1'])
        dispatcher.dispatch(event(2))
        await eventually(lambda: seen == ['1', '2'])
        assert dispatcher.newest == ({'u1': event(2)} if kept else {})  # ours: a re-listing stream re-sends it
        dispatcher.close()


async def test_a_lost_shard_cuts_its_cycles_in_flight(rctx: contexts.ResourceContext) -> None:
    from kopf._engine import scopes
    from kopf._shards import assignment as shards
    rctx.operator.shards = 2
    rctx.operator.shard_of = lambda uid: shards.shard_of(uid, 2)
    shard = shards.shard_of('u1', 2)
    started = asyncio.Event()

    async def process(rctx: Any, record: records.ObjectRecord, ev: Any, *, fresh: bool, logger: Any,
                      **_: Any) -> records.Done:
        started.set()
        await asyncio.sleep(60)
        return done(ev)

    async with asyncio.TaskGroup() as tg:
        dispatcher = dispatcher_with(process)(rctx, tg)
        dispatcher.dispatch(event(1, None))
        await started.wait()
        record = rctx.records['u1']
        rctx.operator.pausing.pause(scopes.Shard(shard), 'lease', cancelling=True)
        dispatcher.pause_record(record, cancelling=True)
        await eventually(lambda: record.phase is records.Phase.IDLE and not dispatcher.tasks)
        assert dispatcher.runners  # the runner goes on (the cancellation was ours)
        dispatcher.close()


async def test_no_runner_starts_in_a_task_group_that_is_shutting_down(
        rctx: contexts.ResourceContext, seen: list[str], Dispatcher: type[queueing.Dispatcher]) -> None:
    tg = asyncio.TaskGroup()
    async with tg:
        dispatcher = Dispatcher(rctx, tg)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        gc.collect()  # the garbage of earlier tests (e.g. their unclosed sockets) is not this test's concern
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # "coroutine ... was never awaited" would be a RuntimeWarning
        dispatcher.dispatch(event(1))  # e.g. a scheduler's wake-up while the operator stops
        gc.collect()
    assert seen == []
    assert dispatcher.active == 0 and not dispatcher.runners


async def test_a_large_resumption_ending_after_the_stream_closed_schedules_no_release(
        rctx: contexts.ResourceContext, Dispatcher: type[queueing.Dispatcher]) -> None:
    from kopf._engine import listings
    async with asyncio.TaskGroup() as tg:
        dispatcher = Dispatcher(rctx, tg)
        dispatcher.progress = progress = listings.Progress('kex', started=0.0)
        for idx in range(listings.LARGE):
            progress.seen(f'uid{idx}')
        progress.listing_over(0.0)
        dispatcher.close()  # the stream is over; the last listed object's cycle ends during the grace period
        for idx in range(listings.LARGE):
            dispatcher._report(progress.handled(f'uid{idx}', 0.0))
        assert progress.finished and dispatcher._release is None



@pytest.mark.parametrize('first, scheduled', [(True, True), (False, False)])
async def test_the_processs_first_listing_releases_the_starts_heap_whatever_its_size(
        rctx: contexts.ResourceContext, Dispatcher: type[queueing.Dispatcher], monkeypatch: pytest.MonkeyPatch,
        first: bool, scheduled: bool) -> None:
    from kopf._engine import listings, memory
    monkeypatch.setattr(memory, '_started', not first)
    async with asyncio.TaskGroup() as tg:
        dispatcher = Dispatcher(rctx, tg)
        dispatcher.progress = progress = listings.Progress('kex', started=0.0)
        progress.seen('uid1')
        progress.listing_over(0.0)
        dispatcher._report(progress.handled('uid1', 0.0))
        assert progress.finished and (dispatcher._release is not None) == scheduled
        assert memory._started
        dispatcher.close()


def event_of(uid: str) -> dict[str, Any]:
    meta = {'uid': uid, 'name': uid, 'namespace': 'ns', 'resourceVersion': '1'}
    return {'type': 'ADDED', 'object': {'metadata': meta}}


async def test_a_burst_of_cycles_that_never_block_is_served_by_one_runner_not_one_per_record(
        rctx: contexts.ResourceContext) -> None:
    tasks: set[Any] = set()
    served: list[str] = []

    async def process(rctx: Any, record: records.ObjectRecord, ev: Any, **_: Any) -> records.Done:
        tasks.add(asyncio.current_task())
        served.append(record.uid)
        return done(ev)  # no await: nothing yields to the loop

    async with asyncio.TaskGroup() as tg:
        dispatcher = dispatcher_with(process)(rctx, tg)
        for idx in range(50):  # queued at once, as a listing's page or a watch's replay is
            dispatcher.dispatch(event_of(f'u{idx}'))
        await eventually(lambda: len(served) == 50)
    assert sorted(served) == sorted(f'u{idx}' for idx in range(50))
    assert len(tasks) <= 2, len(tasks)


async def test_runners_are_added_as_fast_as_the_cycles_block(rctx: contexts.ResourceContext) -> None:
    release = asyncio.Event()
    running: set[str] = set()

    async def process(rctx: Any, record: records.ObjectRecord, ev: Any, **_: Any) -> records.Done:
        running.add(record.uid)
        await release.wait()
        return done(ev)

    async with asyncio.TaskGroup() as tg:
        dispatcher = dispatcher_with(process)(rctx, tg)
        for idx in range(20):
            dispatcher.dispatch(event_of(f'u{idx}'))
        await eventually(lambda: len(running) == 20)  # all at once: no limit (worker_limit=None)
        release.set()
