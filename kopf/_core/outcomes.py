"""The outcome of one attempt of one handler: the contract between invoking and the progress state machine.

Invocation (`kopf._engine.invoking`) turns what a handler did into an `Outcome` and decides nothing over
time. The progress state machine (`kopf._core.progress`) alone decides what an outcome means across
attempts: whether a retry is due and when, and when retries or the timeout are exhausted. An attempt whose
sub-handlers ran carries what they came to (`children`: a `kopf._core.attempts.Children`), settled with it.
"""
import enum
import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from kopf._core import errors, values

if TYPE_CHECKING:
    from kopf._core.attempts import Children


class OutcomeKind(enum.Enum):
    SUCCESS = 'success'  # returned normally (or an arbitrary error in IGNORED mode): final
    RETRY = 'retry'      # TemporaryError, or an arbitrary error in TEMPORARY mode: wants another attempt
    FAILURE = 'failure'  # PermanentError (incl. its subclasses), or an arbitrary error in PERMANENT mode: final
    TIMEOUT = 'timeout'  # cancelled by the enforced `timeout=` (async handlers only): final


@values.frozen
class Outcome:
    """The result of one handler attempt: success, retry (with delay), failure or timeout."""
    kind: OutcomeKind
    result: Any = None                       # the handler's return value (SUCCESS only)
    exception: BaseException | None = None   # what was raised, if anything
    delay: float | None = None               # RETRY: seconds before the next attempt; None = at once
    subrefs: tuple[str, ...] = ()            # ids of sub-handlers seen during this attempt
    children: 'Children | None' = None       # what its sub-handlers came to in this attempt, if they ran

    @property
    def final(self) -> bool:
        return self.kind is not OutcomeKind.RETRY

    @property
    def message(self) -> str | None:
        return None if self.exception is None else (str(self.exception) or repr(self.exception))


def stored(outcome: Outcome) -> Outcome:
    """A success whose result cannot be stored as JSON (in `status.<id>`) is a permanent failure.

    Whatever the handler's `errors` mode (docs/design/decisions.md #11): a retry cannot change it, and
    a retry loop would repeat the handler's side effects.
    """
    if outcome.kind is not OutcomeKind.SUCCESS or outcome.result is None:
        return outcome
    culprit = unstorable(outcome.result)
    if culprit is None:
        return outcome
    exc = errors.PermanentError(f'its result cannot be stored: {culprit}')
    return Outcome(kind=OutcomeKind.FAILURE, exception=exc, subrefs=outcome.subrefs, children=outcome.children)


def unstorable(value: Any) -> str | None:
    """What in `value` JSON cannot hold (the name of the first such type), or None if it can be stored."""
    if _plain(value, 0):  # most results: dicts of strings and numbers, walked before any json.dumps
        return None
    found: list[str] = []

    def refuse(obj: Any) -> Any:
        found.append(type(obj).__qualname__)
        raise TypeError(found[-1])
    try:
        json.dumps(value, default=refuse)
    except TypeError as exc:  # e.g. a dict with tuple keys: no `default` call
        return found[0] if found else str(exc)
    except ValueError as exc:  # a circular reference
        return str(exc)
    return None


_SCALARS = frozenset({str, int, float, bool, type(None)})  # exact types: a subclass goes through json.dumps


def _plain(value: Any, depth: int) -> bool:
    """Whether `value` is surely storable: only dicts with string keys, lists and JSON scalars, not too deep.

    False is not "unstorable", only "not sure": the caller asks `json.dumps` then (tuples, int keys,
    subclasses, cycles and deep nesting go that way).
    """
    kind = type(value)
    if kind in _SCALARS:
        return True
    if depth > 32:
        return False
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or not (type(item) in _SCALARS or _plain(item, depth + 1)):
                return False
        return True
    if kind is list:
        for item in value:
            if not (type(item) in _SCALARS or _plain(item, depth + 1)):
                return False
        return True
    return False


@values.frozen
class LogEntry:
    """A log line decided in the pure layer, logged by the reactor on the object's logger."""
    level: int
    message: str
    exc_info: BaseException | None = None
    extra: Mapping[str, Any] | None = None

    def emit(self, logger: logging.Logger | logging.LoggerAdapter[Any]) -> None:
        if self.exc_info is not None:
            logger.log(self.level, self.message, exc_info=self.exc_info, extra=self.extra)
        elif self.extra is not None:
            logger.log(self.level, self.message, extra=self.extra)
        else:
            logger.log(self.level, self.message)


class _Handler(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def retries(self) -> int | None: ...
    @property
    def timeout(self) -> float | None: ...


class _Judged(Protocol):
    """The state machine's verdict on an attempt (`kopf._core.progress.HandlerState`)."""
    @property
    def failure(self) -> bool: ...
    @property
    def retries(self) -> int: ...


def describe(handler: _Handler, outcome: Outcome, judged: _Judged | None = None) -> LogEntry:
    """The log line of one attempt's outcome, word for word as upstream's (tests/core/test_outcomes_log_lines.py).

    `judged`: the handler's state after the attempt, if a state machine judged it: a RETRY that it
    turned into a failure (out of retries or out of time) is logged as the final stop it is.
    """
    exc, message = outcome.exception, outcome.message
    extra = {'kopf_handler_id': handler.id}  # for JSON logs
    if outcome.kind is OutcomeKind.SUCCESS and exc is None:
        return LogEntry(logging.INFO, f'{handler} succeeded.', extra=extra)
    if outcome.kind is OutcomeKind.SUCCESS:  # an arbitrary error in IGNORED mode
        text = f'{handler} failed with an exception and will ignore it: {message}'
        return LogEntry(logging.ERROR, text, exc_info=exc, extra=extra)
    if outcome.kind is OutcomeKind.TIMEOUT:
        return LogEntry(logging.ERROR, str(message), extra=extra)
    stopped = outcome.kind is OutcomeKind.RETRY and judged is not None and judged.failure
    out_of_retries = stopped and judged is not None and handler.retries is not None and \
        judged.retries >= handler.retries
    if outcome.kind is OutcomeKind.RETRY and isinstance(exc, errors.HandlerChildrenRetry) and not stopped:
        return LogEntry(logging.DEBUG, f'{handler} has unfinished sub-handlers. Will retry soon.', extra=extra)
    if isinstance(exc, errors.TemporaryError):
        if out_of_retries:
            return LogEntry(logging.ERROR, f'{handler} failed temporarily but will exceed {handler.retries} '
                                           f'retries: {message}', extra=extra)
        if stopped:
            return LogEntry(logging.ERROR, f'{handler} failed temporarily but will time out after '
                                           f'{handler.timeout} seconds: {message}', extra=extra)
        return LogEntry(logging.ERROR, f'{handler} failed temporarily: {message}', extra=extra)
    if isinstance(exc, errors.PermanentError):
        return LogEntry(logging.ERROR, f'{handler} failed permanently: {message}', extra=extra)
    if out_of_retries:
        text = (f'{handler} failed with an exception and will stop now '
                f'(it would exceed {handler.retries} retries on the next attempt): {message}')
    elif stopped:
        text = (f'{handler} failed with an exception and will stop now '
                f'(it would time out in {handler.timeout} seconds on the next attempt): {message}')
    elif outcome.kind is OutcomeKind.RETRY:
        text = f'{handler} failed with an exception and will try again in {outcome.delay} seconds: {message}'
    else:
        text = f'{handler} failed with an exception and will stop now: {message}'
    return LogEntry(logging.ERROR, text, exc_info=exc, extra=extra)


def invoked(handler: _Handler) -> LogEntry:
    """The line before each attempt: "Handler 'x' is invoked." (debug)."""
    return LogEntry(logging.DEBUG, f'{handler} is invoked.', extra={'kopf_handler_id': handler.id})
