"""Requests in flight: their slots (a bound on how many at once) and their deadlines (total timeouts).

Both are on every request's path (`kopf._api.http.Session.fetch`): no coroutine to take a free slot, and one timer
for all the deadlines of a session, not an `asyncio.timeout()` scope (a `Timeout`, a `TimerHandle` and its heap
push) per request.
"""
import asyncio
import collections
import contextlib
from typing import Any, Final

SLACK: Final = 0.001  # seconds: deadlines this close when the timer runs are due (the loop runs timers a bit early)


class Slots:
    """At most `limit` holders at once, the waiting ones served first come, first served (as `asyncio.Semaphore`).

    `take()` is the fast path, with no coroutine: a free slot when nobody waits; else `await wait()`. Each taken
    slot is given back by `release()`, which hands it to the first waiter still waiting, if any.
    """

    __slots__ = ('_free', '_waiters')

    def __init__(self, limit: int) -> None:
        self._free = limit
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    @property
    def free(self) -> int:
        return self._free

    def take(self) -> bool:
        if self._free > 0 and not self._waiters:
            self._free -= 1
            return True
        return False

    async def wait(self) -> None:
        """Until a slot is handed over (it is ours then: give it back by `release()`)."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # handed over as we were cancelled: to the next one
            else:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(future)
            raise

    def release(self) -> None:
        while self._waiters:
            future = self._waiters.popleft()
            if not future.done():
                future.set_result(None)
                return
        self._free += 1

    async def __aenter__(self) -> None:
        if not self.take():
            await self.wait()

    async def __aexit__(self, *_: Any) -> None:
        self.release()


class _Deadline:
    """One request's total timeout in `Deadlines`: its task, when it expires, and whether it did."""

    __slots__ = ('cancelling', 'expired', 'task', 'when')

    def __init__(self, task: 'asyncio.Task[Any]', when: float) -> None:
        self.task = task
        self.when = when
        self.cancelling = task.cancelling()
        self.expired = False


class Deadlines:
    """The total timeouts of a session's requests in flight, with one timer for all: not a timeout scope each.

    A request's expiry cancels its task, and `finish()` turns that cancellation into a `TimeoutError`, as
    `asyncio.timeout()` does (3.11's rules: a cancellation of its own, not one requested by others meanwhile).
    The timer runs at the earliest deadline in flight, and is re-armed for the next one when it runs.
    """

    __slots__ = ('_active', '_handle')

    def __init__(self) -> None:
        self._active: dict[_Deadline, None] = {}  # in flight, in the order they began
        self._handle: asyncio.TimerHandle | None = None

    def __len__(self) -> int:
        return len(self._active)

    def start(self, timeout: float) -> _Deadline | None:
        """A request begins (in its task); None outside a task (nothing to cancel: no timeout)."""
        task = asyncio.current_task()
        if task is None:
            return None
        loop = task.get_loop()
        entry = _Deadline(task, loop.time() + timeout)
        self._active[entry] = None
        handle = self._handle
        if handle is None or entry.when < handle.when():
            if handle is not None:
                handle.cancel()
            self._handle = loop.call_at(entry.when, self._expire)
        return entry

    def finish(self, entry: _Deadline, cancelled: bool) -> bool:
        """The request ended (`cancelled`: by a `CancelledError`); whether by its timeout's (then: a TimeoutError)."""
        del self._active[entry]
        if not self._active and self._handle is not None:
            self._handle.cancel()
            self._handle = None
        return entry.expired and entry.task.uncancel() <= entry.cancelling and cancelled

    def _expire(self) -> None:
        self._handle = None
        if not self._active:
            return
        loop = next(iter(self._active)).task.get_loop()
        due = loop.time() + SLACK  # the loop runs timers up to its clock's resolution early
        earliest: float | None = None
        for entry in self._active:
            if entry.expired:
                continue
            if entry.when <= due:
                entry.expired = True
                entry.task.cancel()
            elif earliest is None or entry.when < earliest:
                earliest = entry.when
        if earliest is not None:
            self._handle = loop.call_at(earliest, self._expire)
