"""Invoking handlers: async ones in the loop, sync ones in an executor; what they did → an `Outcome`.

Invocation decides nothing over time: no retry counting, no "retries exhausted", no timeout
arithmetic across attempts — that is the progress state machine's (kopf._core.progress).
It only enforces the time budget it is given (`remaining`, docs/design/decisions.md #6): an async
handler still running when the budget runs out is cancelled and the outcome is TIMEOUT; a sync
handler cannot be interrupted, so it runs to its end and is judged by what it returned or raised.

One attempt's outcome is:
    returned                                    → SUCCESS (with the result)
    returned what cannot be stored as JSON      → FAILURE, if the result goes to `status.<id>`
                                                  (decisions.md #11; whatever the errors mode)
    TemporaryError(delay=...)                   → RETRY after its delay (None: at once)
    PermanentError & subclasses                 → FAILURE
    another exception, errors=TEMPORARY         → RETRY after the handler's backoff (else the default)
    another exception, errors=PERMANENT         → FAILURE
    another exception, errors=IGNORED           → SUCCESS, with no result (the exception kept for the log)
    the time budget ran out (async only)        → TIMEOUT (with a HandlerTimeoutError)
    asyncio.CancelledError                      → propagates
"""
import asyncio
import concurrent.futures
import contextlib
import contextvars
import dataclasses
import functools
import inspect
import logging
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kopf._core import errors, handlers, outcomes, registries, settings, typedkwargs
from kopf._core import handlerids as ids
from kopf._core.outcomes import Outcome, OutcomeKind

DEFAULT_BACKOFF = 60.0  # settings.execution.default_backoff, if the caller does not pass its own


class Slot:
    """A place in a bounded pool of cycles (kopf._engine.queueing), freed while an async handler runs."""

    def release(self) -> bool:
        """Free the place; False if it was not held (e.g. a sub-handler inside an async handler)."""
        return False

    def reacquire(self) -> None:
        pass


slot: contextvars.ContextVar[Slot | None] = contextvars.ContextVar('kopf_cycle_slot', default=None)

_threads_busy = 0  # sync functions of this process running in executors (they cannot be interrupted)


def threads_busy() -> int:
    """How many sync handlers (or daemons, activities) of this process are running now: a lost Lease asks."""
    return _threads_busy


def _thread_done(_: Any) -> None:
    global _threads_busy
    _threads_busy -= 1


def is_async(fn: Callable[..., Any]) -> bool:
    """Whether calling `fn` gives a coroutine (async functions, their partials, async __call__)."""
    try:
        return _is_async_cached(fn)
    except TypeError:  # an unhashable callable
        return _is_async(fn)


def _is_async(fn: Callable[..., Any]) -> bool:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)


_is_async_cached = functools.lru_cache(maxsize=1024)(_is_async)  # asked for every attempt of every handler


async def invoke(
        fn: Callable[..., Any],
        *,
        kwargs: Mapping[str, Any],
        executor: concurrent.futures.Executor | None = None,
) -> Any:
    """Call a function with kwargs: awaited in the loop if async, else in the executor with contextvars copied.

    If cancelled while a sync function runs in a thread, wait for the thread to return, then re-raise.
    """
    if is_async(fn):
        held = slot.get()
        released = held is not None and held.release()  # a long await must not hold back other objects
        try:
            return await fn(**kwargs)
        finally:
            if released and held is not None:
                held.reacquire()
    context = contextvars.copy_context()
    loop = asyncio.get_running_loop()
    job = functools.partial(context.run, fn, **kwargs)
    global _threads_busy
    _threads_busy += 1
    if executor is not None:  # the usual way (settings.execution.executor): one future, no shield
        future = _submit(loop, executor, job)
        try:
            return await future
        except asyncio.CancelledError:  # delivered only once the thread has returned (see `_Pending`)
            if future.done() and not future.cancelled():
                future.exception()  # retrieved, so that it is not reported as never retrieved
            raise
    try:
        future = loop.run_in_executor(None, job)
    except BaseException:  # e.g. the default executor is shut down: the job never runs
        _thread_done(None)
        raise
    future.add_done_callback(_thread_done)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):  # the thread cannot be interrupted: let it finish
            await asyncio.wait([future])
        if future.done() and not future.cancelled():
            future.exception()  # retrieved, so that it is not reported as never retrieved
        raise


class _Pending(asyncio.Future[Any]):
    """The result of a sync function running in a thread: it cannot be cancelled (the thread cannot be).

    A task cancelled while it awaits one gets its `CancelledError` when the function has returned (asyncio's
    tasks do so when their awaited future refuses to be cancelled): what `asyncio.shield()` and a wait for the
    thread gave, without the second future, its callbacks and the extra turn of the loop per call.
    """

    def cancel(self, msg: Any = None) -> bool:
        return False


class _Deliveries:
    """The results of executor jobs, handed to their loop in batches: one wake-up for all done meanwhile.

    `loop.run_in_executor()` wakes the loop once per job (and chains two futures); with many sync
    handlers finishing at once, the wake-ups and the thread switches they cause are most of their cost.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: list[tuple[asyncio.Future[Any], concurrent.futures.Future[Any]]] = []
        self.scheduled = False

    def completed(self, future: 'asyncio.Future[Any]', done: 'concurrent.futures.Future[Any]') -> None:
        """In the executor's thread (or any): queue the result; wake the loop unless it is woken already."""
        with self.lock:
            self.items.append((future, done))
            if self.scheduled:
                return
            self.scheduled = True
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody awaits the result any more
            future.get_loop().call_soon_threadsafe(self.deliver)

    def deliver(self) -> None:
        """In the loop: set the results of all the jobs done so far."""
        with self.lock:
            items, self.items, self.scheduled = self.items, [], False
        global _threads_busy
        _threads_busy -= len(items)
        for future, done in items:
            if future.done():  # e.g. cancelled
                continue
            if done.cancelled():  # e.g. the executor shut down with cancel_futures=True: the job never ran
                asyncio.Future.cancel(future)  # past `_Pending.cancel()`, which refuses (else it hangs for good)
                continue
            exc = done.exception()
            if exc is None:
                future.set_result(done.result())
            else:
                try:
                    future.set_exception(exc)
                except TypeError:  # StopIteration cannot be set on a future: as in a coroutine (PEP 479)
                    future.set_exception(RuntimeError(f'A sync handler raised {exc!r}'))


_deliveries: 'weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Deliveries]' = weakref.WeakKeyDictionary()


def _submit(loop: asyncio.AbstractEventLoop, executor: concurrent.futures.Executor,
            job: Callable[[], Any]) -> 'asyncio.Future[Any]':
    """`loop.run_in_executor(executor, job)`, with the result handed over in batches (see `_Deliveries`).

    The caller has counted the job in `_threads_busy`; its delivery uncounts it."""
    deliveries = _deliveries.get(loop)
    if deliveries is None:
        deliveries = _deliveries[loop] = _Deliveries()
    future = _Pending(loop=loop)
    try:
        done = executor.submit(job)
    except BaseException:  # e.g. a shut-down executor: the job never runs
        _thread_done(None)
        raise
    done.add_done_callback(functools.partial(deliveries.completed, future))
    return future


async def invoke_handler(
        handler: handlers.BaseHandler,
        *,
        kwargs: Mapping[str, Any],
        execution: settings.ExecutionSettings | None = None,
        executor: concurrent.futures.Executor | None = None,
        remaining: float | None = None,
        subhandling: registries.SubhandlingContext | None = None,
        logger: logging.Logger | logging.LoggerAdapter[Any] | None = None,
        log_outcome: bool = True,
) -> Outcome:
    """One attempt of one handler (of any kind), turned into an outcome: the one way the reactor calls handlers.

    `kwargs`: as `kopf._core.kwargs.handler_kwargs()` builds them for the attempt.
    `execution`: `settings.execution`; its executor runs sync handlers, its `default_backoff` delays
    the retries of errors that have none of their own (None: the loop's default executor, 60 s).
    `executor`: instead of the execution's (a thread of its own per sync daemon).
    `remaining`: the seconds left of the handler's `timeout=` (None: unlimited; ≤0: not invoked).
    `subhandling`: for change handlers, where `kopf.subhandler`/`kopf.register`/`kopf.execute` put
    the sub-handlers; their ids are reported in `Outcome.subrefs`.
    `logger`: if given, the attempt is logged as upstream does: "Handler 'x' is invoked." before it,
    and (unless `log_outcome` is false: the caller logs it once a state machine has judged it) its
    outcome after it, e.g. "Handler 'x' succeeded." (`kopf._core.outcomes.describe`).

    While it runs, `registries.execution` holds its one execution context (the handler, the default
    owner: its `body` kwarg if any, the sub-handling context); sync handlers see it in their thread too.
    """
    if execution is not None:
        default_backoff = execution.default_backoff
        if executor is None:
            executor = execution.executor
    else:
        default_backoff = DEFAULT_BACKOFF
    if remaining is not None and remaining <= 0:
        outcome = _timed_out(handler)
    else:
        if logger is not None and logger.isEnabledFor(logging.DEBUG):  # built only to be logged: per review too
            outcomes.invoked(handler).emit(logger)
        execution_context = registries.Execution(handler, _owner(kwargs), subhandling)
        outcome = await _attempt_in(execution_context, kwargs, executor, remaining, default_backoff, logger)
    if subhandling is not None and subhandling.registry.handlers:
        outcome = dataclasses.replace(outcome, subrefs=tuple(h.id for h in subhandling.registry.handlers),
                                      children=subhandling.settled)
    if logger is not None and log_outcome:
        outcomes.describe(handler, outcome).emit(logger)
    return outcome


def _owner(kwargs: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The default owner of `kopf.adopt()` & co. in the handler: its `body`; or (activities, with no object of
    their own) the owner set around the call (`owner_context()`)."""
    if 'body' in kwargs:
        body: Mapping[str, Any] = kwargs['body']
        return body
    outer = registries.execution.get()
    return outer.owner if outer is not None else None


async def _attempt_in(
        context: registries.Execution,
        kwargs: Mapping[str, Any],
        executor: concurrent.futures.Executor | None,
        remaining: float | None,
        default_backoff: float,
        logger: logging.Logger | logging.LoggerAdapter[Any] | None,
) -> Outcome:
    """The attempt with its execution context set (`registries.execution`: sync handlers see it in their thread)."""
    assert context.handler is not None
    token = registries.execution.set(context)
    try:
        return await _attempt(context.handler, kwargs, executor, remaining, default_backoff)
    except asyncio.CancelledError:
        if logger is not None:
            logger.warning(f'{context.handler} is cancelled. Will escalate.')
        raise
    finally:
        registries.execution.reset(token)


async def _attempt(
        handler: handlers.BaseHandler,
        kwargs: Mapping[str, Any],
        executor: concurrent.futures.Executor | None,
        remaining: float | None,
        default_backoff: float,
) -> Outcome:
    # Only async handlers can be cancelled at their deadline; no timeout scope for the others.
    deadline = asyncio.timeout(remaining) if remaining is not None and is_async(handler.fn) else None
    typed = typedkwargs.typed_params(handler.fn, getattr(handler, 'resource_class', None),
                                     getattr(handler, 'field', None))
    try:
        if typed:   # typed handlers (docs/models.md): a body that does not parse is a permanent error
            kwargs = typedkwargs.parsed(typed, kwargs)   # a ParseError: a PermanentError
        if deadline is None:
            result = await invoke(handler.fn, kwargs=kwargs, executor=executor)
        else:
            async with deadline:
                result = await invoke(handler.fn, kwargs=kwargs, executor=executor)
    except TimeoutError as exc:
        if deadline is not None and deadline.expired():
            return _timed_out(handler)
        return judge(handler, exc, default_backoff=default_backoff)
    except Exception as exc:
        return judge(handler, exc, default_backoff=default_backoff)
    outcome = Outcome(kind=OutcomeKind.SUCCESS, result=result)
    return outcomes.stored(outcome) if handler.stores_result else outcome


def _timed_out(handler: handlers.BaseHandler) -> Outcome:
    exc = errors.HandlerTimeoutError(f'{handler} has timed out after {handler.timeout} seconds.')
    return Outcome(kind=OutcomeKind.TIMEOUT, exception=exc)


def judge(handler: handlers.BaseHandler, exc: Exception, *, default_backoff: float = DEFAULT_BACKOFF) -> Outcome:
    """The outcome of an attempt that raised `exc`, per the error's class and the handler's errors mode."""
    if isinstance(exc, errors.TemporaryError):
        return Outcome(kind=OutcomeKind.RETRY, exception=exc, delay=exc.delay)
    if isinstance(exc, errors.PermanentError):
        return Outcome(kind=OutcomeKind.FAILURE, exception=exc)
    if handler.errors == errors.ErrorsMode.IGNORED:  # done, but the error is still logged
        return Outcome(kind=OutcomeKind.SUCCESS, result=None, exception=exc)
    if handler.errors == errors.ErrorsMode.PERMANENT:
        return Outcome(kind=OutcomeKind.FAILURE, exception=exc)
    delay = handler.backoff if handler.backoff is not None else default_backoff
    return Outcome(kind=OutcomeKind.RETRY, exception=exc, delay=delay)


async def execute(
        *,
        fns: Mapping[str, Callable[..., Any]] | Iterable[Callable[..., Any]] | None = None,
        handlers: Iterable[handlers.ChangingHandler] | None = None,
        registry: registries.OperatorRegistry | None = None,
        lifecycle: Any = None,
        cause: Any = None,  # accepted for compatibility; the current handler's cause is always used
) -> None:
    """Run sub-handlers of the current change handler now: `fns` (a dict of ids → functions, or a
    list of functions), `handlers`, a `registry`, or (with none of them) those registered so far
    by `@kopf.subhandler`/`kopf.register`.

    The code after `await kopf.execute()` runs once all sub-handlers have succeeded or failed:
    until then, the reactor re-invokes the parent on later cycles (so it must be idempotent).
    """
    context = registries.subhandling_context('kopf.execute', RuntimeError)
    if sum(arg is not None for arg in (fns, handlers, registry)) > 1:
        raise TypeError('kopf.execute() accepts only one of fns=, handlers=, registry=.')
    parent = context.parent
    if fns is not None:
        items = fns.items() if isinstance(fns, Mapping) else ((None, fn) for fn in fns)
        for sub_id, fn in items:
            context.registry.register(_sub_handler(parent, fn, sub_id))
    for handler in handlers or ():
        context.registry.register(handler)
    for handler in registry.changing if registry is not None else ():
        context.registry.register(handler)
    context.lifecycle = lifecycle
    context.executed = True
    if context.runner is not None:  # the reactor's: progress-tracked, see kopf._engine.changing
        await context.runner(context)


def _sub_handler(parent: handlers.ChangingHandler, fn: Callable[..., Any],
                                sub_id: str | None) -> handlers.ChangingHandler:
    """A sub-handler of `parent` for `kopf.execute(fns=...)`, with the default options."""
    return handlers.ChangingHandler(
        fn=fn, id=ids.form_id(fn, id=sub_id, parent_id=parent.id), selector=None,
        reason=None, field_needs_change=parent.field_needs_change,
    )
