"""One hierarchy of API errors, mapped once from the HTTP status; and the retry policy as a pure function.

Rules:
- `map_error(status, payload)` is the only place that looks at status codes; upper layers catch by class.
- The server's Status message (`message`, `reason`, `details`) is kept on the error.
- Retried: 429, 403 (as upstream does), 5xx, connection errors and timeouts; other 4xx are final.
- The delay of a retry is the next configured backoff, but never less than the server's Retry-After
  (the header, or the Status's `details.retryAfterSeconds`); with `enforce_retry_after`, the server's
  Retry-After is used as is whenever it is given, even when the own backoff is longer.
- Backoffs are a scalar (one retry), an iterable (one retry per item), or None (no retries):
  `iter_backoffs()`; what never gives up (watch streams, background re-checks) uses `endless_backoffs()`:
  the backoffs, then the last of them forever.
"""
import dataclasses
import itertools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

RawStatus = Mapping[str, Any]


class LoginError(Exception):
    """No usable credentials: none found, none valid, or a kubeconfig that cannot be used."""


class AccessError(LoginError):
    """Credentials were tried and all of them were rejected by the server."""


class APIError(Exception):
    """An error answer of the Kubernetes API; `.status` is the HTTP code, `.message` the server's text."""

    def __init__(self, payload: RawStatus | None = None, *, status: int,
                 retry_after: float | None = None) -> None:
        self.payload: RawStatus | None = payload
        self.status: int = status
        self.retry_after: float | None = retry_after
        super().__init__(self.message or f'HTTP {status}', payload)

    @property
    def code(self) -> int | None:
        code = self.payload.get('code') if self.payload else None
        return code if isinstance(code, int) else None

    @property
    def message(self) -> str | None:
        message = self.payload.get('message') if self.payload else None
        return message if isinstance(message, str) else None

    @property
    def reason(self) -> str | None:
        reason = self.payload.get('reason') if self.payload else None
        return reason if isinstance(reason, str) else None

    @property
    def details(self) -> Mapping[str, Any] | None:
        details = self.payload.get('details') if self.payload else None
        return details if isinstance(details, Mapping) else None

    def __str__(self) -> str:
        return f'({self.status}) {self.message or self.reason or "no message"}'


class APIClientError(APIError):
    """A 4xx answer: the request was wrong (or not allowed); retrying it as is usually won't help."""


class APIServerError(APIError):
    """A 5xx answer: the server failed; retried per `settings.networking.error_backoffs`, then raised."""


class APIUnauthorizedError(APIClientError):
    """401: the credentials are missing, wrong or expired; they are invalidated and re-login follows."""


class APIForbiddenError(APIClientError):
    """403: not allowed (retried, as upstream does, in case RBAC is being set up)."""


class APINotFoundError(APIClientError):
    """404: the object or resource does not exist (anymore)."""


class APIConflictError(APIClientError):
    """409: already exists, or a stale resourceVersion."""


class APIUnprocessableEntityError(APIClientError):
    """422: invalid; also a failed JSON-patch `test` operation."""


class APITooManyRequestsError(APIClientError):
    """429: throttled; retried after Retry-After."""


_BY_STATUS: dict[int, type[APIError]] = {
    401: APIUnauthorizedError,
    403: APIForbiddenError,
    404: APINotFoundError,
    409: APIConflictError,
    422: APIUnprocessableEntityError,
    429: APITooManyRequestsError,
}


def parse_retry_after(header: str | None, payload: RawStatus | None) -> float | None:
    """Seconds to wait per the server: the Retry-After header (seconds), else `details.retryAfterSeconds`."""
    if header is not None:
        try:
            return max(0.0, float(header.strip()))
        except ValueError:
            pass  # an HTTP-date: rare from Kubernetes; fall back to the Status
    details = payload.get('details') if payload else None
    seconds = details.get('retryAfterSeconds') if isinstance(details, Mapping) else None
    if isinstance(seconds, (int, float)) and not isinstance(seconds, bool):
        return max(0.0, float(seconds))
    return None


def map_error(status: int, payload: Any = None, *, retry_after_header: str | None = None) -> APIError:
    """The error for an HTTP error status; only a `kind: Status` body is trusted as the server's payload."""
    trusted = payload if isinstance(payload, Mapping) and payload.get('kind') == 'Status' else None
    if trusted is None and isinstance(payload, str) and payload.strip():
        trusted = {'message': payload.strip()}  # e.g. the plain-text 429 of the API's throttling
    retry_after = parse_retry_after(retry_after_header, trusted)
    if status in _BY_STATUS:
        cls = _BY_STATUS[status]
    elif 400 <= status < 500:
        cls = APIClientError
    elif status >= 500:
        cls = APIServerError
    else:
        cls = APIError
    return cls(trusted, status=status, retry_after=retry_after)


def is_retriable(error: BaseException) -> bool:
    """Whether an error of a request is worth retrying (as opposed to final)."""
    if isinstance(error, (APIServerError, APITooManyRequestsError, APIForbiddenError)):
        return True
    if isinstance(error, APIError):
        return False
    if {cls.__name__ for cls in type(error).__mro__} & {'SSLCertVerificationError', 'ClientConnectorCertificateError'}:
        return False  # a wrong CA does not heal by waiting
    return isinstance(error, (ConnectionError, TimeoutError, OSError)) or _is_client_transport_error(error)


def _is_client_transport_error(error: BaseException) -> bool:
    # aiohttp's connection & payload errors, recognised by name to keep this module free of aiohttp.
    names = {cls.__name__ for cls in type(error).__mro__}
    return bool(names & {'ClientConnectionError', 'ClientPayloadError', 'ServerDisconnectedError'})


Backoffs = float | Iterable[float] | None


def iter_backoffs(backoffs: Backoffs) -> Iterator[float]:
    """The delays of the retries: a scalar is one retry; an iterable (maybe infinite) one per item; None none."""
    if backoffs is None:
        return iter(())
    if isinstance(backoffs, (int, float)):
        return iter((float(backoffs),))
    return (float(value) for value in backoffs)


def endless_backoffs(backoffs: Backoffs, *, default: float = 1.0) -> Iterator[float]:
    """The backoffs, then the last of them forever (`default` forever if there are none): for what never gives up."""
    last = default
    for last in iter_backoffs(backoffs):
        yield last
    yield from itertools.repeat(last)


@dataclasses.dataclass(frozen=True)
class RetryDecision:
    retry: bool
    delay: float = 0.0


def decide_retry(error: BaseException, backoff: float | None, *, enforce_retry_after: bool = False) -> RetryDecision:
    """Whether and when to retry after an error, given the next backoff (None when they are exhausted)."""
    if backoff is None or not is_retriable(error):
        return RetryDecision(retry=False)
    retry_after = error.retry_after if isinstance(error, APIError) else None
    if retry_after is None:
        return RetryDecision(retry=True, delay=backoff)
    if enforce_retry_after:
        return RetryDecision(retry=True, delay=retry_after)
    return RetryDecision(retry=True, delay=max(backoff, retry_after))

