"""Operator-level activities: startup (before any watching), cleanup (after everything), login.

All handlers of an activity run all-at-once, retried per their options (in memory: activities have
no object to persist progress on) until every one has finished. A final failure of a startup
handler stops the operator with `ActivityError`; cleanup failures are only logged.
"""
import asyncio
import datetime
import logging
from collections.abc import Iterable
from typing import Any

from kopf._api import credentials, loginning
from kopf._core import handlers, progress
from kopf._core.causes import Activity
from kopf._core.kwargs import ActivityCause, handler_kwargs
from kopf._core.outcomes import Outcome, OutcomeKind, describe
from kopf._engine import contexts, invoking


class ActivityError(Exception):
    """An activity's handler failed permanently (or exhausted its retries/timeout)."""


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


async def run_activity(ctx: contexts.OperatorContext, activity: Activity) -> dict[str, Any]:
    """Run the activity's handlers until all are finished; their results by handler id."""
    found = list(ctx.registry.iter_activity_handlers(activity))
    logger = logging.getLogger(f'kopf.activities.{activity}')
    cause = ActivityCause(logger=logger, memo=ctx.memo, indices=ctx.indices, activity=activity,
                          settings=ctx.settings)
    state = progress.State(purpose=str(activity)).with_handlers(found, now=_now())
    results: dict[str, Any] = {}
    while not state.done:
        now = _now()
        for handler in state.due(found, now=now):
            outcome = await _attempt(ctx, handler, cause, state, now)
            if outcome.kind is OutcomeKind.SUCCESS:
                results[handler.id] = outcome.result
            state = state.with_outcomes({handler.id: outcome}, found, now=_now(),
                                        default_backoff=ctx.settings.execution.default_backoff)
            describe(handler, outcome, state[handler.id]).emit(logger)
        delay = state.delay(now=_now())
        if delay:
            await asyncio.sleep(delay)
    failed = [key for key, s in state.items() if s.failure]
    if failed:
        raise ActivityError(f'{str(activity).capitalize()} activity has failed: '
                            + '; '.join(f'{key}: {state[key].message}' for key in failed))
    return results


async def _attempt(ctx: contexts.OperatorContext, handler: handlers.ActivityHandler, cause: ActivityCause,
                   state: progress.State, now: datetime.datetime) -> Outcome:
    refused = state.precheck(handler, now=now)
    if refused is not None:
        return refused
    kwargs = handler_kwargs(handler, cause, state=state.get(handler.id), now=now)
    return await invoking.invoke_handler(handler, kwargs=kwargs, execution=ctx.settings.execution,
                                         remaining=state.remaining(handler, now=now),
                                         logger=cause.logger, log_outcome=False)


def make_login(ctx: contexts.OperatorContext) -> credentials.LoginFn:
    """The vault's login: the `@kopf.on.login()` handlers if any, else the built-in fallbacks.

    Logged as upstream 1.45.2 logs it (run side by side): "Initial authentication has been initiated."
    and "... has finished." (INFO) around the first login's lines (the handlers', or the built-in
    source's, e.g. "Activity 'login_with_kubeconfig' succeeded."), "Re-authentication has been
    initiated." and "... has finished." around every later one (after a 401).
    """
    logged = False
    defaults = not any(True for _ in ctx.registry.iter_activity_handlers(Activity.AUTHENTICATION))

    async def login() -> list[Any]:
        nonlocal logged
        initial, logged = not logged, True
        which = 'Initial authentication' if initial else 'Re-authentication'
        _LOGIN_LOGGER.info(f'{which} has been initiated.')
        if defaults:
            found = await loginning.login_by_defaults()
        else:
            found = list(_flatten((await run_activity(ctx, Activity.AUTHENTICATION)).values()))
        _LOGIN_LOGGER.info(f'{which} has finished.')
        return found
    return login


_LOGIN_LOGGER = logging.getLogger('kopf.activities.authentication')


def _flatten(values: Iterable[Any]) -> Iterable[Any]:
    for value in values:
        if value is None:
            continue
        if isinstance(value, (credentials.ConnectionInfo, credentials.AiohttpSession)):
            yield value
        else:
            yield from _flatten(value)
