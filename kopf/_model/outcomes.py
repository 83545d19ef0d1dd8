"""The outcome of one attempt of one handler: the contract between invoking and the progress state machine.

Invocation (handlers issue) turns what a handler did into an `Outcome` and decides nothing over time.
The progress state machine (persistence issue) alone decides what an outcome means across attempts:
whether a retry is due and when, and when retries or the timeout are exhausted.
"""
import dataclasses
import enum
import logging
from collections.abc import Mapping
from typing import Any, Protocol

from kopf._model import errors


class OutcomeKind(enum.Enum):
    SUCCESS = 'success'  # returned normally (or an arbitrary error in IGNORED mode): final
    RETRY = 'retry'      # TemporaryError, or an arbitrary error in TEMPORARY mode: wants another attempt
    FAILURE = 'failure'  # PermanentError (incl. its subclasses), or an arbitrary error in PERMANENT mode: final
    TIMEOUT = 'timeout'  # cancelled by the enforced `timeout=` (async handlers only): final


@dataclasses.dataclass(frozen=True)
class Outcome:
    """The result of one handler attempt: success, retry (with delay), failure or timeout."""
    kind: OutcomeKind
    result: Any = None                       # the handler's return value (SUCCESS only)
    exception: BaseException | None = None   # what was raised, if anything
    delay: float | None = None               # RETRY: seconds before the next attempt; None = at once
    subrefs: tuple[str, ...] = ()            # ids of sub-handlers seen during this attempt

    @property
    def final(self) -> bool:
        return self.kind is not OutcomeKind.RETRY

    @property
    def message(self) -> str | None:
        return None if self.exception is None else (str(self.exception) or repr(self.exception))


@dataclasses.dataclass(frozen=True)
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


def describe(handler: _Handler, outcome: Outcome) -> LogEntry:
    """The log line of one attempt's outcome, as upstream words it (e.g. "Handler 'x' succeeded.")."""
    exc = outcome.exception
    extra = {'kopf_handler_id': handler.id}  # for JSON logs
    if outcome.kind is OutcomeKind.RETRY and isinstance(exc, errors.HandlerChildrenRetry):
        return LogEntry(logging.DEBUG, f'{handler} has unfinished sub-handlers. Will retry in {exc.delay} seconds.',
                        extra=extra)
    if outcome.kind is OutcomeKind.SUCCESS:
        return LogEntry(logging.INFO, f'{handler} succeeded.', extra=extra)
    if outcome.kind is OutcomeKind.TIMEOUT:
        return LogEntry(logging.ERROR, str(outcome.message), extra=extra)
    if isinstance(exc, errors.TemporaryError):
        return LogEntry(logging.ERROR, f'{handler} failed temporarily: {outcome.message}', extra=extra)
    if isinstance(exc, errors.PermanentError):
        return LogEntry(logging.ERROR, f'{handler} failed permanently: {outcome.message}', extra=extra)
    if outcome.kind is OutcomeKind.RETRY:
        message = f'{handler} failed with an exception. Will try again in {outcome.delay} seconds.'
        return LogEntry(logging.ERROR, message, exc_info=exc, extra=extra)
    return LogEntry(logging.ERROR, f'{handler} failed with an exception. Will stop.', exc_info=exc, extra=extra)
