"""Every outcome line of an attempt, word for word as upstream Kopf 1.45.2 prints it.

Users grep their operators' logs and assert on these lines in their tests, so switching frameworks
must not change a word. Each line below was printed by upstream 1.45.2 (run as a black box from its
throw-away venv, side by side with ours, against our local cluster; tests/e2e/test_log_lines.py
runs the same scenarios through `kopf run` and finds these lines in its output).
The only line of ours alone: a result that cannot be stored (docs/design/decisions.md #11).
"""
import datetime
import logging
from typing import Any

import pytest

import kopf
from kopf._core import errors, handlers, outcomes, progress
from kopf._core.causes import Activity
from kopf._core.outcomes import Outcome, OutcomeKind

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
ERROR, INFO, DEBUG = logging.ERROR, logging.INFO, logging.DEBUG


def make(kind: str, **options: Any) -> handlers.BaseHandler:
    fn = lambda **_: None  # noqa: E731
    if kind == 'Activity':
        return handlers.ActivityHandler(fn=fn, id='x', activity=Activity.STARTUP, **options)
    if kind == 'Daemon':
        return handlers.DaemonHandler(fn=fn, id='x', selector=None, **options)
    if kind == 'Timer':
        return handlers.TimerHandler(fn=fn, id='x', selector=None, interval=1, **options)
    if kind == 'Indexer':
        return handlers.IndexingHandler(fn=fn, id='x', selector=None, **options)
    return handlers.ChangingHandler(fn=fn, id='x', selector=None, **options)


def retry(exc: BaseException, delay: float | None = None) -> Outcome:
    return Outcome(kind=OutcomeKind.RETRY, exception=exc, delay=delay)


# (handler options, attempts finished before, seconds since the first attempt, outcome) → (level, line).
# The same words for all kinds of handlers: "Handler", "Activity", "Daemon", "Timer", "Indexer".
LINES: dict[str, tuple[dict[str, Any], int, float, Outcome, int, str]] = {
    'success': (
        {}, 0, 0, Outcome(kind=OutcomeKind.SUCCESS, result={'a': 1}),
        INFO, "{} 'x' succeeded."),
    'a temporary error': (
        {}, 0, 0, retry(kopf.TemporaryError('later', delay=5), 5),
        ERROR, "{} 'x' failed temporarily: later"),
    'a temporary error, out of retries': (
        {'retries': 2}, 1, 0, retry(kopf.TemporaryError('later', delay=5), 5),
        ERROR, "{} 'x' failed temporarily but will exceed 2 retries: later"),
    'a temporary error, out of time': (
        {'timeout': 0.3}, 0, 0, retry(kopf.TemporaryError('slow', delay=0.5), 0.5),
        ERROR, "{} 'x' failed temporarily but will time out after 0.3 seconds: slow"),
    'a permanent error': (
        {}, 0, 0, Outcome(kind=OutcomeKind.FAILURE, exception=kopf.PermanentError('never')),
        ERROR, "{} 'x' failed permanently: never"),
    'an arbitrary error, retried': (
        {'backoff': 1.0}, 0, 0, retry(ValueError('boom'), 1.0),
        ERROR, "{} 'x' failed with an exception and will try again in 1.0 seconds: boom"),
    'an arbitrary error, out of retries': (
        {'retries': 3, 'backoff': 1.0}, 2, 0, retry(ValueError('boom'), 1.0),
        ERROR, "{} 'x' failed with an exception and will stop now "
               "(it would exceed 3 retries on the next attempt): boom"),
    'an arbitrary error, out of time': (
        {'timeout': 0.3, 'backoff': 0.5}, 0, 0, retry(ValueError('boom'), 0.5),
        ERROR, "{} 'x' failed with an exception and will stop now "
               "(it would time out in 0.3 seconds on the next attempt): boom"),
    'an arbitrary error, errors=PERMANENT': (
        {'errors': kopf.ErrorsMode.PERMANENT}, 0, 0, Outcome(kind=OutcomeKind.FAILURE, exception=ValueError('boom')),
        ERROR, "{} 'x' failed with an exception and will stop now: boom"),
    'an arbitrary error, errors=IGNORED': (
        {'errors': kopf.ErrorsMode.IGNORED}, 0, 0, Outcome(kind=OutcomeKind.SUCCESS, exception=ValueError('boom')),
        ERROR, "{} 'x' failed with an exception and will ignore it: boom"),
    'a timeout enforced on an async handler (ours: upstream does not cancel)': (
        {'timeout': 1}, 0, 1,
        Outcome(kind=OutcomeKind.TIMEOUT,
                exception=errors.HandlerTimeoutError("Handler 'x' has timed out after 1 seconds.")),
        ERROR, "Handler 'x' has timed out after 1 seconds."),
    'unfinished sub-handlers': (
        {}, 0, 0, retry(errors.HandlerChildrenRetry('children', delay=0.5), 0.5),
        DEBUG, "{} 'x' has unfinished sub-handlers. Will retry soon."),
    'a result that cannot be stored (ours)': (
        {'errors': kopf.ErrorsMode.IGNORED}, 0, 0,
        outcomes.stored(Outcome(kind=OutcomeKind.SUCCESS, result={'a': {1, 2}})),
        ERROR, "{} 'x' failed permanently: its result cannot be stored: set"),
}
WITH_TRACEBACKS = {'an arbitrary error, retried', 'an arbitrary error, out of retries',
                   'an arbitrary error, out of time', 'an arbitrary error, errors=PERMANENT',
                   'an arbitrary error, errors=IGNORED'}


@pytest.mark.parametrize('kind', ['Handler', 'Activity', 'Daemon', 'Timer', 'Indexer'])
@pytest.mark.parametrize('name', list(LINES))
def test_outcome_lines(name: str, kind: str) -> None:
    options, retries, elapsed, outcome, level, line = LINES[name]
    handler = make(kind, **options)
    started = NOW - datetime.timedelta(seconds=elapsed)
    state = progress.HandlerState(started=started, purpose='create', retries=retries)
    judged = state.with_outcome(outcome, handler=handler, now=NOW, default_backoff=60)
    entry = outcomes.describe(handler, outcome, judged)
    assert (entry.level, entry.message) == (level, line.format(kind))
    assert entry.extra == {'kopf_handler_id': 'x'}
    assert (entry.exc_info is not None) == (name in WITH_TRACEBACKS)


@pytest.mark.parametrize('kind', ['Handler', 'Activity', 'Daemon', 'Timer'])
def test_invoked_line(kind: str) -> None:
    entry = outcomes.invoked(make(kind))
    assert (entry.level, entry.message) == (DEBUG, f"{kind} 'x' is invoked.")


def test_without_a_judgement_a_retry_is_a_retry() -> None:
    entry = outcomes.describe(make('Handler', retries=1), retry(ValueError('boom'), 1.0))
    assert entry.message == "Handler 'x' failed with an exception and will try again in 1.0 seconds: boom"


@pytest.mark.parametrize('value, culprit', [
    ({'a': {1, 2}}, 'set'),
    (b'raw', 'bytes'),
    ([1, {'deep': object()}], 'object'),
    ({(1, 2): 'tuple keys'}, 'keys must be str, int, float, bool or None, not tuple'),
    ({'a': [1, 'b', None, 1.5, True]}, None),
    ({'t': 1.5, 'by': 'ours', 'deep': [[[{'x': [1]}]]]}, None),   # the quick check's own: plain types only
    ({'a': (1, 2), 1: 'int keys', 'nan': float('nan')}, None),      # not plain, but json.dumps stores them
    ([[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['deeper than the quick check']]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]], None),
    ({'a': [{'b': {1, 2}}]}, 'set'),
])
def test_unstorable_results(value: Any, culprit: str | None) -> None:
    assert outcomes.unstorable(value) == culprit
    outcome = outcomes.stored(Outcome(kind=OutcomeKind.SUCCESS, result=value))
    assert outcome.kind is (OutcomeKind.SUCCESS if culprit is None else OutcomeKind.FAILURE)


def test_a_circular_result_is_unstorable() -> None:
    circular: dict[str, Any] = {}
    circular['self'] = [circular]
    assert outcomes.unstorable(circular) == 'Circular reference detected'
