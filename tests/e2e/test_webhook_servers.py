"""The other webhook servers and tunnels, with the local cluster calling them end to end.

- K3d/Minikube/DockerDesktop servers put their host (`host.k3d.internal`, ...) into the URL and the
  certificate; the local cluster connects to loopback for those names (as the real clusters reach the host).
- `WebhookAutoServer` and `WebhookAutoTunnel` recognise a local cluster that presents itself as k3s,
  minikube or Docker Desktop (its `/version` and its serving certificate's names).
- The ngrok tunnel runs against a stand-in for `pyngrok` whose "ngrok process" is a TCP forwarder on
  loopback (no network here); a missing pyngrok is a clear error naming the extra.
"""
import asyncio
import contextlib
import signal
import socket
import socketserver
import sys
import threading
import types
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

import kopf
from kopf.testing import LocalCluster, cluster_vault

from .conftest import CRD, Kube, eventually, example, fast_settings

pytestmark = pytest.mark.emulator_only(reason='the local cluster presents itself as k3s/minikube/Docker Desktop and '
                                              'resolves their host names to loopback')
MANAGED = 'auto.kopf.dev'


def webhook_url(cluster: LocalCluster) -> str | None:
    obj = cluster.get('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', MANAGED) or {}
    hooks = [hook for hook in obj.get('webhooks') or [] if hook.get('rules')]
    return str(hooks[0]['clientConfig']['url']) if hooks else None


@contextlib.asynccontextmanager
async def run_operator(cluster: LocalCluster, server: Any) -> AsyncIterator[str]:
    """An operator with one validating webhook served by `server`; yields the webhook URL once configured."""
    registry = kopf.OperatorRegistry()

    @kopf.on.startup(registry=registry)
    def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
        settings.admission.server = server
        settings.admission.managed = MANAGED

    @kopf.on.validate('kopfexamples', id='check', registry=registry)
    def check(spec: Any, **_: Any) -> None:
        if spec.get('field') == 'wrong':
            raise kopf.AdmissionError('The field is wrong.', code=422)

    stop = asyncio.Event()
    task = asyncio.create_task(kopf.operator(registry=registry, vault=cluster_vault(cluster), clusterwide=True,
                                             settings=fast_settings(), stop_flag=stop))
    try:
        yield await eventually(lambda: webhook_url(cluster) or (task.done() and task.result()))
    finally:
        stop.set()
        await asyncio.wait_for(task, timeout=10)


async def assert_called(cluster: LocalCluster) -> None:
    """The cluster calls the webhook: a wrong object is denied with the handler's message, a good one stored."""
    import kubernetes
    kube = Kube(cluster)
    with pytest.raises(kubernetes.client.ApiException) as err:
        await kube.create(example(name='bad', field='wrong'))
    assert err.value.status == 422, err.value.body
    assert 'The field is wrong.' in str(err.value.body)
    await kube.create(example(name='good', field='fine'))
    assert cluster.get('kopf.dev/v1', 'KopfExample', 'good', namespace='default') is not None


@pytest.fixture
def flavoured() -> Callable[..., Any]:
    """A local cluster over HTTPS that presents itself by its version and its serving certificate's names."""
    def make(git_version: str = 'v1.31.0', sans: tuple[str, ...] = (), **options: Any) -> LocalCluster:
        return LocalCluster(tls=True, git_version=git_version, tls_sans=sans, **options)
    return make


@pytest.mark.parametrize('cls, host', [
    (kopf.WebhookK3dServer, 'host.k3d.internal'),
    (kopf.WebhookMinikubeServer, 'host.minikube.internal'),
    (kopf.WebhookDockerDesktopServer, 'host.docker.internal'),
])
async def test_local_cluster_servers_are_reached_by_their_host_names(
        flavoured: Callable[..., LocalCluster], cls: type, host: str) -> None:
    async with flavoured() as cluster:
        cluster.apply(str(CRD))
        async with run_operator(cluster, cls()) as url:
            assert url.startswith(f'https://{host}:') and url.endswith('/check')
            await assert_called(cluster)


@pytest.mark.parametrize('version, sans, host', [
    ('v1.31.0+k3s1', (), 'host.k3d.internal'),                       # k3s by its version
    ('v1.31.0', ('k3s', 'kubernetes'), 'host.k3d.internal'),         # k3s by its certificate
    ('v1.31.0', ('k3d-dev-server-0',), 'host.k3d.internal'),         # k3d's node names
    ('v1.31.0', ('minikubeCA', 'control-plane.minikube.internal'), 'host.minikube.internal'),
    ('v1.31.0', ('docker-for-desktop', 'kubernetes.docker.internal'), 'host.docker.internal'),
    ('v1.31.0', (), 'localhost'),                                    # nothing known: a plain server
], ids=['k3s-version', 'k3s-cert', 'k3d-cert', 'minikube', 'docker-desktop', 'plain'])
async def test_auto_server_picks_the_host_of_the_detected_cluster(
        flavoured: Callable[..., LocalCluster], version: str, sans: tuple[str, ...], host: str) -> None:
    async with flavoured(version, sans) as cluster:
        cluster.apply(str(CRD))
        async with run_operator(cluster, kopf.WebhookAutoServer()) as url:
            assert url.startswith(f'https://{host}:')
            await assert_called(cluster)


# -- the CLI's flags to pose as a flavour: kopf run --local-cluster and kopf cluster --------------------

AUTO_HANDLERS = f"""
import kopf

@kopf.on.startup()
def configure(settings, **_):
    settings.admission.server = kopf.WebhookAutoServer()
    settings.admission.managed = {MANAGED!r}

@kopf.on.validate('kopfexamples', id='check')
def check(spec, **_):
    if spec.get('field') == 'wrong':
        raise kopf.AdmissionError('The field is wrong.', code=422)
"""


@pytest.mark.parametrize('flags, host', [
    (['--git-version', 'v1.31.0+k3s1'], 'host.k3d.internal'),   # k3s by its version (plain HTTP)
    (['--tls-san', 'minikubeCA', '--tls-san', 'control-plane.minikube.internal'], 'host.minikube.internal'),
    (['--tls-san', 'docker-for-desktop'], 'host.docker.internal'),  # by the certificate (HTTPS)
], ids=['k3s', 'minikube', 'docker-desktop'])
def test_kopf_run_local_cluster_poses_as_a_flavour_for_the_auto_server(
        tmp_path: Any, flags: list[str], host: str) -> None:
    import subprocess
    import time

    import kubernetes
    (tmp_path / 'handlers.py').write_text(AUTO_HANDLERS)
    kubeconfig = tmp_path / 'kc'
    operator = subprocess.Popen([sys.executable, '-m', 'kopf', 'run', '-A', '--standalone', '--local-cluster',
                                 '--kubeconfig', str(kubeconfig), '--apply', str(CRD), *flags, 'handlers.py'],
                                cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60  # a bound for a broken operator only
        url = None
        while url is None and time.monotonic() < deadline and operator.poll() is None:
            if kubeconfig.exists():
                api = kubernetes.client.AdmissionregistrationV1Api(
                    kubernetes.config.new_client_from_config(config_file=str(kubeconfig)))
                try:
                    obj = api.read_validating_webhook_configuration(MANAGED)
                    url = next((hook.client_config.url for hook in obj.webhooks or [] if hook.rules), None)
                except kubernetes.client.ApiException:
                    pass
            if url is None:
                time.sleep(0.1)
        assert url is not None and url.startswith(f'https://{host}:'), url
        client = kubernetes.config.new_client_from_config(config_file=str(kubeconfig))
        custom = kubernetes.client.CustomObjectsApi(client)
        with pytest.raises(kubernetes.client.ApiException) as err:  # the local cluster calls it at that host
            custom.create_namespaced_custom_object('kopf.dev', 'v1', 'default', 'kopfexamples',
                                                   example(name='bad', field='wrong'))
        assert err.value.status == 422 and 'The field is wrong.' in str(err.value.body)
    finally:
        operator.send_signal(signal.SIGINT)
        output, _ = operator.communicate(timeout=30)
    assert operator.returncode == 0, output


def test_kopf_cluster_reports_the_given_version_and_certificate_names(tmp_path: Any) -> None:
    import ssl
    import subprocess
    import time
    import urllib.parse

    import kubernetes

    from kopf._shared import localhosts
    kubeconfig = tmp_path / 'kc'
    server = subprocess.Popen([sys.executable, '-m', 'kopf', 'cluster', '--kubeconfig', str(kubeconfig),
                               '--git-version', 'v1.31.0+k3s1', '--tls-san', 'k3s', '--tls-san', 'k3d-dev-server-0'],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not kubeconfig.exists() and time.monotonic() < deadline and server.poll() is None:
            time.sleep(0.05)
        client = kubernetes.config.new_client_from_config(config_file=str(kubeconfig))
        assert kubernetes.client.VersionApi(client).get_code().git_version == 'v1.31.0+k3s1'
        parsed = urllib.parse.urlsplit(client.configuration.host)
        assert parsed.scheme == 'https'  # --tls-san implies --tls
        context = ssl.create_default_context(cafile=client.configuration.ssl_ca_cert)
        with socket.create_connection((parsed.hostname, parsed.port)) as raw, \
                context.wrap_socket(raw, server_hostname=parsed.hostname) as tls:
            names = localhosts.certificate_names(tls.getpeercert() or {})
        assert {'k3s', 'k3d-dev-server-0'} <= set(names)
    finally:
        server.send_signal(signal.SIGINT)
        _, errors = server.communicate(timeout=30)
    assert server.returncode == 0, errors


# -- ngrok, with a stand-in ---------------------------------------------------------------------------

class _Forwarder(socketserver.ThreadingTCPServer):
    """The stand-in's "ngrok process": accepts on a loopback port, pipes each connection to the local server."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, target: int) -> None:
        self.target = target
        self.connections = 0
        super().__init__(('127.0.0.1', 0), _Pipe)


class _Pipe(socketserver.BaseRequestHandler):
    server: _Forwarder

    def handle(self) -> None:
        self.server.connections += 1
        upstream = socket.create_connection(('127.0.0.1', self.server.target))

        def pump(src: socket.socket, dst: socket.socket) -> None:
            with contextlib.suppress(OSError):
                while data := src.recv(65536):
                    dst.sendall(data)
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)  # pass the end on

        back = threading.Thread(target=pump, args=(upstream, self.request), daemon=True)
        back.start()
        pump(self.request, upstream)
        back.join(timeout=30)
        upstream.close()


class NgrokStandIn:
    """`pyngrok.ngrok` and `pyngrok.conf` as the tunnel uses them; the public URL is the forwarder's (plain HTTP)."""

    def __init__(self) -> None:
        self.connects: list[tuple[Any, dict[str, Any]]] = []
        self.disconnects: list[str] = []
        self.forwarders: dict[str, _Forwarder] = {}

    def modules(self) -> dict[str, types.ModuleType]:
        package, ngrok, conf = (types.ModuleType(name) for name in ('pyngrok', 'pyngrok.ngrok', 'pyngrok.conf'))
        ngrok.connect = self.connect  # type: ignore[attr-defined]
        ngrok.disconnect = self.disconnect  # type: ignore[attr-defined]
        conf.PyngrokConfig = lambda **options: dict(options)  # type: ignore[attr-defined]
        package.ngrok, package.conf = ngrok, conf  # type: ignore[attr-defined]
        return {'pyngrok': package, 'pyngrok.ngrok': ngrok, 'pyngrok.conf': conf}

    def connect(self, addr: Any, **options: Any) -> Any:
        self.connects.append((addr, options))
        forwarder = _Forwarder(int(addr))
        threading.Thread(target=forwarder.serve_forever, daemon=True).start()
        url = f'http://127.0.0.1:{forwarder.server_address[1]}'
        self.forwarders[url] = forwarder
        return types.SimpleNamespace(public_url=url)

    def disconnect(self, public_url: str, **_: Any) -> None:
        self.disconnects.append(public_url)
        forwarder = self.forwarders.pop(public_url)
        forwarder.shutdown()
        forwarder.server_close()


@pytest.fixture
def ngrok(monkeypatch: pytest.MonkeyPatch) -> Iterator[NgrokStandIn]:
    standin = NgrokStandIn()
    for name, module in standin.modules().items():
        monkeypatch.setitem(sys.modules, name, module)
    yield standin
    for forwarder in standin.forwarders.values():
        forwarder.shutdown()
        forwarder.server_close()


async def test_ngrok_tunnel_puts_the_public_url_into_the_client_config(ngrok: NgrokStandIn) -> None:
    tunnel = kopf.WebhookNgrokTunnel(path='/hooks', token='secret', region='eu', binary='/opt/ngrok')
    async with LocalCluster(allow_http_webhooks=True) as cluster:  # the stand-in's "public" URL is plain HTTP
        cluster.apply(str(CRD))
        async with run_operator(cluster, tunnel) as url:
            (public, forwarder), = ngrok.forwarders.items()
            assert url == f'{public}/hooks/check'
            await assert_called(cluster)
            assert forwarder.connections >= 2  # both reviews went through the "tunnel"
    (port, options), = ngrok.connects
    assert port == forwarder.target  # the tunnel goes to the local server's port
    assert options['proto'] == 'http' and options['bind_tls'] is True
    assert options['pyngrok_config'] == {'auth_token': 'secret', 'region': 'eu', 'ngrok_path': '/opt/ngrok'}
    assert ngrok.disconnects == [public]  # closed on exit


async def test_auto_tunnel_serves_directly_for_a_detected_cluster(
        flavoured: Callable[..., LocalCluster], ngrok: NgrokStandIn) -> None:
    async with flavoured('v1.31.0+k3s1') as cluster:
        cluster.apply(str(CRD))
        async with run_operator(cluster, kopf.WebhookAutoTunnel()) as url:
            assert url.startswith('https://host.k3d.internal:')
            await assert_called(cluster)
    assert ngrok.connects == []


async def test_auto_tunnel_tunnels_for_an_unknown_cluster(ngrok: NgrokStandIn) -> None:
    async with LocalCluster(allow_http_webhooks=True) as cluster:
        cluster.apply(str(CRD))
        async with run_operator(cluster, kopf.WebhookAutoTunnel(path='/x')) as url:
            assert url.startswith('http://127.0.0.1:') and url.endswith('/x/check')
            await assert_called(cluster)
    assert len(ngrok.connects) == 1


async def test_a_missing_pyngrok_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, 'pyngrok', None)  # importing it fails, as when it is not installed

    async def fn(payload: Any, /, **_: Any) -> Any:
        return {}

    with pytest.raises(ImportError, match=r'kopf.WebhookNgrokTunnel needs pyngrok: pip install "kopf\[dev\]"'):
        await kopf.WebhookNgrokTunnel()(fn).__anext__()
