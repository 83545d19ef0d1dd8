"""The own HTTP/1.1 client (`kopf._api.http`) against tiny raw asyncio servers written in the tests."""
import asyncio
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from kopf._api import apierrors, http

from .certs import make_ca, tls_contexts

Handler = Callable[['Conn'], Awaitable[None]]


class Conn:
    """One accepted connection as the test's server sees it: read requests, write raw answers."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    async def request(self) -> tuple[str, dict[str, str], bytes] | None:
        """The next request (line, headers, body); None if the client closed the connection."""
        try:
            head = await self.reader.readuntil(b'\r\n\r\n')
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        line, *lines = head.decode('latin-1').split('\r\n')
        headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(':') for x in lines if x)}
        body = await self.reader.readexactly(int(headers.get('content-length', '0')))
        return line, headers, body

    async def answer(self, raw: bytes) -> None:
        self.writer.write(raw)
        await self.writer.drain()


def ok(body: bytes = b'{}', *extra: str) -> bytes:
    head = ''.join(f'{h}\r\n' for h in extra)
    return f'HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n{head}\r\n'.encode() + body


class Server:
    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self.open = 0
        self.max_open = 0
        self.server: asyncio.Server | None = None
        self.sessions: list[http.Session] = []
        self.url = ''

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.open += 1
        self.max_open = max(self.max_open, self.open)
        try:
            await self.handler(Conn(reader, writer))
        except ConnectionError:
            pass
        finally:
            self.open -= 1
            writer.close()

    def session(self, path: str = '', **kwargs: Any) -> http.Session:
        """A client session to this server (under a path prefix), closed when the test ends (before the server)."""
        session = http.Session(self.url + path, **kwargs)
        self.sessions.append(session)
        return session

    async def start(self, ssl_context: ssl.SSLContext | None = None, host: str = '127.0.0.1') -> None:
        self.server = await asyncio.start_server(self._serve, '127.0.0.1', 0, ssl=ssl_context)
        port = self.server.sockets[0].getsockname()[1]
        self.url = f'{"https" if ssl_context else "http"}://{host}:{port}'


@pytest.fixture
async def serve() -> AsyncIterator[Callable[..., Awaitable[Server]]]:
    servers: list[Server] = []

    async def start(handler: Handler, **kwargs: Any) -> Server:
        server = Server(handler)
        await server.start(**kwargs)
        servers.append(server)
        return server

    yield start
    for server in servers:
        for session in server.sessions:
            await session.close()
        assert server.server is not None
        server.server.close()


def keep_alive(answer: Callable[[tuple[str, dict[str, str], bytes]], bytes] = lambda r: ok()) -> Handler:
    """A server that answers every request on a connection, as long as the client keeps it open."""
    async def handler(conn: Conn) -> None:
        while (request := await conn.request()) is not None:
            SEEN.append(request)
            await conn.answer(answer(request))
    return handler


def answer_then_hang(raw: bytes, seconds: float = 5) -> Handler:
    """A server that answers the first request with `raw` (e.g. only the headers), then sends nothing more."""
    async def handler(conn: Conn) -> None:
        await conn.request()
        await conn.answer(raw)
        await asyncio.sleep(seconds)
    return handler


SEEN: list[tuple[str, dict[str, str], bytes]] = []


@pytest.fixture(autouse=True)
def _forget_seen() -> None:
    SEEN.clear()


async def test_content_length_answer_and_the_request_sent(serve: Any) -> None:
    server = await serve(keep_alive(lambda r: ok(b'{"a": 1}')))
    session = server.session(headers={'User-Agent': 'kopf/test', 'Authorization': 'Bearer T'})
    response = await session.request('PATCH', '/api/v1/x', params={'labelSelector': 'a=b'},
                                     body=b'{"x":1}', content_type='application/merge-patch+json')
    assert response.status == 200
    assert response.body == b'{"a": 1}'
    line, headers, body = SEEN[0]
    assert line == 'PATCH /api/v1/x?labelSelector=a%3Db HTTP/1.1'
    assert headers['host'] == server.url.split('//')[1]
    assert headers['user-agent'] == 'kopf/test'
    assert headers['authorization'] == 'Bearer T'
    assert headers['content-type'] == 'application/merge-patch+json'
    assert headers['content-length'] == '7'
    assert 'accept-encoding' not in headers
    assert body == b'{"x":1}'


async def test_a_path_prefix_of_the_server_is_kept(serve: Any) -> None:
    server = await serve(keep_alive())
    session = server.session('/k8s/clusters/c-1/')
    await session.request('GET', '/version')
    assert SEEN[0][0] == 'GET /k8s/clusters/c-1/version HTTP/1.1'


def test_query_strings_are_encoded_as_aiohttp_did() -> None:
    query = http.encode_query({'labelSelector': 'a=b,c!=d,e in (x,y),!f', 'fieldSelector': 'metadata.name=x',
                               'watch': 'true', 'continue': 'eyJ2Ijoi+/=='})
    assert query == ('labelSelector=a%3Db,c!%3Dd,e+in+(x,y),!f&fieldSelector=metadata.name%3Dx'
                     '&watch=true&continue=eyJ2Ijoi%2B/%3D%3D')


async def test_chunked_answers_whole_and_by_chunks(serve: Any) -> None:
    chunked = b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n'
    server = await serve(keep_alive(lambda r: chunked))
    session = server.session()
    response = await session.request('GET', '/a')
    assert response.body == b'hello world'
    stream = await session.stream('GET', '/b')
    assert [await stream.read_chunk() for _ in range(3)] == [b'hello', b' world', b'']
    stream.close()


async def test_a_huge_chunk_is_passed_on_in_pieces_never_held_whole(serve: Any) -> None:
    payload = b''.join(b'{"type":"MODIFIED","n":%d}\n' % i for i in range(40_000))  # ~1 MB: a watch's replay
    chunked = b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n' % (len(payload), payload)
    server = await serve(keep_alive(lambda r: chunked))
    session = server.session()
    assert (await session.request('GET', '/a')).body == payload
    stream = await session.stream('GET', '/b')
    pieces = []
    while piece := await stream.read_chunk():
        pieces.append(piece)
    assert b''.join(pieces) == payload
    assert len(pieces) > 1 and max(map(len, pieces)) <= 65536
    stream.close()


async def test_a_stream_gets_lines_incrementally(serve: Any) -> None:
    release = asyncio.Event()

    async def handler(conn: Conn) -> None:
        await conn.request()
        await conn.answer(b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\none\n\r\n')
        await release.wait()
        await conn.answer(b'4\r\ntwo\n\r\n0\r\n\r\n')

    server = await serve(handler)
    session = server.session()
    stream = await session.stream('GET', '/watch')
    assert await stream.read_chunk() == b'one\n'  # before the rest is even sent
    release.set()
    assert await stream.read_chunk() == b'two\n'
    assert await stream.read_chunk() == b''
    stream.close()
    assert server.connections == 1


async def test_keep_alive_connections_are_reused(serve: Any) -> None:
    server = await serve(keep_alive())
    session = server.session()
    for _ in range(5):
        assert (await session.request('GET', '/x')).status == 200
    assert server.connections == 1
    assert session.opened == 1


async def test_concurrent_requests_are_bounded_by_the_limit(serve: Any) -> None:
    async def handler(conn: Conn) -> None:
        while await conn.request() is not None:
            await asyncio.sleep(0.01)
            await conn.answer(ok())

    server = await serve(handler)
    session = server.session(limit=3)
    await asyncio.gather(*[session.request('GET', '/x') for _ in range(20)])
    assert server.max_open == 3
    assert session.opened == 3


async def test_a_connection_closed_by_the_server_while_idle_is_retried_once_on_a_fresh_one(serve: Any) -> None:
    async def handler(conn: Conn) -> None:  # one answer per connection; the next request only gets closed
        await conn.request()
        await conn.answer(ok(b'{"n": 1}'))
        await conn.request()

    server = await serve(handler)
    session = server.session()
    assert (await session.request('POST', '/x', body=b'{}')).body == b'{"n": 1}'
    assert (await session.request('POST', '/x', body=b'{}')).body == b'{"n": 1}'
    assert (await session.request('POST', '/x', body=b'{}')).body == b'{"n": 1}'
    assert server.connections == 3


async def test_a_fresh_connection_closed_without_an_answer_fails_without_a_retry(serve: Any) -> None:
    async def handler(conn: Conn) -> None:
        await conn.request()

    server = await serve(handler)
    session = server.session()
    with pytest.raises(http.ServerDisconnectedError) as info:
        await session.request('GET', '/x')
    assert server.connections == 1
    assert apierrors.decide_retry(info.value, 1.0).retry


async def test_connection_close_answers_close_the_connection(serve: Any) -> None:
    server = await serve(keep_alive(lambda r: ok(b'{}', 'Connection: close')))
    session = server.session()
    await session.request('GET', '/x')
    assert session.idle == 0
    await session.request('GET', '/x')
    assert server.connections == 2


async def test_an_answer_without_a_length_is_read_to_eof(serve: Any) -> None:
    async def handler(conn: Conn) -> None:
        await conn.request()
        await conn.answer(b'HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{"till": "eof"}')
        conn.writer.close()

    server = await serve(handler)
    session = server.session()
    assert (await session.request('GET', '/x')).body == b'{"till": "eof"}'
    assert session.idle == 0


@pytest.mark.parametrize('answer', [
    b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"trunc',
    b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{"trunc',
    b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n',
], ids=['content-length', 'chunk', 'no-last-chunk'])
async def test_a_truncated_body_raises(serve: Any, answer: bytes) -> None:
    async def handler(conn: Conn) -> None:
        await conn.request()
        await conn.answer(answer)
        conn.writer.close()

    server = await serve(handler)
    session = server.session()
    with pytest.raises(http.PayloadError) as info:
        await session.request('GET', '/x')
    assert isinstance(info.value, ConnectionError)
    assert apierrors.decide_retry(info.value, 1.0).retry
    assert session.idle == 0


@pytest.mark.parametrize('answer, message', [
    (b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY', 'A chunk does not end with CRLF.'),
    (b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 'Invalid chunk size line'),
], ids=['chunk-end', 'chunk-size'])
async def test_a_malformed_body_is_a_payload_error_as_is(serve: Any, answer: bytes, message: str) -> None:
    """Our own `PayloadError` is never re-wrapped as a generic `TransportError` ("The connection failed...")."""
    server = await serve(keep_alive(lambda r: answer))
    session = server.session()
    with pytest.raises(http.PayloadError, match=message) as info:
        await session.request('GET', '/x')
    assert 'The connection failed' not in str(info.value)
    assert apierrors.decide_retry(info.value, 1.0).retry
    assert session.idle == 0


@pytest.mark.looptime
async def test_the_total_timeout(serve: Any) -> None:
    async def handler(conn: Conn) -> None:
        await conn.request()
        await asyncio.sleep(100)

    server = await serve(handler)
    session = server.session()
    loop = asyncio.get_running_loop()
    start = loop.time()
    with pytest.raises(TimeoutError):
        await session.request('GET', '/x', total_timeout=5)
    assert loop.time() - start == pytest.approx(5, abs=0.5)


@pytest.mark.looptime
async def test_the_total_timeout_of_a_stream_covers_its_body(serve: Any) -> None:
    server = await serve(answer_then_hang(b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n', 100))
    session = server.session()
    loop = asyncio.get_running_loop()
    start = loop.time()
    stream = await session.stream('GET', '/x', total_timeout=7)
    with pytest.raises(TimeoutError):
        await stream.read_chunk()
    stream.close()
    assert loop.time() - start == pytest.approx(7, abs=0.5)


@pytest.mark.looptime
async def test_the_connect_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    async def never(*args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(1000)

    monkeypatch.setattr(asyncio, 'open_connection', never)
    session = http.Session('http://127.0.0.1:1')
    loop = asyncio.get_running_loop()
    start = loop.time()
    with pytest.raises(TimeoutError) as info:
        await session.request('GET', '/x', total_timeout=60, connect_timeout=3)
    assert loop.time() - start == pytest.approx(3, abs=0.5)
    assert apierrors.decide_retry(info.value, 1.0).retry


async def test_connection_refused_is_retriable() -> None:
    import socket
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
    sock.close()
    session = http.Session(f'http://127.0.0.1:{port}')
    with pytest.raises(ConnectionRefusedError) as info:
        await session.request('GET', '/x')
    assert apierrors.decide_retry(info.value, 1.0).retry


@pytest.mark.looptime
async def test_idle_connections_are_closed_after_the_idle_timeout(serve: Any) -> None:
    closed = asyncio.Event()

    async def handler(conn: Conn) -> None:
        await keep_alive()(conn)
        closed.set()

    server = await serve(handler)
    session = server.session(idle_timeout=10)
    await session.request('GET', '/x')
    assert session.idle == 1
    await asyncio.sleep(5)
    assert session.idle == 1
    await asyncio.sleep(6)
    assert session.idle == 0
    await asyncio.wait_for(closed.wait(), 1)


@pytest.mark.looptime
async def test_the_idle_sweep_is_not_fooled_by_float_rounding(serve: Any) -> None:
    # Released at 0.1 with a 15 s idle timeout: the timer fires at 15.1, where 15.1 - 15 < 0.1 in floats.
    # The sweep must close the connection then, not reschedule itself at the same moment forever.
    server = await serve(keep_alive())
    session = server.session(idle_timeout=15)
    await asyncio.sleep(0.1)
    await session.request('GET', '/x')
    assert session.idle == 1
    await asyncio.sleep(15.5)
    assert session.idle == 0


async def test_tls_with_a_ca_and_sni(serve: Any) -> None:
    names: list[str | None] = []
    server_ctx, client_ctx, _ = tls_contexts()
    server_ctx.sni_callback = lambda sock, name, ctx: names.append(name)
    server = await serve(keep_alive(lambda r: ok(b'{"tls": true}')), ssl_context=server_ctx, host='localhost')
    session = server.session(ssl_context=client_ctx)
    assert (await session.request('GET', '/x')).body == b'{"tls": true}'
    assert (await session.request('GET', '/x')).body == b'{"tls": true}'
    assert names == ['localhost']
    assert server.connections == 1

    other_ca, _, _ = make_ca()
    session = server.session(ssl_context=ssl.create_default_context(cadata=other_ca.cert_pem.decode()))
    with pytest.raises(ssl.SSLCertVerificationError) as info:
        await session.request('GET', '/x')
    assert not apierrors.decide_retry(info.value, 1.0).retry


async def test_a_tls_connection_reads_into_a_small_buffer(serve: Any) -> None:
    """asyncio's 256 KiB receive buffer per TLS connection is swapped for TLS_BUFFER; bodies bigger than it
    (a big list, a long chunk) arrive whole."""
    big = b'{"items": "' + b'x' * (3 * http.TLS_BUFFER + 17) + b'"}'
    server_ctx, client_ctx, _ = tls_contexts()
    server = await serve(keep_alive(lambda r: ok(big)), ssl_context=server_ctx, host='localhost')
    session = server.session(ssl_context=client_ctx)
    assert (await session.request('GET', '/x')).body == big
    assert (await session.request('GET', '/x')).body == big
    [conn] = session._idle
    protocol = conn.writer.transport._ssl_protocol  # type: ignore[attr-defined]
    assert len(protocol._ssl_buffer) == protocol.max_size == http.TLS_BUFFER


def test_a_transport_that_is_not_asyncios_tls_is_left_as_is() -> None:
    assert not http.shrink_tls_buffer(asyncio.Transport())


async def test_a_tls_error_inside_a_stream_is_a_transport_error(serve: Any) -> None:
    """A forged TLS record (a bad MAC) after the first chunk: a retriable `TransportError`, not `ssl.SSLError`."""
    import os

    async def handler(conn: Conn) -> None:
        await conn.request()
        await conn.answer(b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\none\n\r\n')
        await asyncio.sleep(0.05)
        os.write(conn.writer.get_extra_info('socket').fileno(), b'\x17\x03\x03\x00\x20' + b'x' * 32)
        await asyncio.sleep(5)

    server_ctx, client_ctx, _ = tls_contexts()
    server = await serve(handler, ssl_context=server_ctx, host='localhost')
    session = server.session(ssl_context=client_ctx)
    stream = await session.stream('GET', '/watch')
    assert await stream.read_chunk() == b'one\n'
    with pytest.raises(http.TransportError) as info:
        await asyncio.wait_for(stream.read_chunk(), 3)
    assert isinstance(info.value.__cause__, ssl.SSLError)
    assert apierrors.decide_retry(info.value, 1.0).retry
    assert stream._conn.writer.is_closing()


@pytest.mark.parametrize('framing', ['content-length', 'chunked'])
@pytest.mark.parametrize('whole', [True, False], ids=['read', 'read_chunk'])
async def test_an_os_error_while_reading_a_body_is_a_transport_error(serve: Any, framing: str, whole: bool) -> None:
    """E.g. EHOSTUNREACH (no `ConnectionError`) while reading: the connection is closed; a retriable error."""
    import errno
    head = 'Content-Length: 100' if framing == 'content-length' else 'Transfer-Encoding: chunked'
    server = await serve(answer_then_hang(f'HTTP/1.1 200 OK\r\n{head}\r\n\r\n'.encode()))
    session = server.session()
    stream = await session.stream('GET', '/x')
    stream._conn.reader.set_exception(OSError(errno.EHOSTUNREACH, 'No route to host'))
    with pytest.raises(http.TransportError, match='No route to host') as info:
        await (stream.read() if whole else stream.read_chunk())
    assert apierrors.decide_retry(info.value, 1.0).retry
    assert stream._conn.writer.is_closing()


async def test_a_timeout_while_reading_a_body_stays_a_timeout(serve: Any) -> None:
    server = await serve(answer_then_hang(b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'))
    session = server.session()
    stream = await session.stream('GET', '/x')
    stream._conn.reader.set_exception(TimeoutError())
    with pytest.raises(TimeoutError) as info:
        await stream.read_chunk()
    assert not isinstance(info.value, http.TransportError)


async def test_an_idle_connection_with_unread_bytes_is_not_reused(serve: Any) -> None:
    """A server's unsolicited answer on an idle connection (e.g. a 408 before closing) is never read as the next's."""
    async def handler(conn: Conn) -> None:
        await conn.request()
        await conn.answer(ok(b'{"n": 1}'))
        await asyncio.sleep(0.05)
        await conn.answer(b'HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')
        await asyncio.sleep(0.5)  # not closed yet: only the unread bytes tell

    server = await serve(handler)
    session = server.session()
    assert (await session.request('GET', '/a')).status == 200
    await asyncio.sleep(0.2)
    assert session.idle == 1
    response = await session.request('GET', '/b')
    assert response.status == 200
    assert session.opened == 2
    assert server.connections == 2


async def test_a_connection_with_extra_bytes_after_an_answer_is_not_kept(serve: Any) -> None:
    async def handler(conn: Conn) -> None:
        while await conn.request() is not None:
            await conn.answer(ok(b'{}') + b'HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n{"x":1}')

    server = await serve(handler)
    session = server.session()
    assert (await session.request('GET', '/a')).body == b'{}'
    assert session.idle == 0
    assert (await session.request('GET', '/b')).body == b'{}'
    assert server.connections == 2


@pytest.mark.parametrize('name, value', [
    ('Authorization', 'Bearer secret\r\nX-Injected: yes'),
    ('Authorization', 'Bearer secret\n'),
    ('Authorization', 'Bearer sec\0ret'),
    ('X-Extra\r\nX-Injected', 'secret'),
])
def test_headers_with_cr_lf_nul_are_refused_without_their_value(name: str, value: str) -> None:
    with pytest.raises(ValueError) as info:
        http.Session('http://127.0.0.1:1', headers={name: value})
    assert 'secret' not in str(info.value)
    assert ('Authorization' if name == 'Authorization' else 'X-Extra') in str(info.value)


@pytest.mark.looptime
async def test_the_total_timeout_starts_once_a_connection_slot_is_free(serve: Any) -> None:
    async def handler(conn: Conn) -> None:
        while (request := await conn.request()) is not None:
            if '/slow' in request[0]:
                await asyncio.sleep(30)
            await conn.answer(ok())

    server = await serve(handler)
    session = server.session(limit=1)
    slow = asyncio.create_task(session.request('GET', '/slow'))
    await asyncio.sleep(1)
    response = await session.request('GET', '/fast', total_timeout=20)  # waits ~29 s for the slot, then ~0
    assert response.status == 200
    await slow


async def test_an_urgent_request_takes_no_slot(serve: Any) -> None:
    release = asyncio.Event()

    async def handler(conn: Conn) -> None:
        while (request := await conn.request()) is not None:
            if '/slow' in request[0]:
                await release.wait()
            await conn.answer(ok())

    server = await serve(handler)
    session = server.session(limit=1)
    slow = asyncio.create_task(session.request('GET', '/slow'))
    queued = asyncio.create_task(session.fetch('GET', '/queued', params=None, body=None, content_type=None,
                                               total_timeout=None, connect_timeout=None, error=RuntimeError))
    await asyncio.sleep(0.1)
    assert await session.fetch('PUT', '/lease', params=None, body=b'{}', content_type='application/json',
                               total_timeout=5, connect_timeout=None, error=RuntimeError, urgent=True) == b'{}'
    assert not queued.done()  # still waiting for the one slot: the urgent one did not
    release.set()
    assert (await slow).status == 200
    assert await queued == b'{}'
    assert server.max_open == 2


def _fetch(session: http.Session, path: str, timeout: float | None) -> Awaitable[bytes]:
    return session.fetch('GET', path, params=None, body=None, content_type=None, total_timeout=timeout,
                         connect_timeout=None, error=RuntimeError)


@pytest.mark.looptime
async def test_fetches_time_out_each_at_its_own_deadline_with_one_timer(serve: Any) -> None:
    async def handler(conn: Conn) -> None:
        while (request := await conn.request()) is not None:
            if '/slow' in request[0]:
                await asyncio.sleep(100)
            await conn.answer(ok())

    server = await serve(handler)
    session = server.session()
    loop = asyncio.get_running_loop()
    start = loop.time()
    ended: dict[str, float] = {}

    async def timed(path: str, seconds: float) -> None:
        try:
            await _fetch(session, path, seconds)
        except TimeoutError as exc:
            assert isinstance(exc.__cause__, asyncio.CancelledError) and str(exc) == ''  # as asyncio.timeout()'s
            ended[path] = loop.time() - start
        else:
            ended[path] = -1

    await asyncio.gather(timed('/slow/a', 30), timed('/slow/b', 7), timed('/fast', 3), timed('/slow/c', 12))
    assert ended == pytest.approx({'/slow/a': 30, '/slow/b': 7, '/fast': -1, '/slow/c': 12}, abs=0.5)
    assert len(session._deadlines) == 0 and session._deadlines._handle is None  # no timer left behind


@pytest.mark.looptime
async def test_a_fetch_cancelled_from_outside_stays_cancelled(serve: Any) -> None:
    async def handler(conn: Conn) -> None:
        await conn.request()
        await asyncio.sleep(100)

    server = await serve(handler)
    session = server.session()
    task = asyncio.create_task(_fetch(session, '/x', 60))
    await asyncio.sleep(5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelling() == 1 and len(session._deadlines) == 0 and session._deadlines._handle is None
