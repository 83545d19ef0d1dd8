"""Requests to the Kubernetes API: sessions per credentials, retries, re-login on 401, error mapping.

Rules:
- One aiohttp session per credentials (connection reuse); TLS verification is on unless the
  credentials say `insecure`; every request carries `User-Agent: kopf/<version>`.
- Non-watch requests time out per `settings.networking` (request/connect timeouts); streams per
  `settings.watching` (client/connect timeouts; the inactivity timeout is the watcher's).
- Errors are mapped once (`errors.map_error`) and retried per `errors.decide_retry` with
  `settings.networking.error_backoffs` (or the backoffs of the call). A 401 invalidates the
  credentials and retries with fresh ones from the vault (re-login), without consuming a backoff.
- Requests and watches borrow their credentials (`VaultItem.borrowed()`): the vault learns which were
  accepted, and closes the session of rejected ones only once nothing uses it.
"""
import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any, Final

import aiohttp

from kopf._api import credentials, encoding, errors
from kopf._model import settings as settings_
from kopf._version import __version__

logger = logging.getLogger('kopf._api')

USER_AGENT: Final = f'kopf/{__version__}'
JSON_CT: Final = 'application/json'
MERGE_PATCH_CT: Final = 'application/merge-patch+json'
JSON_PATCH_CT: Final = 'application/json-patch+json'


class _Default:
    def __repr__(self) -> str:
        return 'DEFAULT'


DEFAULT: Final[Any] = _Default()  # "the settings' backoffs", as distinct from None (= no retries)

# Requests in flight at once (watch streams are not counted). A burst of objects would otherwise open
# a connection per concurrent request; a few dozen keep-alive connections saturate any API server.
MAX_CONCURRENT_REQUESTS: Final = 64


class APIClient:
    """The one way to talk to the API: `request()` for answers, `stream()` for watches."""

    def __init__(self, vault: credentials.Vault, settings: settings_.OperatorSettings) -> None:
        self.vault = vault
        self.settings = settings
        self._slots: asyncio.Semaphore | None = None  # made in the running loop, on first use

    async def close(self) -> None:
        await self.vault.close()

    async def default_namespace(self) -> str | None:
        """The namespace of the current credentials' context (e.g. a kubeconfig's), if any."""
        return (await self.vault.select()).default_namespace

    def _session(self, item: credentials.VaultItem) -> aiohttp.ClientSession:
        if item.session is None:
            creds = item.credentials
            if isinstance(creds, credentials.AiohttpSession):
                item.session = creds.aiohttp_session
            else:
                headers = {'User-Agent': USER_AGENT, **creds.as_basic_auth_header(), **creds.as_http_headers()}
                connector = aiohttp.TCPConnector(ssl=creds.as_ssl_context(), limit=0)
                item.session = aiohttp.ClientSession(
                    headers=headers, connector=connector,
                    trust_env=creds.trust_env or self.settings.networking.trust_env,
                )
        return item.session

    def _request_kwargs(self, item: credentials.VaultItem, session: aiohttp.ClientSession) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        if 'User-Agent' not in session.headers:
            kwargs['headers'] = {'User-Agent': USER_AGENT}
        if isinstance(item.credentials, credentials.ConnectionInfo) and item.credentials.proxy_url:
            kwargs['proxy'] = item.credentials.proxy_url
        return kwargs

    async def request(
            self,
            method: str,
            path: str,
            *,
            params: Mapping[str, str] | None = None,
            payload: Any = None,
            content_type: str = JSON_CT,
            backoffs: errors.Backoffs = DEFAULT,
    ) -> Any:
        """Send a request; return the decoded JSON answer; raise `APIError` subclasses after the retries."""
        net = self.settings.networking
        delays = errors.iter_backoffs(net.error_backoffs if backoffs is DEFAULT else backoffs)
        timeout = aiohttp.ClientTimeout(total=net.request_timeout, sock_connect=net.connect_timeout)
        data = encoding.dumps(payload) if payload is not None else None
        while True:
            item = await self.vault.select()
            session = self._session(item)
            kwargs = self._request_kwargs(item, session)
            if data is not None:
                kwargs.setdefault('headers', {})['Content-Type'] = content_type
            if self._slots is None:
                self._slots = asyncio.Semaphore(MAX_CONCURRENT_REQUESTS)
            try:
                async with item.borrowed(), self._slots, session.request(
                        method, item.server + path, params=params, data=data, timeout=timeout, **kwargs) as response:
                    await raise_for_status(response)
                    raw = await response.read()
                    return encoding.loads(raw) if raw.strip() else None
            except errors.APIUnauthorizedError:
                logger.info(f'Unauthorized (401) for {method} {path}; the credentials are invalidated; re-logging in.')
                self.vault.invalidate(item)
            except Exception as exc:
                decision = errors.decide_retry(exc, next(delays, None),
                                               enforce_retry_after=net.enforce_retry_after)
                if not decision.retry:
                    raise
                logger.warning(f'{method} {path} failed ({_describe(exc)}); retrying in {decision.delay:g}s.')
                await asyncio.sleep(decision.delay)

    @contextlib.asynccontextmanager
    async def stream(self, path: str, *, params: Mapping[str, str] | None = None,
                     backoffs: errors.Backoffs = DEFAULT) -> AsyncIterator[aiohttp.ClientResponse]:
        """Open a long GET (a watch); retries and re-login happen only until the answer's headers arrive."""
        net, watching = self.settings.networking, self.settings.watching
        delays = errors.iter_backoffs(net.error_backoffs if backoffs is DEFAULT else backoffs)
        timeout = aiohttp.ClientTimeout(total=watching.client_timeout,
                                        sock_connect=watching.connect_timeout or net.connect_timeout)
        while True:
            item = await self.vault.select()
            session = self._session(item)
            try:
                async with item.borrowed():
                    response = await session.get(item.server + path, params=params, timeout=timeout,
                                                 **self._request_kwargs(item, session))
                    try:
                        await raise_for_status(response)
                    except BaseException:
                        response.release()
                        raise
            except errors.APIUnauthorizedError:
                logger.info(f'Unauthorized (401) for a watch of {path}; the credentials are invalidated; '
                            f're-logging in.')
                self.vault.invalidate(item)
                continue
            except Exception as exc:
                decision = errors.decide_retry(exc, next(delays, None),
                                               enforce_retry_after=net.enforce_retry_after)
                if not decision.retry:
                    raise
                logger.warning(f'Watching {path} failed ({_describe(exc)}); retrying in {decision.delay:g}s.')
                await asyncio.sleep(decision.delay)
                continue
            async with item.borrowed():  # the session is not closed while the watch streams
                try:
                    yield response
                finally:
                    response.close()
            return


async def raise_for_status(response: aiohttp.ClientResponse) -> None:
    if response.status < 400:
        return
    text = await response.text()
    payload: Any
    try:
        payload = encoding.loads(text)
    except ValueError:
        payload = text
    raise errors.map_error(response.status, payload, retry_after_header=response.headers.get('Retry-After'))


def _describe(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, errors.APIError) else f'{type(exc).__name__}: {exc}'
