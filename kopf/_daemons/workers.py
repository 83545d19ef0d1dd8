"""One daemon or timer of one object (`Spawn`: `Daemon`, `Timer`): its attempts, its stop sequence, its due times.

Made and owned by the object's `spawning.Background` (its live body, logger, patches, and the
record it nudges on exit); `spawning`'s docstring tells the rules they follow. Each attempt is one
`invoking.invoke_handler` call with the attempt's kwargs (the live body, the memo, `stopped`), its
result delivered to `status.<id>`, its patch applied at once; the outcome is judged in memory
(`progress.HandlerState.with_outcome`): retries, backoffs, delays, failures.
"""
import asyncio
import concurrent.futures
import datetime
import threading
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kopf._core import attempts, handlers, outcomes, patches, progress
from kopf._core.kwargs import handler_kwargs
from kopf._core.outcomes import Outcome, OutcomeKind
from kopf._daemons import decisions, stoppers
from kopf._daemons.reasons import DaemonStoppingReason
from kopf._engine import changing, invoking, loggers

if TYPE_CHECKING:
    from kopf._daemons.spawning import Background


class _ThreadPerCall(concurrent.futures.Executor):
    """Runs each job in a new daemon thread: sync daemons never take the handlers' executor's threads."""

    def __init__(self, name: str) -> None:
        self.name = name

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> 'concurrent.futures.Future[Any]':
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # handed over to the awaiting task, as an executor does
                future.set_exception(exc)

        threading.Thread(target=run, name=self.name, daemon=True).start()
        return future


class Spawn:
    """One daemon or timer of one object (slots: tens of thousands of timers are kept in memory)."""

    __slots__ = ('_finished', '_state', 'background', 'call', 'changed_since', 'due', 'flag', 'gone', 'handler',
                 'is_async', 'stopping', 'task')

    def __init__(self, background: 'Background', handler: handlers.SpawningHandler) -> None:
        self.background = background
        self.handler = handler
        self.is_async = invoking.is_async(handler.fn)
        self.flag = stoppers.AsyncDaemonStopped() if self.is_async else stoppers.SyncDaemonStopped()
        self.stopping: asyncio.Event | None = None  # the framework's own waits (daemons only; made when needed)
        self._state: progress.HandlerState | datetime.datetime = changing.now()  # fresh since then
        self.gone = False
        self._finished = False

    @property
    def state(self) -> progress.HandlerState:
        """Its retries and when it started; kept only while retrying (else just the time it is fresh since).

        Not a state object per timer between its calls: those would all be long-lived objects for the
        garbage collector's full collections, whose pauses delay every timer due meanwhile.
        """
        state = self._state
        if isinstance(state, datetime.datetime):
            return progress.HandlerState.from_scratch(now=state, purpose=None)
        return state

    @state.setter
    def state(self, value: progress.HandlerState | datetime.datetime) -> None:
        self._state = value

    @property
    def scheduler(self) -> Any:
        return self.background.rctx.operator.scheduler

    @property
    def logger(self) -> loggers.ObjectLogger:
        return self.background.logger

    def begin(self) -> None:
        raise NotImplementedError

    def tasks(self) -> list['asyncio.Task[Any]']:
        return []

    def changed(self, at: float) -> None:
        pass

    def stop(self, reason: DaemonStoppingReason) -> None:
        raise NotImplementedError

    def cancel(self) -> None:
        for task in self.tasks():
            task.cancel()

    def _set_flag(self, reason: DaemonStoppingReason) -> bool:
        """Set the `stopped` flag; True if it is the first stop."""
        first = not self.flag
        self.flag.set(reason)
        if self.stopping is not None:
            self.stopping.set()
        return first

    def _exit(self, *, finished: bool) -> None:
        if not self.gone:
            self.gone = True
            self.scheduler.cancel(self)
            self.background.exited(self, finished=finished)

    async def _attempt(self) -> Outcome:
        """One call: kwargs with the live body; its result to `status.<id>`; its patch applied."""
        handler, background = self.handler, self.background
        patch = patches.Patch(body=background.latest.raw)
        moment = changing.now()
        state = self.state
        kwargs = handler_kwargs(handler, background.cause(patch), state=state, now=moment, stopped=self.flag)
        outcomes.invoked(handler).emit(self.logger)
        own = None if self.is_async or isinstance(handler, handlers.TimerHandler) else \
            _ThreadPerCall(f'kopf daemon {handler.id!r} of {background.logger.prefix}')
        begun = time.perf_counter()
        outcome = await invoking.invoke_handler(handler, kwargs=kwargs, execution=background.rctx.settings.execution,
                                                executor=own)
        metrics = background.rctx.operator.metrics
        if metrics.enabled:  # off: not even the no-op's call
            metrics.handled(background.rctx.resource, handler.id, outcome.kind.value, time.perf_counter() - begun,
                            retry=state.retries > 0)
        if outcome.kind is OutcomeKind.SUCCESS and outcome.result is not None:
            attempts.deliver_result(patch, handler.id, outcome.result)
        await background.apply(patch)
        return outcome

    def _judge(self, outcome: Outcome) -> progress.HandlerState:
        """The attempt merged into the in-memory state (retries, timeout, delays); logged as judged."""
        backoff = self.background.rctx.settings.execution.default_backoff
        judged = self.state.with_outcome(outcome, handler=self.handler, now=changing.now(), default_backoff=backoff)
        outcomes.describe(self.handler, outcome, judged).emit(self.logger)
        return judged


class Daemon(Spawn):
    """A daemon: one task per object, running the handler until it returns, fails for good, or is stopped."""

    __slots__ = ()
    handler: handlers.DaemonHandler

    def begin(self) -> None:
        name = f'kopf daemon {self.handler.id!r} of {self.logger.prefix}'
        self.task: asyncio.Task[None] = asyncio.create_task(self._run(), name=name)
        self.task.add_done_callback(self._done)

    def tasks(self) -> list['asyncio.Task[Any]']:
        return [] if self.task.done() else [self.task]

    async def _run(self) -> None:
        handler = self.handler
        finished = False
        try:
            delay = self.background.initial_delay(handler)
            if delay > 0 and await self._sleep(delay):
                return
            while not self.flag:
                outcome = await self._attempt()
                judged = self._judge(outcome)
                if judged.success or judged.failure:
                    finished = not self.flag  # a stop made it return: it runs again when it matches again
                    return
                self.state = judged
                delay = (judged.delayed - changing.now()).total_seconds() if judged.delayed is not None else 0.0
                if await self._sleep(delay):
                    return
        except asyncio.CancelledError:
            self.logger.warning(f'{handler} is cancelled. Will escalate.')
            if not self.flag:
                raise  # not by us: e.g. the loop is closing
        except Exception as exc:  # the framework's own failure: never a crash of the operator
            self.logger.exception(f'{handler} failed unexpectedly: {exc!r}')
        finally:
            self._finished = finished
            for entry in decisions.exit_logs(handler, None if finished else self.flag.reason):
                entry.emit(self.logger)

    async def _sleep(self, delay: float) -> bool:
        """Sleep unless stopped; True if stopped (before or during the sleep)."""
        if delay > 0 and not self.flag:
            if self.stopping is None:
                self.stopping = asyncio.Event()
            try:
                async with asyncio.timeout(delay):
                    await self.stopping.wait()
            except TimeoutError:
                pass
        return bool(self.flag)

    def _done(self, task: 'asyncio.Task[None]') -> None:
        self._exit(finished=self._finished)

    def stop(self, reason: DaemonStoppingReason) -> None:
        """The stop sequence: the flag; after `cancellation_backoff`, by force if `cancellation_timeout` is set."""
        if not self._set_flag(reason) or self.task.done():
            return
        backoff = self.handler.cancellation_backoff
        if backoff is not None:
            self.logger.debug(f'{self.handler} is signalled to exit gracefully.')
            self._later(backoff, self._escalate)
        else:
            self._escalate()

    def _later(self, delay: float, callback: Callable[[], None]) -> None:
        loop = asyncio.get_running_loop()
        self.scheduler.at(self, loop.time() + max(0.0, delay), callback, replace=True)

    def _escalate(self) -> None:
        """With `cancellation_timeout`: cancel it (a sync one cannot be), then abandon it after the timeout."""
        if self.task.done():
            return
        timeout = self.handler.cancellation_timeout
        if timeout is None:
            self._poll()  # waited for, however long it takes; reported at once, as upstream
            return
        self.logger.debug(f'{self.handler} is signalled to exit by force.')
        if self.is_async:
            self.flag.set(DaemonStoppingReason.DAEMON_CANCELLED)
            self.task.cancel()
        self._later(timeout, self._abandon)

    def _poll(self) -> None:
        if not self.task.done():
            polling = self.handler.cancellation_polling or self.background.rctx.settings.background.cancellation_polling
            self.logger.debug(f'{self.handler} is still exiting. The next check is in {polling} seconds.')
            self._later(polling, self._poll)

    def _abandon(self) -> None:
        if self.task.done():
            return
        self.flag.set(DaemonStoppingReason.DAEMON_ABANDONED)
        self.logger.warning(f'{self.handler} did not exit in time. Leaving it orphaned.')
        self._exit(finished=False)  # first: a warnings filter may turn the warning into an error
        warnings.warn(f'{self.handler} did not exit in time.', ResourceWarning, stacklevel=1)


class Timer(Spawn):
    """A timer: a due time in the operator's scheduler; each call is a short task, then the next due time."""

    __slots__ = ()
    handler: handlers.TimerHandler

    def begin(self) -> None:
        self.call: asyncio.Task[None] | None = None
        self.due: float | None = None
        self.changed_since = False
        loop_now = asyncio.get_running_loop().time()
        delay = self.background.initial_delay(self.handler)
        self._schedule(decisions.first_due(self.handler, now=loop_now, initial_delay=delay,
                                       last_change=self.background.last_change))

    def tasks(self) -> list['asyncio.Task[Any]']:
        return [self.call] if self.call is not None and not self.call.done() else []

    def _schedule(self, at: float | None) -> None:
        self.due = at
        if at is None:
            self.scheduler.cancel(self)
        else:
            self.scheduler.at(self, at, self, replace=True)  # itself as the callback: no bound method per call

    def __call__(self) -> None:
        self._fire()

    def _fire(self) -> None:
        rctx = self.background.rctx
        if self.due is not None:
            rctx.operator.metrics.timer_fired(rctx.resource, asyncio.get_running_loop().time() - self.due)
        self.due = None
        if not self.flag and not self.gone:
            self.changed_since = False
            name = f'kopf timer {self.handler.id!r} of {self.logger.prefix}'
            self.call = asyncio.create_task(self._call(), name=name)

    async def _call(self) -> None:
        try:
            await self._call_once()
        finally:
            self.call = None  # its end: the done task (its context, its frames' values) is not kept till the next

    async def _call_once(self) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            outcome = await self._attempt()
            judged = self._judge(outcome)
        except Exception as exc:  # the framework's own failure: logged, the timer goes on
            self.logger.exception(f'{self.handler} failed unexpectedly: {exc!r}')
            judged = self.state._failed(changing.now(), str(exc))
        finished = loop.time()
        if self.flag:
            self._stopped()
            return
        final = judged.success or judged.failure
        self.state = changing.now() if final else judged  # fresh again: only the time is kept
        delay = (judged.delayed - changing.now()).total_seconds() if judged.delayed is not None else None
        due = decisions.next_due(self.handler, started=started, finished=finished, success=final, delay=delay,
                             last_change=self.background.last_change, changed_since=self.changed_since)
        if due is None and self.handler.interval is None and self.handler.idle is None:
            self._exit(finished=True)  # a one-shot timer: done
            return
        self._schedule(due)

    def changed(self, at: float) -> None:
        calling = self.call is not None and not self.call.done()
        if calling:
            self.changed_since = True
            return
        due = decisions.on_change(self.handler, self.due, now=at, waiting=not calling)
        if due != self.due:
            self._schedule(due)

    def stop(self, reason: DaemonStoppingReason) -> None:
        if not self._set_flag(reason):
            return
        self.scheduler.cancel(self)
        if self.call is None or self.call.done():
            self._stopped()
        # else: the running call finishes; then it exits (see `_call`)

    def _stopped(self) -> None:
        if self.flag.reason is not None and self.flag.reason & DaemonStoppingReason.OPERATOR_EXITING:
            decisions.graceful_log(self.handler).emit(self.logger)  # only then, as upstream
        self._exit(finished=False)
