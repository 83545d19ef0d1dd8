"""Fidelity fixtures: one emulator per test module on a free loopback port, driven by real clients
(with `--backend=envtest`: the shared real cluster instead, emptied after each module).

kubectl: the machine's kubectl 1.32 (the gcloud dispatcher would pick another binary to match the
server's version, so the versioned 1.32 binary is preferred when present; `$KUBECTL` overrides);
with --backend=envtest, the kubectl built with the apiserver (of the same version) when present.
"""
import functools
import http.client
import json
import os
import pathlib
import shutil
import ssl
import subprocess
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest

from .. import backends
from ..backends import Cluster

EXAMPLES = pathlib.Path(__file__).parent.parent.parent / 'examples'
STRICT_CRD = {
    'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
    'metadata': {'name': 'stricts.kopf.dev'},
    'spec': {
        'group': 'kopf.dev', 'scope': 'Namespaced',
        'names': {'plural': 'stricts', 'singular': 'strict', 'kind': 'Strict'},
        'versions': [{
            'name': 'v1', 'served': True, 'storage': True, 'subresources': {'status': {}},
            'schema': {'openAPIV3Schema': {
                'type': 'object', 'required': ['spec'],
                'properties': {
                    'spec': {'type': 'object', 'properties': {'size': {'type': 'integer'}}},
                    'status': {'type': 'object', 'properties': {'phase': {'type': 'string'}}},
                },
            }},
        }],
    },
}
PLAIN_CRD = {  # no status subresource; everything preserved
    'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
    'metadata': {'name': 'plains.kopf.dev'},
    'spec': {
        'group': 'kopf.dev', 'scope': 'Namespaced',
        'names': {'plural': 'plains', 'singular': 'plain', 'kind': 'Plain'},
        'versions': [{'name': 'v1', 'served': True, 'storage': True, 'schema': {'openAPIV3Schema': {
            'type': 'object', 'x-kubernetes-preserve-unknown-fields': True}}}],
    },
}
CLUSTER_CRD = {
    'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
    'metadata': {'name': 'globals.kopf.dev'},
    'spec': {
        'group': 'kopf.dev', 'scope': 'Cluster',
        'names': {'plural': 'globals', 'singular': 'global', 'kind': 'Global'},
        'versions': [{'name': 'v1', 'served': True, 'storage': True, 'schema': {'openAPIV3Schema': {
            'type': 'object', 'x-kubernetes-preserve-unknown-fields': True}}}],
    },
}


def kubectl_binary(cluster: Cluster | None = None) -> str | None:
    if os.environ.get('KUBECTL'):
        return os.environ['KUBECTL']
    if backends.is_envtest(cluster) and (cluster.assets / 'kubectl').exists():  # type: ignore[union-attr]
        return str(cluster.assets / 'kubectl')  # type: ignore[union-attr]  # the server's own version
    found = shutil.which('kubectl')
    if found is None:
        return None
    versioned = pathlib.Path(os.path.realpath(found)).with_name('kubectl.1.32')
    return str(versioned) if versioned.exists() else found


@functools.cache
def _client_minor(binary: tuple[str, ...]) -> int:
    result = subprocess.run([*binary, 'version', '--client', '-o', 'json'], capture_output=True, text=True, timeout=30)
    return int(json.loads(result.stdout)['clientVersion']['minor'].rstrip('+'))


class Kubectl:
    def __init__(self, binary: str, kubeconfig: pathlib.Path, cache: pathlib.Path) -> None:
        self.base = [binary, f'--kubeconfig={kubeconfig}', f'--cache-dir={cache}']

    def minor(self) -> int:
        """The client's minor version (32 for kubectl 1.32)."""
        return _client_minor(tuple(self.base[:1]))

    def __call__(self, *args: str, input: str | None = None, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.base, *args], input=input, capture_output=True, text=True, timeout=timeout)


class Http:
    """Raw HTTP to the cluster (plain http.client: no client library between us and the wire).

    HTTPS with the admin's client certificate on envtest (`ssl_context`); plain HTTP on the emulator.
    """

    def __init__(self, url: str, ssl_context: ssl.SSLContext | None = None) -> None:
        parsed = urllib.parse.urlparse(url)
        self.host, self.port = parsed.hostname or '127.0.0.1', parsed.port or 80
        self.ssl_context = ssl_context

    def connection(self, timeout: float = 30) -> http.client.HTTPConnection:
        if self.ssl_context is not None:
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout, context=self.ssl_context)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def request(self, method: str, path: str, body: Any = None, content_type: str = 'application/json',
                headers: dict[str, str] | None = None) -> tuple[int, http.client.HTTPMessage, Any]:
        conn = self.connection()
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        all_headers = dict(headers or {})
        if data is not None:
            all_headers['Content-Type'] = content_type
        conn.request(method, path, body=data, headers=all_headers)
        response = conn.getresponse()
        raw = response.read()
        conn.close()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode()
        return response.status, response.headers, parsed

    def watch(self, path: str, timeout: float = 10) -> 'WatchStream':
        return WatchStream(self.connection(timeout), path)


class WatchStream:
    """A raw watch stream: events read line by line (each line is one JSON event)."""

    def __init__(self, conn: http.client.HTTPConnection, path: str) -> None:
        self.conn = conn
        self.conn.request('GET', path)
        self.response = self.conn.getresponse()

    def next(self) -> dict[str, Any] | None:
        line = self.response.readline()
        return json.loads(line) if line.strip() else None

    def take(self, count: int) -> list[dict[str, Any]]:
        return [event for event in (self.next() for _ in range(count)) if event is not None]

    def rest(self) -> list[dict[str, Any]]:
        events = []
        while (event := self.next()) is not None:
            events.append(event)
        return events

    def close(self) -> None:
        self.conn.close()


@pytest.fixture(scope='module')
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    with backends.cluster(request) as running:
        running.apply(str(EXAMPLES / 'crd.yaml'), STRICT_CRD, PLAIN_CRD, CLUSTER_CRD)
        yield running


@pytest.fixture(scope='module')
def kubectl(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    binary = kubectl_binary(cluster)
    if binary is None:
        pytest.skip('kubectl is not installed on this machine')
    return Kubectl(binary, cluster.kubeconfig, tmp_path_factory.mktemp('kubectl-cache'))


@pytest.fixture(scope='module')
def raw(cluster: Cluster) -> Http:
    return Http(cluster.url, cluster.ssl_context if backends.is_envtest(cluster) else None)


@pytest.fixture(scope='module')
def api_client(cluster: Cluster) -> Iterator[Any]:
    kubernetes = pytest.importorskip('kubernetes')
    client = kubernetes.config.new_client_from_config(config_file=str(cluster.kubeconfig))
    yield client
    client.close()


@pytest.fixture(scope='module')
def custom(api_client: Any) -> Any:
    import kubernetes
    return kubernetes.client.CustomObjectsApi(api_client)


@pytest.fixture(scope='module')
def core(api_client: Any) -> Any:
    import kubernetes
    return kubernetes.client.CoreV1Api(api_client)


@pytest.fixture(scope='module')
def namespace(cluster: Cluster, request: pytest.FixtureRequest) -> str:
    """A namespace of the module's own, so that modules sharing nothing never collide."""
    name = str(request.module.__name__).rsplit('.', 1)[-1].replace('_', '-')
    cluster.apply({'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': name}})
    return name
