"""The waiting variants of `kopf.DaemonStopped`, given to daemons and timers.

Sync daemons run in threads: `SyncDaemonStopped.wait(timeout)` blocks the thread.
Async daemons run in the loop: `await AsyncDaemonStopped.wait(timeout)`.
Both return whether the flag is set (False when the timeout passed first). The framework sets the
flag with `.set(reason)` from the event loop (or any thread: waking is thread-safe in both variants).
"""
import asyncio
import threading

from kopf._daemons.reasons import DaemonStopped


class SyncDaemonStopped(DaemonStopped):
    """The `stopped` flag of a sync daemon or timer: `.wait()` blocks the calling thread."""

    __slots__ = ('_event', '_lock')

    _made = threading.Lock()  # guards the lazy making of events (made only for those that wait)

    def __init__(self) -> None:
        super().__init__()
        self._event: threading.Event | None = None

    def _get(self) -> threading.Event:
        with SyncDaemonStopped._made:
            if self._event is None:
                self._event = threading.Event()
                if self.is_set():
                    self._event.set()
            return self._event

    def _wake(self) -> None:
        with SyncDaemonStopped._made:
            if self._event is not None:
                self._event.set()

    def wait(self, timeout: float | None = None) -> bool:
        if not self.is_set():
            self._get().wait(timeout)
        return self.is_set()


class AsyncDaemonStopped(DaemonStopped):
    """The `stopped` flag of an async daemon or timer: `await stopped.wait()` suspends the coroutine."""

    __slots__ = ('_event', '_loop')

    def __init__(self) -> None:
        super().__init__()
        self._event: asyncio.Event | None = None  # made at the first wait (not for every timer)
        self._loop: asyncio.AbstractEventLoop | None = None  # known since the first wait

    def _wake(self) -> None:
        event, loop = self._event, self._loop
        if event is None or loop is None:
            return  # nobody waits: the flag itself is set
        if _running_loop() is loop:
            event.set()
        else:
            loop.call_soon_threadsafe(event.set)

    async def wait(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109  # the public API
        if not self.is_set():
            if self._event is None:
                self._loop, self._event = asyncio.get_running_loop(), asyncio.Event()
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
