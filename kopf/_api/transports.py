"""How requests reach the API server: one `Transport` protocol, two implementations.

Rules:
- `request()` returns the answer's body (bytes); `stream()` returns once the answer's headers arrived
  (its body is read by `read_chunk()`; the caller closes it). An error status (>= 400) is raised by
  both as its `apierrors.APIError` (mapped once, by `apierrors.map_error`), after its body was read and its
  connection released. Failures to talk (`ConnectionError`s, `TimeoutError`s) are raised as they are:
  retrying, re-login and the timeouts' values are the client's (`client`), not the transport's.
- `DirectTransport`: our own HTTP/1.1 client (`http.Session`), for direct connections: no aiohttp.
- `AiohttpTransport`: aiohttp's client, for proxies and for the ready sessions of login handlers
  (`credentials.AiohttpSession`). aiohttp is imported only when such a transport is made or used,
  never by `import kopf`. Its requests in flight are bounded by the semaphore they are given (the
  client gives all of its aiohttp transports one); its stream errors become `http.TransportError`s.
  A request carries `User-Agent: kopf/<version>` unless the session has its own; an operator's client
  adds its identity: `kopf/<version> (<identity>)`, so that the server side can tell replicas apart.
- `close()` closes what the transport made itself; a login handler's session is the handler's to close.
- Credentials whose headers would have CR, LF or NUL (header injection) make no transport: a `LoginError`
  names the header, never its value, before anything is sent.
"""
import asyncio
from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol

from kopf._api import apierrors, credentials, http
from kopf._shared import encoding
from kopf._version import VERSION

if TYPE_CHECKING:
    import aiohttp

USER_AGENT: Final = f'kopf/{VERSION}'  # the source's version: the metadata is read lazily


class StreamResponse(Protocol):
    """What a watch reads: the status, then the body piece by piece (b'' at its end)."""

    status: int

    async def read_chunk(self) -> bytes: ...

    def close(self) -> None: ...


class Transport(Protocol):
    """One session of one set of credentials: requests, streams, and closing."""

    async def request(self, method: str, path: str, *, params: Mapping[str, str] | None, body: bytes | None,
                      content_type: str | None, total: float | None, connect: float | None,
                      urgent: bool = False) -> bytes:
        """The body of a successful answer; `APIError` for an error status. `urgent`: not queued behind the bound."""
        ...

    async def stream(self, path: str, *, params: Mapping[str, str] | None,
                     total: float | None, connect: float | None) -> StreamResponse:
        """A GET whose body is read by chunks (a watch); `APIError` for an error status."""
        ...

    async def close(self) -> None: ...


def user_agent(identity: str | None) -> str:
    """`kopf/<version>`, with the operator's identity as a comment if it has one (parentheses dropped from it)."""
    if not identity:
        return USER_AGENT
    return f'{USER_AGENT} ({identity.replace("(", "").replace(")", "")})'


def headers(creds: credentials.ConnectionInfo, agent: str = USER_AGENT) -> dict[str, str]:
    """The headers of every request with these credentials; CR/LF/NUL in them (header injection) is a `LoginError`."""
    found = {'User-Agent': agent, **creds.as_basic_auth_header(), **creds.as_http_headers()}
    try:
        http.check_headers(found)
    except http.InvalidHeaderError as exc:
        raise apierrors.LoginError(f'Unusable credentials for {creds.server}: {exc}') from None
    return found


def error(status: int, raw: bytes, retry_after: str | None) -> apierrors.APIError:
    """The API error of an error answer: its body is the server's Status if it is one, else its text."""
    text = raw.decode('utf-8', errors='replace')
    payload: Any
    try:
        payload = encoding.loads(text)
    except ValueError:
        payload = text
    return apierrors.map_error(status, payload, retry_after_header=retry_after)


class DirectTransport:
    """Our own HTTP/1.1 client: it bounds its connections by itself (`limit`)."""

    __slots__ = ('session',)

    def __init__(self, creds: credentials.ConnectionInfo, *, limit: int, agent: str = USER_AGENT) -> None:
        https = creds.server.lower().startswith('https:')
        self.session = http.Session(creds.server, headers=headers(creds, agent),
                                    ssl_context=creds.as_ssl_context() if https else None, limit=limit)

    def request(self, method: str, path: str, *, params: Mapping[str, str] | None, body: bytes | None,
                content_type: str | None, total: float | None, connect: float | None,
                urgent: bool = False) -> Coroutine[Any, Any, bytes]:
        # Not a coroutine of its own: the session's is awaited directly (a frame less to resume, every request).
        return self.session.fetch(method, path, params=params, body=body, content_type=content_type,
                                  total_timeout=total, connect_timeout=connect, error=error, urgent=urgent)

    async def stream(self, path: str, *, params: Mapping[str, str] | None,
                     total: float | None, connect: float | None) -> StreamResponse:
        response = await self.session.stream('GET', path, params=params, total_timeout=total, connect_timeout=connect)
        if response.status >= 400:
            try:
                raw = await response.read()
            finally:
                response.close()
            raise error(response.status, raw, response.headers.get('retry-after'))
        return response

    async def close(self) -> None:
        await self.session.close()


class AiohttpTransport:
    """aiohttp's client: a session made here for a proxy (owned), or a login handler's (not owned)."""

    def __init__(self, session: 'aiohttp.ClientSession', *, server: str, proxy: str | None,
                 slots: asyncio.Semaphore, owned: bool) -> None:
        self.session = session
        self.server = server.rstrip('/')
        self.proxy = proxy
        self.slots = slots
        self.owned = owned

    @classmethod
    def proxied(cls, creds: credentials.ConnectionInfo, *, trust_env: bool,
                slots: asyncio.Semaphore, agent: str = USER_AGENT) -> 'AiohttpTransport':
        """A session of our own, through `creds.proxy_url` or (with `trust_env`) the environment's proxy."""
        import aiohttp  # only for proxies and aiohttp's sessions

        connector = aiohttp.TCPConnector(ssl=creds.as_ssl_context(), limit=0)
        session = aiohttp.ClientSession(headers=headers(creds, agent), connector=connector, trust_env=trust_env)
        return cls(session, server=creds.server, proxy=creds.proxy_url, slots=slots, owned=True)

    def _kwargs(self, total: float | None, connect: float | None) -> dict[str, Any]:
        import aiohttp  # only for proxies and aiohttp's sessions

        kwargs: dict[str, Any] = {'timeout': aiohttp.ClientTimeout(total=total, sock_connect=connect),
                                  'headers': {} if 'User-Agent' in self.session.headers else {'User-Agent': USER_AGENT}}
        if self.proxy:
            kwargs['proxy'] = self.proxy
        return kwargs

    async def request(self, method: str, path: str, *, params: Mapping[str, str] | None, body: bytes | None,
                      content_type: str | None, total: float | None, connect: float | None,
                      urgent: bool = False) -> bytes:
        kwargs = self._kwargs(total, connect)
        if body is not None and content_type is not None:
            kwargs['headers']['Content-Type'] = content_type
        slot = http.UNBOUNDED if urgent else self.slots
        async with slot, self.session.request(method, self.server + path, params=params, data=body,
                                              **kwargs) as response:
            raw = await response.read()
            if response.status >= 400:
                raise error(response.status, raw, response.headers.get('Retry-After'))
            return raw

    async def stream(self, path: str, *, params: Mapping[str, str] | None,
                     total: float | None, connect: float | None) -> StreamResponse:
        response = await self.session.get(self.server + path, params=params, **self._kwargs(total, connect))
        try:
            if response.status >= 400:
                raise error(response.status, await response.read(), response.headers.get('Retry-After'))
        except BaseException:
            response.release()
            raise
        return _AiohttpStream(response)

    async def close(self) -> None:
        if self.owned:
            await self.session.close()


class _AiohttpStream:
    """An aiohttp answer read as a `StreamResponse`; its transport errors become `http.TransportError`."""

    def __init__(self, response: 'aiohttp.ClientResponse') -> None:
        import aiohttp  # only for proxies and aiohttp's sessions

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
