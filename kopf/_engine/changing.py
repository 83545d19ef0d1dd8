"""Invoking a plan's handlers: the `on.event` ones, the optional delete ones, the change ones with sub-handlers.

What to invoke is decided already (`kopf._core.plans.decide`); this module only awaits the
handlers, one at a time, in the plan's order, and returns their outcomes for `settle()`:
- `on.event` handlers: each fresh event, errors ignored (IGNORED by default), logged at once.
- Optional delete handlers of an object deleted without our finalizer: once, best-effort.
- Change handlers due now, unless refused (out of retries or time). Their kwargs get the attempt's
  `retry`, `started` and `runtime`; async ones are cancelled when their `timeout=` runs out.
- Sub-handlers (`@kopf.subhandler`, `kopf.register`, `kopf.execute`) run inside their parent's
  attempt through the same plan → invoke → settle steps, as values: what they came to rides on the
  parent's outcome (`Outcome.children`) into the cycle's `settle()`, which writes their records and
  results and logs their lines; while any is unfinished, the parent is retried (`HandlerChildrenRetry`)
  and `kopf.execute()` does not return.
"""
import dataclasses
import datetime
import functools
import time

from kopf._core import attempts, errors, handlers, plans, progress, registries
from kopf._core.kwargs import ChangingCause, handler_kwargs
from kopf._core.outcomes import Outcome, OutcomeKind
from kopf._engine import contexts, invoking


def now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


async def invoke(rctx: contexts.ResourceContext, plan: plans.Plan) -> plans.Outcomes:
    """Await the plan's handlers; their outcomes by handler id."""
    watching: dict[str, Outcome] = {}
    if plan.watching_cause is not None or plan.unguarded:  # the settings are read only if needed
        execution = rctx.settings.execution
    if plan.watching_cause is not None:
        cause = plan.watching_cause
        for handler in plan.watching:
            kwargs = handler_kwargs(handler, cause, now=now())
            begun = time.perf_counter()
            watching[handler.id] = outcome = await invoking.invoke_handler(
                handler, kwargs=kwargs, execution=execution, logger=cause.logger)
            if rctx.operator.metrics.enabled:
                rctx.operator.metrics.handled(rctx.resource, handler.id, outcome.kind.value,
                                              time.perf_counter() - begun, retry=False)
    if plan.unguarded and plan.cause is not None:
        for deleter in plan.unguarded:
            kwargs = handler_kwargs(deleter, plan.cause, now=now())
            await invoking.invoke_handler(deleter, kwargs=kwargs, execution=execution, logger=plan.logger)
    changing: dict[str, Outcome] = {}
    if plan.handling is not None and plan.cause is not None:
        changing = await attempt_all(rctx, plan, plan.handling, plan.cause)
    return plans.Outcomes(watching=watching, changing=changing)


async def attempt_all(rctx: contexts.ResourceContext, plan: plans.Plan, handling: attempts.Handling,
                      cause: ChangingCause) -> dict[str, Outcome]:
    outcomes: dict[str, Outcome] = {}
    for handler in handling.selected:
        refused = handling.refused.get(handler.id)
        outcomes[handler.id] = refused if refused is not None else await attempt(rctx, plan, handling, cause, handler)
    return outcomes


async def attempt(rctx: contexts.ResourceContext, plan: plans.Plan, handling: attempts.Handling,
                  cause: ChangingCause, handler: handlers.ChangingHandler) -> Outcome:
    """One attempt of one handler, then its implicit sub-handlers if it succeeded."""
    moment = now()
    state = handling.state.get(handler.id) or progress.HandlerState.from_scratch(now=moment, purpose=cause.reason)
    sub = registries.SubhandlingContext(parent=handler, cause=cause, runner=functools.partial(run_children, rctx, plan))
    kwargs = handler_kwargs(handler, cause, state=state, now=moment)
    begun = time.perf_counter()
    outcome = await invoking.invoke_handler(
        handler, kwargs=kwargs, execution=rctx.settings.execution,
        remaining=handling.state.remaining(handler, now=moment),
        subhandling=sub, logger=plan.logger, log_outcome=False)  # logged once judged: attempts.merge_outcomes
    if outcome.kind is OutcomeKind.SUCCESS and sub.registry.handlers and not sub.executed:
        try:
            await run_children(rctx, plan, sub)
        except errors.HandlerChildrenRetry as exc:
            outcome = Outcome(kind=OutcomeKind.RETRY, exception=exc, delay=exc.delay, subrefs=outcome.subrefs)
        outcome = dataclasses.replace(outcome, children=sub.settled)
    if handling is plan.handling:  # top-level (sub-handler ids come from user data): its children's time included
        metrics = rctx.operator.metrics
        if metrics.enabled:  # off: not even the no-op's call
            metrics.handled(rctx.resource, handler.id, outcome.kind.value, time.perf_counter() - begun,
                            retry=state.retries > 0)
    return outcome


async def run_children(rctx: contexts.ResourceContext, plan: plans.Plan, sub: registries.SubhandlingContext) -> None:
    """Run the sub-handlers through the same steps as their parent's (plan → invoke → settle, as values):
    what they came to is kept for the parent's outcome; `HandlerChildrenRetry` while any is unfinished."""
    cause = sub.cause
    children = list(sub.registry.iter_subhandlers(cause))
    sub.executed = True
    records = plan.progress_storage.fetch_all(keys=[c.id for c in children], body=plan.body)
    handling = attempts.plan_handlers(records, children, purpose=cause.reason,
                                      lifecycle=sub.lifecycle or rctx.lifecycle, now=now(),
                                      default_backoff=rctx.default_backoff)
    outcomes = await attempt_all(rctx, plan, handling, cause)
    settled = sub.settled = attempts.settle_children(handling, outcomes, now=now())
    if not settled.done:
        raise errors.HandlerChildrenRetry(f'Sub-handlers of {sub.parent} are not finished yet.', delay=settled.delay)
