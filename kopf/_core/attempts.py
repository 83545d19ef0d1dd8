"""The handlers of one cause in one cycle, as values: which to attempt now, and what their attempts came to.

`plan_handlers()` turns their stored progress into a `Handling` (the states, and those due now, as the
lifecycle picks them); after the attempts, `merge_outcomes()` turns the outcomes into the new states, their
results into `status.<id>` of the cycle's patch, and their log lines. Sub-handlers (`kopf.subhandler`,
`kopf.register`, `kopf.execute`) go through the same steps inside their parent's attempt; what they came to
(`settle_children()`: a `Children` value) rides on the parent's outcome and is merged with it. Pure.
"""
import datetime
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Protocol

from kopf._core import patches, progress, values
from kopf._core.handlers import ChangingHandler
from kopf._core.outcomes import LogEntry, Outcome, OutcomeKind, describe
from kopf._shared import fields


class ProgressStorage(progress.StorageLike, Protocol):
    """What deciding needs of a progress storage (`kopf.ProgressStorage` has it)."""

    def fetch_all(self, *, keys: Collection[str], body: Mapping[str, Any]) -> Mapping[str, Any]: ...
    def clear_fresh(self, *, essence: dict[str, Any]) -> dict[str, Any]: ...
    def writes_only_own_fields(self) -> bool: ...
    def cleared_prefixes(self) -> tuple[str, ...] | None: ...


@values.frozen
class Handling:
    """The handlers of one cause (or of one parent's sub-handlers) in this cycle."""

    handlers: tuple[ChangingHandler, ...]    # all that match the cause, in their order
    state: progress.State                    # their states (purposed; fresh ones for the new)
    selected: tuple[ChangingHandler, ...]    # to attempt now: due, as the lifecycle picks them
    refused: Mapping[str, Outcome]           # selected, but out of retries or time: not invoked
    default_backoff: float = 60.0


def plan_handlers(records: Mapping[str, progress.Record], handlers: Sequence[ChangingHandler], *,
                  purpose: str | None, lifecycle: progress.Lifecycle, now: datetime.datetime,
                  default_backoff: float = 60.0) -> Handling:
    """The handlers' states from their records, and which of them to attempt now (pre-checked)."""
    if not records and not handlers:  # the usual resumption with no resume handler: what the steps below give
        return Handling(handlers=(), state=progress.State(states={}, purpose=purpose), selected=(), refused={},
                        default_backoff=default_backoff)
    if records:
        state = progress.State.from_records(records)
        state = state.with_purpose(purpose, handlers, now=now).with_handlers(handlers, now=now)
    else:  # nothing recorded (e.g. a resumption, a creation): what the two steps above give, made at once
        state = progress.State(states={h.id: progress.HandlerState(started=now, purpose=purpose) for h in handlers},
                               purpose=purpose)
    selected = tuple(state.select(handlers, lifecycle=lifecycle, now=now))
    refused: dict[str, Outcome] = {h.id: o for h in selected if (o := state.precheck(h, now=now)) is not None}
    return Handling(handlers=tuple(handlers), state=state, selected=selected, refused=refused,
                    default_backoff=default_backoff)


@values.frozen
class Children:
    """What one attempt's sub-handlers came to (`kopf.execute`, `kopf.subhandler`), settled with their parent:
    their states, results and log lines go into the cycle's patch and logs when the cycle is settled."""

    handling: Handling                     # as planned for this attempt (`plan_handlers`)
    state: progress.State                  # after their outcomes
    outcomes: Mapping[str, Outcome]        # of those attempted (their results; their own sub-handlers)
    logs: tuple[LogEntry, ...] = ()
    delay: float | None = None             # until the next attempt of those unfinished (None: all are done)

    @property
    def done(self) -> bool:
        return self.state.done


def settle_children(handling: Handling, outcomes: Mapping[str, Outcome], *, now: datetime.datetime) -> Children:
    """What the sub-handlers' attempts came to, as a value: `kopf.execute()` returns or raises by it."""
    attempted: dict[str, Outcome] = {h.id: outcomes[h.id] for h in handling.selected if h.id in outcomes}
    state = handling.state.with_outcomes(attempted, handling.handlers, now=now,
                                         default_backoff=handling.default_backoff)
    logs = tuple(describe(h, attempted[h.id], state[h.id]) for h in handling.selected if h.id in attempted)
    return Children(handling=handling, state=state, outcomes=attempted, logs=logs,
                    delay=None if state.done else state.delay(now=now))


def merge_outcomes(handling: Handling, outcomes: Mapping[str, Outcome], *, patch: patches.Patch,
                   now: datetime.datetime, body: Mapping[str, Any],
                   storage: ProgressStorage) -> tuple[progress.State, list[LogEntry]]:
    """The states after the attempts; their results (and their sub-handlers') into the patch; their log lines."""
    if not handling.selected:  # nothing attempted: the states as planned (what the steps below give)
        return handling.state, []
    logs: list[LogEntry] = []
    for handler in handling.selected:
        outcome = outcomes.get(handler.id)
        if outcome is not None and outcome.children is not None:
            logs.extend(_apply_children(outcome.children, patch=patch, body=body, storage=storage))
        deliver(patch, handler.id, outcome)
    attempted: dict[str, Outcome] = {h.id: outcomes[h.id] for h in handling.selected if h.id in outcomes}
    merged = handling.state.with_outcomes(attempted, handling.handlers, now=now,
                                          default_backoff=handling.default_backoff)
    for handler in handling.selected:
        if handler.id in attempted:
            logs.append(describe(handler, attempted[handler.id], merged[handler.id]))
    return merged, logs


def _apply_children(children: Children, *, patch: patches.Patch, body: Mapping[str, Any],
                    storage: ProgressStorage) -> list[LogEntry]:
    """Sub-handlers' results and states into the patch (theirs first, at any depth); their log lines."""
    logs: list[LogEntry] = []
    for handler in children.handling.selected:
        outcome = children.outcomes.get(handler.id)
        if outcome is not None and outcome.children is not None:
            logs.extend(_apply_children(outcome.children, patch=patch, body=body, storage=storage))
        deliver(patch, handler.id, outcome)
    children.state.store(body=body, patch=patch, storage=storage)
    logs.extend(children.logs)
    return logs


def deliver_result(patch: patches.Patch, handler_id: str, result: Any) -> None:
    """A mapping is merged into `status.<id>`; anything else replaces it."""
    status = patch.setdefault('status', {})
    if fields.is_mapping(result):
        current = status.get(handler_id)
        status[handler_id] = {**(current if fields.is_mapping(current) else {}), **result}
    else:
        status[handler_id] = result


def deliver(patch: patches.Patch, handler_id: str, outcome: Outcome | None) -> None:
    if outcome is not None and outcome.kind is OutcomeKind.SUCCESS and outcome.result is not None:
        deliver_result(patch, handler_id, outcome.result)


def purge(state: progress.State, handlers: Iterable[ChangingHandler], *, body: Mapping[str, Any],
          patch: patches.Patch, storage: ProgressStorage) -> None:
    """Purge the cause's records: its states, dropped ids, its handlers, and sub-handlers at any depth."""
    if not state and not state.dropped and not handlers:  # nothing was recorded: only the batch's end
        storage.flush()
        return
    keys = set(state) | set(state.dropped) | {h.id for h in handlers}
    pending = sorted(state.subrefs)
    while pending:
        key = pending.pop()
        if key not in keys:
            keys.add(key)
            record = storage.fetch(key=key, body=body)
            pending.extend((record or {}).get('subrefs') or ())
    for key in sorted(keys):
        storage.purge(key=key, body=body, patch=patch)
    storage.flush()


# -- re-checking the server's answer ------------------------------------------------------------------
