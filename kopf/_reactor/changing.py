"""Change handlers of one cause in one cycle: decide → invoke → settle, with sub-handlers (SPEC §5.2, §5.12).

- The states of the cause's handlers come from the progress storage; the lifecycle picks the due
  ones; each is pre-checked (retries, timeout), invoked, and its outcome merged into the state.
- Results of successful handlers go into `status.<handler id>` (mappings merged, others replace).
- Sub-handlers (`@kopf.subhandler`, `kopf.register`, `kopf.execute`) run through the same state
  machine, their records stored under `parent/child` ids; while any is unfinished, the parent is
  retried (`HandlerChildrenRetry`) and `kopf.execute()` does not return.
- When the cause is done: everything of it is purged (incl. sub-handlers at any depth) and the
  caller stores the diff-base; else the changed records are stored and a wake-up is requested.
"""
import datetime
import functools
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from kopf._model import causes, errors, handlers, progress, registries
from kopf._model.bodies import Body
from kopf._model.kwargs import ChangingCause, handler_kwargs
from kopf._model.outcomes import Outcome, OutcomeKind
from kopf._reactor import contexts, invoking
from kopf._storage import progress as progress_storages


def now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def make_cause(cycle: contexts.Cycle, change: causes.Change) -> ChangingCause:
    return ChangingCause(
        logger=cycle.logger, memo=cycle.memory.memo, indices=cycle.resource.operator.indices,
        resource=cycle.resource.resource, body=Body(cycle.body), patch=cycle.patch,
        reason=change.reason, initial=change.initial, diff=change.diff, old=change.old, new=change.new,
    )


def known_ids(cycle: contexts.Cycle) -> list[str]:
    """The ids of all top-level change handlers of the resource (for purging other causes' records)."""
    return cycle.resource.registry.get_changing_ids(cycle.resource.resource)


async def handle_cause(cycle: contexts.Cycle, cause: ChangingCause) -> bool:
    """Run this cycle's handlers of the cause; True if the cause is fully handled now."""
    found = list(cycle.resource.registry.iter_changing_handlers(cause))
    title = causes.TITLES.get(cause.reason, str(cause.reason).capitalize())
    state = read_state(cycle, known_ids(cycle))
    state = state.with_purpose(cause.reason, found, now=now()).with_handlers(found, now=now())
    if state.superseded is not None:
        old_title = causes.TITLES.get(state.superseded_purpose or '', str(state.superseded_purpose))
        c = state.superseded
        cycle.logger.info(f'{old_title} is superseded by {title.lower()}: {c.success} succeeded; '
                          f'{c.failure} failed; {c.running} left to the moment.')
    if found and cycle.logger.isEnabledFor(logging.DEBUG):  # the body's repr is costly: only if logged
        cycle.logger.debug(f'{title} is in progress: {dict(cycle.body)!r}')
        if cause.diff:
            cycle.logger.debug(f'{title} diff: {list(cause.diff)!r}')
    state = await run_handlers(cycle, cause, state, found, cycle.resource.operator.lifecycle)
    if not state.done:
        state.store(body=cycle.body, patch=cycle.patch, storage=cycle.storage)
        cycle.wake_up_in(state.delay(now=now()))
        return False
    if found:
        c = state.counts
        cycle.logger.info(f'{title} is processed: {c.success} succeeded; {c.failure} failed.')
    purge(cycle, state, found)
    return True


def read_state(cycle: contexts.Cycle, handler_ids: Sequence[str]) -> progress.State:
    """The stored states of these handlers (as `State.from_storage`, with one look-up for all of them)."""
    return progress.State.from_records(progress_storages.fetch_records(cycle.storage, cycle.body, handler_ids))


def purge_stale(cycle: contexts.Cycle) -> None:
    """Purge the records of a cause that is gone (the cycle has nothing to do), sub-handlers' included."""
    state = read_state(cycle, known_ids(cycle))
    if state:
        cycle.logger.debug(f'Purging the progress of a cause that is gone: {", ".join(sorted(state))}.')
        purge(cycle, state, ())


def purge(cycle: contexts.Cycle, state: progress.State, found: Sequence[handlers.ChangingHandler]) -> None:
    """Purge the cause's records: its states, dropped ids, its handlers, and sub-handlers at any depth."""
    keys = set(state) | set(state.dropped) | {h.id for h in found}
    pending = sorted(state.subrefs)
    while pending:
        key = pending.pop()
        if key not in keys:
            keys.add(key)
            record = cycle.storage.fetch(key=key, body=cycle.body)
            pending.extend((record or {}).get('subrefs') or ())
    for key in sorted(keys):
        cycle.storage.purge(key=key, body=cycle.body, patch=cycle.patch)
    cycle.storage.flush()


async def run_handlers(cycle: contexts.Cycle, cause: ChangingCause, state: progress.State,
                       found: Sequence[handlers.ChangingHandler], lifecycle: progress.Lifecycle) -> progress.State:
    """Attempt the handlers that the lifecycle picks among the due ones; merge their outcomes."""
    started = now()
    selected = state.select(found, lifecycle=lifecycle, now=started)
    outcomes: dict[str, Outcome] = {}
    for handler in selected:
        outcome = await attempt(cycle, cause, state, handler)
        outcomes[handler.id] = outcome
        if outcome.kind is OutcomeKind.SUCCESS and outcome.result is not None:
            deliver_result(cycle, handler.id, outcome.result)
    default_backoff = cycle.resource.settings.execution.default_backoff
    merged = state.with_outcomes(outcomes, found, now=now(), default_backoff=default_backoff)
    for handler in selected:
        log_outcome(cycle, handler, outcomes[handler.id], merged[handler.id])
    return merged


def log_outcome(cycle: contexts.Cycle, handler: handlers.ChangingHandler,
                outcome: Outcome, judged: progress.HandlerState) -> None:
    """Log an attempt once the state machine has judged it: a retry that ran out of retries or time is final."""
    if outcome.kind is OutcomeKind.RETRY and judged.failure:
        invoking.log_outcome(cycle.logger, handler, Outcome(kind=OutcomeKind.FAILURE, exception=outcome.exception))
        cycle.logger.error(judged.message or f'{handler} has given up.', extra={'kopf_handler_id': handler.id})
    else:
        invoking.log_outcome(cycle.logger, handler, outcome)


def deliver_result(cycle: contexts.Cycle, handler_id: str, result: Any) -> None:
    """A mapping is merged into `status.<id>`; anything else replaces it (SPEC §5.9)."""
    status = cycle.patch.setdefault('status', {})
    if isinstance(result, Mapping):
        current = status.get(handler_id)
        status[handler_id] = {**(current if isinstance(current, Mapping) else {}), **result}
    else:
        status[handler_id] = result


async def attempt(cycle: contexts.Cycle, cause: ChangingCause, state: progress.State,
                  handler: handlers.ChangingHandler) -> Outcome:
    """One attempt of one handler (pre-checked), then its implicit sub-handlers if it succeeded."""
    moment = now()
    refused = state.precheck(handler, now=moment)
    if refused is not None:
        return refused
    record = state.get(handler.id) or progress.HandlerState.from_scratch(now=moment, purpose=cause.reason)
    runner = functools.partial(run_children, cycle)
    sub = registries.SubhandlingContext(parent=handler, cause=cause, runner=runner)
    kwargs = handler_kwargs(handler, cause, retry=record.retries, started=record.started,
                            runtime=record.runtime(moment))
    settings = cycle.resource.settings
    outcome = await invoking.invoke_handler(
        handler, kwargs=kwargs, executor=settings.execution.executor,
        remaining=state.remaining(handler, now=moment), default_backoff=settings.execution.default_backoff,
        subhandling=sub)
    if outcome.kind is OutcomeKind.SUCCESS and sub.registry.handlers and not sub.executed:
        try:
            await run_children(cycle, sub)
        except errors.HandlerChildrenRetry as exc:
            outcome = Outcome(kind=OutcomeKind.RETRY, exception=exc, delay=exc.delay, subrefs=outcome.subrefs)
    return outcome


async def run_children(cycle: contexts.Cycle, sub: registries.SubhandlingContext) -> None:
    """Run the sub-handlers through the state machine; `HandlerChildrenRetry` while any is unfinished."""
    cause = sub.cause
    children = list(sub.registry.iter_subhandlers(cause))
    sub.executed = True
    moment = now()
    state = read_state(cycle, [c.id for c in children])
    state = state.with_purpose(cause.reason, children, now=moment).with_handlers(children, now=moment)
    lifecycle = sub.lifecycle or cycle.resource.operator.lifecycle
    state = await run_handlers(cycle, cause, state, children, lifecycle)
    state.store(body=cycle.body, patch=cycle.patch, storage=cycle.storage)
    if not state.done:
        delay = state.delay(now=now())
        raise errors.HandlerChildrenRetry(f'Sub-handlers of {sub.parent} are not finished yet.', delay=delay)
