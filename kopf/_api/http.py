"""A small asyncio HTTP/1.1 client: what the API client needs, and nothing more (no aiohttp on the hot path).

Rules:
- One `Session` per credentials, bound to its server (scheme, host, port, path prefix, TLS context):
  it keeps a pool of keep-alive connections, at most `limit` of them for requests; idle ones are
  reused last-in-first-out and closed after `idle_timeout`. A watch stream opens a connection of its
  own (outside the bound, so that many watches never starve requests) and closes it when it ends.
- The headers of the credentials (Host, User-Agent, Authorization) are encoded once per session;
  a request adds only its request line and, with a body, Content-Type and Content-Length.
  No Accept-Encoding: answers come uncompressed.
- Answers are framed by Content-Length, by `Transfer-Encoding: chunked`, or else read to EOF.
  An answer with `Connection: close` (or HTTP/1.0, or read to EOF) closes its connection.
- A request on a reused connection that fails before any byte of the answer arrived (the server
  closed the connection while it was idle) is retried once on a fresh connection, transparently.
- Failures are `ConnectionError`s (`TransportError` and its subclasses; or the OS's own), timeouts
  are `TimeoutError`s: `apierrors.decide_retry` retries both; a wrong certificate is `ssl`'s own error.
  Any other `OSError` once connected (a TLS error such as a bad record MAC, EHOSTUNREACH) closes the
  connection and is raised as a `TransportError` (as aiohttp's `ClientOSError` was), never as is.
- A connection is reused only with nothing unread in its buffer (else, e.g. a server's unsolicited
  408 before closing an idle connection would be read as the answer of the next request).
- Header names and values with CR, LF or NUL are refused (`ValueError`, naming the header, never its value).
- The total timeout of a request starts once it has a connection slot (waiting for one is not counted).
- An `urgent` request (a Lease's renewal) takes no slot: it never queues behind the others (a burst's
  hundreds of requests waiting for the `limit` slots once took a Lease's renewal past its deadline);
  it uses an idle pooled connection if there is one, else opens one.
- Query strings are encoded as aiohttp (yarl) did: `quote_plus` with `!$'()*,/:?@` kept as is.
- A TLS connection's receive buffer is 16 KiB (a TLS record's most), not asyncio's 256 KiB
  (`sslproto.SSLProtocol.max_size`, zero-filled, so resident): a client connection then costs ~60 KB, not
  ~290 KB; with up to `LIMIT` pooled connections and a watch per resource (and per Lease), 256 KiB each was
  most of a replica's memory under a burst on a real (TLS) server. Done on asyncio's own protocol
  (private attributes, checked first); other loops' TLS (uvloop's) is left as it is.
"""
import asyncio
import contextlib
import ssl
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any, Final, NoReturn

from kopf._api import inflight

IDLE_TIMEOUT: Final = 15.0  # seconds; as aiohttp's keep-alive timeout (API servers keep theirs longer)
LIMIT: Final = 64  # open connections of requests per session
SWEEP_SLACK: Final = 0.001  # seconds: idle connections this close to their expiry are closed in the same sweep
QUERY_SAFE: Final = "!$'()*,/:?@"
MAX_HEAD: Final = 1 << 20  # bytes of a status line with headers; also the longest chunk-size line
TLS_BUFFER: Final = 16 * 1024  # bytes: a TLS connection's receive buffer (asyncio's default: 256 KiB)
UNBOUNDED: Final = contextlib.nullcontext()  # an urgent request's "slot"


class TransportError(ConnectionError):
    """The connection failed while talking (not an HTTP error status: those are answers)."""


class ServerDisconnectedError(TransportError):
    """The server closed the connection before its answer's headers were complete."""


class PayloadError(TransportError):
    """The answer's body was truncated or malformed (e.g. the connection closed midway)."""


class InvalidHeaderError(ValueError):
    """A header's name or value has CR, LF or NUL: it would inject headers (the message never has the value)."""


FORBIDDEN_IN_HEADERS: Final = ('\r', '\n', '\0')


def check_headers(headers: Mapping[str, str]) -> None:
    """Refuse headers whose name or value has CR, LF or NUL; name the header, never show its value (a secret)."""
    for name, value in headers.items():
        if any(char in name for char in FORBIDDEN_IN_HEADERS):
            shown = name.split('\r')[0].split('\n')[0].split('\0')[0]
            raise InvalidHeaderError(f'The name of the header {shown!r}... contains CR, LF or NUL; refused.')
        if any(char in value for char in FORBIDDEN_IN_HEADERS):
            raise InvalidHeaderError(f'The value of the header {name!r} contains CR, LF or NUL; refused '
                                     f'(the value is not shown).')


def encode_query(params: Mapping[str, str]) -> str:
    return urllib.parse.urlencode(params, safe=QUERY_SAFE, quote_via=urllib.parse.quote_plus)


class Connection:
    __slots__ = ('idle_since', 'reader', 'reused', 'writer')

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.reused = False
        self.idle_since = 0.0

    def usable(self) -> bool:
        """Open, and nothing unread: bytes that arrived while idle are no answer to the next request."""
        reader = self.reader
        return (not reader._buffer  # type: ignore[attr-defined]  # no public API for the buffered size
                and not reader.at_eof() and reader.exception() is None and not self.writer.is_closing())

    def close(self) -> None:
        self.writer.close()


class Response:
    """An answer: `status`, `headers` (lower-case names), and the body: `body` when read, or `read_chunk()`."""

    __slots__ = ('_chunk_left', '_chunked', '_conn', '_deadline', '_done', '_left', '_session', 'body', 'headers',
                 'status')

    def __init__(self, status: int, headers: dict[str, str], conn: Connection, session: 'Session | None',
                 *, head_only: bool, deadline: float | None) -> None:
        self.status = status
        self.headers = headers
        self.body = b''
        self._conn = conn
        self._session = session  # where a completely read connection goes back to; None: close it
        self._deadline = deadline
        self._chunked = 'chunked' in headers.get('transfer-encoding', '').lower()
        self._chunk_left = 0  # bytes of the current chunk still to read: a chunk is passed on in pieces
        length = headers.get('content-length')
        self._left: int | None  # bytes of a Content-Length body still to read; None: chunked or till EOF
        if head_only or status in (204, 304):
            self._left = 0
            self._chunked = False
        elif self._chunked:
            self._left = None
        elif length is not None:
            try:
                self._left = int(length)
            except ValueError:
                raise PayloadError(f'Invalid Content-Length: {length!r}') from None
        else:
            self._left = None
            self._session = None  # read to EOF: the connection ends with the body
        if headers.get('connection', '').lower() == 'close':
            self._session = None
        self._done = False
        if self._left == 0:
            self._finish()

    def _finish(self) -> None:
        self._done = True
        if self._session is not None:
            self._session.release(self._conn)
        else:
            self._conn.close()

    def close(self) -> None:
        """Stop reading: a connection whose answer was not read completely is closed, never reused."""
        if not self._done:
            self._done = True
            self._conn.close()

    async def read(self) -> bytes:
        """The rest of the body, all of it (kept as `body` too)."""
        if self._left and not self._done:  # a Content-Length body: at once
            try:
                self.body = await self._conn.reader.readexactly(self._left)
            except BaseException as exc:
                _raise_failure(exc, self.close)
            self._left = 0
            self._finish()
            return self.body
        chunks = []
        while chunk := await self._next():
            chunks.append(chunk)
        self.body = chunks[0] if len(chunks) == 1 else b''.join(chunks)
        return self.body

    async def read_chunk(self) -> bytes:
        """The next piece of the body as it arrives; b'' at its end. Within the stream's total timeout."""
        if self._deadline is None:
            return await self._next()
        async with asyncio.timeout_at(self._deadline):
            return await self._next()

    async def _next_of_chunk(self, reader: asyncio.StreamReader) -> bytes:
        """The next piece of a chunked body: at most 64 KiB of a chunk, however big the server made it (a
        watch may send thousands of events in one chunk: they are not held at once, nor copied whole)."""
        if not self._chunk_left:
            line = await reader.readuntil(b'\r\n')
            try:
                size = int(line.split(b';', 1)[0], 16)
            except ValueError:
                raise PayloadError(f'Invalid chunk size line: {line[:40]!r}') from None
            if not size:
                while await reader.readuntil(b'\r\n') != b'\r\n':
                    pass  # trailers: ignored
                self._finish()
                return b''
            self._chunk_left = size
        data = await reader.read(min(self._chunk_left, 65536))
        if not data:
            raise asyncio.IncompleteReadError(data, self._chunk_left)
        self._chunk_left -= len(data)
        if not self._chunk_left and await reader.readexactly(2) != b'\r\n':
            raise PayloadError('A chunk does not end with CRLF.')
        return data

    async def _next(self) -> bytes:
        if self._done:
            return b''
        reader = self._conn.reader
        try:
            if self._chunked:
                return await self._next_of_chunk(reader)
            if self._left is None:
                data = await reader.read(65536)
                if not data:
                    self._finish()
                return data
            data = await reader.read(min(self._left, 65536))
            if not data:
                raise PayloadError(f'The body ended {self._left} bytes before its Content-Length.')
            self._left -= len(data)
            if not self._left:
                self._finish()
            return data
        except asyncio.LimitOverrunError:
            self.close()
            raise PayloadError('A chunk-size line is too long.') from None
        except BaseException as exc:
            _raise_failure(exc, self.close)


def shrink_tls_buffer(transport: asyncio.BaseTransport, size: int = TLS_BUFFER) -> bool:
    """Give asyncio's TLS protocol of this transport a smaller receive buffer; False if it is not asyncio's.

    Its buffer is only read into and copied out within one callback (`get_buffer`/`buffer_updated`), so it
    can be swapped between reads; `max_size` bounds both what is read from the socket and what is decrypted
    at once (so the smaller buffer is never grown back).
    """
    protocol: Any = getattr(transport, '_ssl_protocol', None)
    buffer = getattr(protocol, '_ssl_buffer', None)
    if not isinstance(buffer, bytearray) or not isinstance(getattr(protocol, 'max_size', None), int):
        return False
    if len(buffer) > size:
        protocol.max_size = size
        protocol._ssl_buffer = bytearray(size)
        protocol._ssl_buffer_view = memoryview(protocol._ssl_buffer)
    return True


class Session:
    """Keep-alive connections to one server with pre-encoded headers; `request()` and `stream()`."""

    def __init__(self, server: str, *, headers: Mapping[str, str] | None = None,
                 ssl_context: ssl.SSLContext | None = None, server_hostname: str | None = None,
                 limit: int = LIMIT, idle_timeout: float = IDLE_TIMEOUT) -> None:
        url = urllib.parse.urlsplit(server)
        if url.scheme not in ('http', 'https') or not url.hostname:
            raise ValueError(f'Unsupported server URL: {server!r}')
        self.host = url.hostname
        self.port = url.port or (443 if url.scheme == 'https' else 80)
        self.prefix = url.path.rstrip('/')
        self.ssl = (ssl_context or ssl.create_default_context()) if url.scheme == 'https' else None
        self.server_hostname = (server_hostname or self.host) if self.ssl is not None else None
        self.headers = {'Host': url.netloc.rpartition('@')[2], **(headers or {})}
        check_headers(self.headers)
        self._head = ''.join(f'{name}: {value}\r\n' for name, value in self.headers.items()).encode('latin-1')
        self.idle_timeout = idle_timeout
        self._slots = inflight.Slots(limit)
        self._deadlines = inflight.Deadlines()
        self._idle: list[Connection] = []  # oldest first; reused from the end
        self._sweeper: asyncio.TimerHandle | None = None
        self.opened = 0  # connections opened so far (for tests and diagnostics)
        self.closed = False

    def _encode(self, method: str, path: str, params: Mapping[str, str] | None,
                body: bytes | None, content_type: str | None) -> bytes:
        target = f'{self.prefix}{path}?{encode_query(params)}' if params else self.prefix + path
        head = f'{method} {target} HTTP/1.1\r\n'.encode('latin-1') + self._head
        if body is None:
            return head + b'\r\n'
        typed = f'Content-Type: {content_type}\r\n' if content_type else ''
        return head + f'{typed}Content-Length: {len(body)}\r\n\r\n'.encode('latin-1') + body

    async def request(self, method: str, path: str, *, params: Mapping[str, str] | None = None,
                      body: bytes | None = None, content_type: str | None = None,
                      total_timeout: float | None = None, connect_timeout: float | None = None) -> Response:
        """Send a request; return the answer with its body read (`response.body`). Any status is an answer."""
        raw = self._encode(method, path, params, body, content_type)
        async with self._slots, asyncio.timeout(total_timeout):  # the slot first: waiting for it is no timeout
            response = await self._exchange(raw, method, connect_timeout, deadline=None, own=False)
            await response.read()
        return response

    async def fetch(self, method: str, path: str, *, params: Mapping[str, str] | None,
                    body: bytes | None, content_type: str | None, total_timeout: float | None,
                    connect_timeout: float | None, error: Callable[[int, bytes, str | None], BaseException],
                    urgent: bool = False) -> bytes:
        """As `request()`, but the body only, and an error status (>= 400) raised as `error(status, body, retry-after)`.

        For the API client's transport: its requests need no `Response` and no coroutine in between.
        `urgent`: without a slot (not queued behind the other requests).
        """
        raw = self._encode(method, path, params, body, content_type)
        slots = None if urgent else self._slots
        if slots is not None and not slots.take():
            await slots.wait()
        deadline = self._deadlines.start(total_timeout) if total_timeout is not None else None  # once it has a slot
        try:
            response = await self._exchange(raw, method, connect_timeout, deadline=None, own=False)
            data = await response.read()
        except asyncio.CancelledError as exc:
            timed_out, deadline = deadline is not None and self._deadlines.finish(deadline, True), None
            if timed_out:
                raise TimeoutError from exc  # as `asyncio.timeout()` raises it
            raise
        finally:
            if slots is not None:
                slots.release()
            if deadline is not None:
                self._deadlines.finish(deadline, False)
        if response.status >= 400:
            raise error(response.status, data, response.headers.get('retry-after'))
        return data

    async def stream(self, method: str, path: str, *, params: Mapping[str, str] | None = None,
                     total_timeout: float | None = None, connect_timeout: float | None = None) -> Response:
        """Send a request on a connection of its own; return once the headers arrived (read the body by chunks).

        The total timeout covers the whole answer, its body's reading included. Close the response when done.
        """
        raw = self._encode(method, path, params, None, None)
        deadline = None if total_timeout is None else asyncio.get_running_loop().time() + total_timeout
        async with asyncio.timeout_at(deadline):
            return await self._exchange(raw, method, connect_timeout, deadline=deadline, own=True)

    async def _exchange(self, raw: bytes, method: str, connect_timeout: float | None, *,
                        deadline: float | None, own: bool) -> Response:
        fresh = own
        while True:
            conn = await self._connect(connect_timeout) if fresh else await self._acquire(connect_timeout)
            try:
                conn.writer.write(raw)
                await conn.writer.drain()
                head = await conn.reader.readuntil(b'\r\n\r\n')
            except (asyncio.IncompleteReadError, ConnectionError) as exc:
                conn.close()
                partial = exc.partial if isinstance(exc, asyncio.IncompleteReadError) else b''
                if conn.reused and not partial:
                    fresh = True  # closed by the server while idle: once more, on a fresh connection
                    continue
                raise ServerDisconnectedError(f'The server closed the connection without an answer '
                                              f'({type(exc).__name__}: {exc}).') from None
            except asyncio.LimitOverrunError:
                conn.close()
                raise PayloadError('The answer\'s headers are too long.') from None
            except BaseException as exc:
                _raise_failure(exc, conn.close, keep=ssl.SSLCertVerificationError)  # a wrong certificate: final
            try:
                status, headers = _parse_head(head)
                while 100 <= status < 200:  # interim answers (100 Continue, 103): skipped
                    status, headers = _parse_head(await conn.reader.readuntil(b'\r\n\r\n'))
                return Response(status, headers, conn, None if own else self,
                                head_only=method == 'HEAD', deadline=deadline)
            except BaseException:
                conn.close()
                raise

    async def _acquire(self, connect_timeout: float | None) -> Connection:
        while self._idle:
            conn = self._idle.pop()
            if conn.usable():
                conn.reused = True
                return conn
            conn.close()
        return await self._connect(connect_timeout)

    async def _connect(self, connect_timeout: float | None) -> Connection:
        if self.closed:
            raise TransportError('The session is closed.')
        async with asyncio.timeout(connect_timeout):
            reader, writer = await asyncio.open_connection(
                self.host, self.port, ssl=self.ssl, server_hostname=self.server_hostname, limit=MAX_HEAD)
        self.opened += 1
        if self.ssl is not None:
            shrink_tls_buffer(writer.transport)
        return Connection(reader, writer)

    def release(self, conn: Connection) -> None:
        """A connection whose answer was read completely: kept for reuse (or closed if the session is)."""
        if self.closed or not conn.usable():
            conn.close()
            return
        loop = asyncio.get_running_loop()
        conn.idle_since = loop.time()
        self._idle.append(conn)
        if self._sweeper is None:
            self._sweeper = loop.call_at(conn.idle_since + self.idle_timeout, self._sweep)

    def _sweep(self) -> None:
        self._sweeper = None
        loop = asyncio.get_running_loop()
        # The same sum as the timer's (no float rounding between them), with a little slack: the loop runs
        # timers up to its clock's resolution early, and a sweeper that finds nothing due would reschedule
        # itself at the same moment, again and again (a spin under a fast-forwarded clock).
        due = loop.time() + SWEEP_SLACK
        while self._idle and self._idle[0].idle_since + self.idle_timeout <= due:
            self._idle.pop(0).close()
        if self._idle:
            self._sweeper = loop.call_at(self._idle[0].idle_since + self.idle_timeout, self._sweep)

    @property
    def idle(self) -> int:
        return len(self._idle)

    async def close(self) -> None:
        self.closed = True
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


def _raise_failure(exc: BaseException, close: Callable[[], None], *,
                   keep: type[BaseException] | tuple[type[BaseException], ...] = ()) -> NoReturn:
    """Close the connection after any failure while talking, and raise what failed as the client's rules say.

    A truncated answer is a `PayloadError`. Timeouts stay as they are (the caller's timeouts, e.g. a watch's
    inactivity timeout, mean something else), so do our own `TransportError`s and the `keep` ones; any other
    `OSError` (a TLS error such as a bad record MAC, EHOSTUNREACH) is raised as a `TransportError`.
    """
    close()
    if isinstance(exc, asyncio.IncompleteReadError):
        raise PayloadError(f'The body was truncated ({len(exc.partial)} of {exc.expected} bytes).') from None
    if isinstance(exc, OSError) and not isinstance(exc, (TimeoutError, TransportError)) and not isinstance(exc, keep):
        raise TransportError(f'The connection failed ({type(exc).__name__}: {exc}).') from exc
    raise exc


def _parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    lines = head.decode('latin-1').split('\r\n')
    version, _, rest = lines[0].partition(' ')
    try:
        status = int(rest[:3])
    except ValueError:
        raise PayloadError(f'Not an HTTP answer: {lines[0][:80]!r}') from None
    if not version.startswith('HTTP/1.'):
        raise PayloadError(f'Not an HTTP/1.x answer: {lines[0][:80]!r}')
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(':')
            name = name.strip().lower()
            value = value.strip()
            headers[name] = f'{headers[name]}, {value}' if name in headers else value
    if version == 'HTTP/1.0' and headers.get('connection', '').lower() != 'keep-alive':
        headers['connection'] = 'close'
    return status, headers
