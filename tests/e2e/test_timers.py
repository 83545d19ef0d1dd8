"""Timers end to end: an operator task against the local cluster in the test's loop.

The timing tests run under looptime (fake time): their timers do no I/O, so their calls land on
exact fake-time points whatever the loopback I/O around them takes. Waiting is with real-time deadlines.
"""
import asyncio
import itertools
from typing import Any

import pytest

import kopf
from tests.waiting import eventually

from .conftest import example, get_example, operators


def gaps(times: list[float]) -> list[float]:
    return [round(b - a, 3) for a, b in itertools.pairwise(times)]


@pytest.mark.looptime
@pytest.mark.emulator_only(reason="looptime's fake clock runs ahead of real TLS handshakes with an external API server")
async def test_interval_one_runs_n_plus_one_times_in_n_seconds(
        cluster: Any, registry: kopf.OperatorRegistry, start_operator: Any, kube: Any) -> None:
    calls: list[float] = []

    @kopf.timer('kopfexamples', interval=1, registry=registry)
    async def tick(**_: Any) -> None:
        calls.append(asyncio.get_running_loop().time())

    await start_operator()
    await kube.create(example())
    await eventually(lambda: len(calls) >= 6)
    assert gaps(calls[:6]) == [1.0] * 5  # the first at once, then every second: 6 calls in 5 s


@pytest.mark.looptime
@pytest.mark.emulator_only(reason="looptime's fake clock runs ahead of real TLS handshakes with an external API server")
async def test_sharp_keeps_its_slots_after_a_slow_call(
        cluster: Any, registry: kopf.OperatorRegistry, start_operator: Any, kube: Any) -> None:
    sharp: list[float] = []
    plain: list[float] = []

    @kopf.timer('kopfexamples', interval=1, sharp=True, registry=registry)
    async def on_grid(**_: Any) -> None:
        sharp.append(asyncio.get_running_loop().time())
        if len(sharp) == 2:
            await asyncio.sleep(2.5)  # a slow call: the slots it overlaps are skipped

    @kopf.timer('kopfexamples', interval=1, registry=registry)
    async def after_each(**_: Any) -> None:
        plain.append(asyncio.get_running_loop().time())
        if len(plain) == 2:
            await asyncio.sleep(2.5)

    await start_operator()
    await kube.create(example())
    await eventually(lambda: len(sharp) >= 4 and len(plain) >= 4)
    assert gaps(sharp[:4]) == [1.0, 3.0, 1.0]  # t0, t0+1 (slow until t0+3.5), t0+4, t0+5: on the grid
    assert gaps(plain[:4]) == [1.0, 3.5, 1.0]  # not sharp: a full interval after the slow call's end


@pytest.mark.looptime
@pytest.mark.emulator_only(reason="looptime's fake clock runs ahead of real TLS handshakes with an external API server")
async def test_idle_waits_for_no_essential_changes_and_status_does_not_count(
        cluster: Any, registry: kopf.OperatorRegistry, start_operator: Any, kube: Any) -> None:
    calls: list[float] = []
    changes: list[float] = []

    @kopf.timer('kopfexamples', interval=1, idle=5, registry=registry)
    async def quiet(**_: Any) -> None:
        calls.append(asyncio.get_running_loop().time())

    @kopf.on.update('kopfexamples', registry=registry)
    async def changed(**_: Any) -> None:
        changes.append(asyncio.get_running_loop().time())

    await start_operator()
    await kube.create(example())
    await eventually(lambda: len(calls) >= 2)
    await kube.patch('kopf-example-1', {'spec': {'field': 'changed'}})
    await eventually(lambda: changes)
    seen = len(calls)
    await eventually(lambda: len(calls) >= seen + 2)
    after = [t for t in calls if t > changes[0]]
    assert after and after[0] >= changes[0] + 5  # postponed by the spec change: 5 s without changes
    status_patch = asyncio.to_thread(kube.custom.patch_namespaced_custom_object_status,
                                     'kopf.dev', 'v1', 'default', 'kopfexamples', 'kopf-example-1',
                                     {'status': {'other': 'x'}})
    await status_patch
    await eventually(lambda: (get_example(cluster) or {}).get('status', {}).get('other') == 'x')
    seen = len(calls)
    await eventually(lambda: len(calls) >= seen + 2)
    assert gaps(calls[seen - 1:seen + 2]) == [1.0, 1.0]  # not postponed by a status change


async def test_a_timer_stops_and_restarts_with_its_filter_and_sees_the_memo(
        cluster: Any, registry: kopf.OperatorRegistry, start_operator: Any, kube: Any) -> None:
    calls: list[tuple[str | None, Any]] = []

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(memo: kopf.Memo, **_: Any) -> None:
        memo.note = 'from create'

    @kopf.timer('kopfexamples', interval=0.05, labels={'run': 'yes'}, registry=registry)
    async def labelled(memo: kopf.Memo, labels: Any, **_: Any) -> None:
        calls.append((labels.get('run'), memo.get('note')))

    await start_operator()
    obj = example()
    obj['metadata']['labels']['run'] = 'yes'
    await kube.create(obj)
    await eventually(lambda: ('yes', 'from create') in calls)
    await kube.patch('kopf-example-1', {'metadata': {'labels': {'run': None}}})
    # Stopped: no timer of the operator runs any more (none can call it), not "no calls for a while":
    await eventually(lambda: not any(ctx.spawns for ctx in operators(registry)))
    stopped_at = len(calls)
    await kube.patch('kopf-example-1', {'metadata': {'labels': {'run': 'yes'}}})
    await eventually(lambda: len(calls) >= stopped_at + 3)


async def test_a_timer_result_goes_to_status_and_deletion_waits_for_a_running_call(
        cluster: Any, registry: kopf.OperatorRegistry, start_operator: Any, kube: Any) -> None:
    started = asyncio.Event()
    finished: list[bool] = []

    @kopf.timer('kopfexamples', id='slow', interval=0.1, registry=registry)
    async def slow(**_: Any) -> dict[str, int]:
        started.set()
        await asyncio.sleep(0.3)
        finished.append(True)
        return {'calls': len(finished)}

    await start_operator()
    await kube.create(example())
    await eventually(lambda: (get_example(cluster) or {}).get('status', {}).get('slow', {}).get('calls'))
    started.clear()
    await eventually(started.is_set)
    done = len(finished)
    await kube.delete('kopf-example-1')
    await eventually(lambda: get_example(cluster) is None)
    assert len(finished) == done + 1  # the running call finished before the object was let go
