"""The waiting variants of `kopf.DaemonStopped` (SPEC §2 `stopped`, §8.7), given to daemons and timers.

Sync daemons run in threads: `SyncDaemonStopped.wait(timeout)` blocks the thread.
Async daemons run in the loop: `await AsyncDaemonStopped.wait(timeout)`.
Both return whether the flag is set (False when the timeout passed first). The framework sets the
flag with `.set(reason)` from the event loop (or any thread: waking is thread-safe in both variants).
"""
import asyncio
import threading

from kopf._model.daemons import DaemonStopped


class SyncDaemonStopped(DaemonStopped):
    """The `stopped` flag of a sync daemon or timer: `.wait()` blocks the calling thread."""

    __slots__ = ('_event',)

    def __init__(self) -> None:
        super().__init__()
        self._event = threading.Event()

    def _wake(self) -> None:
        self._event.set()

    def wait(self, timeout: float | None = None) -> bool:
        self._event.wait(timeout)
        return self.is_set()


class AsyncDaemonStopped(DaemonStopped):
    """The `stopped` flag of an async daemon or timer: `await stopped.wait()` suspends the coroutine."""

    __slots__ = ('_event', '_loop')

    def __init__(self) -> None:
        super().__init__()
        self._event = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None  # known since the first wait

    def _wake(self) -> None:
        loop = self._loop
        if loop is None or _running_loop() is loop:
            self._event.set()
        else:
            loop.call_soon_threadsafe(self._event.set)

    async def wait(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109  # the public API
        self._loop = asyncio.get_running_loop()
        if not self.is_set():
            try:
                async with asyncio.timeout(timeout):
                    await self._event.wait()
            except TimeoutError:
                pass
        return self.is_set()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
