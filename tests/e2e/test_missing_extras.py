"""Each optional dependency missing, one at a time (hidden by an import hook: `sys.modules[name] = None`, as
when it is not installed): what needs it stops with one line naming it and the extra to install, and an
operator stops before any watcher starts (the local cluster saw no watch request), as upstream's admission
example did not: `OperatorError: ... ModuleNotFoundError("No module named 'cryptography'")` after the start.
"""
import asyncio
import sys
from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner

import kopf
from kopf import cli
from kopf._api import loginning
from kopf._engine.running import OperatorError
from kopf._kits import envassets
from kopf.testing import LocalCluster, cluster_vault

from .conftest import CRD, fast_settings

pytestmark = pytest.mark.emulator_only(reason='counts the watch requests in the local cluster\'s request log')
Hide = Callable[[str], None]


@pytest.fixture
def hide(monkeypatch: pytest.MonkeyPatch) -> Hide:
    def hide(name: str) -> None:
        for module in [module for module in sys.modules if module == name or module.startswith(f'{name}.')]:
            monkeypatch.delitem(sys.modules, module)
        monkeypatch.setitem(sys.modules, name, None)  # an import of it raises ImportError
    return hide


async def _operator_error(cluster: LocalCluster, configure: Callable[[kopf.OperatorSettings], None], *,
                          webhooks: bool = True) -> str:
    """Run an operator with a watched resource (and a validating webhook); the one-line error it stops with."""
    registry = kopf.OperatorRegistry()

    @kopf.on.startup(registry=registry)
    def startup(settings: kopf.OperatorSettings, **_: Any) -> None:
        configure(settings)

    if webhooks:
        @kopf.on.validate('kopfexamples', registry=registry)
        def check(**_: Any) -> None:
            pass

    @kopf.on.create('kopfexamples', registry=registry)
    def create(**_: Any) -> None:
        pass

    with pytest.raises(OperatorError) as info:
        await asyncio.wait_for(kopf.operator(registry=registry, vault=cluster_vault(cluster), clusterwide=True,
                                             settings=fast_settings()), timeout=30)
    watches = [entry for entry in cluster.request_log() if 'watch=' in str(entry.get('query', ''))]
    assert watches == []  # stopped before any watcher started
    assert '\n' not in str(info.value)
    return str(info.value)


@pytest.mark.parametrize('server', [kopf.WebhookServer, kopf.WebhookAutoServer, kopf.WebhookK3dServer])
async def test_a_self_signed_webhook_server_without_cryptography(hide: Hide, server: type[kopf.WebhookServer]) -> None:
    async with LocalCluster() as cluster:
        cluster.apply(str(CRD))
        hide('cryptography')
        error = await _operator_error(cluster, lambda settings: setattr(settings.admission, 'server', server()))
    assert error == (f'kopf.{server.__name__}() without certfile/pkeyfile (a self-signed certificate) needs '
                     'cryptography: pip install "kopf[webhooks]" (or pip install cryptography).')


async def test_a_webhook_server_with_its_own_certificate_needs_no_cryptography(hide: Hide) -> None:
    hide('cryptography')
    assert kopf.WebhookServer(certfile='c.pem', pkeyfile='k.pem')._needs() == []
    assert kopf.WebhookServer(insecure=True)._needs() == []


async def test_a_self_signed_webhook_server_alone_without_cryptography(hide: Hide) -> None:
    hide('cryptography')

    async def fn(payload: Any, /, **_: Any) -> Any:
        return {}

    with pytest.raises(ImportError, match=r'^kopf.WebhookServer\(\) without certfile/pkeyfile .* needs cryptography: '
                                          r'pip install "kopf\[webhooks\]"'):
        await kopf.WebhookServer(addr='127.0.0.1')(fn).__anext__()


async def test_an_ngrok_tunnel_without_pyngrok(hide: Hide) -> None:
    async with LocalCluster() as cluster:
        cluster.apply(str(CRD))
        hide('pyngrok')
        error = await _operator_error(cluster, lambda s: setattr(s.admission, 'server', kopf.WebhookNgrokTunnel()))
    assert error == 'kopf.WebhookNgrokTunnel needs pyngrok: pip install "kopf[dev]" (or pip install pyngrok).'


async def test_an_auto_tunnel_without_either(hide: Hide) -> None:
    async with LocalCluster() as cluster:
        cluster.apply(str(CRD))
        hide('pyngrok')
        hide('cryptography')
        error = await _operator_error(cluster, lambda s: setattr(s.admission, 'server', kopf.WebhookAutoTunnel()))
    assert error.startswith('kopf.WebhookAutoTunnel needs cryptography or pyngrok: pip install "kopf[webhooks]" or '
                            'pip install "kopf[dev]"')


async def test_metrics_without_prometheus_client(hide: Hide) -> None:
    async with LocalCluster() as cluster:
        cluster.apply(str(CRD))
        hide('prometheus_client')
        error = await _operator_error(cluster, lambda s: setattr(s.metrics, 'enabled', True), webhooks=False)
    assert error == ('Prometheus metrics (--metrics, settings.metrics) needs prometheus-client: '
                     'pip install "kopf[metrics]" (or pip install prometheus-client).')


async def test_a_local_cluster_with_tls_without_cryptography(hide: Hide) -> None:
    hide('cryptography')
    with pytest.raises(ImportError, match=r'^the local cluster\'s HTTPS mode .* needs cryptography: '
                                          r'pip install "kopf\[cluster\]" \(or pip install cryptography\).$'):
        async with LocalCluster(tls=True):
            pass


def test_kopf_run_local_cluster_posing_with_tls_without_cryptography(hide: Hide) -> None:
    hide('cryptography')
    result = CliRunner().invoke(cli.main, ['run', '-A', '--local-cluster', '--tls-san', 'k3s', 'nonexistent.py'])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1] == (
        'Error: the local cluster\'s HTTPS mode (--tls, --tls-san, '
        'LocalCluster(tls=True)) needs cryptography: pip install "kopf[cluster]" (or pip install cryptography).')


def test_envtest_without_cryptography(hide: Hide, tmp_path: Any) -> None:
    hide('cryptography')
    with pytest.raises(envassets.EnvtestError, match=r'^kopf.testing.EnvtestCluster \(its certificates\) needs '
                                                     r'cryptography: pip install "kopf\[cluster\]"'):
        envassets.write_pki(tmp_path, 'admin')


@pytest.mark.parametrize('module, fn, line', [
    ('pykube', loginning.login_via_pykube,
     'kopf.login_via_pykube() needs pykube-ng: pip install "kopf[full-auth]" (or pip install pykube-ng).'),
    ('kubernetes', loginning.login_via_client,
     'kopf.login_via_client() needs kubernetes: pip install "kopf[full-auth]" (or pip install kubernetes).'),
    ('kubernetes_asyncio', loginning.login_via_async_client,
     'kopf.login_via_async_client() needs kubernetes_asyncio: pip install kubernetes_asyncio.'),
])
async def test_login_via_a_missing_client_library(hide: Hide, caplog: pytest.LogCaptureFixture,
                                                  module: str, fn: Any, line: str) -> None:
    hide(module)
    result = fn()
    assert (await result if asyncio.iscoroutine(result) else result) is None   # as upstream's: no credentials
    assert [record.getMessage() for record in caplog.records] == [f'{line} Without it, it finds no credentials.']
