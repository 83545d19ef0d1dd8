"""Errors that handlers raise to steer their own retries, and the errors mode for everything else.

What each error means for one attempt is decided in `kopf._engine.invoking` (an `Outcome`);
what it means over time (retry when, give up when) is decided by the progress state machine.
"""
import enum


class ErrorsMode(enum.Enum):
    """How an arbitrary (not a kopf-specific) exception of a handler is treated."""

    IGNORED = enum.auto()    # log it and consider the handler done (succeeded, with no result)
    TEMPORARY = enum.auto()  # retry after the handler's `backoff`
    PERMANENT = enum.auto()  # fail at once, no retries


class PermanentError(Exception):
    """A handler's final failure: it is not retried, whatever its errors mode is."""


class TemporaryError(Exception):
    """A handler's temporary failure: it is retried after `delay` seconds (None = at once)."""

    def __init__(self, message: object = None, /, delay: float | None = 60) -> None:
        super().__init__(*(() if message is None else (message,)))
        self.delay = delay


class HandlerTimeoutError(PermanentError):
    """The handler's `timeout=` has run out (since its first attempt)."""


class HandlerRetriesError(PermanentError):
    """The handler's `retries=` are exhausted."""


class HandlerChildrenRetry(TemporaryError):
    """Internal: the sub-handlers of a handler are unfinished; the parent is re-invoked later."""


class AdmissionError(PermanentError):
    """Rejects an admission review; `code` becomes the HTTP status code of the review's response."""

    def __init__(self, message: object = '', code: int | None = 500) -> None:
        super().__init__(message)
        self.code = code


# Old spellings (upstream removed them in 1.29; old operators still use them).
HandlerFatalError = PermanentError
HandlerRetryError = TemporaryError
