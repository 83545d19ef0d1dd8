"""`kopf cluster --tls --token T` as a user runs it: its kubeconfig works for kubectl (1.32), the `kubernetes`
client, pykube-ng and kopf's own login; with a wrong token, all of them get 401 Unauthorized.
"""
import pathlib
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from kopf._api import loginning
from tests.fidelity.conftest import Kubectl, kubectl_binary

pytest.importorskip('cryptography')

TOKEN = 'T0ken-from-the-command-line'


@pytest.fixture(scope='module')
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, pathlib.Path, pathlib.Path]]:
    """The URL, the kubeconfig written by `kopf cluster`, and a copy of it with a wrong token."""
    tmp_path = tmp_path_factory.mktemp('kopf-cluster-tls')
    config = tmp_path / 'kopf.kubeconfig'
    proc = subprocess.Popen([sys.executable, '-m', 'kopf', 'cluster', '--port', '0', '--tls', '--token', TOKEN,
                             '--kubeconfig', str(config)],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith('Kubernetes API emulator serving at https://127.0.0.1:'), line
        doc = yaml.safe_load(config.read_text())
        doc['users'][0]['user']['token'] = 'wrong'
        wrong = tmp_path / 'wrong.kubeconfig'
        wrong.write_text(yaml.safe_dump(doc))
        yield line.split()[-1], config, wrong
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 0, stderr


def test_the_kubeconfig_carries_the_ca_and_the_token(served: tuple[str, pathlib.Path, pathlib.Path]) -> None:
    url, config, _ = served
    doc = yaml.safe_load(config.read_text())
    assert doc['clusters'][0]['cluster']['server'] == url
    assert doc['clusters'][0]['cluster']['certificate-authority-data']
    assert doc['users'][0]['user'] == {'token': TOKEN}


@pytest.fixture(scope='module')
def kubectl_path() -> str:
    binary = kubectl_binary()
    if binary is None:
        pytest.skip('kubectl is not installed on this machine')
    return binary


def test_kubectl(served: tuple[str, pathlib.Path, pathlib.Path], kubectl_path: str, tmp_path: pathlib.Path) -> None:
    _, config, wrong = served
    result = Kubectl(kubectl_path, config, tmp_path / 'cache')('get', 'ns', 'default')
    assert result.returncode == 0, result.stderr
    assert 'Active' in result.stdout
    result = Kubectl(kubectl_path, wrong, tmp_path / 'cache')('get', 'ns')
    assert result.returncode == 1
    assert 'error: You must be logged in to the server (Unauthorized)' in result.stderr


def test_the_kubernetes_client(served: tuple[str, pathlib.Path, pathlib.Path]) -> None:
    kubernetes: Any = pytest.importorskip('kubernetes')
    _, config, wrong = served
    client = kubernetes.config.new_client_from_config(config_file=str(config))
    try:
        names = [ns.metadata.name for ns in kubernetes.client.CoreV1Api(client).list_namespace().items]
        assert 'kube-system' in names
    finally:
        client.close()
    client = kubernetes.config.new_client_from_config(config_file=str(wrong))
    try:
        with pytest.raises(kubernetes.client.ApiException) as info:
            kubernetes.client.CoreV1Api(client).list_namespace()
        assert info.value.status == 401
    finally:
        client.close()


def test_pykube(served: tuple[str, pathlib.Path, pathlib.Path]) -> None:
    pykube: Any = pytest.importorskip('pykube')
    import requests
    _, config, wrong = served
    api = pykube.HTTPClient(pykube.KubeConfig.from_file(str(config)))
    names = [ns.name for ns in pykube.Namespace.objects(api)]
    assert 'kube-system' in names
    api = pykube.HTTPClient(pykube.KubeConfig.from_file(str(wrong)))
    with pytest.raises(requests.HTTPError) as info:   # pykube's listings raise requests' own error
        list(pykube.Namespace.objects(api))
    assert info.value.response is not None and info.value.response.status_code == 401
    with pytest.raises(pykube.exceptions.HTTPError) as refused:   # single objects raise pykube's
        pykube.Namespace.objects(api).get(name='default')
    assert refused.value.code == 401


async def test_kopf_itself(served: tuple[str, pathlib.Path, pathlib.Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from kopf._api import apierrors, credentials
    from kopf._api import client as client_
    from kopf._core.settings import OperatorSettings

    _, config, wrong = served
    for path, works in [(config, True), (wrong, False)]:
        monkeypatch.setenv('KUBECONFIG', str(path))
        vault = credentials.Vault()
        vault.populate([loginning.login_with_kubeconfig() or pytest.fail('no credentials')])
        api = client_.APIClient(vault, OperatorSettings())
        try:
            if works:
                assert (await api.request('GET', '/api/v1/namespaces/default'))['status']['phase'] == 'Active'
            else:
                with pytest.raises(apierrors.LoginError):   # a 401, and no way to log in again
                    await api.request('GET', '/api/v1/namespaces/default')
        finally:
            await api.close()
