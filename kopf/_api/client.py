"""Requests to the Kubernetes API: sessions per credentials, retries, re-login on 401, error mapping.

Rules:
- One session per credentials (keep-alive connection reuse): our own HTTP/1.1 client (`http.Session`)
  for direct connections; aiohttp (imported only then) for proxies (`proxy_url`, or `trust_env` with
  proxy variables set) and for the ready aiohttp sessions of login handlers (`AiohttpSession`).
  TLS verification is on unless the credentials say `insecure`; every request carries
  `User-Agent: kopf/<version>`. Credentials whose headers would have CR, LF or NUL (header injection)
  are refused with a `LoginError` naming the header, never its value, before anything is sent.
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
import os
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from kopf._api import credentials, encoding, errors, http
from kopf._model import settings as settings_
from kopf._version import __version__

if TYPE_CHECKING:
    import aiohttp

logger = logging.getLogger('kopf._api')

USER_AGENT: Final = f'kopf/{__version__}'
JSON_CT: Final = 'application/json'
MERGE_PATCH_CT: Final = 'application/merge-patch+json'
JSON_PATCH_CT: Final = 'application/json-patch+json'


class _Default:
    def __repr__(self) -> str:
        return 'DEFAULT'


DEFAULT: Final[Any] = _Default()  # "the settings' backoffs", as distinct from None (= no retries)

# Requests in flight at once, per session of credentials (the aiohttp ones share one bound); watch streams are
# not counted. A burst of objects would otherwise open a connection per concurrent request; a few dozen
# keep-alive connections saturate any API server.
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

    def _session(self, item: credentials.VaultItem) -> 'http.Session | aiohttp.ClientSession':
        if item.session is None:
            creds = item.credentials
            if isinstance(creds, credentials.AiohttpSession):
                item.session = creds.aiohttp_session
            elif self._proxied(creds):
                item.session = _aiohttp_session(creds, trust_env=creds.trust_env or self.settings.networking.trust_env)
            else:
                headers = _headers(creds)
                https = creds.server.lower().startswith('https:')
                item.session = http.Session(creds.server, headers=headers,
                                            ssl_context=creds.as_ssl_context() if https else None,
                                            limit=MAX_CONCURRENT_REQUESTS)
        return item.session

    def _proxied(self, creds: credentials.ConnectionInfo) -> bool:
        if creds.proxy_url:
            return True
        if not (creds.trust_env or self.settings.networking.trust_env):
            return False
        scheme = creds.server.partition(':')[0].lower()
        return any(os.environ.get(name) for name in (f'{scheme}_proxy', f'{scheme.upper()}_PROXY'))

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
        delays: Iterator[float] | None = None  # made on the first failure only
        data = encoding.dumps(payload) if payload is not None else None
        while True:
            item = await self.vault.select()
            session = self._session(item)
            try:
                async with item.borrowed():
                    if isinstance(session, http.Session):  # it bounds its connections by itself
                        response = await session.request(
                            method, path, params=params, body=data, content_type=content_type if data else None,
                            total_timeout=net.request_timeout, connect_timeout=net.connect_timeout)
                        raw = response.body
                        if response.status >= 400:
                            raise _error(response.status, raw, response.headers.get('retry-after'))
                    else:
                        if self._slots is None:
                            self._slots = asyncio.Semaphore(MAX_CONCURRENT_REQUESTS)
                        async with self._slots:
                            raw = await _aiohttp_request(session, method, item.server + path, params=params,
                                                         data=data, content_type=content_type,
                                                         proxy=_proxy_url(item), total=net.request_timeout,
                                                         connect=net.connect_timeout)
                return encoding.loads(raw) if raw.strip() else None
            except errors.APIUnauthorizedError:
                logger.info(f'Unauthorized (401) for {method} {path}; the credentials are invalidated; re-logging in.')
                self.vault.invalidate(item)
            except Exception as exc:
                if delays is None:
                    delays = errors.iter_backoffs(net.error_backoffs if backoffs is DEFAULT else backoffs)
                decision = errors.decide_retry(exc, next(delays, None),
                                               enforce_retry_after=net.enforce_retry_after)
                if not decision.retry:
                    raise
                logger.warning(f'{method} {path} failed ({_describe(exc)}); retrying in {decision.delay:g}s.')
                await asyncio.sleep(decision.delay)

    @contextlib.asynccontextmanager
    async def stream(self, path: str, *, params: Mapping[str, str] | None = None,
                     backoffs: errors.Backoffs = DEFAULT) -> AsyncIterator[http.StreamResponse]:
        """Open a long GET (a watch); retries and re-login happen only until the answer's headers arrive."""
        net, watching = self.settings.networking, self.settings.watching
        delays = errors.iter_backoffs(net.error_backoffs if backoffs is DEFAULT else backoffs)
        total, connect = watching.client_timeout, watching.connect_timeout or net.connect_timeout
        response: http.StreamResponse
        while True:
            item = await self.vault.select()
            session = self._session(item)
            try:
                async with item.borrowed():
                    if isinstance(session, http.Session):
                        response = await session.stream('GET', path, params=params,
                                                        total_timeout=total, connect_timeout=connect)
                        if response.status >= 400:
                            try:
                                raw = await response.read()
                            finally:
                                response.close()
                            raise _error(response.status, raw, response.headers.get('retry-after'))
                    else:
                        response = await _aiohttp_stream(session, item.server + path, params=params,
                                                         proxy=_proxy_url(item), total=total, connect=connect)
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


def _headers(creds: credentials.ConnectionInfo) -> dict[str, str]:
    """The headers of every request with these credentials; CR/LF/NUL in them (header injection) is a `LoginError`."""
    headers = {'User-Agent': USER_AGENT, **creds.as_basic_auth_header(), **creds.as_http_headers()}
    try:
        http.check_headers(headers)
    except http.InvalidHeaderError as exc:
        raise errors.LoginError(f'Unusable credentials for {creds.server}: {exc}') from None
    return headers


def _error(status: int, raw: bytes, retry_after: str | None) -> errors.APIError:
    text = raw.decode('utf-8', errors='replace')
    payload: Any
    try:
        payload = encoding.loads(text)
    except ValueError:
        payload = text
    return errors.map_error(status, payload, retry_after_header=retry_after)


def _proxy_url(item: credentials.VaultItem) -> str | None:
    return item.credentials.proxy_url if isinstance(item.credentials, credentials.ConnectionInfo) else None


# aiohttp: only for proxies and for the sessions of login handlers; imported on first use, never by `import kopf`.

def _aiohttp_session(creds: credentials.ConnectionInfo, *, trust_env: bool) -> 'aiohttp.ClientSession':
    import aiohttp

    headers = _headers(creds)
    connector = aiohttp.TCPConnector(ssl=creds.as_ssl_context(), limit=0)
    return aiohttp.ClientSession(headers=headers, connector=connector, trust_env=trust_env)


def _aiohttp_kwargs(session: 'aiohttp.ClientSession', proxy: str | None,
                    total: float | None, connect: float | None) -> dict[str, Any]:
    import aiohttp

    kwargs: dict[str, Any] = {'timeout': aiohttp.ClientTimeout(total=total, sock_connect=connect),
                              'headers': {} if 'User-Agent' in session.headers else {'User-Agent': USER_AGENT}}
    if proxy:
        kwargs['proxy'] = proxy
    return kwargs


async def _aiohttp_request(session: 'aiohttp.ClientSession', method: str, url: str, *,
                           params: Mapping[str, str] | None, data: bytes | None, content_type: str,
                           proxy: str | None, total: float | None, connect: float | None) -> bytes:
    kwargs = _aiohttp_kwargs(session, proxy, total, connect)
    if data is not None:
        kwargs['headers']['Content-Type'] = content_type
    async with session.request(method, url, params=params, data=data, **kwargs) as response:
        raw = await response.read()
        if response.status >= 400:
            raise _error(response.status, raw, response.headers.get('Retry-After'))
        return raw


async def _aiohttp_stream(session: 'aiohttp.ClientSession', url: str, *, params: Mapping[str, str] | None,
                          proxy: str | None, total: float | None, connect: float | None) -> '_AiohttpStream':
    response = await session.get(url, params=params, **_aiohttp_kwargs(session, proxy, total, connect))
    try:
        if response.status >= 400:
            raise _error(response.status, await response.read(), response.headers.get('Retry-After'))
    except BaseException:
        response.release()
        raise
    return _AiohttpStream(response)


class _AiohttpStream:
    """An aiohttp answer read as `http.StreamResponse`; its transport errors become `http.TransportError`."""

    def __init__(self, response: 'aiohttp.ClientResponse') -> None:
        import aiohttp

        self._response = response
        self._errors = aiohttp.ClientError
        self.status = response.status

    async def read_chunk(self) -> bytes:
        try:
            return await self._response.content.readany()
        except self._errors as exc:
            raise http.TransportError(f'{type(exc).__name__}: {exc}') from exc

    def close(self) -> None:
        self._response.close()


def _describe(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, errors.APIError) else f'{type(exc).__name__}: {exc}'
