"""Requests to the Kubernetes API: a transport per credentials, one retry loop, re-login on 401, error mapping.

Rules:
- One transport per credentials (keep-alive connection reuse), made on first use (`transports`): our own
  HTTP/1.1 client for direct connections; aiohttp's for proxies (`proxy_url`, or `trust_env` with proxy
  variables set) and for the ready aiohttp sessions of login handlers (`AiohttpSession`).
  TLS verification is on unless the credentials say `insecure`; every request carries
  `User-Agent: kopf/<version>` (with the operator's identity: `kopf/<version> (<identity>)`).
- Non-watch requests time out per `settings.networking` (request/connect timeouts); streams per
  `settings.watching` (client/connect timeouts; the inactivity timeout is the watcher's).
- `request()` and `stream()` share one loop of attempts (`_attempt`): errors are mapped once (by the
  transport) and retried per `apierrors.decide_retry` with `settings.networking.error_backoffs` (or the
  backoffs of the call). A 401 invalidates the credentials and retries with fresh ones from the vault
  (re-login), without consuming a backoff. A stream is retried only until its answer's headers arrive.
- Every attempt is reported to the `observer` if there is one (metrics: verb, code, seconds; `WATCH` for
  a stream's opening; code `2xx` for a success, the status of an error, `error` when nothing answered).
- Requests and watches borrow their credentials (`VaultItem.borrowed()`): the vault learns which were
  accepted, and closes the transport of rejected ones only once nothing uses it.
"""
import asyncio
import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any, Final, Protocol

from kopf._api import apierrors, credentials, transports
from kopf._core import settings as settings_
from kopf._shared import encoding

logger = logging.getLogger('kopf._api')

JSON_CT: Final = 'application/json'
MERGE_PATCH_CT: Final = 'application/merge-patch+json'
JSON_PATCH_CT: Final = 'application/json-patch+json'

class _Default:
    def __repr__(self) -> str:
        return 'DEFAULT'


DEFAULT: Final[Any] = _Default()  # "the settings' backoffs", as distinct from None (= no retries)

# Requests in flight at once, per transport of credentials (the aiohttp ones share one bound); watch streams are
# not counted. A burst of objects would otherwise open a connection per concurrent request; a few dozen
# keep-alive connections saturate any API server.
MAX_CONCURRENT_REQUESTS: Final = 64


class Observer(Protocol):
    """Who hears of every attempt and watch (the reactor's metrics): `_api` imports no reactor."""

    def requested(self, verb: str, code: str, seconds: float) -> None: ...

    def watched(self, resource: str, what: str) -> None: ...


class APIClient:
    """The one way to talk to the API: `request()` for answers, `stream()` for watches."""

    def __init__(self, vault: credentials.Vault, settings: settings_.OperatorSettings, *,
                 identity: str | None = None) -> None:
        self.vault = vault
        self.settings = settings
        self.agent = transports.user_agent(identity)
        self._slots: asyncio.Semaphore | None = None  # of the aiohttp transports; made in the loop, on first use
        self.observer: Observer | None = None  # told of every attempt (metrics), if any

    async def close(self) -> None:
        await self.vault.close()

    async def default_namespace(self) -> str | None:
        """The namespace of the current credentials' context (e.g. a kubeconfig's), if any."""
        return (await self.vault.select()).default_namespace

    def _transport(self, item: credentials.VaultItem) -> transports.Transport:
        if item.transport is None:
            item.transport = self._make_transport(item.credentials)
        return item.transport

    def _make_transport(self, creds: credentials.Credentials) -> transports.Transport:
        """Ours for direct connections; aiohttp's for a login handler's session and for proxies."""
        if isinstance(creds, credentials.AiohttpSession):
            return transports.AiohttpTransport(creds.aiohttp_session, server=creds.server, proxy=None,
                                               slots=self._aiohttp_slots(), owned=False)
        if self._proxied(creds):
            trust_env = creds.trust_env or self.settings.networking.trust_env
            return transports.AiohttpTransport.proxied(creds, trust_env=trust_env, slots=self._aiohttp_slots(),
                                                       agent=self.agent)
        return transports.DirectTransport(creds, limit=MAX_CONCURRENT_REQUESTS, agent=self.agent)

    def _aiohttp_slots(self) -> asyncio.Semaphore:
        if self._slots is None:
            self._slots = asyncio.Semaphore(MAX_CONCURRENT_REQUESTS)
        return self._slots

    def _proxied(self, creds: credentials.ConnectionInfo) -> bool:
        if creds.proxy_url:
            return True
        if not (creds.trust_env or self.settings.networking.trust_env):
            return False
        scheme = creds.server.partition(':')[0].lower()
        return any(os.environ.get(name) for name in (f'{scheme}_proxy', f'{scheme.upper()}_PROXY'))

    async def _attempt(self, method: str | None, path: str, *, params: Mapping[str, str] | None,
                       backoffs: apierrors.Backoffs, body: bytes | None = None, content_type: str | None = None,
                       total: float | None, connect: float | None, final: tuple[type[apierrors.APIError], ...] = (),
                       urgent: bool = False) -> tuple[credentials.VaultItem, Any]:
        """The one retry loop: send with the vault's credentials until it succeeds or may not be retried.

        `method=None`: open a watch stream of the path (the answer is a `StreamResponse`); else a request
        (the answer is its raw body). `final`: errors of these classes are raised at once, never retried
        (e.g. a 403 where it means "not for us", not a transient RBAC change). No per-request closure:
        this runs for every request of every cycle.
        """
        delays: Iterator[float] | None = None  # made on the first failure only
        while True:
            item = await self.vault.select()
            # unusable credentials (a `LoginError`) are not retried:
            transport = item.transport if item.transport is not None else self._transport(item)
            observer = self.observer
            begun = time.perf_counter() if observer is not None else 0.0  # metrics off: no clock read
            try:
                with item.borrowed():
                    if method is None:
                        result: Any = await transport.stream(path, params=params, total=total, connect=connect)
                    else:
                        result = await transport.request(method, path, params=params, body=body, urgent=urgent,
                                                         content_type=content_type, total=total, connect=connect)
                if observer is not None:
                    self._observe(observer, method, '2xx', begun)
                return item, result
            except apierrors.APIUnauthorizedError:
                if observer is not None:
                    self._observe(observer, method, '401', begun)
                logger.info(f'Unauthorized (401) for {_what(method, path)}; the credentials are invalidated; '
                            f're-logging in.')
                self.vault.invalidate(item)
            except Exception as exc:
                if observer is not None:
                    self._observe(observer, method, str(exc.status) if isinstance(exc, apierrors.APIError) else 'error',
                                  begun)
                net = self.settings.networking
                if delays is None:
                    delays = apierrors.iter_backoffs(net.error_backoffs if backoffs is DEFAULT else backoffs)
                if final and isinstance(exc, final):
                    raise
                decision = apierrors.decide_retry(exc, next(delays, None), enforce_retry_after=net.enforce_retry_after)
                if not decision.retry:
                    raise
                what = _what(method, path)
                logger.warning(f'{what[:1].upper()}{what[1:]} failed ({_describe(exc)}); '
                               f'retrying in {decision.delay:g}s.')
                await asyncio.sleep(decision.delay)

    @staticmethod
    def _observe(observer: Observer, method: str | None, code: str, begun: float) -> None:
        observer.requested(method or 'WATCH', code, time.perf_counter() - begun)

    async def request(
            self,
            method: str,
            path: str,
            *,
            params: Mapping[str, str] | None = None,
            payload: Any = None,
            content_type: str = JSON_CT,
            backoffs: apierrors.Backoffs = DEFAULT,
            final: tuple[type[apierrors.APIError], ...] = (),
            urgent: bool = False,
            raw: bool = False,
    ) -> Any:
        """Send a request; return the decoded JSON answer; raise `APIError` subclasses after the retries.

        `final`: API errors of these classes are raised at once (e.g. `(APIForbiddenError,)` where a 403
        is an answer, not a transient denial); other errors are retried as usual (a 401 always re-logs in).
        `urgent`: not queued behind the bound of concurrent requests (a Lease's writes: a burst's requests
        waiting for their slots must not take a renewal past its deadline).
        `raw`: the answer's body as it came, as `bytes`, not decoded (e.g. to know its watch event by its bytes).
        """
        net = self.settings.networking
        data = encoding.dumps(payload) if payload is not None else None
        typed = content_type if data is not None else None
        _, body = await self._attempt(method, path, params=params, body=data, content_type=typed, backoffs=backoffs,
                                      total=net.request_timeout, connect=net.connect_timeout, final=final,
                                      urgent=urgent)
        if raw:
            return bytes(body)
        return encoding.loads(body) if body.strip() else None

    @contextlib.asynccontextmanager
    async def stream(self, path: str, *, params: Mapping[str, str] | None = None,
                     backoffs: apierrors.Backoffs = DEFAULT) -> AsyncIterator[transports.StreamResponse]:
        """Open a long GET (a watch); retries and re-login happen only until the answer's headers arrive."""
        net, watching = self.settings.networking, self.settings.watching
        total, connect = watching.client_timeout, watching.connect_timeout or net.connect_timeout

        item, response = await self._attempt(None, path, params=params, backoffs=backoffs, total=total, connect=connect)
        with item.borrowed():  # the transport is not closed while the watch streams
            try:
                yield response
            finally:
                response.close()


def _what(method: str | None, path: str) -> str:
    return f'a watch of {path}' if method is None else f'{method} {path}'


def _describe(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, apierrors.APIError) else f'{type(exc).__name__}: {exc}'
