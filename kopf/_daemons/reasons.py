"""`kopf.DaemonStopped` and `kopf.DaemonStoppingReason`: the `stopped` kwarg of daemons/timers.

The flag is pure here: it is truthy once set, `.is_set()`, `.reason` (the union of all reasons it
was set with, or None while it is not set). Waiting needs I/O, so the waiting variants live in
`kopf._daemons.stoppers`: a blocking `.wait(timeout)` for sync daemons (run in threads) and an
awaitable one for async daemons. Both are instances of `DaemonStopped`, which is what users annotate.
"""
import enum
from typing import Any


class DaemonStoppingReason(enum.Flag):
    """Why a daemon or timer is asked to stop; several reasons can be combined."""

    DONE = enum.auto()
    FILTERS_MISMATCH = enum.auto()
    RESOURCE_DELETED = enum.auto()
    OPERATOR_PAUSING = enum.auto()
    OPERATOR_EXITING = enum.auto()
    DAEMON_SIGNALLED = enum.auto()
    DAEMON_CANCELLED = enum.auto()
    DAEMON_ABANDONED = enum.auto()


class DaemonStopped:
    """The `stopped` flag of a daemon or timer: truthy once the daemon is asked to stop.

    `.wait(timeout)` blocks (sync daemons) or is awaited (async daemons) until the flag is set or
    the timeout passes, and returns whether it is set; the bare flag cannot wait (it has no I/O).
    """

    __slots__ = ('_reason',)

    def __init__(self) -> None:
        self._reason: DaemonStoppingReason | None = None

    def __repr__(self) -> str:
        return f'<{type(self).__name__}: {self.is_set()}, reason={self._reason}>'

    def __bool__(self) -> bool:
        return self._reason is not None

    def is_set(self) -> bool:
        return self._reason is not None

    @property
    def reason(self) -> DaemonStoppingReason | None:
        return self._reason

    def set(self, reason: DaemonStoppingReason) -> None:
        """Ask the daemon to stop (the framework's side); reasons accumulate, the flag never unsets."""
        self._reason = reason if self._reason is None else self._reason | reason
        self._wake()

    def _wake(self) -> None:
        """Wake the waiters of a waiting variant (called after every `set()`)."""

    def wait(self, timeout: float | None = None) -> Any:
        """Blocking in the sync variant (returns bool), a coroutine in the async one (resolves to bool)."""
        raise TypeError(f'{type(self).__name__} cannot wait: the framework passes a sync or async variant '
                        'to daemons and timers (kopf._daemons.stoppers).')


# Deprecated names of the `stopped` kwarg's type (upstream kept them for old annotations).
SyncDaemonStopperChecker = DaemonStopped
AsyncDaemonStopperChecker = DaemonStopped
