"""Daemons end to end: an operator task against the local cluster in the test's loop (real HTTP on loopback)."""
import asyncio
import logging
import threading
import time
from typing import Any

import pytest

import kopf

from .conftest import Sightings, eventually, example, fast_settings, get_example


async def test_a_daemon_sees_the_body_live_and_the_memo_of_the_handlers(
        cluster: Any, registry: kopf.OperatorRegistry, start_operator: Any, kube: Any) -> None:
    seen: list[tuple[str, Any]] = []

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(memo: kopf.Memo, **_: Any) -> None:
        memo.greeting = 'hello'

    @kopf.daemon('kopfexamples', registry=registry)
    async def watch_fn(stopped: kopf.DaemonStopped, spec: Any, memo: kopf.Memo, **_: Any) -> None:
        while not stopped:
            seen.append((spec.get('field'), memo.get('greeting')))
            await stopped.wait(0.05)

    await start_operator()
    await kube.create(example())
    await eventually(lambda: ('value', 'hello') in seen)
    await kube.patch('kopf-example-1', {'spec': {'field': 'changed'}})
    await eventually(lambda: ('changed', 'hello') in seen)  # the same daemon: its views are live


async def test_deletion_waits_for_the_daemon_to_exit(
        cluster: Any, registry: kopf.OperatorRegistry, start_operator: Any, kube: Any) -> None:
    moments: dict[str, float] = {}

    @kopf.daemon('kopfexamples', registry=registry)
    async def slow_exit(stopped: kopf.DaemonStopped, **_: Any) -> None:
        moments['started'] = time.monotonic()
        await stopped.wait()
        moments['reason'] = stopped.reason  # type: ignore[assignment]
        await asyncio.sleep(0.5)  # cleaning up after the stop: the object waits for it
        moments['exited'] = time.monotonic()

    @kopf.on.event('kopfexamples', registry=registry)
    def events(type: str, **_: Any) -> None:
        if type == 'DELETED':
            moments['deleted'] = time.monotonic()

    await start_operator()
    await kube.create(example())
    await eventually(lambda: 'started' in moments)
    obj = get_example(cluster)
    assert obj is not None and 'kopf.zalando.org/KopfFinalizerMarker' in obj['metadata']['finalizers']
    await kube.delete('kopf-example-1')
    await eventually(lambda: 'deleted' in moments)
    assert moments['exited'] < moments['deleted']  # released only after the daemon has exited
    assert moments['reason'] == kopf.DaemonStoppingReason.RESOURCE_DELETED  # type: ignore[comparison-overlap]


async def test_the_daemon_is_stopped_before_the_delete_handler_runs(
        cluster: Any, registry: kopf.OperatorRegistry, start_operator: Any, kube: Any, caplog: Any) -> None:
    # as upstream 1.45.2: the daemon's `stopped` is set (and "still exiting" reported) before the delete
    # handler is invoked; the finalizer goes once both are done
    flags: list[kopf.DaemonStopped] = []
    seen: dict[str, Any] = {}

    @kopf.daemon('kopfexamples', id='dmn', registry=registry)
    async def dmn(stopped: kopf.DaemonStopped, **_: Any) -> None:
        flags.append(stopped)
        await stopped.wait()

    @kopf.on.delete('kopfexamples', registry=registry)
    def delete_fn(**_: Any) -> None:
        seen['stopped'] = bool(flags[0])
        seen['reason'] = flags[0].reason
        seen['logged'] = "Daemon 'dmn' is still exiting." in caplog.text

    await start_operator()
    await kube.create(example())
    await eventually(lambda: flags)
    await kube.delete('kopf-example-1')
    await eventually(lambda: get_example(cluster) is None)
    assert seen == {'stopped': True, 'reason': kopf.DaemonStoppingReason.RESOURCE_DELETED, 'logged': True}


async def test_a_sync_daemon_polling_its_flag_exits_on_deletion(
        cluster: Any, registry: kopf.OperatorRegistry, start_operator: Any, kube: Any) -> None:
    threads: list[str] = []
    exited = threading.Event()

    @kopf.daemon('kopfexamples', registry=registry)
    def poller(stopped: kopf.DaemonStopped, **_: Any) -> None:
        threads.append(threading.current_thread().name)
        while not stopped.wait(1):
            pass
        exited.set()

    await start_operator()
    await kube.create(example())
    await eventually(lambda: threads)
    await kube.delete('kopf-example-1')
    await eventually(lambda: exited.is_set() and get_example(cluster) is None)
    assert 'kopf daemon' in threads[0]  # a thread of its own, not the executor's


async def test_an_async_daemon_ignoring_its_flag_is_cancelled(
        cluster: Any, registry: kopf.OperatorRegistry, start_operator: Any, kube: Any) -> None:
    cancelled = asyncio.Event()

    @kopf.daemon('kopfexamples', cancellation_backoff=0.1, cancellation_timeout=5, registry=registry)
    async def stubborn(**_: Any) -> None:
        try:
            while True:  # noqa: ASYNC110  # a daemon that ignores its flag on purpose
                await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    await start_operator()
    await kube.create(example())
    await asyncio.sleep(0)
    await eventually(lambda: (get_example(cluster) or {}).get('metadata', {}).get('finalizers'))
    await kube.delete('kopf-example-1')
    await eventually(lambda: cancelled.is_set() and get_example(cluster) is None)


@pytest.mark.parametrize('option, setting, polling', [
    (0.2, 60, 0.2),    # the daemon's own cancellation_polling=
    (None, 0.3, 0.3),  # else settings.background.cancellation_polling
])
async def test_a_daemon_ignoring_its_flag_without_a_timeout_keeps_the_object_and_is_reported(
        cluster: Any, registry: kopf.OperatorRegistry, start_operator: Any, kube: Any,
        caplog: Any, option: float | None, setting: float, polling: float) -> None:
    release = asyncio.Event()
    running = asyncio.Event()
    settings = fast_settings()
    settings.background.cancellation_polling = setting

    @kopf.daemon('kopfexamples', cancellation_backoff=0.1, cancellation_polling=option, registry=registry)
    async def immortal(**_: Any) -> None:
        running.set()
        while not release.is_set():
            try:
                await release.wait()
            except asyncio.CancelledError:
                pass  # ignores even the cancellation

    await start_operator(settings=settings)
    try:
        await kube.create(example())
        await eventually(running.is_set)
        await kube.delete('kopf-example-1')
        await eventually(lambda: f'is still exiting. The next check is in {polling} seconds.' in caplog.text)
        obj = get_example(cluster)
        assert obj is not None and obj['metadata'].get('deletionTimestamp')
        assert 'kopf.zalando.org/KopfFinalizerMarker' in obj['metadata']['finalizers']
    finally:
        release.set()   # else a failed check leaves a task that ignores cancellation: the loop's teardown hangs
    await eventually(lambda: get_example(cluster) is None)


async def test_an_abandoned_daemon_lets_the_object_go_with_a_warning(
        cluster: Any, registry: kopf.OperatorRegistry, start_operator: Any, kube: Any, caplog: Any) -> None:
    release = asyncio.Event()
    running = asyncio.Event()

    @kopf.daemon('kopfexamples', id='immortal', cancellation_backoff=0.1, cancellation_timeout=0.3,
                 registry=registry)
    async def immortal(**_: Any) -> None:
        running.set()
        while not release.is_set():
            try:
                await release.wait()
            except asyncio.CancelledError:
                pass

    await start_operator()
    try:
        await kube.create(example())
        await eventually(running.is_set)
        await kube.delete('kopf-example-1')
        await eventually(lambda: get_example(cluster) is None)
        assert "Daemon 'immortal' did not exit in time. Leaving it orphaned." in caplog.text
    finally:
        release.set()   # as above: never a task left that ignores its cancellation


async def test_filters_stop_and_restart_the_daemon(
        cluster: Any, registry: kopf.OperatorRegistry, start_operator: Any, kube: Any) -> None:
    log: list[str] = []

    @kopf.daemon('kopfexamples', labels={'run': 'yes'}, registry=registry)
    async def labelled(stopped: kopf.DaemonStopped, **_: Any) -> None:
        log.append('start')
        await stopped.wait()
        log.append(f'stop {stopped.reason}')

    await start_operator()
    obj = example()
    obj['metadata']['labels']['run'] = 'yes'
    await kube.create(obj)
    await eventually(lambda: log == ['start'])
    await kube.patch('kopf-example-1', {'metadata': {'labels': {'run': None}}})
    await eventually(lambda: log == ['start', f'stop {kopf.DaemonStoppingReason.FILTERS_MISMATCH}'])
    await kube.patch('kopf-example-1', {'metadata': {'labels': {'run': 'yes'}}})
    await eventually(lambda: len(log) == 3 and log[2] == 'start')  # restarted when it matches again


async def test_a_daemon_that_returns_is_not_restarted(
        cluster: Any, registry: kopf.OperatorRegistry, start_operator: Any, kube: Any, caplog: Any) -> None:
    calls: list[int] = []

    @kopf.daemon('kopfexamples', id='once', registry=registry)
    def once(retry: int, **_: Any) -> None:
        calls.append(retry)
        if retry < 2:
            raise kopf.TemporaryError('not yet', delay=0.05)

    sightings = Sightings(registry)
    await start_operator()
    await kube.create(example())
    await eventually(lambda: "Daemon 'once' has exited on its own and will not be retried or restarted." in caplog.text)
    await kube.patch('kopf-example-1', {'spec': {'field': 'changed'}})
    await sightings.barrier(kube)  # the change's cycle is over: a restart would have been spawned by it
    assert calls == [0, 1, 2]
    obj = get_example(cluster)  # nothing holds it any more: the finalizer is gone
    await eventually(lambda: not (get_example(cluster) or {}).get('metadata', {}).get('finalizers'))
    assert obj is not None


async def test_ten_sync_daemons_leave_the_executor_to_the_handlers(
        cluster: Any, registry: kopf.OperatorRegistry, start_operator: Any, kube: Any) -> None:
    running: set[str] = set()
    created: list[str] = []

    @kopf.daemon('kopfexamples', labels={'daemon': 'yes'}, registry=registry)
    def blocking(name: str, stopped: kopf.DaemonStopped, **_: Any) -> None:
        running.add(name)
        while not stopped.wait(0.1):
            pass

    @kopf.on.create('kopfexamples', labels={'daemon': kopf.ABSENT}, registry=registry)
    def create_fn(name: str, **_: Any) -> None:
        created.append(name)

    await start_operator()
    for i in range(10):
        obj = example(name=f'daemon-{i}')
        obj['metadata']['labels']['daemon'] = 'yes'
        await kube.create(obj)
    await eventually(lambda: len(running) == 10)
    await kube.create(example(name='handled'))
    await eventually(lambda: created == ['handled'])  # the executor's threads are not taken by the daemons


async def test_operator_exit_stops_the_daemons(
        cluster: Any, registry: kopf.OperatorRegistry, start_operator: Any, kube: Any,
        caplog: Any) -> None:
    reasons: list[Any] = []
    started = asyncio.Event()

    @kopf.daemon('kopfexamples', registry=registry)
    async def exiting(stopped: kopf.DaemonStopped, **_: Any) -> None:
        started.set()
        await stopped.wait()
        reasons.append(stopped.reason)

    stop = asyncio.Event()
    caplog.set_level(logging.DEBUG)
    task = await start_operator(stop_flag=stop)
    await kube.create(example())
    await eventually(lambda: (get_example(cluster) or {}).get('metadata', {}).get('finalizers'))
    await eventually(started.is_set)
    stop.set()
    await asyncio.wait_for(task, timeout=10)
    assert reasons == [kopf.DaemonStoppingReason.OPERATOR_EXITING]
