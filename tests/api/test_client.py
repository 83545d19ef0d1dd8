"""Requests and watches over real HTTP to the local cluster: errors, retries, Retry-After, headers, the choice
of the transport; re-login on 401 (requests and watches, token rotations, tokens never accepted)."""
import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kopf._api import apierrors, credentials, loginning, transports, watching, watchstate
from kopf._api import client as client_
from kopf._core.settings import OperatorSettings
from kopf.testing import LocalCluster

from .conftest import CRD, KOPFEXAMPLES
from .watchers import Consumer, create, kex, rv

CM_PATH = '/api/v1/namespaces/default/configmaps'


async def test_get_version(client: client_.APIClient) -> None:
    version = await client.request('GET', '/version')
    assert version['major'] == '1'


async def test_user_agent(client: client_.APIClient, cluster: Any) -> None:
    await client.request('GET', '/api')
    # the emulator's request log has no headers; the session must carry it
    item = await client.vault.select()
    assert isinstance(item.transport, transports.DirectTransport)
    assert item.transport.session.headers['User-Agent'].startswith('kopf/')


async def test_the_user_agent_names_the_operators_identity_and_faults_can_target_it(
        cluster: Any, settings: OperatorSettings) -> None:
    clients = []
    for identity in ['replica-1', 'replica-(2)']:
        vault = credentials.Vault()
        vault.populate([credentials.ConnectionInfo(server=cluster.url, default_namespace='default')])
        clients.append(client_.APIClient(vault, settings, identity=identity))
    try:
        cluster.fail('GET', '/api', 503, count=None, agent='kopf/* (replica-1)')
        with pytest.raises(apierrors.APIServerError):
            await clients[0].request('GET', '/api', backoffs=None)
        assert (await clients[1].request('GET', '/api', backoffs=None))['kind'] == 'APIVersions'  # not targeted
        item = await clients[1].vault.select()
        assert isinstance(item.transport, transports.DirectTransport)
        assert item.transport.session.headers['User-Agent'].endswith(' (replica-2)')  # no parentheses inside
    finally:
        cluster.clear_faults()
        for client in clients:
            await client.close()


async def test_create_and_get(client: client_.APIClient) -> None:
    created = await client.request('POST', CM_PATH, payload={'metadata': {'name': 'x'}, 'data': {'a': 'b'}})
    assert created['metadata']['uid']
    fetched = await client.request('GET', f'{CM_PATH}/x')
    assert fetched['data'] == {'a': 'b'}


async def test_not_found_is_mapped_with_the_servers_message(client: client_.APIClient) -> None:
    with pytest.raises(apierrors.APINotFoundError) as info:
        await client.request('GET', f'{CM_PATH}/missing')
    assert info.value.status == 404
    assert info.value.message == 'configmaps "missing" not found'


async def test_conflict_is_not_retried(client: client_.APIClient, cluster: Any) -> None:
    await client.request('POST', CM_PATH, payload={'metadata': {'name': 'x'}})
    with pytest.raises(apierrors.APIConflictError, match='already exists'):
        await client.request('POST', CM_PATH, payload={'metadata': {'name': 'x'}})
    assert sum(1 for r in cluster.request_log() if r['method'] == 'POST') == 2


@pytest.mark.looptime
async def test_500s_are_retried_then_succeed(client: client_.APIClient, cluster: Any) -> None:
    cluster.fail('GET', '/api/v1/namespaces/default/configmaps', 500, count=3)
    result = await client.request('GET', CM_PATH)
    assert result['kind'] == 'ConfigMapList'
    assert [r['code'] for r in cluster.request_log()] == [500, 500, 500, 200]


@pytest.mark.looptime
async def test_500s_surface_as_server_error_after_the_backoffs(
        client: client_.APIClient, cluster: Any, settings: OperatorSettings, caplog: pytest.LogCaptureFixture,
) -> None:
    settings.networking.error_backoffs = [1, 2, 3]
    cluster.fail('GET', CM_PATH, 500, count=None)
    loop = asyncio.get_running_loop()
    start = loop.time()
    with caplog.at_level(logging.WARNING), pytest.raises(apierrors.APIServerError) as info:
        await client.request('GET', CM_PATH)
    assert loop.time() - start == pytest.approx(6, abs=0.5)
    assert info.value.status == 500
    assert 'injected fault' in (info.value.message or '')
    assert len(cluster.request_log()) == 4
    assert len([r for r in caplog.records if 'retrying' in r.getMessage()]) == 3


@pytest.mark.looptime
async def test_no_retries_when_disabled(client: client_.APIClient, cluster: Any, settings: OperatorSettings) -> None:
    settings.networking.error_backoffs = []
    cluster.fail('GET', CM_PATH, 503, count=None)
    with pytest.raises(apierrors.APIServerError):
        await client.request('GET', CM_PATH)
    assert len(cluster.request_log()) == 1


@pytest.mark.looptime
async def test_scalar_backoff_is_one_retry(client: client_.APIClient, cluster: Any, settings: OperatorSettings) -> None:
    settings.networking.error_backoffs = 5
    cluster.fail('GET', CM_PATH, 503, count=None)
    with pytest.raises(apierrors.APIServerError):
        await client.request('GET', CM_PATH)
    assert len(cluster.request_log()) == 2


@pytest.mark.looptime
async def test_plain_429_retry_after_is_honoured(client: client_.APIClient, cluster: Any) -> None:
    cluster.throttle('GET', CM_PATH, count=1, retry_after=7)
    loop = asyncio.get_running_loop()
    start = loop.time()
    await client.request('GET', CM_PATH)
    assert loop.time() - start == pytest.approx(7, abs=0.5)  # not the first backoff of 1s
    assert [r['code'] for r in cluster.request_log()] == [429, 200]


@pytest.mark.looptime
@pytest.mark.parametrize('enforce, waited', [(True, 2), (False, 10)])
async def test_enforce_retry_after_waits_as_the_server_says_even_if_the_own_backoff_is_longer(
        client: client_.APIClient, cluster: Any, settings: OperatorSettings, enforce: bool, waited: float) -> None:
    settings.networking.enforce_retry_after = enforce
    settings.networking.error_backoffs = (10,)
    cluster.fail('GET', CM_PATH, 503, count=1, retry_after=2)
    loop = asyncio.get_running_loop()
    start = loop.time()
    await client.request('GET', CM_PATH)
    assert loop.time() - start == pytest.approx(waited, abs=0.2)


@pytest.mark.looptime
async def test_status_429_retry_after_seconds_is_honoured(client: client_.APIClient, cluster: Any) -> None:
    cluster.fail('GET', CM_PATH, 429, count=1, retry_after=4)
    loop = asyncio.get_running_loop()
    start = loop.time()
    await client.request('GET', CM_PATH)
    assert loop.time() - start == pytest.approx(4, abs=0.5)


@pytest.mark.looptime
async def test_403_is_retried_as_upstream(client: client_.APIClient, cluster: Any) -> None:
    cluster.fail('GET', CM_PATH, 403, count=1)
    await client.request('GET', CM_PATH)
    assert [r['code'] for r in cluster.request_log()] == [403, 200]


@pytest.mark.looptime
async def test_a_403_is_final_where_the_request_says_so_and_a_500_still_retried(
        client: client_.APIClient, cluster: Any) -> None:
    cluster.fail('GET', CM_PATH, 403, count=1)
    with pytest.raises(apierrors.APIForbiddenError):
        await client.request('GET', CM_PATH, final=(apierrors.APIForbiddenError,))
    assert [r['code'] for r in cluster.request_log()] == [403]
    cluster.fail('GET', CM_PATH, 500, count=1)
    await client.request('GET', CM_PATH, final=(apierrors.APIForbiddenError,))
    assert [r['code'] for r in cluster.request_log()] == [403, 500, 200]


@pytest.mark.looptime
async def test_other_4xx_are_final(client: client_.APIClient, cluster: Any) -> None:
    cluster.fail('GET', CM_PATH, 400, count=None)
    with pytest.raises(apierrors.APIClientError) as info:
        await client.request('GET', CM_PATH)
    assert type(info.value) is apierrors.APIClientError
    assert len(cluster.request_log()) == 1


@pytest.mark.looptime
async def test_connection_errors_are_retried(settings: OperatorSettings) -> None:
    import socket

    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
    sock.close()  # nobody listens there now
    settings.networking.error_backoffs = [1, 1]
    vault = credentials.Vault()
    vault.populate([credentials.ConnectionInfo(server=f'http://127.0.0.1:{port}')])
    api = client_.APIClient(vault, settings)
    try:
        with pytest.raises(Exception) as info:
            await api.request('GET', '/version')
        assert apierrors.is_retriable(info.value)
    finally:
        await api.close()


@pytest.mark.looptime
async def test_request_timeout_is_retried(client: client_.APIClient, cluster: Any, settings: OperatorSettings) -> None:
    settings.networking.request_timeout = 2
    cluster.delay('GET', CM_PATH, seconds=10, count=1)
    loop = asyncio.get_running_loop()
    start = loop.time()
    result = await client.request('GET', CM_PATH)
    assert result['kind'] == 'ConfigMapList'
    assert loop.time() - start == pytest.approx(3, abs=0.5)  # 2s timeout + 1s backoff


async def test_direct_connections_use_the_own_client_not_aiohttp(client: client_.APIClient) -> None:
    await client.request('GET', '/version')
    item = await client.vault.select()
    assert isinstance(item.transport, transports.DirectTransport)
    assert item.transport.session.opened == 1


def test_requests_and_watches_do_not_import_aiohttp() -> None:
    import subprocess
    import sys
    code = '''
import asyncio, sys
from kopf._api import client, credentials
from kopf._core.settings import OperatorSettings

async def serve(reader, writer):
    await reader.readuntil(b"\\r\\n\\r\\n")
    writer.write(b"HTTP/1.1 200 OK\\r\\nContent-Length: 14\\r\\n\\r\\n{\\"major\\": \\"1\\"}")
    await writer.drain()

async def main():
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    vault = credentials.Vault()
    vault.populate([credentials.ConnectionInfo(server=f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}")])
    api = client.APIClient(vault, OperatorSettings())
    assert (await api.request("GET", "/version")) == {"major": "1"}
    await api.close()
    server.close()

asyncio.run(main())
print(sorted(m for m in sys.modules if m.split(".")[0] in {"aiohttp", "yarl", "multidict"}))
'''
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == '[]'


class _Proxy:
    """A forward proxy that answers by itself and remembers the request lines (absolute URLs via a proxy)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.url = ''

    async def serve(self, reader: Any, writer: Any) -> None:
        while True:
            try:
                head = await reader.readuntil(b'\r\n\r\n')
            except Exception:
                break
            self.lines.append(head.split(b'\r\n', 1)[0].decode())
            writer.write(b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n'
                         b'{"major": "1"}\n')
            await writer.drain()
        writer.close()


@pytest.fixture
async def proxy() -> Any:
    found = _Proxy()
    server = await asyncio.start_server(found.serve, '127.0.0.1', 0)
    found.url = f'http://127.0.0.1:{server.sockets[0].getsockname()[1]}'
    yield found
    server.close()


async def test_a_proxy_url_goes_through_aiohttp(proxy: _Proxy, settings: OperatorSettings) -> None:
    vault = credentials.Vault()
    vault.populate([credentials.ConnectionInfo(server='http://api.invalid:6443', proxy_url=proxy.url)])
    api = client_.APIClient(vault, settings)
    try:
        assert await api.request('GET', '/version', params={'labelSelector': 'a=b'}) == {'major': '1'}
        item = await vault.select()
        assert isinstance(item.transport, transports.AiohttpTransport) and item.transport.owned
        assert type(item.transport.session).__module__.startswith('aiohttp')
    finally:
        await api.close()
    assert proxy.lines == ['GET http://api.invalid:6443/version?labelSelector=a%3Db HTTP/1.1']


async def test_trust_env_with_proxy_variables_goes_through_aiohttp(
        proxy: _Proxy, settings: OperatorSettings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('HTTP_PROXY', proxy.url)
    monkeypatch.setenv('http_proxy', proxy.url)
    monkeypatch.delenv('NO_PROXY', raising=False)
    monkeypatch.delenv('no_proxy', raising=False)
    settings.networking.trust_env = True
    vault = credentials.Vault()
    vault.populate([credentials.ConnectionInfo(server='http://api.invalid:6443')])
    api = client_.APIClient(vault, settings)
    try:
        assert await api.request('GET', '/version') == {'major': '1'}
    finally:
        await api.close()
    assert proxy.lines == ['GET http://api.invalid:6443/version HTTP/1.1']


@pytest.mark.looptime
async def test_a_watch_over_a_login_handlers_aiohttp_session(cluster: Any, settings: OperatorSettings) -> None:
    import aiohttp


    cluster.apply(str(CRD))
    async with aiohttp.ClientSession() as session:
        vault = credentials.Vault()
        vault.populate([credentials.AiohttpSession(cluster.url, session)])
        api = client_.APIClient(vault, settings)
        await api.request('POST', '/apis/kopf.dev/v1/namespaces/default/kopfexamples',
                          payload={'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': 'a'}})
        seen: list[Any] = []
        async for item in watching.watch_objs(api, KOPFEXAMPLES, namespace='default'):
            seen.append(item)
            if item is watchstate.LISTED:
                await api.request('POST', '/apis/kopf.dev/v1/namespaces/default/kopfexamples',
                                  payload={'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
                                           'metadata': {'name': 'b'}})
            elif isinstance(item, dict) and item['type'] == 'ADDED':
                break
        await api.close()
    assert [(i['type'], i['object']['metadata']['name']) for i in seen if isinstance(i, dict)] == [
        (None, 'a'), ('ADDED', 'b')]


async def _raw_server(answer: bytes, seen: list[bytes]) -> Any:

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b'\r\n\r\n')
                length = next((int(line.split(b':')[1]) for line in head.split(b'\r\n')
                               if line.lower().startswith(b'content-length:')), 0)
                seen.append(head + await reader.readexactly(length))
                writer.write(answer)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    return await asyncio.start_server(handler, '127.0.0.1', 0)


@pytest.mark.parametrize('kwargs', [
    {'token': 'secret\r\nX-Injected: yes'},
    {'token': 'sec\nret'},
    {'token': 'sec\0ret'},
    {'scheme': 'Bearer\r\nX-Injected: secret', 'token': 't'},
])
async def test_credentials_with_cr_lf_nul_are_refused_before_sending(settings: OperatorSettings,
                                                                     kwargs: dict[str, str]) -> None:
    seen: list[bytes] = []
    server = await _raw_server(b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}', seen)
    port = server.sockets[0].getsockname()[1]
    vault = credentials.Vault()
    vault.populate([credentials.ConnectionInfo(server=f'http://127.0.0.1:{port}', **kwargs)])  # type: ignore[arg-type]
    api = client_.APIClient(vault, settings)
    try:
        with pytest.raises(apierrors.LoginError, match='Authorization') as info:
            await api.request('POST', CM_PATH, payload={'a': 1})
        assert 'sec' not in str(info.value) and 'Injected' not in str(info.value)  # never the secret's value
        with pytest.raises(apierrors.LoginError, match='Authorization'):
            async with api.stream(CM_PATH, params={'watch': 'true'}):
                pass
    finally:
        await api.close()
        server.close()
    assert seen == []


async def test_a_token_with_a_trailing_newline_is_stripped(settings: OperatorSettings) -> None:
    seen: list[bytes] = []
    server = await _raw_server(b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}', seen)
    port = server.sockets[0].getsockname()[1]
    vault = credentials.Vault()
    vault.populate([credentials.ConnectionInfo(server=f'http://127.0.0.1:{port}', token='abc\n')])
    api = client_.APIClient(vault, settings)
    try:
        assert await api.request('PATCH', CM_PATH, payload={'a': 1}) == {}
    finally:
        await api.close()
        server.close()
    assert b'\r\nAuthorization: Bearer abc\r\n' in seen[0]


@pytest.mark.looptime
async def test_a_tls_error_while_reading_an_answer_is_retried(settings: OperatorSettings) -> None:
    """A forged TLS record (a bad MAC) midway through the body: retried on a fresh connection."""
    import os
    import ssl

    from .certs import tls_contexts
    server_ctx, _, ca = tls_contexts()
    connections = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        try:
            await reader.readuntil(b'\r\n\r\n')
            if connections == 1:
                writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n{"a":')
                await writer.drain()
                await asyncio.sleep(0.1)
                os.write(writer.get_extra_info('socket').fileno(), b'\x17\x03\x03\x00\x20' + b'x' * 32)
                await asyncio.sleep(10)
            else:
                writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n{"a": 1}')
                await writer.drain()
                await reader.read()
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handler, '127.0.0.1', 0, ssl=server_ctx)
    port = server.sockets[0].getsockname()[1]
    settings.networking.error_backoffs = [1]
    vault = credentials.Vault()
    vault.populate([credentials.ConnectionInfo(server=f'https://localhost:{port}', ca_data=ca.cert_pem)])
    api = client_.APIClient(vault, settings)
    try:
        assert await api.request('GET', '/version') == {'a': 1}
    finally:
        await api.close()
        server.close()
    assert connections == 2


# Re-login on 401: the other branch of the one retry loop, for requests and watches alike.

def headers(item: credentials.VaultItem) -> dict[str, str]:
    assert isinstance(item.credentials, credentials.ConnectionInfo)
    return item.credentials.as_http_headers()


class Logins:
    def __init__(self, server: str) -> None:
        self.server = server
        self.calls = 0

    async def __call__(self) -> credentials.ConnectionInfo:
        self.calls += 1
        await asyncio.sleep(0.1)
        return credentials.ConnectionInfo(server=self.server, token=f'token-{self.calls}')


@pytest.fixture
async def relogging(cluster: Any, settings: OperatorSettings) -> AsyncIterator[tuple[client_.APIClient, Logins]]:
    logins = Logins(cluster.url)
    api = client_.APIClient(credentials.Vault(logins), settings)
    try:
        yield api, logins
    finally:
        await api.close()


@pytest.mark.looptime
async def test_401_relogs_once_for_concurrent_requests(relogging: tuple[client_.APIClient, Logins],
                                                       cluster: Any) -> None:
    api, logins = relogging
    await api.request('GET', CM_PATH)
    assert logins.calls == 1
    cluster.fail('GET', CM_PATH, 401, count=5)
    results = await asyncio.gather(*[api.request('GET', CM_PATH) for _ in range(5)])
    assert all(result['kind'] == 'ConfigMapList' for result in results)
    assert logins.calls == 2
    item = await api.vault.select()
    assert headers(item) == {'Authorization': 'Bearer token-2'}


@pytest.mark.looptime
async def test_rejected_credentials_are_not_reused(cluster: Any, settings: OperatorSettings) -> None:
    async def static_login() -> credentials.ConnectionInfo:
        return credentials.ConnectionInfo(server=cluster.url, token='static')

    api = client_.APIClient(credentials.Vault(static_login), settings)
    cluster.fail('GET', CM_PATH, 401, count=None)
    try:
        with pytest.raises(apierrors.AccessError):
            await api.request('GET', CM_PATH)
    finally:
        await api.close()


@pytest.fixture
async def rotating(settings: OperatorSettings, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Any]:
    """A cluster over HTTPS that takes only the token `token-1` (rotated by the tests), and its kubeconfig."""
    async with LocalCluster(tls=True, tokens={'token-1': 'kopf'}) as local:
        local.apply(str(CRD))
        monkeypatch.setenv('KUBECONFIG', str(local.kubeconfig))
        yield local


@pytest.mark.looptime
async def test_token_rotation_under_concurrent_requests(rotating: Any, settings: OperatorSettings) -> None:
    logins = 0

    async def login() -> credentials.ConnectionInfo | None:
        nonlocal logins
        logins += 1
        return loginning.login_with_kubeconfig()

    api = client_.APIClient(credentials.Vault(login), settings)
    try:
        await api.request('GET', CM_PATH)
        rotating.rotate_token('token-1', 'token-2')
        results = await asyncio.gather(*[api.request('GET', CM_PATH) for _ in range(5)])
    finally:
        await api.close()
    assert all(result['kind'] == 'ConfigMapList' for result in results)
    assert [entry['code'] for entry in rotating.request_log()].count(401) == 5   # all sent with token-1
    assert logins == 2


@pytest.mark.looptime
async def test_token_rotation_mid_watch(rotating: Any, settings: OperatorSettings) -> None:
    """The token is rotated through the emulator's control API while two watches stream and writes go on:
    every request with the old token gets 401; the login runs once more, exactly once, for all of them
    (it re-reads the kubeconfig, which the emulator rewrote); no event is lost and none is yielded twice.
    """
    logins = 0

    async def login() -> credentials.ConnectionInfo | None:   # what an @kopf.on.login() handler does
        nonlocal logins
        logins += 1
        await asyncio.sleep(1)   # a slow token fetch: everyone else piles up behind it
        return loginning.login_with_kubeconfig()

    api = client_.APIClient(credentials.Vault(login), settings)
    watchers = [Consumer(api, KOPFEXAMPLES, namespace='default'), Consumer(api, KOPFEXAMPLES, namespace=None)]
    try:
        for watcher in watchers:
            await watcher.wait_for(lambda c: watchstate.LISTED in c.items)
        a = await create(api, 'a')
        for watcher in watchers:
            await watcher.wait_for_rv(rv(a))
        assert logins == 1   # the first login, at startup

        rotating.rotate_token('token-1', 'token-2')
        rotating.apply(kex('while-rotating'))   # written by someone else while the old token is refused
        rotating.close_watches()   # as the server's watch timeout would: both watches re-open with token-1
        await asyncio.sleep(0.5)   # both got a 401; the re-login is under way: these writes wait for it
        others = await asyncio.gather(*[create(api, name) for name in ['b', 'c', 'd']])
        last = max((rv(obj) for obj in others), key=int)
        for watcher in watchers:
            await watcher.wait_for_rv(last)

        assert logins == 2   # exactly one re-login for two watches and three writes
        refused = [entry for entry in rotating.request_log() if entry['code'] == 401]
        assert len(refused) == 2 and all('watch=true' in entry['query'] for entry in refused)
        item = await api.vault.select()
        assert headers(item) == {'Authorization': 'Bearer token-2'}

        ours = {obj['metadata']['uid'] for obj in rotating.list('kopf.dev/v1', 'kopfexamples', 'default')}
        expected = [(uid, version) for uid, version, _ in rotating.event_log() if uid in ours]
        assert len(expected) == 5
        for watcher in watchers:
            assert watcher.seen() == expected   # nothing lost, nothing twice, in the emulator's order
    finally:
        for watcher in watchers:
            await watcher.stop()
        await api.close()


class FreshTokens:
    """A login that gives a new token every time: wrong ones first, then (maybe) the right one."""

    def __init__(self, cluster: Any, wrong: int | None, right: str = 'token-1') -> None:
        self.server, self.ca = cluster.url, cluster.emulator.certificates.ca_pem
        self.wrong, self.right = wrong, right
        self.calls = 0

    async def __call__(self) -> credentials.ConnectionInfo:
        self.calls += 1
        good = self.wrong is not None and self.calls > self.wrong
        return credentials.ConnectionInfo(server=self.server, ca_data=self.ca,
                                          token=self.right if good else f'wrong-{self.calls}')


@pytest.mark.looptime
async def test_fresh_but_always_rejected_tokens_fail_clearly(rotating: Any, settings: OperatorSettings) -> None:
    login = FreshTokens(rotating, wrong=None)
    api = client_.APIClient(credentials.Vault(login, relogin_delays=(1, 1, 1)), settings)
    try:
        with pytest.raises(apierrors.AccessError, match=r'rejected \(401\) the credentials of 4 logins in a row'):
            await api.request('GET', CM_PATH)
        with pytest.raises(apierrors.AccessError):   # the next request too, without logging in again
            await api.request('GET', CM_PATH)
    finally:
        await api.close()
    assert login.calls == 4
    assert [entry['code'] for entry in rotating.request_log()] == [401] * 4


@pytest.mark.looptime
async def test_a_watch_surfaces_the_access_error(rotating: Any, settings: OperatorSettings) -> None:
    login = FreshTokens(rotating, wrong=None)
    api = client_.APIClient(credentials.Vault(login, relogin_delays=(1,)), settings)
    try:
        with pytest.raises(apierrors.AccessError):
            async for _ in watching.watch_objs(api, KOPFEXAMPLES, namespace='default'):
                pass
    finally:
        await api.close()
    assert login.calls == 2


@pytest.mark.looptime
async def test_tokens_that_work_after_a_moment_are_waited_for(rotating: Any, settings: OperatorSettings) -> None:
    login = FreshTokens(rotating, wrong=2)   # e.g. a token issued before the server knows it
    api = client_.APIClient(credentials.Vault(login), settings)
    try:
        assert (await api.request('GET', CM_PATH))['kind'] == 'ConfigMapList'
    finally:
        await api.close()
    assert login.calls == 3
