"""HTTPS with a throw-away CA and bearer tokens : kubectl and the Python client with valid and wrong
tokens, client certificates, and kubectl refusing CN-only server certificates."""
import pathlib
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from kopf.testing import LocalCluster
from tests.fidelity.conftest import Kubectl, kubectl_binary

pytest.importorskip('cryptography')
pytestmark = pytest.mark.emulator_only(reason="the emulator's own HTTPS, token and client-certificate modes "
                                              "(LocalCluster(tls=..., tokens=..., client_certs=...))")


@pytest.fixture(scope='module')
def secure() -> Iterator[LocalCluster]:
    with LocalCluster(tls=True, tokens={'s3cret': 'admin'}) as running:
        yield running


@pytest.fixture(scope='module')
def secure_kubectl(secure: LocalCluster, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    binary = kubectl_binary()
    if binary is None:
        pytest.skip('kubectl is not installed on this machine')
    return Kubectl(binary, secure.kubeconfig, tmp_path_factory.mktemp('kubectl-cache'))


def test_kubectl_over_https_with_token(secure: LocalCluster, secure_kubectl: Kubectl) -> None:
    assert secure.url.startswith('https://127.0.0.1:')
    result = secure_kubectl('get', 'ns', 'default')
    assert result.returncode == 0, result.stderr
    assert 'Active' in result.stdout


def test_kubectl_with_a_wrong_token(secure_kubectl: Kubectl) -> None:
    result = secure_kubectl('--token=wrong', 'get', 'ns')
    assert result.returncode == 1
    assert 'error: You must be logged in to the server (Unauthorized)' in result.stderr


def test_python_client_over_https_with_tokens(secure: LocalCluster, tmp_path: pathlib.Path) -> None:
    kubernetes: Any = pytest.importorskip('kubernetes')
    client = kubernetes.config.new_client_from_config(config_file=str(secure.kubeconfig))
    try:
        names = [ns.metadata.name for ns in kubernetes.client.CoreV1Api(client).list_namespace().items]
        assert 'kube-system' in names
    finally:
        client.close()
    config = yaml.safe_load(pathlib.Path(secure.kubeconfig).read_text())
    config['users'][0]['user']['token'] = 'wrong'
    (tmp_path / 'wrong').write_text(yaml.safe_dump(config))
    client = kubernetes.config.new_client_from_config(config_file=str(tmp_path / 'wrong'))
    try:
        with pytest.raises(kubernetes.client.ApiException) as exc:
            kubernetes.client.CoreV1Api(client).list_namespace()
        assert exc.value.status == 401
    finally:
        client.close()


def test_unauthenticated_requests_get_a_401_status(secure: LocalCluster) -> None:
    import json
    import ssl
    import urllib.error
    import urllib.request
    assert secure.emulator.certificates is not None
    context = ssl.create_default_context(cadata=secure.emulator.certificates.ca_pem.decode())
    with pytest.raises(urllib.error.HTTPError) as exc:
        urllib.request.urlopen(f'{secure.url}/api/v1/namespaces', context=context)
    assert exc.value.code == 401
    assert json.loads(exc.value.read())['reason'] == 'Unauthorized'
    with urllib.request.urlopen(f'{secure.url}/healthz', context=context) as response:
        assert response.read() == b'ok'


def test_client_certificates(tmp_path_factory: pytest.TempPathFactory) -> None:
    binary = kubectl_binary()
    with LocalCluster(client_certs=True) as mutual:
        assert 'client-certificate-data' in pathlib.Path(mutual.kubeconfig).read_text()
        mutual.forbid('list', 'secrets', user='kubernetes-admin')
        if binary is not None:
            kubectl = Kubectl(binary, mutual.kubeconfig, tmp_path_factory.mktemp('kubectl-cache'))
            result = kubectl('get', 'ns', 'default')
            assert result.returncode == 0, result.stderr
            denied = kubectl('get', 'secrets')
            assert 'User "kubernetes-admin" cannot list resource "secrets"' in denied.stderr
        import ssl
        import urllib.error
        import urllib.request
        assert mutual.emulator.certificates is not None
        context = ssl.create_default_context(cadata=mutual.emulator.certificates.ca_pem.decode())
        with pytest.raises(urllib.error.HTTPError) as exc:   # no client certificate, no token
            urllib.request.urlopen(f'{mutual.url}/api/v1/namespaces', context=context)
        assert exc.value.code == 401


def test_cn_only_server_certificates_are_rejected_by_kubectl(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Documents why the emulator's certificates carry SANs: Go clients ignore the Common Name."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    from kopf._shared import certificates
    binary = kubectl_binary()
    if binary is None:
        pytest.skip('kubectl is not installed on this machine')
    ca_key, ca = certificates._authority()
    key, builder = certificates._leaf(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, '127.0.0.1')]), ca.subject)
    leaf = certificates._pem(certificates._sign(builder, ca_key))
    cn_only = certificates.Certificates(ca_pem=certificates._pem(ca), cert_pem=leaf, key_pem=certificates._key_pem(key))
    cluster = LocalCluster(tls=True, tokens={'t0ken': 'admin'})   # a token, or kubectl prompts for a password
    cluster.emulator.certificates = cn_only
    with cluster:
        kubectl = Kubectl(binary, cluster.kubeconfig, tmp_path_factory.mktemp('kubectl-cache'))
        result = kubectl('get', 'ns')
        assert result.returncode == 1
        assert 'x509' in result.stderr and 'certificate' in result.stderr
