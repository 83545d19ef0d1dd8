"""Invocation: sync/async handlers, contextvars, outcomes per error and mode, enforced timeouts, sub-handlers."""
import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import logging
import threading
from typing import Any

import pytest

import kopf
from kopf._core import handlers, registries, settings
from kopf._core.bodies import Body
from kopf._core.causes import Reason
from kopf._core.kwargs import ChangingCause
from kopf._core.outcomes import Outcome, OutcomeKind
from kopf._core.patches import Patch
from kopf._core.resources import Resource
from kopf._engine import invoking

VAR: contextvars.ContextVar[str] = contextvars.ContextVar('VAR')


def make(fn: Any, decorator: Any = kopf.on.create, **options: Any) -> handlers.BaseHandler:
    registry = kopf.OperatorRegistry()
    args = ('kex',) if decorator not in (kopf.on.startup,) else ()
    decorator(*args, registry=registry, **options)(fn)
    return registry.handlers[0]


def raiser(exc: BaseException) -> tuple[Any, Any]:
    def sync_fn(**_: Any) -> None:
        raise exc

    async def async_fn(**_: Any) -> None:
        raise exc
    return sync_fn, async_fn


@pytest.fixture(params=['sync', 'async'])
def flavour(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_returned_value_is_success(flavour: str) -> None:
    def sync_fn(x: int, **_: Any) -> dict[str, int]:
        return {'x': x}

    async def async_fn(x: int, **_: Any) -> dict[str, int]:
        return {'x': x}
    fn = sync_fn if flavour == 'sync' else async_fn
    outcome = await invoking.invoke_handler(make(fn), kwargs={'x': 1})
    assert outcome == Outcome(kind=OutcomeKind.SUCCESS, result={'x': 1})
    assert outcome.final


async def test_sync_handlers_run_in_the_executor_with_contextvars() -> None:
    seen: dict[str, Any] = {}

    def fn(**_: Any) -> None:
        seen['thread'] = threading.current_thread()
        seen['var'] = VAR.get('unset')
        VAR.set('changed in the thread')  # does not leak back

    VAR.set('outer')
    with concurrent.futures.ThreadPoolExecutor(thread_name_prefix='custom') as executor:
        await invoking.invoke_handler(make(fn), kwargs={}, executor=executor)
    assert seen['thread'].name.startswith('custom')
    assert seen['var'] == 'outer'
    assert VAR.get() == 'outer'


async def test_async_handlers_run_in_the_loop() -> None:
    seen: dict[str, Any] = {}

    async def fn(**_: Any) -> None:
        seen['thread'] = threading.current_thread()
        seen['loop'] = asyncio.get_running_loop()

    await invoking.invoke_handler(make(fn), kwargs={})
    assert seen['thread'] is threading.current_thread()
    assert seen['loop'] is asyncio.get_running_loop()


@pytest.mark.parametrize('fn, expected', [
    (lambda **_: None, False),
    (functools.partial(lambda **_: None), False),
    (raiser(ValueError())[1], True),
    (functools.partial(raiser(ValueError())[1]), True),
])
def test_is_async(fn: Any, expected: bool) -> None:
    assert invoking.is_async(fn) is expected


def test_is_async_for_callable_objects() -> None:
    class Sync:
        def __call__(self, **_: Any) -> None: ...

    class Async:
        async def __call__(self, **_: Any) -> None: ...
    assert not invoking.is_async(Sync())
    assert invoking.is_async(Async())


@pytest.mark.parametrize('exc, errors, backoff, kind, delay', [
    (kopf.TemporaryError('boo', delay=5), kopf.ErrorsMode.TEMPORARY, None, OutcomeKind.RETRY, 5),
    (kopf.TemporaryError('boo', delay=5), kopf.ErrorsMode.PERMANENT, None, OutcomeKind.RETRY, 5),
    (kopf.TemporaryError('boo', delay=5), kopf.ErrorsMode.IGNORED, None, OutcomeKind.RETRY, 5),
    (kopf.TemporaryError('boo'), kopf.ErrorsMode.TEMPORARY, 3, OutcomeKind.RETRY, 60),
    (kopf.TemporaryError('boo', delay=None), kopf.ErrorsMode.TEMPORARY, None, OutcomeKind.RETRY, None),
    (kopf.HandlerRetryError('old name', delay=1), kopf.ErrorsMode.TEMPORARY, None, OutcomeKind.RETRY, 1),
    (kopf.PermanentError('boo'), kopf.ErrorsMode.TEMPORARY, None, OutcomeKind.FAILURE, None),
    (kopf.PermanentError('boo'), kopf.ErrorsMode.IGNORED, None, OutcomeKind.FAILURE, None),
    (kopf.HandlerFatalError('old name'), kopf.ErrorsMode.TEMPORARY, None, OutcomeKind.FAILURE, None),
    (kopf.HandlerTimeoutError('boo'), kopf.ErrorsMode.TEMPORARY, None, OutcomeKind.FAILURE, None),
    (kopf.HandlerRetriesError('boo'), kopf.ErrorsMode.TEMPORARY, None, OutcomeKind.FAILURE, None),
    (kopf.AdmissionError('boo', code=555), kopf.ErrorsMode.TEMPORARY, None, OutcomeKind.FAILURE, None),
    (ValueError('boo'), kopf.ErrorsMode.TEMPORARY, None, OutcomeKind.RETRY, 60),
    (ValueError('boo'), kopf.ErrorsMode.TEMPORARY, 3, OutcomeKind.RETRY, 3),
    (ValueError('boo'), kopf.ErrorsMode.TEMPORARY, 0, OutcomeKind.RETRY, 0),
    (ValueError('boo'), kopf.ErrorsMode.PERMANENT, 3, OutcomeKind.FAILURE, None),
    (TimeoutError('own'), kopf.ErrorsMode.PERMANENT, None, OutcomeKind.FAILURE, None),  # not our timeout
    (AttributeError('boo'), kopf.ErrorsMode.TEMPORARY, None, OutcomeKind.RETRY, 60),
])
async def test_outcomes_of_errors(flavour: str, exc: Exception, errors: kopf.ErrorsMode, backoff: float | None,
                                  kind: OutcomeKind, delay: float | None) -> None:
    fn = raiser(exc)[flavour == 'async']
    outcome = await invoking.invoke_handler(make(fn, errors=errors, backoff=backoff), kwargs={})
    assert (outcome.kind, outcome.delay, outcome.result) == (kind, delay, None)
    # NB: asyncio re-creates TimeoutErrors coming from executors: compare by class and args.
    assert type(outcome.exception) is type(exc) and outcome.exception.args == exc.args
    assert outcome.message == str(exc)


async def test_ignored_errors_are_success_with_nothing(flavour: str) -> None:
    fn = raiser(ValueError('boo'))[flavour == 'async']
    outcome = await invoking.invoke_handler(make(fn, errors=kopf.ErrorsMode.IGNORED), kwargs={})
    assert (outcome.kind, outcome.result, outcome.final) == (OutcomeKind.SUCCESS, None, True)
    assert isinstance(outcome.exception, ValueError)  # kept for the log line: "... and will ignore it: boo"


async def test_default_backoff_and_executor_from_the_execution_settings() -> None:
    executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix='own-executor')
    names: list[str] = []

    def fn(**_: Any) -> None:
        names.append(threading.current_thread().name)
        raise ValueError('boo')
    execution = settings.ExecutionSettings(default_backoff=7, executor=executor)
    try:
        outcome = await invoking.invoke_handler(make(fn), kwargs={}, execution=execution)
    finally:
        executor.shutdown()
    assert (outcome.kind, outcome.delay) == (OutcomeKind.RETRY, 7)
    assert names[0].startswith('own-executor')


async def test_the_default_backoff_without_execution_settings() -> None:
    outcome = await invoking.invoke_handler(make(raiser(ValueError())[0]), kwargs={})
    assert (outcome.kind, outcome.delay) == (OutcomeKind.RETRY, invoking.DEFAULT_BACKOFF)


@pytest.mark.parametrize('decorator, kind', [
    (kopf.on.event, OutcomeKind.SUCCESS),       # IGNORED by default
    (kopf.index, OutcomeKind.SUCCESS),
    (kopf.on.validate, OutcomeKind.FAILURE),    # PERMANENT by default
    (kopf.on.startup, OutcomeKind.RETRY),       # TEMPORARY by default
    (kopf.daemon, OutcomeKind.RETRY),
])
async def test_default_errors_modes_per_kind(decorator: Any, kind: OutcomeKind) -> None:
    outcome = await invoking.invoke_handler(make(raiser(ValueError())[1], decorator), kwargs={})
    assert outcome.kind is kind


@pytest.mark.looptime
async def test_timeout_cancels_an_async_handler() -> None:
    state = {'cancelled': False}

    async def fn(**_: Any) -> None:
        try:
            await asyncio.sleep(100)
        except asyncio.CancelledError:
            state['cancelled'] = True
            raise

    loop = asyncio.get_running_loop()
    start = loop.time()
    outcome = await invoking.invoke_handler(make(fn, id='fn', timeout=10), kwargs={}, remaining=4)
    assert outcome.kind is OutcomeKind.TIMEOUT and outcome.final
    assert isinstance(outcome.exception, kopf.HandlerTimeoutError)
    assert outcome.message == "Handler 'fn' has timed out after 10 seconds."
    assert state['cancelled']
    assert loop.time() - start == pytest.approx(4)


@pytest.mark.looptime
async def test_async_handler_within_the_budget_succeeds() -> None:
    async def fn(**_: Any) -> str:
        await asyncio.sleep(3)
        return 'done'

    outcome = await invoking.invoke_handler(make(fn, timeout=10), kwargs={}, remaining=4)
    assert outcome == Outcome(kind=OutcomeKind.SUCCESS, result='done')


@pytest.mark.parametrize('remaining', [0, -5])
async def test_no_budget_left_means_no_invocation(flavour: str, remaining: float) -> None:
    called = []
    fn = (lambda **_: called.append(1)) if flavour == 'sync' else raiser(ValueError())[1]
    outcome = await invoking.invoke_handler(make(fn, timeout=1), kwargs={}, remaining=remaining)
    assert outcome.kind is OutcomeKind.TIMEOUT
    assert not called


async def test_sync_handler_is_not_interrupted_by_the_budget() -> None:
    def fn(**_: Any) -> str:
        threading.Event().wait(0.05)  # longer than the budget, but cannot be interrupted
        return 'done'

    outcome = await invoking.invoke_handler(make(fn, timeout=0.01), kwargs={}, remaining=0.01)
    assert outcome == Outcome(kind=OutcomeKind.SUCCESS, result='done')


async def test_cancellation_propagates_from_async_handlers() -> None:
    started = asyncio.Event()

    async def fn(**_: Any) -> None:
        started.set()
        await asyncio.Event().wait()

    task = asyncio.create_task(invoking.invoke_handler(make(fn), kwargs={}))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


@pytest.mark.parametrize('given', [False, True], ids=['default-executor', 'given-executor'])
async def test_cancellation_of_sync_handlers_waits_for_the_thread(given: bool) -> None:
    entered, release, finished = threading.Event(), threading.Event(), threading.Event()

    def fn(**_: Any) -> None:
        entered.set()
        release.wait(5)
        finished.set()

    with concurrent.futures.ThreadPoolExecutor() if given else contextlib.nullcontext() as executor:
        task = asyncio.create_task(invoking.invoke_handler(make(fn), kwargs={}, executor=executor))
        assert await asyncio.to_thread(entered.wait, 5)
        task.cancel()
        await asyncio.sleep(0)
        assert not task.done()  # still waiting for the thread
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert finished.is_set()



async def test_sync_handlers_in_a_given_executor_are_counted_while_they_run() -> None:
    entered, release = threading.Event(), threading.Event()

    def fn(**_: Any) -> str:
        entered.set()
        release.wait(5)
        return 'done'

    before = invoking.threads_busy()
    with concurrent.futures.ThreadPoolExecutor() as executor:
        task = asyncio.create_task(invoking.invoke(fn, kwargs={}, executor=executor))
        assert await asyncio.to_thread(entered.wait, 5)
        assert invoking.threads_busy() == before + 1
        release.set()
        assert await task == 'done'
        assert invoking.threads_busy() == before


async def test_a_shut_down_executor_raises_and_counts_nothing() -> None:
    executor = concurrent.futures.ThreadPoolExecutor()
    executor.shutdown()
    before = invoking.threads_busy()
    with pytest.raises(RuntimeError):
        await invoking.invoke(lambda **_: None, kwargs={}, executor=executor)
    assert invoking.threads_busy() == before

async def test_a_job_cancelled_by_the_executor_cancels_its_awaiter_and_counts_nothing() -> None:
    entered, release = threading.Event(), threading.Event()

    def blocking(**_: Any) -> None:
        entered.set()
        release.wait(5)

    before = invoking.threads_busy()
    executor = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    first = asyncio.create_task(invoking.invoke(blocking, kwargs={}, executor=executor))
    assert await asyncio.to_thread(entered.wait, 5)
    queued = asyncio.create_task(invoking.invoke(lambda **_: 'never', kwargs={}, executor=executor))
    await asyncio.sleep(0)  # submitted
    executor.shutdown(wait=False, cancel_futures=True)  # the queued job never runs
    release.set()
    await first
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(queued, timeout=5)  # cancelled, not hung (a TimeoutError would be a hang)
    assert invoking.threads_busy() == before


async def test_a_shut_down_default_executor_raises_and_counts_nothing() -> None:
    loop = asyncio.get_running_loop()
    await loop.shutdown_default_executor()
    before = invoking.threads_busy()
    with pytest.raises(RuntimeError):
        await invoking.invoke(lambda **_: None, kwargs={})
    assert invoking.threads_busy() == before


CAUSE = ChangingCause(logger=logging.getLogger('test'), memo=kopf.Memo(), resource=Resource('kopf.dev', 'v1', 'kex'),
                      body=Body({}), patch=Patch(), reason=Reason.CREATE)


def sub(**_: Any) -> None:
    pass


async def test_subhandlers_are_collected_into_the_context(flavour: str) -> None:
    def sync_fn(**_: Any) -> None:
        kopf.subhandler(id='a')(sub)
        kopf.register(sub, id='b')

    async def async_fn(**_: Any) -> None:
        sync_fn()
    parent = make(sync_fn if flavour == 'sync' else async_fn, id='parent')
    assert isinstance(parent, handlers.ChangingHandler)
    context = registries.SubhandlingContext(parent=parent, cause=CAUSE)
    outcome = await invoking.invoke_handler(parent, kwargs={}, subhandling=context)
    assert outcome.kind is OutcomeKind.SUCCESS
    assert outcome.subrefs == ('parent/a', 'parent/b')
    assert [h.id for h in context.registry.changing] == ['parent/a', 'parent/b']
    assert registries.execution.get() is None


async def test_subrefs_are_reported_on_failures_too() -> None:
    def fn(**_: Any) -> None:
        kopf.subhandler(id='a')(sub)
        raise kopf.TemporaryError('later', delay=1)

    parent = make(fn, id='parent')
    assert isinstance(parent, handlers.ChangingHandler)
    context = registries.SubhandlingContext(parent=parent, cause=CAUSE)
    outcome = await invoking.invoke_handler(parent, kwargs={}, subhandling=context)
    assert (outcome.kind, outcome.subrefs) == (OutcomeKind.RETRY, ('parent/a',))


async def test_subhandler_in_an_event_handler_fails_the_handler() -> None:
    def fn(**_: Any) -> None:
        kopf.subhandler()(sub)

    outcome = await invoking.invoke_handler(make(fn, kopf.on.event), kwargs={})
    assert outcome.kind is OutcomeKind.SUCCESS  # IGNORED: the TypeError is logged and ignored
    outcome = await invoking.invoke_handler(make(fn, kopf.on.validate), kwargs={})
    assert isinstance(outcome.exception, TypeError)


@pytest.mark.parametrize('call, expected_ids', [
    (lambda: kopf.execute(fns={'x': sub, 'y': sub}), ['parent/x', 'parent/y']),
    (lambda: kopf.execute(fns=[sub]), ['parent/sub']),
    (lambda: kopf.execute(), []),
    (lambda: kopf.execute(handlers=[handlers.ChangingHandler(fn=sub, id=kopf.HandlerId('own'), selector=None)]),
     ['own']),
])
async def test_execute_registers_and_runs_via_the_runner(call: Any, expected_ids: list[str]) -> None:
    runs: list[list[str]] = []

    async def runner(context: registries.SubhandlingContext) -> None:
        runs.append([h.id for h in context.registry.changing])

    async def fn(**_: Any) -> None:
        await call()

    parent = make(fn, id='parent')
    assert isinstance(parent, handlers.ChangingHandler)
    context = registries.SubhandlingContext(parent=parent, cause=CAUSE, runner=runner)
    outcome = await invoking.invoke_handler(parent, kwargs={}, subhandling=context)
    assert outcome.kind is OutcomeKind.SUCCESS
    assert runs == [expected_ids]
    assert context.executed


async def test_execute_with_a_registry_and_without_a_runner() -> None:
    other = kopf.OperatorRegistry()
    kopf.on.create('kex', registry=other, id='from-registry')(sub)

    async def fn(**_: Any) -> None:
        await kopf.execute(registry=other, lifecycle='one_by_one')

    parent = make(fn, id='parent')
    assert isinstance(parent, handlers.ChangingHandler)
    context = registries.SubhandlingContext(parent=parent, cause=CAUSE)
    await invoking.invoke_handler(parent, kwargs={}, subhandling=context)
    assert [h.id for h in context.registry.changing] == ['from-registry']
    assert context.executed and context.lifecycle == 'one_by_one'


async def test_execute_children_retry_propagates_as_a_retry() -> None:
    async def runner(context: registries.SubhandlingContext) -> None:
        raise invoking.errors.HandlerChildrenRetry(delay=3)

    async def fn(**_: Any) -> None:
        await kopf.execute(fns={'x': sub})
        raise AssertionError('never reached while children are unfinished')

    parent = make(fn, id='parent')
    assert isinstance(parent, handlers.ChangingHandler)
    context = registries.SubhandlingContext(parent=parent, cause=CAUSE, runner=runner)
    outcome = await invoking.invoke_handler(parent, kwargs={}, subhandling=context)
    assert (outcome.kind, outcome.delay, outcome.subrefs) == (OutcomeKind.RETRY, 3, ('parent/x',))


async def test_execute_errors() -> None:
    with pytest.raises(LookupError):
        await kopf.execute(fns=[sub])

    async def in_event(**_: Any) -> None:
        await kopf.execute(fns=[sub])
    outcome = await invoking.invoke_handler(make(in_event, kopf.on.validate), kwargs={})
    assert isinstance(outcome.exception, RuntimeError)

    async def both(**_: Any) -> None:
        await kopf.execute(fns=[sub], registry=kopf.OperatorRegistry())
    parent = make(both, id='parent', errors=kopf.ErrorsMode.PERMANENT)
    assert isinstance(parent, handlers.ChangingHandler)
    context = registries.SubhandlingContext(parent=parent, cause=CAUSE)
    outcome = await invoking.invoke_handler(parent, kwargs={}, subhandling=context)
    assert isinstance(outcome.exception, TypeError)


@pytest.mark.parametrize('exc, options, level, message', [
    (None, {}, logging.INFO, "Handler 'h' succeeded."),
    (kopf.TemporaryError('later', delay=5), {}, logging.ERROR, "Handler 'h' failed temporarily: later"),
    (kopf.PermanentError('never'), {}, logging.ERROR, "Handler 'h' failed permanently: never"),
    (ValueError('boo'), {'backoff': 2}, logging.ERROR,
     "Handler 'h' failed with an exception and will try again in 2 seconds: boo"),
    (ValueError('boo'), {'errors': kopf.ErrorsMode.PERMANENT}, logging.ERROR,
     "Handler 'h' failed with an exception and will stop now: boo"),
    (ValueError('boo'), {'errors': kopf.ErrorsMode.IGNORED}, logging.ERROR,
     "Handler 'h' failed with an exception and will ignore it: boo"),
    (invoking.errors.HandlerChildrenRetry(delay=1), {}, logging.DEBUG,
     "Handler 'h' has unfinished sub-handlers. Will retry soon."),
])
async def test_logging(caplog: pytest.LogCaptureFixture, exc: Exception | None, options: dict[str, Any],
                       level: int, message: str) -> None:
    caplog.set_level(logging.DEBUG)

    async def fn(**_: Any) -> None:
        if exc is not None:
            raise exc
    logger = logging.getLogger('kopf.objects')
    await invoking.invoke_handler(make(fn, id='h', **options), kwargs={}, logger=logger)
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.DEBUG, "Handler 'h' is invoked."), (level, message)]


@pytest.mark.looptime
async def test_logging_timeouts(caplog: pytest.LogCaptureFixture) -> None:
    async def fn(**_: Any) -> None:
        await asyncio.sleep(10)
    await invoking.invoke_handler(make(fn, id='h', timeout=1), kwargs={}, remaining=1,
                                  logger=logging.getLogger('kopf.objects'))
    # Errors only: the DEBUG line of the invocation is captured too where another test lowered the level.
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == [
        "Handler 'h' has timed out after 1 seconds."]


async def test_invoke_passes_kwargs(flavour: str) -> None:
    def sync_fn(a: int, b: int) -> int:
        return a + b

    async def async_fn(a: int, b: int) -> int:
        return a + b
    assert await invoking.invoke(sync_fn if flavour == 'sync' else async_fn, kwargs={'a': 1, 'b': 2}) == 3


async def test_sync_handlers_in_a_given_executor_each_get_their_results() -> None:
    def fn(x: int, **_: Any) -> int:
        if x % 7 == 0:
            raise kopf.PermanentError(f'no {x}')
        return x * 2

    handler = make(fn)
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as executor:
        outcomes = await asyncio.gather(*(invoking.invoke_handler(handler, kwargs={'x': x}, executor=executor)
                                          for x in range(100)))
    for x, outcome in enumerate(outcomes):
        if x % 7 == 0:
            assert outcome.kind is OutcomeKind.FAILURE and str(outcome.exception) == f'no {x}'
        else:
            assert outcome == Outcome(kind=OutcomeKind.SUCCESS, result=x * 2)


async def test_stop_iteration_of_a_sync_handler_is_an_error_not_a_hang() -> None:
    def fn(**_: Any) -> None:
        raise StopIteration('oops')

    with concurrent.futures.ThreadPoolExecutor() as executor:
        outcome = await asyncio.wait_for(invoking.invoke_handler(make(fn), kwargs={}, executor=executor), 5)
    assert outcome.kind is OutcomeKind.RETRY
    assert isinstance(outcome.exception, RuntimeError)
