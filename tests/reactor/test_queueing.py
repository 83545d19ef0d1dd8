"""Per-object workers: the newest body only, one cycle at a time, consistency with our own patches."""
import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

import kopf
from kopf._reactor import applying, contexts, processing, queueing


@pytest.mark.parametrize('rv, expected, result', [
    ('5', None, True), ('5', '5', True), ('6', '5', True), ('4', '5', False),
    ('abc', 'abc', True), ('abc', 'abd', False), (None, '5', False),
])
def test_consistency(rv: str | None, expected: str | None, result: bool) -> None:
    assert queueing.is_consistent(rv, expected) is result


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


def fake_processing(monkeypatch: pytest.MonkeyPatch, process: Callable[..., Awaitable[None]]) -> None:
    """Process each cycle with `process` (the event as an argument); nothing to apply afterwards."""
    async def apply(cycle: contexts.Cycle) -> bool:
        return False

    monkeypatch.setattr(processing, 'process', process)
    monkeypatch.setattr(applying, 'apply', apply)


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    active = []

    async def process(cycle: contexts.Cycle, event: Any, *, fresh: bool = True) -> None:
        assert not active, 'two cycles of one object at once'
        active.append(1)
        seen.append(event['object']['metadata']['resourceVersion'])
        await asyncio.sleep(0.05)
        active.pop()

    fake_processing(monkeypatch, process)
    return seen


async def test_newest_body_only_and_never_twice_at_once(rctx: contexts.ResourceContext, seen: list[str]) -> None:
    async with asyncio.TaskGroup() as tg:
        dispatcher = queueing.Dispatcher(rctx, tg)
        dispatcher.dispatch(event(1, None))
        await asyncio.sleep(0.01)  # the first cycle is running now
        for rv in (2, 3, 4):
            dispatcher.dispatch(event(rv))
    assert seen == ['1', '4']
    assert rctx.memories['u1'].initial is True


async def test_waits_for_our_own_patch_to_come_back(rctx: contexts.ResourceContext, seen: list[str]) -> None:
    rctx.remember('u1', initial=False).expected_rv = '10'
    async with asyncio.TaskGroup() as tg:
        dispatcher = queueing.Dispatcher(rctx, tg)
        dispatcher.dispatch(event(9))   # stale: older than our patch
        await asyncio.sleep(0.1)
        assert seen == []
        dispatcher.dispatch(event(10))  # ours: consistent
    assert seen == ['10']


async def test_goes_on_after_the_consistency_timeout(rctx: contexts.ResourceContext, seen: list[str]) -> None:
    rctx.remember('u1', initial=False).expected_rv = '10'
    async with asyncio.TaskGroup() as tg:
        queueing.Dispatcher(rctx, tg).dispatch(event(9))
    assert seen == ['9']
    assert rctx.memories['u1'].expected_rv is None


async def test_deleted_objects_are_forgotten(rctx: contexts.ResourceContext, seen: list[str]) -> None:
    async with asyncio.TaskGroup() as tg:
        queueing.Dispatcher(rctx, tg).dispatch(event(1, 'DELETED'))
    assert seen == ['1']
    assert 'u1' not in rctx.memories


async def test_unexpected_errors_are_retried_after_the_error_delays(
        rctx: contexts.ResourceContext, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    rctx.settings.queueing.error_delays = (0.01, 0.02)
    attempts: list[float] = []

    async def process(cycle: contexts.Cycle, event: Any, *, fresh: bool = True) -> None:
        attempts.append(asyncio.get_running_loop().time())
        if len(attempts) < 3:
            raise RuntimeError('boom')

    fake_processing(monkeypatch, process)
    async with asyncio.TaskGroup() as tg:
        queueing.Dispatcher(rctx, tg).dispatch(event(1))
    assert len(attempts) == 3
    assert 'Handling failed with an unexpected error (boom); retrying in 0.01s.' in caplog.text
    assert 'retrying in 0.02s.' in caplog.text


@pytest.mark.looptime
async def test_new_events_wait_out_the_error_throttling(
        rctx: contexts.ResourceContext, monkeypatch: pytest.MonkeyPatch) -> None:
    rctx.settings.queueing.error_delays = (10,)
    attempts: list[tuple[float, str]] = []

    async def process(cycle: contexts.Cycle, event: Any, *, fresh: bool = True) -> None:
        attempts.append((asyncio.get_running_loop().time(), event['object']['metadata']['resourceVersion']))
        if len(attempts) == 1:
            raise RuntimeError('boom')

    fake_processing(monkeypatch, process)
    async with asyncio.TaskGroup() as tg:
        dispatcher = queueing.Dispatcher(rctx, tg)
        start = asyncio.get_running_loop().time()
        dispatcher.dispatch(event(1))
        await asyncio.sleep(1)
        dispatcher.dispatch(event(2))  # a new event during the throttling: not at once
        await asyncio.sleep(1)
        dispatcher.dispatch(event(3))
    assert [rv for _, rv in attempts] == ['1', '3']  # the newest body, once, after the delay
    assert attempts[1][0] - start >= 10


@pytest.mark.parametrize('during, expected', [(None, ['1']), (4, ['1']), (9, ['1', '9'])])
async def test_a_settled_answer_is_not_rechecked(
        rctx: contexts.ResourceContext, monkeypatch: pytest.MonkeyPatch,
        during: int | None, expected: list[str]) -> None:
    seen: list[str] = []
    dispatcher: queueing.Dispatcher

    async def process(cycle: contexts.Cycle, raw: Any, *, fresh: bool = True) -> None:
        seen.append(raw['object']['metadata']['resourceVersion'])
        if during is not None and len(seen) == 1:
            dispatcher.dispatch(event(during))  # older or newer than our patch's answer (rv 5)
        await asyncio.sleep(0.01)

    async def apply(cycle: contexts.Cycle) -> bool:
        if len(seen) == 1:
            cycle.applied = event(5)['object']
        return cycle.applied is not None

    monkeypatch.setattr(processing, 'process', process)
    monkeypatch.setattr(processing, 'needs_recheck', lambda cycle, answer: False)
    monkeypatch.setattr(applying, 'apply', apply)
    async with asyncio.TaskGroup() as tg:
        dispatcher = queueing.Dispatcher(rctx, tg)
        dispatcher.dispatch(event(1))
        await asyncio.sleep(0.1)
        dispatcher.dispatch(event(5))  # the echo of our own patch: skipped
    assert seen == expected
