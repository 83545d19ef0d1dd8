"""Credentials in use: re-login on 401 (mid-watch too), kubeconfig logins against the local cluster, TLS."""
import asyncio
import pathlib
import ssl
import tempfile
from collections.abc import AsyncIterator
from typing import Any

import aiohttp.web
import pytest

from kopf._api import apierrors, credentials, loginning, watching, watchstate
from kopf._api import client as client_
from kopf._model.settings import OperatorSettings
from kopf.testing import LocalCluster

from .certs import issue, make_ca
from .conftest import CRD, KOPFEXAMPLES
from .watchers import Consumer, create, kex, rv

CM_PATH = '/api/v1/namespaces/default/configmaps'


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


async def test_kubeconfig_of_the_local_cluster(cluster: Any, settings: OperatorSettings,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('KUBECONFIG', str(cluster.kubeconfig))
    info = loginning.login_with_kubeconfig()
    assert info is not None and info.server == cluster.url
    vault = credentials.Vault()
    vault.populate([info])
    api = client_.APIClient(vault, settings)
    try:
        assert (await api.request('GET', '/version'))['major'] == '1'
    finally:
        await api.close()


@pytest.mark.parametrize('login', [loginning.login_via_pykube, loginning.login_via_client])
async def test_piggybacking_on_the_local_cluster(cluster: Any, settings: OperatorSettings, login: Any,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('KUBECONFIG', str(cluster.kubeconfig))
    monkeypatch.delenv('KUBERNETES_SERVICE_HOST', raising=False)
    info = login()
    assert info is not None and info.server.rstrip('/') == cluster.url
    vault = credentials.Vault()
    vault.populate([info])
    api = client_.APIClient(vault, settings)
    try:
        assert (await api.request('GET', '/version'))['major'] == '1'
    finally:
        await api.close()


# TLS & token handshake mechanics only: the local cluster has no TLS/tokens yet (see the issue).

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
