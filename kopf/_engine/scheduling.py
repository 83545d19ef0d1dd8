"""The operator's one scheduler: everything that happens later, on one loop timer.

Delayed retries, the error throttling, the end of the wait for our own write, timers and daemons'
back-offs (`kopf._daemons.workers`), and the Leases' renew deadlines and expiries (`kopf._leases.holding`)
all ask it to call them back at a loop time. Their due
times live in one heap (`kopf._engine.duetimes.Schedule`); one `loop.call_at()` is armed for the
earliest of them, never a sleeping task or a timer handle per object. A key has one due time: asking
again keeps the earlier one (or sets it, with `replace=True`); a callback runs in the loop, and must
not block (it queues work, it does not do it).
"""
import asyncio
import logging
from collections.abc import Callable, Hashable

from kopf._engine import duetimes

Callback = Callable[[], None]
logger = logging.getLogger('kopf.reactor.scheduling')


class Scheduler:
    """Due times of keys and their callbacks, on the running loop's clock."""

    def __init__(self) -> None:
        self._schedule = duetimes.Schedule()
        self._handle: asyncio.TimerHandle | None = None
        self._armed_at: float | None = None

    def __len__(self) -> int:
        return len(self._schedule)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._schedule

    def when(self, key: Hashable) -> float | None:
        return self._schedule.when(key)

    def at(self, key: Hashable, when: float, callback: Callback, *, replace: bool = False) -> None:
        """Call `callback()` at the loop time `when` (or earlier, if the key is due earlier already)."""
        if self._schedule.at(key, when, callback, replace=replace):
            self._arm()

    def cancel(self, key: Hashable) -> None:
        self._schedule.cancel(key)  # its heap entry is dropped when it comes to the top; the timer may fire idly

    def close(self) -> None:
        """Forget everything (the operator stops)."""
        self._schedule = duetimes.Schedule()
        if self._handle is not None:
            self._handle.cancel()
        self._handle, self._armed_at = None, None

    def _arm(self) -> None:
        at = self._schedule.next_at
        if at is None or (self._armed_at is not None and self._armed_at <= at):
            return  # armed for this time or earlier already: it re-arms itself when it fires
        if self._handle is not None:
            self._handle.cancel()
        self._handle, self._armed_at = asyncio.get_running_loop().call_at(at, self._fire), at

    def _fire(self) -> None:
        self._handle, self._armed_at = None, None
        loop = asyncio.get_running_loop()
        try:
            for key, callback in self._schedule.pop_due(loop.time()):
                try:
                    callback()
                except Exception:  # one failing callback must not lose the others, nor the timer
                    logger.exception(f'A scheduled callback for {key!r} failed.')
        finally:
            self._arm()
