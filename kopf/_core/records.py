"""The one per-object record of the reactor and its pure transition function `step()`.

A record lives from an object's first event to its DELETED event: its memo, what the handling of
it remembers between cycles, and where it stands in the queue. The reactor feeds every signal into
`step()` and carries out the effects that come back; nothing else changes a record's phase.

Phases:
    IDLE     nothing to do; only the memory is kept (the memo, the flags)
    QUEUED   in the queue, waiting for a runner
    RUNNING  a cycle runs (one at a time per object; newer events wait in `pending`)
    WAITING  the scheduler wakes it at `due_at`: a handler's delay, the error throttling, or the
             end of the wait for our own write to come back through the watch
    GONE     its DELETED event is handled: the record is forgotten

Signals and what they do:
- `Arrived(event, now)`: the newest event replaces any unprocessed one (older ones are superseded); IDLE and WAITING
  records are queued; an event not newer than the answer to our own patch (which was decided on already) is skipped,
  unless it is DELETED. The first one accepted since it last converged starts its convergence clock (`arrived_at`).
- `Quiet(event, now)`: a new record's first event, from a listing, needs nothing (the dispatcher asked
  `plans.quiet_at_first_sight` before queueing it): it is handled as it arrived, idle, no cycle run. A record that is
  not new takes it as `Arrived`.
- `Taken(now)`: a runner took the record. It runs a cycle on the pending event, or on the last one if its wake-up is
  due (not "fresh": `on.event` handlers saw it already). It waits instead: until the error throttling is over (the
  newest event is kept), or until the watch brings a body at least as new as our own last patch (at most
  `consistency_timeout` seconds; then it goes on).
- `Due()`: the scheduler's wake-up: a WAITING record is queued again.
- `Nudged(event, now)`: its daemons or timers changed (one exited): the event (its newest body) is re-run now, not
  fresh, so that the cycle may release or remove our finalizer. A record that is queued or running is re-run after
  that cycle, on the cycle's answer (or its event), never on the body the nudge carried, which may be older.
- `TakenOver(memo, now)`: its shard became ours (`--shards`): it is treated as at operator start: a new
  memo, no handling remembered, and its newest body (which the dispatcher kept meanwhile) queued as if listed,
  so that resume handlers run and its daemons and timers start.
- `Stopped()`: its watch stream is over: it idles (a new stream's listing brings it back).
- `Paused()`: its scope is paused (`kopf._engine.scopes`): no wake-up is due any more (a handler's delay, the error
  throttling, the wait for our own write); our last patch's answer is forgotten, so that the listing that resumes the
  scope re-runs it (its daemons and timers start again). A queued or running record stays so (a paused cycle only
  feeds the indices). A cycle that ends paused (`Done.paused`) is treated so: its answer and delay are dropped.
- `Done(...)`: the cycle ended (see `Done`). DELETED → GONE. An unexpected error → the next `error_delays` step,
  for the event and for any newer ones. Else, the server's answer to our patch is taken as the newest body when
  nobody needs to see every event (`on.event` handlers) and it still holds the object for us: then its next cycle
  decides on the answer at once — unless the answer needs nothing more (`settled`), then there is no next cycle;
  events up to the answer's resourceVersion are stale (an idle record awaiting only that echo keeps just its
  resourceVersion, an int, as its `work`; with the key of the echo's watch line, `Done.echo`, in the same int, so
  that the watch knows the echo without parsing it: `awaited_echo`). Else, the record awaits our write through the
  watch, and an event not newer than the answer of a patch that let the object go (deleted, our finalizer removed) is
  dropped: it still shows the finalizer and the records just purged. A requested delay schedules a wake-up (re-running
  the answer, or the event). Work begun is finished before new work is begun: a record continuing on the answer goes
  to the queue's front. A cycle's end that leaves nothing to do (IDLE, or GONE) while the convergence clock runs
  reports `Converged(lag)`: from the first event accepted to the end of the handling it caused (retries, delays and
  the cycles on our own answers included); the clock stops.
"""
import dataclasses
import enum
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kopf._core import finalizers, memos, resourceversions, values

RawEvent = dict[str, Any]
rv_of, is_consistent = resourceversions.rv_of, resourceversions.is_consistent  # how the records compare them


class Phase(enum.Enum):
    IDLE = 'idle'
    QUEUED = 'queued'
    RUNNING = 'running'
    WAITING = 'waiting'
    GONE = 'gone'


@dataclasses.dataclass(slots=True, eq=False)
class Work:
    """What a record keeps while it has work: dropped when it idles with nothing awaited (`Record.work`)."""

    pending: RawEvent | None = None    # the newest unprocessed event
    last: RawEvent | None = None       # the event (or answer) a delayed wake-up re-runs
    wakeup_at: float | None = None     # a handler's delay is over (loop time)
    throttled_until: float | None = None  # no cycle before it: after an unexpected error
    deadline: float | None = None      # the end of the wait for our own write
    expected_rv: str | None = None     # our last patch's resourceVersion, until the watch brings it
    applied_rv: str | None = None      # our last patch's answer was decided on: older events are stale
    echo: int | None = None            # the key of the watch line of that answer (`Done.echo`), while awaited
    errors: int = 0                    # unexpected errors in a row
    due_at: float | None = None        # when the scheduler wakes it (WAITING)
    arrived_at: float | None = None    # the first event accepted since it last converged (its convergence clock)
    nudged: bool = False               # nudged while queued or running: re-run its newest body after that

    def idle(self) -> bool:
        """Nothing in it that a later signal needs: the record may drop it."""
        return self.applied_rv is None and self._nothing_but_applied()

    def echo_only(self) -> int | None:
        """Our answer's resourceVersion (with its echo's key: `resourceversions.packed`) if alone: kept instead."""
        rv = self.applied_rv
        if rv is None or not rv.isdigit() or len(rv) >= 19 or not self._nothing_but_applied():
            return None
        return resourceversions.packed(int(rv), self.echo)

    def _nothing_but_applied(self) -> bool:
        return (self.pending is None and self.last is None and self.wakeup_at is None and self.due_at is None
                and self.expected_rv is None and self.arrived_at is None and self.throttled_until is None
                and self.deadline is None and not self.errors and not self.nudged)


@dataclasses.dataclass(slots=True, eq=False)
class ObjectRecord:
    """What the operator keeps of one object while the process lives (never persisted).

    An idle object keeps its identity, its memo, what its handling remembers (`initial`, `deletion_handled`)
    and its shard; the rest (`work`) exists only while it has work or awaits our own write. The reactor's
    handles of it (its runner's task, its daemons and timers, its logger) live on the reactor's side.
    """

    uid: str
    memo: Any                          # the object's memo (`memo_of`), or the seed it is copied from when needed
    name: str | None = None
    namespace: str | None = None
    phase: Phase = Phase.IDLE
    initial: bool | None = None        # first seen in the initial listing, no cause handled yet (None: no cycle yet)
    deletion_handled: bool = False     # optional delete handlers ran (once, best-effort)
    shard: int | None = None           # its shard (`--shards`: `kopf._shards.assignment.shard_of`); None: unsharded
    work: Work | int | None = None     # while it has work (`Work`); idle, awaiting our echo: its rv (and key) only


# -- signals ------------------------------------------------------------------------------------------

@values.frozen
class Arrived:
    event: RawEvent
    now: float | None = None  # when it arrived (None: no convergence clock)


@values.frozen
class Taken:
    now: float
    consistency_timeout: float = 5.0


@values.frozen
class Quiet:
    """A new record's listed event that needs nothing (`plans.quiet_at_first_sight`): handled as it arrived."""
    event: RawEvent
    now: float | None = None  # when it arrived (None: no convergence clock)


@values.frozen
class Due:
    pass


@values.frozen
class Nudged:
    """Something of the object's own changed (e.g. a daemon exited): re-run its newest body now, not fresh."""
    event: RawEvent
    now: float


@values.frozen
class TakenOver:
    """Its shard is ours now: as at operator start (a new memo; its newest body as listed)."""
    memo: Any
    now: float
    event: RawEvent | None = None  # its newest event while the shard was not ours (None: none seen)


@values.frozen
class Stopped:
    """The watch stream of the object is over (its watcher stopped): its work is dropped, its memory kept."""


@values.frozen
class Done:
    """A cycle's end, as values: what it ran on, what it wants, what the server answered."""

    event: RawEvent
    now: float
    wakeup: float | None = None             # seconds: a handler is due again then
    answer: Mapping[str, Any] | None = None  # the server's answer to our patch (None: nothing sent/accepted)
    echo: int | None = None                 # the key of the answer's watch line (`watchstate.echo_key`), if known
    settled: bool = False                   # the answer needs no cycle of its own (`plans.needs_recheck`)
    watched: bool = False                   # `on.event` handlers exist: they see every event
    finalizer: str = ''
    error: BaseException | None = None      # the cycle failed with an unexpected error
    error_delays: Sequence[float] = (1.0,)
    paused: bool = False                    # its scope was paused when the cycle ended
    handled: bool = False                   # a cause is fully handled: the object is no longer "initial"
    deletion_handled: bool = False          # its optional delete handlers have had their one run


@values.frozen
class Paused:
    """Its scope is paused: nothing of it is due until a listing resumes it."""


Signal = Arrived | Quiet | Taken | Due | Nudged | TakenOver | Stopped | Paused | Done


# -- effects ------------------------------------------------------------------------------------------

@values.frozen
class Enqueue:
    first: bool = False  # to the queue's front: work begun is finished before new work is begun


@values.frozen
class Schedule:
    at: float  # wake it then (the scheduler keeps the earliest time asked)


@values.frozen
class Run:
    event: RawEvent
    fresh: bool  # a new event (not a wake-up's re-run): `on.event` handlers see it


@values.frozen
class Retry:
    """After an unexpected error: the next cycle in `delay` seconds (to be logged with the error, of its event)."""
    delay: float
    error: BaseException
    event: RawEvent | None = None


@values.frozen
class Forget:
    pass


@values.frozen
class Converged:
    """The handling of its events is complete, `lag` seconds after the first of them arrived (metrics)."""
    lag: float


Effect = Enqueue | Schedule | Run | Retry | Forget | Converged


# -- the transition function --------------------------------------------------------------------------

def memo_of(record: ObjectRecord) -> Any:
    """The object's memo: copied now from the operator's memo as of its first sight, if not needed before."""
    memo = record.memo
    if memo.__class__ is memos.Seed:
        memo = record.memo = memo.grown()
    return memo


def spare_memo(record: ObjectRecord, seeds: memos.Seeds) -> None:
    """After a cycle: a memo that nobody else holds and that is as its seed goes back to it (`kopf._core.memos`)."""
    if (seed := seeds.spare(record.memo)) is not None:
        record.memo = seed


def step(record: ObjectRecord, signal: Signal) -> list[Effect]:
    """Advance the record by one signal; return what the reactor must do (in this order)."""
    if record.phase is Phase.GONE:
        return []
    try:
        transition = _STEPS[signal.__class__]  # by exact type: the signals are final (no subclasses)
    except KeyError:
        raise TypeError(f'Not a signal of an object record: {signal!r}') from None
    work = record.work
    if work is None:
        if isinstance(signal, Quiet) and (handled := _handled_at_once(record, signal)) is not None:
            return handled  # no work made only to be dropped
        work = record.work = Work()
    elif isinstance(work, int):  # an idle record that awaits only the echo of our patch: its resourceVersion
        rv, key = resourceversions.unpacked(work)  # `_arrived` skips the echo; kept as an int again below
        work = record.work = Work(applied_rv=rv, echo=key)
    effects = transition(record, work, signal)
    if record.phase is Phase.IDLE:
        if work.idle():
            record.work = None  # an idle object costs its identity only
        elif (echo := work.echo_only()) is not None:
            record.work = echo  # 32 bytes, not a Work's ~190 (e.g. till a listing's end, for all its objects)
    return effects


def awaited_echo(record: ObjectRecord) -> tuple[str, int] | None:
    """Our patch's answer's resourceVersion and its echo's key (`Done.echo`) if the idle record awaits only that."""
    work = record.work
    if record.phase is not Phase.IDLE or work.__class__ is not int:
        return None
    rv, key = resourceversions.unpacked(work)
    return None if key is None else (rv, key)


def _due(record: ObjectRecord, work: Work, signal: Due) -> list[Effect]:
    if record.phase is not Phase.WAITING:
        return []  # queued or running already (a fresh event came first), or idle
    return _queue(record, work)


def _nudged(record: ObjectRecord, work: Work, signal: Nudged) -> list[Effect]:
    if record.phase in (Phase.QUEUED, Phase.RUNNING):
        work.nudged = True  # the body it carries may be older than the cycle's answer: see `_done`
        return []
    work.last, work.wakeup_at = signal.event, signal.now
    return _queue(record, work)


def _stopped(record: ObjectRecord, work: Work, signal: Stopped) -> list[Effect]:
    record.phase, work.due_at, work.arrived_at = Phase.IDLE, None, None
    return []  # a new stream lists it again; its first event queues it


def _paused(record: ObjectRecord, work: Work, signal: Paused) -> list[Effect]:
    _forget_waits(work)
    if record.phase is Phase.WAITING:
        record.phase, work.due_at, work.arrived_at = Phase.IDLE, None, None  # no lag measured while paused
    return []


def _taken_over(record: ObjectRecord, work: Work, signal: TakenOver) -> list[Effect]:
    record.memo, record.initial, record.deletion_handled = signal.memo, None, False
    work.errors, work.nudged = 0, False
    _forget_waits(work)
    newest = signal.event
    if newest is None or newest.get('type') == 'DELETED':
        return []
    work.pending = {'type': None, 'object': newest['object']}  # as listed: resume handlers run
    if work.arrived_at is None:
        work.arrived_at = signal.now
    if record.phase in (Phase.QUEUED, Phase.RUNNING):
        return []
    return _queue(record, work)


def _forget_waits(work: Work) -> None:
    work.wakeup_at = work.throttled_until = work.deadline = None
    work.expected_rv = work.applied_rv = work.echo = None


def _arrived(record: ObjectRecord, work: Work, signal: Arrived) -> list[Effect]:
    event = signal.event
    if work.applied_rv is not None and event.get('type') != 'DELETED':
        rv = rv_of(event)
        if rv is not None and is_consistent(work.applied_rv, rv):
            if rv == work.applied_rv:
                work.applied_rv = work.echo = None  # its echo: the events after it are newer
            return []  # not newer than our patch's answer, which is decided on already
        if rv is not None:
            work.applied_rv = work.echo = None  # newer: the watch brings nothing older after it
    work.pending = event
    if work.arrived_at is None:
        work.arrived_at = signal.now
    if record.phase in (Phase.QUEUED, Phase.RUNNING):
        return []  # a running record looks at its pending event when its cycle ends
    return _queue(record, work)


_ENQUEUE, _ENQUEUE_FIRST, _FORGET = Enqueue(), Enqueue(first=True), Forget()  # frozen: shared by all steps


def _queue(record: ObjectRecord, work: Work, *, first: bool = False) -> list[Effect]:
    record.phase = Phase.QUEUED
    work.due_at = None
    return [_ENQUEUE_FIRST if first else _ENQUEUE]


def _wait(record: ObjectRecord, work: Work, at: float) -> list[Effect]:
    record.phase = Phase.WAITING
    work.due_at = at if work.due_at is None else min(at, work.due_at)
    return [Schedule(at=at)]


def _handled_at_once(record: ObjectRecord, signal: Quiet) -> list[Effect] | None:
    """A new record's `Quiet`: handled as it arrived (None: the record is not new)."""
    if record.phase is not Phase.IDLE or record.initial is not None:
        return None
    record.initial = False  # first seen in a listing, and handled
    return [] if signal.now is None else [Converged(lag=0.0)]


def _quiet(record: ObjectRecord, work: Work, signal: Quiet) -> list[Effect]:
    handled = _handled_at_once(record, signal) if work.idle() else None
    return handled if handled is not None else _arrived(record, work, Arrived(signal.event, now=signal.now))


def _taken(record: ObjectRecord, work: Work, signal: Taken) -> list[Effect]:
    now = signal.now
    woken = work.wakeup_at is not None and work.wakeup_at <= now
    candidate = work.pending if work.pending is not None else work.last if woken else None
    if candidate is None:
        return _rest(record, work)
    if work.throttled_until is not None and now < work.throttled_until:
        return _wait(record, work, work.throttled_until)  # the error delay first; the newest event is kept
    work.throttled_until = None
    if not is_consistent(rv_of(candidate), work.expected_rv):
        if work.deadline is None:
            work.deadline = now + signal.consistency_timeout
        if now < work.deadline:
            return _wait(record, work, work.deadline)  # a fresh event queues it earlier
    fresh = candidate is work.pending
    if record.initial is None:
        record.initial = candidate.get('type') is None  # first seen in a listing
    work.expected_rv = None
    work.pending, work.wakeup_at, work.deadline, work.due_at = None, None, None, None
    record.phase = Phase.RUNNING
    return [Run(event=candidate, fresh=fresh)]


def _rest(record: ObjectRecord, work: Work, *, first: bool = False) -> list[Effect]:
    """After a cycle or a spurious wake-up: queue it, wait for its wake-up, or idle (nothing to do)."""
    if work.pending is not None:
        return _queue(record, work, first=first)
    if work.wakeup_at is not None:
        work.due_at = None
        return _wait(record, work, work.wakeup_at)
    record.phase = Phase.IDLE
    work.due_at = work.last = None  # no wake-up is due: the event it would re-run is not kept
    return []


def _done(record: ObjectRecord, work: Work, done: Done) -> list[Effect]:
    effects = _settle(record, work, done)
    if work.arrived_at is not None and record.phase in (Phase.IDLE, Phase.GONE):
        effects.append(Converged(lag=max(0.0, done.now - work.arrived_at)))
        work.arrived_at = None
    return effects


def _settle(record: ObjectRecord, work: Work, done: Done) -> list[Effect]:
    if done.event.get('type') == 'DELETED':
        record.phase = Phase.GONE
        return [_FORGET]
    if done.paused:
        work.errors, work.nudged, work.arrived_at = 0, False, None  # not handled: no lag measured
        _forget_waits(work)
        return _rest(record, work)
    if done.error is not None:
        delays = done.error_delays or (1.0,)
        delay = delays[min(work.errors, len(delays) - 1)]  # then the last one, forever
        work.errors += 1
        work.last, work.wakeup_at = done.event, done.now + delay
        work.throttled_until = work.wakeup_at
        return [Retry(delay=delay, error=done.error, event=done.event), *_rest(record, work)]
    work.errors = 0
    if done.handled:
        record.initial = False
    if done.deletion_handled:
        record.deletion_handled = True
    latest = _answer_as_event(work, done)
    if work.nudged:  # re-run the newest body: the answer, or the event if nothing newer is awaited
        work.nudged = False
        newest = latest if latest is not None else done.event if work.expected_rv is None else None
        if newest is not None:
            work.last, work.wakeup_at = newest, done.now
    continued = False
    if latest is not None:
        if done.settled:
            if work.pending is not None and is_consistent(rv_of(latest), rv_of(work.pending)):
                work.pending = None  # not newer than the answer, which needs nothing more
            latest = None
        elif work.pending is None or not is_consistent(rv_of(work.pending), rv_of(latest)):
            work.pending = latest  # decide on the server's answer now, not on its echo later
            continued = True
    elif work.pending is not None and _released(done, work.pending):
        work.pending = None  # it still shows our finalizer, which our patch has just released
    if done.wakeup is not None and (work.wakeup_at is None or work.wakeup_at > done.now + done.wakeup):
        work.last, work.wakeup_at = latest or done.event, done.now + done.wakeup
    return _rest(record, work, first=continued)


def _answer_as_event(work: Work, done: Done) -> RawEvent | None:
    """The server's answer as the object's newest event, if it may be used so; else await our write."""
    body = done.answer
    if body is None:
        return None
    meta = body.get('metadata') or {}
    rv = meta.get('resourceVersion')
    if done.watched or finalizers.let_go(body, done.finalizer) or rv is None:
        work.expected_rv = None if rv is None else str(rv)  # wait for it through the watch
        return None
    # Its echo (or a newer event) may have come through the watch while the cycle ran: nothing older comes after.
    echoed = work.pending is not None and is_consistent(rv_of(work.pending), str(rv))
    work.applied_rv, work.expected_rv = None if echoed else str(rv), None
    work.echo = None if echoed else done.echo
    return {'type': 'MODIFIED', 'object': body}


def _released(done: Done, pending: RawEvent) -> bool:
    """Whether our patch let the deleted object go and the pending event is not newer than its answer.

    (Releasing the last finalizer of a deleted object answers with the previous resourceVersion, so
    "not newer" includes "equal".) Not where `on.event` handlers see every event, stale or not.
    """
    body = done.answer or {}
    if done.watched or not finalizers.let_go(body, done.finalizer):
        return False
    rv = (body.get('metadata') or {}).get('resourceVersion')
    return rv is not None and pending.get('type') != 'DELETED' and is_consistent(str(rv), rv_of(pending))


# The transitions by the signal's type (one dict lookup per signal, not a chain of isinstance checks).
_STEPS: dict[type, Callable[[ObjectRecord, Work, Any], list[Effect]]] = {
    Arrived: _arrived, Quiet: _quiet, Taken: _taken, Done: _done, Due: _due, Nudged: _nudged, TakenOver: _taken_over,
    Stopped: _stopped, Paused: _paused,
}
