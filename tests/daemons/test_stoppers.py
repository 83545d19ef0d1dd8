"""The waiting variants of `kopf.DaemonStopped`: blocking for sync daemons, awaitable for async ones."""
import asyncio
import threading
import time

import kopf
from kopf._daemons.stoppers import AsyncDaemonStopped, SyncDaemonStopped

REASON = kopf.DaemonStoppingReason.RESOURCE_DELETED


def test_sync_variant_is_a_stopped_flag() -> None:
    stopped = SyncDaemonStopped()
    assert isinstance(stopped, kopf.DaemonStopped)
    assert not stopped and stopped.reason is None


def test_sync_wait_times_out_with_false() -> None:
    stopped = SyncDaemonStopped()
    t0 = time.monotonic()
    assert stopped.wait(0.05) is False
    assert time.monotonic() - t0 >= 0.04


def test_sync_wait_returns_at_once_when_set() -> None:
    stopped = SyncDaemonStopped()
    stopped.set(REASON)
    assert stopped.wait(10) is True
    assert stopped.wait() is True


def test_sync_wait_wakes_when_set_from_another_thread() -> None:
    stopped = SyncDaemonStopped()
    results: list[bool] = []
    thread = threading.Thread(target=lambda: results.append(stopped.wait(10)))
    thread.start()
    time.sleep(0.02)
    t0 = time.monotonic()
    stopped.set(REASON)
    thread.join(5)
    assert results == [True]
    assert time.monotonic() - t0 < 1
    assert stopped.reason == REASON


def test_sync_daemon_loop_in_an_executor_stops() -> None:
    async def main() -> list[str]:
        stopped = SyncDaemonStopped()
        log: list[str] = []

        def daemon(stopped: kopf.DaemonStopped) -> None:
            while not stopped:
                stopped.wait(10)
            log.append(f'stopped: {stopped.reason}')

        task = asyncio.get_running_loop().run_in_executor(None, daemon, stopped)
        await asyncio.sleep(0.02)
        stopped.set(kopf.DaemonStoppingReason.OPERATOR_EXITING)
        await asyncio.wait_for(task, 5)
        return log

    assert asyncio.run(main()) == ['stopped: DaemonStoppingReason.OPERATOR_EXITING']


async def test_async_variant_is_a_stopped_flag() -> None:
    stopped = AsyncDaemonStopped()
    assert isinstance(stopped, kopf.DaemonStopped)
    assert not stopped and not stopped.is_set()


async def test_async_wait_times_out_with_false() -> None:
    stopped = AsyncDaemonStopped()
    assert await stopped.wait(0.01) is False
    assert await stopped.wait(0) is False


async def test_async_wait_returns_at_once_when_set() -> None:
    stopped = AsyncDaemonStopped()
    stopped.set(REASON)
    assert await stopped.wait(0) is True
    assert await stopped.wait() is True


async def test_async_wait_wakes_when_set_in_the_loop() -> None:
    stopped = AsyncDaemonStopped()
    waiter = asyncio.create_task(stopped.wait(10))
    await asyncio.sleep(0)
    assert not waiter.done()
    stopped.set(REASON)
    assert await asyncio.wait_for(waiter, 1) is True


async def test_async_wait_wakes_when_set_from_another_thread() -> None:
    stopped = AsyncDaemonStopped()
    waiter = asyncio.create_task(stopped.wait(10))
    await asyncio.sleep(0)
    thread = threading.Thread(target=stopped.set, args=(REASON,))
    thread.start()
    assert await asyncio.wait_for(waiter, 5) is True
    thread.join(5)


async def test_async_daemon_loop_stops() -> None:
    stopped = AsyncDaemonStopped()
    rounds = 0

    async def daemon(stopped: kopf.DaemonStopped) -> kopf.DaemonStoppingReason | None:
        nonlocal rounds
        while not stopped:
            rounds += 1
            await stopped.wait(0.01)
        return stopped.reason

    task = asyncio.create_task(daemon(stopped))
    await asyncio.sleep(0.035)
    stopped.set(kopf.DaemonStoppingReason.FILTERS_MISMATCH)
    assert await asyncio.wait_for(task, 1) == kopf.DaemonStoppingReason.FILTERS_MISMATCH
    assert rounds >= 2
