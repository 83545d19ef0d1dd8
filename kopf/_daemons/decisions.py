"""Daemons and timers as values: which to start or stop for an object, and when a timer is due. Pure.

Log lines (upstream's words, for switching frameworks without surprises): each attempt as any
handler's (`kopf._core.outcomes.invoked` and `describe`); and `exit_log`:
- The end of a daemon: "... has exited on its own and will not be retried or restarted." (it returned
  or failed for good), "... has exited on request and will not be retried or restarted." (after a
  stop), and then "... has exited gracefully." if the operator exits (a timer logs only this one).

Which run (`reconcile`):
- A daemon or timer runs while the object matches its filters, holds our finalizer (so that its
  deletion waits for them), and is not being deleted.
- One that exited on its own or failed for good (`finished`) is not started again until the
  operator restarts; one stopped because its filters stopped matching is started again when they
  match again (from scratch: its retries and its delays are forgotten).
- Deletion stops them all (`RESOURCE_DELETED`); a filter mismatch stops those (`FILTERS_MISMATCH`).

When a timer is due (loop time, seconds):
- The first call: `initial_delay` after the timer starts (at once without it).
- After a successful call: `interval` after the call's end; with `sharp`, on the grid of the call's
  start (`interval - elapsed % interval` after its end: missed slots are skipped); with neither
  `interval` nor `idle`, never again (a one-shot timer).
- After a failed attempt that is to be retried: the retry delay after its end.
- With `idle`: never earlier than `idle` seconds after the object's last essential change; with
  `idle` and no `interval`, once per change (the next call comes after the next change).
"""
import dataclasses
import logging
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from kopf._core.handlers import SpawningHandler, TimerHandler
from kopf._core.outcomes import LogEntry
from kopf._daemons.reasons import DaemonStoppingReason


@dataclasses.dataclass(frozen=True)
class Changes:
    """What to do with an object's daemons and timers after one of its events."""
    start: tuple[SpawningHandler, ...] = ()
    stop: tuple[tuple[str, DaemonStoppingReason], ...] = ()  # (handler id, why)


def reconcile(matching: Iterable[SpawningHandler], running: Collection[str], finished: Collection[str], *,
              has_finalizer: bool, deleting: bool) -> Changes:
    """Which daemons/timers to start and which to stop, given those matching the object's body now."""
    if deleting:
        return Changes(stop=tuple((key, DaemonStoppingReason.RESOURCE_DELETED) for key in sorted(running)))
    matched = {handler.id: handler for handler in matching}
    stop = tuple((key, DaemonStoppingReason.FILTERS_MISMATCH) for key in sorted(running) if key not in matched)
    if not has_finalizer:
        return Changes(stop=stop)  # started once our finalizer holds the object's deletion for them
    start = tuple(h for key, h in matched.items() if key not in running and key not in finished)
    return Changes(start=start, stop=stop)


def is_live(body: Mapping[str, Any], seen: Mapping[str, Any], *, answer: bool = False) -> bool:
    """Whether a body (of an event, or of our patch's `answer`) replaces the live body `seen` so far.

    Not if it is older. Of an answer and the echo of the same patch (the same resourceVersion and
    content, whichever comes first), the echo is kept: the live body is then the watch stream's own
    newest body, not a second copy of it per object. Opaque resourceVersions: the newest one wins.
    """
    rv = str((body.get('metadata') or {}).get('resourceVersion') or '')
    was = str((seen.get('metadata') or {}).get('resourceVersion') or '')
    if rv.isdigit() and was.isdigit():
        return int(rv) > int(was) or (int(rv) == int(was) and not answer)
    return True


def first_due(handler: TimerHandler, *, now: float, initial_delay: float | None, last_change: float) -> float:
    """When a timer, just started, makes its first call."""
    return idled(handler, now + max(0.0, initial_delay or 0.0), last_change=last_change)


def next_due(handler: TimerHandler, *, started: float, finished: float, success: bool, delay: float | None,
             last_change: float, changed_since: bool = False) -> float | None:
    """When a timer calls next after a call that ran from `started` to `finished` (None: never again).

    `delay`: seconds before the retry of a failed attempt (None: at once); ignored after a success.
    `changed_since`: an essential change came after the call's start (for `idle` without `interval`).
    """
    if not success:
        return idled(handler, finished + max(0.0, delay or 0.0), last_change=last_change)
    if handler.interval is None:
        if handler.idle is None or not changed_since:
            return None  # one-shot, or idle-only: the next change schedules it again (`on_change`)
        return idled(handler, finished, last_change=last_change)
    if handler.sharp:
        elapsed = max(0.0, finished - started)
        due = finished + (handler.interval - elapsed % handler.interval)
    else:
        due = finished + handler.interval
    return idled(handler, due, last_change=last_change)


def idled(handler: TimerHandler, due: float, *, last_change: float) -> float:
    """The due time, postponed until `idle` seconds after the last essential change."""
    if handler.idle is None:
        return due
    return max(due, last_change + handler.idle)


def on_change(handler: TimerHandler, due: float | None, *, now: float, waiting: bool) -> float | None:
    """A timer's due time after an essential change of its object at `now`.

    Idle timers are postponed; an idle-only timer that is waiting for a change (no due time, not
    calling now) is due `idle` seconds after it. Others keep their time.
    """
    if handler.idle is None:
        return due
    if due is None:
        return now + handler.idle if waiting and handler.interval is None else None
    return max(due, now + handler.idle)


def exit_logs(handler: SpawningHandler, reason: DaemonStoppingReason | None) -> list[LogEntry]:
    """How a daemon's end is logged: on its own, or on request (a stop), and then gracefully if the operator exits."""
    extra = {'kopf_handler_id': handler.id}
    if reason is None:
        return [LogEntry(logging.DEBUG, f'{handler} has exited on its own and will not be retried or restarted.',
                         extra=extra)]
    on_request = LogEntry(logging.DEBUG, f'{handler} has exited on request and will not be retried or restarted.',
                          extra=extra)
    return [on_request, graceful_log(handler)] if reason & DaemonStoppingReason.OPERATOR_EXITING else [on_request]


def graceful_log(handler: SpawningHandler) -> LogEntry:
    """A daemon or timer stopped because the operator exits (a timer logs only this line)."""
    return LogEntry(logging.DEBUG, f'{handler} has exited gracefully.', extra={'kopf_handler_id': handler.id})
