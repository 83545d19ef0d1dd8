"""The webhook servers' HTTP/1.1 server: keep-alive and pipelining, bodies, bad and slow clients (nothing hangs)."""
import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kopf._admission import httpserving

from ..waiting import eventually


async def echo(request: httpserving.Request) -> tuple[int, bytes]:
    if request.path == '/fail':
        raise RuntimeError('boom')
    return 200, json.dumps({'method': request.method, 'path': request.path, 'body': request.body.decode(),
                            'headers': dict(request.headers)}).encode()


@contextlib.asynccontextmanager
async def serving(seconds: float) -> AsyncIterator[int]:
    server = httpserving.Server(echo, max_body=1000, request_timeout=seconds, idle_timeout=seconds)
    sock = socket.create_server(('127.0.0.1', 0))
    await server.start(sock, None)
    try:
        yield int(sock.getsockname()[1])
    finally:
        await server.close()


@pytest.fixture
async def port() -> AsyncIterator[int]:
    async with serving(seconds=30) as port:  # never reached, even on a busy machine
        yield port


async def exchange(port: int, data: bytes) -> bytes:
    """Send the bytes, then read until the server closes the connection (bounded: nothing may hang)."""
    reader, writer = await asyncio.open_connection('127.0.0.1', port)
    writer.write(data)
    try:
        async with asyncio.timeout(10):
            return await reader.read()
    finally:
        writer.close()


def post(path: str, body: bytes, *extra: str) -> bytes:
    head = ''.join(f'{line}\r\n' for line in extra)
    return f'POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n{head}\r\n'.encode() + body


def answers(raw: bytes) -> list[tuple[int, dict[str, str], Any]]:
    out = []
    while raw:
        head, _, raw = raw.partition(b'\r\n\r\n')
        lines = head.decode().split('\r\n')
        headers = dict(line.split(': ', 1) for line in lines[1:])
        length = int(headers.get('Content-Length', 0))
        body, raw = raw[:length], raw[length:]
        out.append((int(lines[0].split()[1]), headers, json.loads(body) if body else None))
    return out


async def test_pipelined_requests_are_answered_in_order_on_one_connection(port: int) -> None:
    data = post('/a?timeout=10s', b'{"n":1}') + post('/b', b'{"n":2}') + post('/c', b'', 'Connection: close')
    got = answers(await exchange(port, data))
    assert [(status, body['path'], body['body']) for status, _, body in got] == [
        (200, '/a', '{"n":1}'), (200, '/b', '{"n":2}'), (200, '/c', '')]
    assert got[-1][1]['Connection'] == 'close' and 'Connection' not in got[0][1]


async def test_a_request_in_pieces_and_a_chunked_body(port: int) -> None:
    reader, writer = await asyncio.open_connection('127.0.0.1', port)
    try:
        for piece in (b'POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n', b'\r\n4\r\nabcd\r\n',
                      b'3;ext=1\r\nefg\r\n0\r\n', b'\r\n'):
            writer.write(piece)
            await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b'\r\n\r\n'), 10)
        length = int(head.split(b'Content-Length: ')[1].split(b'\r\n')[0])
        body = json.loads(await reader.readexactly(length))
        assert head.startswith(b'HTTP/1.1 200 OK') and body['body'] == 'abcdefg'
    finally:
        writer.close()


async def test_expect_100_continue_is_answered_before_the_body(port: int) -> None:
    reader, writer = await asyncio.open_connection('127.0.0.1', port)
    try:
        writer.write(b'POST /x HTTP/1.1\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n')
        assert await asyncio.wait_for(reader.readuntil(b'\r\n\r\n'), 10) == b'HTTP/1.1 100 Continue\r\n\r\n'
        writer.write(b'{}')
        assert (await asyncio.wait_for(reader.readuntil(b'\r\n\r\n'), 10)).startswith(b'HTTP/1.1 200 ')
    finally:
        writer.close()


@pytest.mark.parametrize('data, status', [
    (post('/x', b'x' * 1001), 413),                                                  # over max_body
    (b'POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3e9\r\n', 413),          # a chunk over it
    (b'POST /x HTTP/1.1\r\nX: ' + b'y' * 70000, 431),                                # a head that never ends
    (b'POST /x HTTP/1.1\r\n\r\n', 411),                                              # no length
    (b'POST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n', 400),
    (b'POST /x HTTP/1.1\r\nContent-Length: 1\r\n bad\r\n\r\nx', 400),
    (b'POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 400),
    (b'nonsense\r\n\r\n', 400),
    (b'POST /x HTTP/2.0\r\n\r\n', 505),
])
async def test_bad_requests_are_answered_and_the_connection_closed(port: int, data: bytes, status: int) -> None:
    got = answers(await exchange(port, data))
    assert [(s, h.get('Connection')) for s, h, _ in got] == [(status, 'close')]
    assert 'error' in got[0][2]


async def test_a_half_closing_client_gets_its_answers(port: int) -> None:
    reader, writer = await asyncio.open_connection('127.0.0.1', port)
    try:
        writer.write(post('/a', b'{}') + post('/b', b'{}') + b'POST /incomplete HTTP/1.1\r\n')
        writer.write_eof()
        got = answers(await asyncio.wait_for(reader.read(), 10))
    finally:
        writer.close()
    assert [(status, body['path']) for status, _, body in got] == [(200, '/a'), (200, '/b')]


async def test_a_good_request_before_a_bad_one_is_answered_first(port: int) -> None:
    got = answers(await exchange(port, post('/ok', b'{}') + post('/x', b'x' * 1001)))
    assert [status for status, _, _ in got] == [200, 413]


async def test_a_failing_handler_is_a_500_and_the_connection_lives_on(port: int) -> None:
    got = answers(await exchange(port, post('/fail', b'{}') + post('/ok', b'{}', 'Connection: close')))
    assert [status for status, _, _ in got] == [500, 200]


async def test_a_slow_client_gets_a_408() -> None:
    async with serving(seconds=0.3) as port:
        got = answers(await exchange(port, b'POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc'))  # 7 never come
    assert [status for status, _, _ in got] == [408]


async def test_an_idle_connection_is_closed_without_an_answer() -> None:
    async with serving(seconds=0.3) as port:
        assert await exchange(port, b'') == b''


async def test_closing_the_server_closes_its_connections() -> None:
    server = httpserving.Server(echo, max_body=1000, request_timeout=60, idle_timeout=60)
    sock = socket.create_server(('127.0.0.1', 0))
    await server.start(sock, None)
    reader, writer = await asyncio.open_connection('127.0.0.1', sock.getsockname()[1])
    writer.write(post('/x', b'{}'))
    await asyncio.wait_for(reader.readuntil(b'\r\n\r\n'), 10)
    await asyncio.wait_for(server.close(), 10)
    try:
        await asyncio.wait_for(reader.read(), 10)  # the rest of the answer, then EOF
    finally:
        writer.close()


async def test_tls_clients_get_their_answers_and_close_without_warnings(
        tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    import ssl

    from kopf._shared import certificates
    made = certificates.make('127.0.0.1')
    (tmp_path / 'cert.pem').write_bytes(made.cert_pem)
    (tmp_path / 'key.pem').write_bytes(made.key_pem)
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(tmp_path / 'cert.pem', tmp_path / 'key.pem')
    server = httpserving.Server(echo, max_body=1000, request_timeout=30, idle_timeout=30)
    sock = socket.create_server(('127.0.0.1', 0))
    await server.start(sock, server_context)
    try:
        context = ssl.create_default_context(cadata=made.ca_pem.decode())
        for _ in range(2):  # answered in the cycle's batch; then the client closes (TLS: no half-close)
            reader, writer = await asyncio.open_connection('127.0.0.1', sock.getsockname()[1], ssl=context,
                                                           server_hostname='127.0.0.1')
            writer.write(post('/a', b'{}') + post('/b', b'{}'))
            got = b''
            async with asyncio.timeout(10):
                while len(answers(got)) < 2:
                    got += await reader.read(65536)
            writer.close()
            await writer.wait_closed()
            assert [(status, body['path']) for status, _, body in answers(got)] == [(200, '/a'), (200, '/b')]
        await eventually(lambda: not server.connections, within=10)  # the server saw them close
    finally:
        await server.close()
    assert 'eof_received' not in caplog.text


async def test_after_is_called_once_its_answer_is_written(monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[str] = []
    write = httpserving.Connection._write

    def recording(self: httpserving.Connection, status: int, body: bytes, *, close: bool = False) -> None:
        events.append(f'write {status}')
        write(self, status, body, close=close)

    async def handler(request: httpserving.Request) -> tuple[int, bytes, httpserving.After]:
        return 200, b'{}', lambda: events.append('after')

    monkeypatch.setattr(httpserving.Connection, '_write', recording)
    server = httpserving.Server(handler, max_body=1000, request_timeout=30, idle_timeout=30)
    sock = socket.create_server(('127.0.0.1', 0))
    await server.start(sock, None)
    try:
        raw = await exchange(int(sock.getsockname()[1]), post('/a', b'') + post('/b', b'', 'Connection: close'))
    finally:
        await server.close()
    assert [status for status, *_ in answers(raw)] == [200, 200]
    assert events == ['write 200', 'write 200', 'after', 'after']  # answered in one turn: written together first
