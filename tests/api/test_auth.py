"""Credentials in use: re-login on 401 (mid-watch too), kubeconfig logins against the local cluster, TLS."""
import asyncio
import pathlib
import ssl
import tempfile
from collections.abc import AsyncIterator
from typing import Any

import aiohttp.web
import pytest

from kopf._api import client as client_
from kopf._api import credentials, errors, loginning, streams
from kopf._model import resources
from kopf._model.settings import OperatorSettings

from .certs import issue, make_ca
from .watchers import Consumer, create, rv

CM_PATH = '/api/v1/namespaces/default/configmaps'


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
    assert item.credentials.as_http_headers() == {'Authorization': 'Bearer token-2'}


@pytest.mark.looptime
async def test_rejected_credentials_are_not_reused(cluster: Any, settings: OperatorSettings) -> None:
    async def static_login() -> credentials.ConnectionInfo:
        return credentials.ConnectionInfo(server=cluster.url, token='static')

    api = client_.APIClient(credentials.Vault(static_login), settings)
    cluster.fail('GET', CM_PATH, 401, count=None)
    try:
        with pytest.raises(errors.AccessError):
            await api.request('GET', CM_PATH)
    finally:
        await api.close()


@pytest.mark.looptime
async def test_token_rotation_mid_watch(relogging: tuple[client_.APIClient, Logins], cluster: Any,
                                        crd: resources.Resource, consumers: list[Consumer]) -> None:
    api, logins = relogging
    consumer = Consumer(api, crd, namespace='default')
    consumers.append(consumer)
    await consumer.wait_for(lambda c: streams.LISTED in c.items)
    a = await create(api, 'a')
    await consumer.wait_for_rv(rv(a))
    cluster.fail('GET', crd.get_url(namespace='default'), 401, count=1)  # the old token is refused from now on
    cluster.close_watches()
    b = await create(api, 'b')
    await consumer.wait_for_rv(rv(b))
    assert logins.calls == 2
    assert consumer.seen() == [(a['metadata']['uid'], rv(a)), (b['metadata']['uid'], rv(b))]


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
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
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
