"""A small HTTP/1.1 server for the webhook servers: requests with bodies in, JSON answers out, keep-alive.

Why not aiohttp's web server: an admission review is one small POST whose answer the API server waits
for; aiohttp's request objects, router and response machinery are not needed for it (docs/design/decisions.md
#17).

Rules:
- A request is a request line and headers of at most `MAX_HEAD` bytes (else 431), then a body of
  `Content-Length` bytes or in chunks, of at most `max_body` bytes (else 413); anything malformed is a
  400. After an error answer, the connection is closed (what follows it cannot be trusted).
- `Expect: 100-continue` is answered before the body is read; `Connection: close` (and HTTP/1.0
  without `keep-alive`) closes the connection after the answer; so does a client's half-close, after
  the answers to the requests that arrived whole.
- Requests of one connection are answered in order, one at a time; pipelined ones wait in a queue of
  at most `PIPELINE` (then the connection stops reading until there is room).
- Nothing hangs: a request must arrive whole within `request_timeout` seconds of its first byte
  (else 408); an idle keep-alive connection is closed after `idle_timeout` seconds.
- `handler(request)` returns `(status, JSON bytes)`, or `(status, JSON bytes, after)`: `after()` is called
  once that answer is written (e.g. the log lines of a review: the client need not wait for them); if
  the handler raises, the answer is a 500.
- Answers are sent at the end of the loop's cycle, all that are ready together (`Server.flush`), not each
  at once: a client woken mid-cycle would take the CPU from the server before it had sent the others.
  Per connection, the order of answers (and of the close after the last one) is kept.
"""
import asyncio
import collections
import dataclasses
import json
import logging
import socket
import ssl
import typing
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

logger = logging.getLogger('kopf.webhooks')

MAX_HEAD = 64 * 1024
CRLF = '\r\n'
PIPELINE = 16
REASONS = {100: 'Continue', 200: 'OK', 400: 'Bad Request', 404: 'Not Found', 405: 'Method Not Allowed',
           408: 'Request Timeout', 411: 'Length Required', 413: 'Content Too Large',
           431: 'Request Header Fields Too Large', 500: 'Internal Server Error', 505: 'HTTP Version Not Supported'}


@dataclasses.dataclass(frozen=True)
class Request:
    method: str
    path: str                   # as sent, without the query
    headers: Mapping[str, str]  # as sent (the names' case kept; the last one of a repeated name wins)
    body: bytes
    peercert: Mapping[str, Any]  # the client's certificate, if verified (`ssl.SSLSocket.getpeercert()`)
    keep_alive: bool = True


After = Callable[[], None]
Handler = Callable[[Request], Awaitable[tuple[int, bytes] | tuple[int, bytes, After]]]


class BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Server:
    """Serves `handler` on a listening socket (with TLS if `context`) until `close()`."""

    def __init__(self, handler: Handler, *, max_body: int, request_timeout: float, idle_timeout: float) -> None:
        self.handler = handler
        self.max_body, self.request_timeout, self.idle_timeout = max_body, request_timeout, idle_timeout
        self.connections: set[Connection] = set()
        self._server: asyncio.Server | None = None
        # (connection, status or None: only close, body, close after it, called after it)
        self.outbox: list[tuple[Connection, int | None, bytes, bool, After | None]] = []

    def post(self, connection: 'Connection', status: int | None, body: bytes = b'', *, close: bool = False,
             after: After | None = None) -> None:
        """Send an answer (or close) once the loop has run all that is ready now: all answers go out together."""
        if not self.outbox:
            asyncio.get_running_loop().call_soon(self.flush)
        self.outbox.append((connection, status, body, close, after))

    def flush(self) -> None:
        outbox, self.outbox = self.outbox, []
        for connection, status, body, close, _ in outbox:
            if status is None:
                connection.close()
            else:
                connection._write(status, body, close=close)
        for *_, after in outbox:  # once all are written
            if after is not None:
                try:
                    after()
                except Exception as exc:
                    logger.exception(f'The webhook server failed after an answer: {exc!r}')

    async def start(self, sock: socket.socket, context: ssl.SSLContext | None) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: Connection(self), sock=sock, ssl=context)

    async def close(self) -> None:
        if self._server is not None:
            server, self._server = self._server, None
            server.close()
            for connection in list(self.connections):
                connection.close()
            await server.wait_closed()


class Connection(asyncio.Protocol):
    """One client connection: parses requests as bytes arrive, answers them one by one in a task."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.head: tuple[str, str, dict[str, str], bool] | None = None  # method, target, headers, keep-alive
        self.length: int | None = None  # the body's length; None for chunked
        self.queue: collections.deque[Request] = collections.deque()
        self.task: asyncio.Task[None] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.closing = False
        self.eof = False

    # -- the transport's callbacks -----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport, though not always a subclass of asyncio's (uvloop's TCP and SSL ones are not).
        self.transport = typing.cast(asyncio.Transport, transport)
        self.server.connections.add(self)
        self._arm(self.server.idle_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closing = True
        self.server.connections.discard(self)
        self._disarm()
        if self.task is not None:
            self.task.cancel()

    def eof_received(self) -> bool:
        """The client sent all it will (a half-close, plain HTTP only): answer what came whole, then close."""
        self.eof = self.closing = True
        if self.task is None and not any(connection is self for connection, *_ in self.server.outbox):
            self.close()
            return False
        if self.task is None:
            self.server.post(self, None)  # closed after the answers posted already
        tls = self.transport is not None and self.transport.get_extra_info('sslcontext') is not None
        return not tls  # keep the transport open for the answers (asyncio's TLS transport cannot, and warns)

    def data_received(self, data: bytes) -> None:
        if self.closing:
            return
        if not self.buffer and self.head is None:
            self._arm(self.server.request_timeout)  # a new request starts: it must arrive whole in time
        self.buffer += data
        try:
            self._parse()
        except BadRequest as exc:
            self._fail(exc.status, str(exc))

    # -- parsing ------------------------------------------------------------------------------------

    def _parse(self) -> None:
        while not self.closing:
            if self.head is None and not self._parse_head():
                return
            body = self._take_body()
            if body is None:
                return
            assert self.head is not None
            method, target, headers, keep_alive = self.head
            self.head = None
            peer = self.transport.get_extra_info('peercert') if self.transport is not None else None
            self.queue.append(Request(method, target.split('?', 1)[0], headers, body, peer or {}, keep_alive))
            if self.buffer:
                self._arm(self.server.request_timeout)  # the next (pipelined) request has started
            elif self.task is None:
                self._disarm()  # answering now; the idle time starts after the answer
            if len(self.queue) >= PIPELINE and self.transport is not None:
                self.transport.pause_reading()
            if self.task is None:
                self.task = asyncio.get_running_loop().create_task(self._answer_all())
            if not keep_alive:
                self.closing = True  # nothing after this request is read

    def _parse_head(self) -> bool:
        end = self.buffer.find(b'\r\n\r\n')
        if end < 0:
            if len(self.buffer) > MAX_HEAD:
                raise BadRequest(431, 'The request head is too large.')
            return False
        if end > MAX_HEAD:
            raise BadRequest(431, 'The request head is too large.')
        lines = bytes(self.buffer[:end]).decode('latin-1').split('\r\n')
        del self.buffer[:end + 4]
        parts = lines[0].split(' ')
        if len(parts) != 3 or not parts[2].startswith('HTTP/1.'):
            raise BadRequest(505 if len(parts) == 3 and parts[2].startswith('HTTP/') else 400,
                             'Not an HTTP/1.x request line.')
        headers: dict[str, str] = {}
        folded: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(':')
            if not sep or not name or name != name.strip():
                raise BadRequest(400, 'A malformed header line.')
            headers[name] = value.strip()
            folded[name.lower()] = value.strip()
        connection = folded.get('connection', '').lower()
        keep_alive = 'close' not in connection and (parts[2] != 'HTTP/1.0' or 'keep-alive' in connection)
        if 'chunked' in folded.get('transfer-encoding', '').lower():
            self.length = None
        elif 'content-length' in folded:
            text = folded['content-length']
            if not text.isdigit():
                raise BadRequest(400, 'A malformed Content-Length.')
            self.length = int(text)
            if self.length > self.server.max_body:
                raise BadRequest(413, f'The body is over {self.server.max_body} bytes.')
        elif parts[0] in ('POST', 'PUT', 'PATCH'):
            raise BadRequest(411, 'The request has no Content-Length.')
        else:
            self.length = 0
        self.head = (parts[0], parts[1], headers, keep_alive)
        if folded.get('expect', '').lower() == '100-continue' and self.transport is not None:
            self.transport.write(b'HTTP/1.1 100 Continue\r\n\r\n')
        return True

    def _take_body(self) -> bytes | None:
        """The whole body if it has arrived (then removed from the buffer), else None."""
        if self.length is not None:
            if len(self.buffer) < self.length:
                return None
            body = bytes(self.buffer[:self.length])
            del self.buffer[:self.length]
            return body
        chunks: list[bytes] = []
        pos, total = 0, 0
        while True:  # chunked: size CRLF data CRLF ... 0 CRLF [trailers] CRLF
            end = self.buffer.find(b'\r\n', pos)
            if end < 0:
                return None
            try:
                size = int(bytes(self.buffer[pos:end]).split(b';', 1)[0].strip(), 16)
            except ValueError:
                raise BadRequest(400, 'A malformed chunk size.') from None
            total += size
            if total > self.server.max_body:
                raise BadRequest(413, f'The body is over {self.server.max_body} bytes.')
            if size == 0:
                trailer = self.buffer.find(b'\r\n\r\n', end)
                if trailer < 0:
                    if len(self.buffer) - end > MAX_HEAD:
                        raise BadRequest(431, 'The chunked trailer is too large.')
                    return None
                del self.buffer[:trailer + 4]
                return b''.join(chunks)
            if len(self.buffer) < end + 2 + size + 2:
                return None
            chunks.append(bytes(self.buffer[end + 2:end + 2 + size]))
            pos = end + 2 + size + 2

    # -- answering ----------------------------------------------------------------------------------

    async def _answer_all(self) -> None:
        try:
            while self.queue:
                request = self.queue.popleft()
                if self.transport is not None and len(self.queue) < PIPELINE:
                    self.transport.resume_reading()
                after: After | None = None
                try:
                    answer = await self.server.handler(request)
                    status, body = answer[0], answer[1]
                    if len(answer) > 2:
                        after = answer[2]
                except Exception as exc:
                    logger.exception(f'The webhook server failed on {request.method} {request.path!r}: {exc!r}')
                    status, body = 500, b'{"error":"The request failed."}'
                self.server.post(self, status, body, close=not request.keep_alive, after=after)
                if not request.keep_alive:
                    return
        finally:
            self.task = None
        if self.eof:
            self.server.post(self, None)  # closed after its answers
        elif not self.closing and not self.buffer and self.head is None:
            self._arm(self.server.idle_timeout)

    def _write(self, status: int, body: bytes, *, close: bool = False) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        head = (f'HTTP/1.1 {status} {REASONS.get(status, "")}\r\nContent-Type: application/json\r\n'
                f'Content-Length: {len(body)}\r\n{"Connection: close" + CRLF if close else ""}\r\n')
        self.transport.write(head.encode('latin-1') + body)
        if close:
            self.close()

    def _fail(self, status: int, message: str) -> None:
        """An error answer (after the answers to the requests before it), then the connection is closed."""
        logger.warning(f'A bad request to the webhook server: {status} {message}')
        self.closing = True
        self.buffer.clear()
        body = json.dumps({'error': message}).encode()
        if self.task is None:
            self.server.post(self, status, body, close=True)  # after the answers posted before it
        else:
            self.task.add_done_callback(lambda _: self.server.post(self, status, body, close=True))

    def _timeout(self) -> None:
        if self.buffer or self.head is not None:  # a request has started, but not arrived whole
            self._fail(408, 'The request did not arrive in time.')
        elif self.task is None:  # idle (while answering, the handler's own time counts, not ours)
            self.close()

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self.timer = asyncio.get_running_loop().call_later(seconds, self._timeout)

    def _disarm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def close(self) -> None:
        self.closing = True
        self._disarm()
        if self.transport is not None:
            self.transport.close()
