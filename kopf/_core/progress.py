"""The per-handler state machine of change handling: pure, over records, outcomes and `now`.

Rules (delays and timeouts: docs/design/decisions.md #5, #6):

States and records
- Each handler of a cause has a `HandlerState`, persisted as a `ProgressRecord` under its id:
  `started`, `stopped`, `delayed` (ISO-8601, UTC), `purpose` (the cause's reason), `retries`
  (attempts finished so far), `success`, `failure`, `message` (the last error), `subrefs` (sorted ids
  of all sub-handlers, any depth).
- A handler first seen in a cause gets a fresh state: `started=now`, `retries=0`, with the cause's
  purpose, even if the lifecycle does not pick it in this cycle (a "pending sibling").
- A state is *finished* when `success` or `failure` is set; the cause is *done* when all states are.

Which handlers are due now (`State.due`, `State.select`)
- Unfinished, and either not delayed or `delayed <= now`. The lifecycle then picks among the due ones.

Pre-checks before an attempt (`State.precheck`), on the stored state:
- retries: `retries >= handler.retries` → final failure (HandlerRetriesError);
- timeout: `now - started >= handler.timeout` → final failure (HandlerTimeoutError).
  The handler is then not invoked; the failure is merged like any outcome.

Merging an outcome (`State.with_outcomes`); every attempt counts: `retries += 1`:
- SUCCESS → `success`, `stopped=now`; FAILURE/TIMEOUT → `failure`, `stopped=now`, `message`.
- RETRY → the delay: a TemporaryError's own `delay` (None = at once); an arbitrary error's
  `handler.backoff`, else `settings.execution.default_backoff`; no exception: the outcome's `delay`.
  Then the look-ahead: if `retries_so_far + 1 >= handler.retries`, or the next attempt (at
  `now + delay`) would be at or past `started + handler.timeout`, it is a final failure now, its
  `message` the line logged for it (as upstream stores it: "Handler 'x' failed temporarily but will
  exceed 3 retries: ..."); otherwise `delayed = now + delay` and `message`.
- `subrefs` reported by the attempt are merged into the recorded ones.

Purposes and superseding (`State.with_purpose`)
- States of another purpose are *superseded* (counted for the log); those of handlers selected again
  are re-purposed (progress kept if unfinished, restarted if finished); the others are purged.
  States of handlers no longer selected are purged too.

Persisting (`State.store`; purging a done cause is `kopf._core.plans.purge`)
- Only changed records are stored (nothing is written for unchanged states), then dropped ones are
  purged; `storage.flush()` after each batch. When the cause is done, everything is purged: the
  states, the dropped ids, the given handler ids, and all recorded subrefs (`plans.purge`).
- The wake-up (`State.delay`) is computed in memory: seconds until the next unfinished handler is due.
  `delayed` is still persisted, so a restarted operator honours it.
"""
import dataclasses
import datetime
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, MutableMapping, Sequence
from typing import Any, Protocol, TypeVar

from kopf._core import errors, outcomes, values
from kopf._core.bodies import parse_timestamp
from kopf._core.outcomes import Outcome, OutcomeKind

Record = Mapping[str, Any]  # a kopf.ProgressRecord (a TypedDict defined with the storages)


class HandlerLike(Protocol):
    """What the state machine needs from a handler (the handlers' dataclasses have these attributes)."""

    @property
    def id(self) -> str: ...
    @property
    def timeout(self) -> float | None: ...
    @property
    def retries(self) -> int | None: ...
    @property
    def backoff(self) -> float | None: ...


H = TypeVar('H', bound=HandlerLike)


class StorageLike(Protocol):
    def fetch(self, *, key: str, body: Mapping[str, Any]) -> Any: ...
    def store(self, *, key: str, record: Any, body: Mapping[str, Any], patch: MutableMapping[str, Any]) -> None: ...
    def purge(self, *, key: str, body: Mapping[str, Any], patch: MutableMapping[str, Any]) -> None: ...
    def flush(self) -> None: ...


def parse_time(value: Any) -> datetime.datetime | None:
    """An ISO-8601 timestamp from a record; naive ones (written before 1.37) are UTC."""
    if not isinstance(value, str) or not value:
        return None
    return parse_timestamp(value)


def format_time(value: datetime.datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.UTC)
    return value.astimezone(datetime.UTC).isoformat(timespec='microseconds')


@values.frozen
class HandlerState:
    """One handler's persisted progress: when it started, its retries, whether it finished."""
    started: datetime.datetime | None = None
    stopped: datetime.datetime | None = None
    delayed: datetime.datetime | None = None
    purpose: str | None = None
    retries: int = 0
    success: bool = False
    failure: bool = False
    message: str | None = None
    subrefs: tuple[str, ...] = ()
    origin: Record | None = dataclasses.field(default=None, compare=False, repr=False)  # as fetched

    @classmethod
    def from_scratch(cls, *, now: datetime.datetime, purpose: str | None) -> 'HandlerState':
        return cls(started=now, purpose=purpose)

    @classmethod
    def from_record(cls, record: Record) -> 'HandlerState':
        return cls(
            started=parse_time(record.get('started')),
            stopped=parse_time(record.get('stopped')),
            delayed=parse_time(record.get('delayed')),
            purpose=record.get('purpose'),
            retries=int(record.get('retries') or 0),
            success=bool(record.get('success') or False),
            failure=bool(record.get('failure') or False),
            message=record.get('message'),
            subrefs=tuple(record.get('subrefs') or ()),
            origin=dict(record),
        )

    def as_record(self) -> dict[str, Any]:
        """The record to persist; None-valued fields are left to the storage (omitted unless verbose)."""
        return {
            'started': format_time(self.started),
            'stopped': format_time(self.stopped),
            'delayed': format_time(self.delayed),
            'purpose': None if self.purpose is None else str(self.purpose),
            'retries': self.retries,
            'success': self.success,
            'failure': self.failure,
            'message': self.message,
            'subrefs': sorted(self.subrefs) if self.subrefs else None,
        }

    @property
    def changed(self) -> bool:
        if self.origin is None:
            return True
        current = {k: v for k, v in self.as_record().items() if v is not None and v != []}
        original = {k: v for k, v in self.origin.items() if v is not None and v != []}
        for key in ('started', 'stopped', 'delayed'):  # compare times as times, not as strings
            if key in original:
                original[key] = format_time(parse_time(original[key]))
        return current != original

    @property
    def finished(self) -> bool:
        return self.success or self.failure

    @property
    def retry(self) -> int:
        """The 0-based number of the next attempt, as handlers receive it."""
        return self.retries

    def runtime(self, now: datetime.datetime) -> datetime.timedelta:
        return now - (self.started or now)

    def is_due(self, now: datetime.datetime) -> bool:
        return not self.finished and (self.delayed is None or self.delayed <= now)

    def with_purpose(self, purpose: str | None, *, now: datetime.datetime) -> 'HandlerState':
        if self.finished:
            return HandlerState.from_scratch(now=now, purpose=purpose)
        return values.replace(self, purpose=purpose)

    def with_outcome(
            self,
            outcome: Outcome,
            *,
            handler: HandlerLike,
            now: datetime.datetime,
            default_backoff: float | None,
    ) -> 'HandlerState':
        started = self.started or now
        retries = self.retries + 1
        subrefs = tuple(sorted(set(self.subrefs) | set(outcome.subrefs))) if self.subrefs or outcome.subrefs else ()
        if outcome.kind is OutcomeKind.SUCCESS:  # the usual one: one copy, not two
            return values.replace(self, started=started, retries=retries, subrefs=subrefs,
                                  success=True, stopped=now, delayed=None, message=None)
        base = values.replace(self, started=started, retries=retries, subrefs=subrefs)
        if outcome.kind is OutcomeKind.FAILURE:
            return base._failed(now, outcome.message)
        if outcome.kind is OutcomeKind.TIMEOUT:
            message = outcome.message or _timeout_message(handler)
            return base._failed(now, message)

        delay = retry_delay(outcome, handler=handler, default_backoff=default_backoff)
        wakeup = now + datetime.timedelta(seconds=delay or 0)
        if (handler.retries is not None and self.retries + 1 >= handler.retries) or \
                (handler.timeout is not None and (wakeup - started).total_seconds() >= handler.timeout):
            failed = base._failed(now, None)  # the message is the line logged for it, as upstream stores it
            return values.replace(failed, message=outcomes.describe(handler, outcome, failed).message)
        delayed = None if delay is None else wakeup
        return values.replace(base, delayed=delayed, message=outcome.message)

    def _failed(self, now: datetime.datetime, message: str | None) -> 'HandlerState':
        return values.replace(self, failure=True, stopped=now, delayed=None, message=message)


def _title(handler: HandlerLike) -> str:
    return f"{getattr(handler, 'title', 'Handler')} {handler.id!r}"  # e.g. "Handler 'create_fn'"


def _retries_message(handler: HandlerLike) -> str:
    return f"{_title(handler)} has exceeded {handler.retries} retries."


def _timeout_message(handler: HandlerLike) -> str:
    return f"{_title(handler)} has timed out after {handler.timeout} seconds."


def retry_delay(outcome: Outcome, *, handler: HandlerLike, default_backoff: float | None) -> float | None:
    """Seconds before the next attempt after a RETRY outcome (None = at once)."""
    exc = outcome.exception
    if exc is None:
        return outcome.delay
    if isinstance(exc, errors.TemporaryError):
        return exc.delay
    return handler.backoff if handler.backoff is not None else default_backoff


@values.frozen
class Counts:
    """How many handlers succeeded, failed, and are left to the moment (for the cause-level logs)."""

    success: int = 0
    failure: int = 0
    running: int = 0

    @classmethod
    def of(cls, states: Iterable[HandlerState]) -> 'Counts':
        states = list(states)
        return cls(success=sum(1 for s in states if s.success),
                   failure=sum(1 for s in states if s.failure),
                   running=sum(1 for s in states if not s.finished))


@values.frozen
class State(Mapping[str, HandlerState]):
    """The states of the handlers of one cause (or of one parent's sub-handlers), by handler id."""

    states: Mapping[str, HandlerState] = dataclasses.field(default_factory=dict)
    purpose: str | None = None
    dropped: frozenset[str] = frozenset()   # ids whose records are to be purged
    superseded: Counts | None = None        # set by with_purpose() if states of another purpose existed
    superseded_purpose: str | None = None   # ... and the purpose they had (for "Creation is superseded by ...")

    # -- reading

    @classmethod
    def from_records(cls, records: Mapping[str, Record]) -> 'State':
        return cls(states={key: HandlerState.from_record(record) for key, record in records.items()})

    def __getitem__(self, key: str) -> HandlerState:
        return self.states[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.states)

    def __len__(self) -> int:
        return len(self.states)

    # -- deciding

    def with_purpose(self, purpose: str | None, handlers: Iterable[HandlerLike], *, now: datetime.datetime) -> 'State':
        ids = [h.id for h in handlers]
        foreign = [s for s in self.states.values() if s.purpose is not None and purpose is not None
                   and s.purpose != purpose]
        states: dict[str, HandlerState] = {}
        dropped = set(self.dropped)
        for key, state in self.states.items():
            if key not in ids:
                dropped.add(key)
                dropped.update(state.subrefs)
            elif state.purpose is not None and purpose is not None and state.purpose != purpose:
                states[key] = state.with_purpose(purpose, now=now)
            else:
                states[key] = state
        return values.replace(self, states=states, purpose=purpose, dropped=frozenset(dropped - set(states)),
                                   superseded=Counts.of(foreign) if foreign else None,
                                   superseded_purpose=foreign[0].purpose if foreign else None)

    def with_handlers(self, handlers: Iterable[HandlerLike], *, now: datetime.datetime) -> 'State':
        states = dict(self.states)
        for handler in handlers:
            if handler.id not in states:
                states[handler.id] = HandlerState.from_scratch(now=now, purpose=self.purpose)
        return values.replace(self, states=states, dropped=self.dropped - set(states))

    def due(self, handlers: Iterable[H], *, now: datetime.datetime) -> list[H]:
        """The handlers to consider in this cycle, in their order: unfinished and not delayed into the future."""
        return [h for h in handlers if h.id not in self.states or self.states[h.id].is_due(now)]

    def select(self, handlers: Iterable[H], *, lifecycle: 'Lifecycle', now: datetime.datetime) -> list[H]:
        """The handlers to attempt now: the due ones, as picked by the lifecycle."""
        due = self.due(handlers, now=now)
        return list(lifecycle(due, state=self)) if due else []

    def precheck(self, handler: HandlerLike, *, now: datetime.datetime) -> Outcome | None:
        """A final failure if the handler may not be attempted any more; None if it may."""
        state = self.states.get(handler.id) or HandlerState.from_scratch(now=now, purpose=self.purpose)
        if handler.retries is not None and state.retries >= handler.retries:
            return Outcome(kind=OutcomeKind.FAILURE, exception=errors.HandlerRetriesError(_retries_message(handler)))
        if handler.timeout is not None and state.runtime(now).total_seconds() >= handler.timeout:
            return Outcome(kind=OutcomeKind.FAILURE, exception=errors.HandlerTimeoutError(_timeout_message(handler)))
        return None

    def remaining(self, handler: HandlerLike, *, now: datetime.datetime) -> float | None:
        """Seconds left before the handler's timeout (for cancelling async handlers); None if unlimited."""
        if handler.timeout is None:
            return None
        state = self.states.get(handler.id)
        runtime = state.runtime(now).total_seconds() if state is not None else 0.0
        return max(0.0, handler.timeout - runtime)

    def with_outcomes(
            self,
            outcomes: Mapping[str, Outcome],
            handlers: Iterable[HandlerLike],
            *,
            now: datetime.datetime,
            default_backoff: float | None = 60,
    ) -> 'State':
        by_id = {h.id: h for h in handlers}
        states = dict(self.states)
        for key, outcome in outcomes.items():
            state = states.get(key) or HandlerState.from_scratch(now=now, purpose=self.purpose)
            states[key] = state.with_outcome(outcome, handler=by_id[key], now=now, default_backoff=default_backoff)
        return values.replace(self, states=states)

    # -- summarising

    @property
    def done(self) -> bool:
        return all(state.finished for state in self.states.values())

    @property
    def counts(self) -> Counts:
        return Counts.of(self.states.values())

    @property
    def subrefs(self) -> set[str]:
        return {ref for state in self.states.values() for ref in state.subrefs}

    def delay(self, *, now: datetime.datetime) -> float | None:
        """Seconds until the next unfinished handler is due (0 = now); None if all are finished."""
        delays = [max(0.0, (s.delayed - now).total_seconds()) if s.delayed is not None else 0.0
                  for s in self.states.values() if not s.finished]
        return min(delays) if delays else None

    # -- persisting

    def store(self, *, body: Mapping[str, Any], patch: MutableMapping[str, Any], storage: StorageLike) -> None:
        """Store the changed records, then purge the dropped ones."""
        changed = [(key, state) for key, state in self.states.items() if state.changed]
        for key, state in changed:
            storage.store(key=key, record=state.as_record(), body=body, patch=patch)
        if changed:
            storage.flush()
        if self.dropped:
            for key in sorted(self.dropped):
                storage.purge(key=key, body=body, patch=patch)
            storage.flush()



# Lifecycles: which of the due handlers to attempt in this cycle. Users may write their own:
# `fn(handlers, *, state, **kwargs) -> handlers`, where `state[handler.id].retries` is available.

#: A lifecycle: `fn(handlers, *, state, **kwargs) -> handlers`, the due change handlers to run in this cycle.
Lifecycle = Callable[..., Sequence[Any]]


def all_at_once(handlers: Sequence[H], **_: Any) -> list[H]:
    """All of them at once."""
    return list(handlers)


def one_by_one(handlers: Sequence[H], **_: Any) -> list[H]:
    """The first pending one, in the order of registration."""
    return list(handlers[:1])


def randomized(handlers: Sequence[H], **_: Any) -> list[H]:
    """One random handler."""
    import random  # only these two lifecycles need it
    return [random.choice(handlers)] if handlers else []


def shuffled(handlers: Sequence[H], **_: Any) -> list[H]:
    """All of them in a random order."""
    import random
    return random.sample(list(handlers), len(handlers))


def asap(handlers: Sequence[H], *, state: Mapping[str, HandlerState] | None = None, **_: Any) -> list[H]:
    """The default: one handler per cycle, the one with the fewest retries, ties by registration order."""
    if not handlers:
        return []
    states = state or {}

    def retries(handler: H) -> int:
        return states[handler.id].retries if handler.id in states else 0

    return [min(handlers, key=retries)]


LIFECYCLES: Collection[Lifecycle] = (all_at_once, one_by_one, randomized, shuffled, asap)

_default_lifecycle: Lifecycle = asap   # process-wide, as upstream's `kopf.set_default_lifecycle()`


def get_default_lifecycle() -> Lifecycle:
    """The lifecycle used when `kopf.run(lifecycle=...)` is not given (`asap` unless set otherwise)."""
    return _default_lifecycle


def set_default_lifecycle(lifecycle: Lifecycle | None) -> None:
    """Set the lifecycle used when `kopf.run(lifecycle=...)` is not given (None: back to `asap`)."""
    global _default_lifecycle
    _default_lifecycle = lifecycle if lifecycle is not None else asap
