"""The two transports: the error answers they raise, what they close, TLS (CA, client certificates, insecure)
and the User-Agent of a login handler's aiohttp session."""
import asyncio
import pathlib
import ssl
import tempfile
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import aiohttp.web
import pytest

from kopf._api import apierrors, credentials, http, transports, watching
from kopf._api import client as client_
from kopf._core.settings import OperatorSettings

from .certs import issue, make_ca


@pytest.mark.parametrize('raw, cls, message', [
    (b'{"kind": "Status", "code": 404, "message": "nope"}', apierrors.APINotFoundError, 'nope'),
    (b'Too many requests, please try again later.\n', apierrors.APIClientError,
     'Too many requests, please try again later.'),
    (b'{"not": "a status"}', apierrors.APIClientError, None),
    (b'\xff\xfe', apierrors.APIClientError, '\ufffd\ufffd'),
])
def test_error_answers_are_mapped_once(raw: bytes, cls: type[apierrors.APIError], message: str | None) -> None:
    status = 404 if cls is apierrors.APINotFoundError else 400
    error = transports.error(status, raw, None)
    assert type(error) is cls and error.status == status and error.message == message


def test_retry_after_is_taken_from_the_header() -> None:
    assert transports.error(429, b'', '7').retry_after == 7


async def _answering(answer: bytes) -> tuple[asyncio.Server, str]:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                await reader.readuntil(b'\r\n\r\n')
                writer.write(answer)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(handler, '127.0.0.1', 0)
    return server, f'http://127.0.0.1:{server.sockets[0].getsockname()[1]}'


ERROR_BODY = b'{"kind": "Status", "code": 409, "message": "no"}'
ERROR_ANSWER = b'HTTP/1.1 409 Conflict\r\nContent-Length: %d\r\nRetry-After: 3\r\n\r\n%b' % (
    len(ERROR_BODY), ERROR_BODY)


async def test_direct_requests_and_streams_raise_error_answers_and_keep_the_connection() -> None:
    server, url = await _answering(ERROR_ANSWER)
    transport = transports.DirectTransport(credentials.ConnectionInfo(server=url), limit=4)
    try:
        with pytest.raises(apierrors.APIConflictError, match='no') as info:
            await transport.request('GET', '/x', params=None, body=None, content_type=None, total=5, connect=5)
        assert info.value.retry_after == 3
        assert transport.session.idle == 1  # the error's body was read: the connection is reusable
        with pytest.raises(apierrors.APIConflictError, match='no'):
            await transport.stream('/x', params={'watch': 'true'}, total=5, connect=5)
        assert transport.session.opened == 2  # a stream has a connection of its own, closed after an error
        assert transport.session.idle == 1
    finally:
        await transport.close()
        server.close()
    assert transport.session.closed


async def test_aiohttp_requests_and_streams_raise_error_answers() -> None:
    server, url = await _answering(ERROR_ANSWER)
    async with aiohttp.ClientSession() as session:
        transport = transports.AiohttpTransport(session, server=url + '/', proxy=None,
                                                slots=asyncio.Semaphore(1), owned=False)
        with pytest.raises(apierrors.APIConflictError, match='no') as info:
            await transport.request('GET', '/x', params=None, body=None, content_type=None, total=5, connect=5)
        assert info.value.retry_after == 3
        with pytest.raises(apierrors.APIConflictError, match='no'):
            await transport.stream('/x', params={'watch': 'true'}, total=5, connect=5)
        await transport.close()
        assert not session.closed  # a login handler's session is the handler's to close
    server.close()


async def test_an_aiohttp_stream_error_is_a_transport_error() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b'\r\n\r\n')
        writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"type": ')
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handler, '127.0.0.1', 0)
    url = f'http://127.0.0.1:{server.sockets[0].getsockname()[1]}'
    async with aiohttp.ClientSession() as session:
        transport = transports.AiohttpTransport(session, server=url, proxy=None,
                                                slots=asyncio.Semaphore(1), owned=True)
        response = await transport.stream('/x', params=None, total=5, connect=5)
        with pytest.raises(http.TransportError):
            while await response.read_chunk():
                pass
        response.close()
        await transport.close()
        assert session.closed  # a session made for a proxy is ours to close
    server.close()


async def test_a_silent_aiohttp_stream_ends_in_a_timeout() -> None:
    """The watch's inactivity timeout closes the response: aiohttp's pending read ends, and it is a TimeoutError."""
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b'\r\n\r\n')
        writer.write(b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n{"a": 1}\r\n2\r\n\n\n\r\n')
        await writer.drain()
        await asyncio.sleep(30)  # then nothing

    server = await asyncio.start_server(handler, '127.0.0.1', 0)
    url = f'http://127.0.0.1:{server.sockets[0].getsockname()[1]}'
    async with aiohttp.ClientSession() as session:
        transport = transports.AiohttpTransport(session, server=url, proxy=None,
                                                slots=asyncio.Semaphore(1), owned=False)
        response = await transport.stream('/x', params=None, total=None, connect=5)
        lines: list[bytes] = []
        with pytest.raises(TimeoutError):
            async for line in watching._lines(response, 0.5):
                lines.append(line)
        assert lines == [b'{"a": 1}']
    server.close()


async def test_user_made_aiohttp_session_gets_our_user_agent(cluster: Any, settings: OperatorSettings) -> None:
    seen: list[str] = []

    async def on_request_start(session: Any, ctx: Any, params: aiohttp.TraceRequestStartParams) -> None:
        seen.append(params.headers.get('User-Agent', ''))

    trace = aiohttp.TraceConfig()
    trace.on_request_start.append(on_request_start)
    async with aiohttp.ClientSession(trace_configs=[trace]) as session:
        vault = credentials.Vault()
        vault.populate([credentials.AiohttpSession(cluster.url, session)])
        api = client_.APIClient(vault, settings)
        assert (await api.request('GET', '/version'))['major'] == '1'
        await api.close()
        assert not session.closed  # the user's session is the user's to close
    assert seen and seen[0].startswith('kopf/')


@pytest.fixture
async def tls_server() -> AsyncIterator[tuple[str, bytes, Any]]:
    ca, ca_key, ca_cert = make_ca()
    server = issue(ca_key, ca_cert, 'localhost', server=True)
    client = issue(ca_key, ca_cert, 'alice', server=False)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cadata=ca.cert_pem.decode())
    context.verify_mode = ssl.CERT_OPTIONAL
    with tempfile.TemporaryDirectory() as tmp:
        (pathlib.Path(tmp) / 's.crt').write_bytes(server.cert_pem)
        (pathlib.Path(tmp) / 's.key').write_bytes(server.key_pem)
        context.load_cert_chain(pathlib.Path(tmp) / 's.crt', pathlib.Path(tmp) / 's.key')

    async def whoami(request: aiohttp.web.Request) -> aiohttp.web.Response:
        peer = request.transport.get_extra_info('peercert') if request.transport else None
        subject = dict(pair[0] for pair in peer['subject']) if peer else {}
        return aiohttp.web.json_response({'auth': request.headers.get('Authorization'),
                                          'cn': subject.get('commonName'),
                                          'ua': request.headers.get('User-Agent')})

    app = aiohttp.web.Application()
    app.router.add_get('/whoami', whoami)
    runner = aiohttp.web.AppRunner(app)
    await runner.setup()
    site = aiohttp.web.TCPSite(runner, '127.0.0.1', 0, ssl_context=context)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f'https://127.0.0.1:{port}', ca.cert_pem, client
    finally:
        await runner.cleanup()


async def test_tls_with_ca_token_and_client_certificate(tls_server: tuple[str, bytes, Any],
                                                        settings: OperatorSettings) -> None:
    url, ca_pem, client_pair = tls_server
    vault = credentials.Vault()
    vault.populate([credentials.ConnectionInfo(server=url, ca_data=ca_pem, token='secret',
                                               certificate_data=client_pair.cert_pem,
                                               private_key_data=client_pair.key_pem)])
    api = client_.APIClient(vault, settings)
    try:
        answer = await api.request('GET', '/whoami')
    finally:
        await api.close()
    assert answer['auth'] == 'Bearer secret'
    assert answer['cn'] == 'alice'
    assert answer['ua'].startswith('kopf/')


async def test_tls_with_a_wrong_ca_fails_without_retries(tls_server: tuple[str, bytes, Any],
                                                         settings: OperatorSettings) -> None:
    url, _, _ = tls_server
    other_ca, _, _ = make_ca()
    vault = credentials.Vault()
    vault.populate([credentials.ConnectionInfo(server=url, ca_data=other_ca.cert_pem)])
    api = client_.APIClient(vault, settings)
    try:
        with pytest.raises(ssl.SSLCertVerificationError):
            await api.request('GET', '/whoami')
    finally:
        await api.close()


async def test_tls_insecure_skips_verification(tls_server: tuple[str, bytes, Any],
                                               settings: OperatorSettings) -> None:
    url, _, _ = tls_server
    vault = credentials.Vault()
    vault.populate([credentials.ConnectionInfo(server=url, insecure=True, username='u', password='p')])
    api = client_.APIClient(vault, settings)
    try:
        answer = await api.request('GET', '/whoami')
    finally:
        await api.close()
    assert answer['auth'] == 'Basic dTpw'
    assert answer['cn'] is None
