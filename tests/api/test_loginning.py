"""The built-in logins against the emulator over HTTPS: kubeconfig tokens and client certificates, exec plugins,
merged KUBECONFIG files, a service-account directory, pykube-ng and the `kubernetes` client; malformed files;
the plain (HTTP) local cluster's kubeconfig.

Each test proves who the server took us for: a `forbid()` rule for that user gives its exact 403.
"""
import base64
import os
import pathlib
import stat
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import yaml

from kopf._api import apierrors, credentials, loginning
from kopf._api import client as client_
from kopf._core.settings import OperatorSettings
from kopf.testing import LocalCluster

SECRETS = '/api/v1/namespaces/default/secrets'
TOKEN = 's3cret'


@pytest.fixture
async def secure(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[LocalCluster]:
    """HTTPS with a throw-away CA; the token `s3cret` is the user alice."""
    for name in ['KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT']:
        monkeypatch.delenv(name, raising=False)
    async with LocalCluster(tls=True, tokens={TOKEN: 'alice'}) as local:
        yield local


@pytest.fixture
async def mutual(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[LocalCluster]:
    """HTTPS that takes client certificates signed by its CA (CN = the user); its kubeconfig has an admin's."""
    monkeypatch.delenv('KUBECONFIG', raising=False)
    async with LocalCluster(client_certs=True) as local:
        yield local


def ca_pem(cluster: LocalCluster) -> bytes:
    assert cluster.emulator.certificates is not None
    return cluster.emulator.certificates.ca_pem


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def served(cluster: LocalCluster) -> dict[str, Any]:
    """A kubeconfig's cluster stanza: the URL and the CA as data."""
    return {'server': cluster.url, 'certificate-authority-data': b64(ca_pem(cluster))}


def kubeconfig(path: pathlib.Path, *, cluster: dict[str, Any] | None = None, user: dict[str, Any] | None = None,
               context: str | None = 'ctx', namespace: str = 'default', current: str | None = 'ctx') -> pathlib.Path:
    doc: dict[str, Any] = {'apiVersion': 'v1', 'kind': 'Config'}
    if cluster is not None:
        doc['clusters'] = [{'name': 'emu', 'cluster': cluster}]
    if user is not None:
        doc['users'] = [{'name': 'me', 'user': user}]
    if context is not None:
        doc['contexts'] = [{'name': context, 'context': {'cluster': 'emu', 'user': 'me', 'namespace': namespace}}]
    if current is not None:
        doc['current-context'] = current
    path.write_text(yaml.safe_dump(doc))
    return path


async def whoami(info: credentials.ConnectionInfo | None, cluster: LocalCluster, user: str) -> None:
    """Requests work with these credentials, and the server takes them for `user`."""
    assert info is not None
    cluster.forbid('list', 'secrets', user=user)
    vault = credentials.Vault()
    vault.populate([info])
    api = client_.APIClient(vault, OperatorSettings())
    try:
        names = [ns['metadata']['name'] for ns in (await api.request('GET', '/api/v1/namespaces'))['items']]
        assert 'kube-system' in names
        with pytest.raises(apierrors.APIForbiddenError) as denied:
            await api.request('GET', SECRETS, backoffs=None)
        assert f'User "{user}" cannot list resource "secrets"' in str(denied.value)
    finally:
        await api.close()


# kubeconfig: as the emulator writes it, and as people write them.

async def test_kubeconfig_with_a_token_and_ca_data(secure: LocalCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('KUBECONFIG', str(secure.kubeconfig))
    info = loginning.login_with_kubeconfig()
    assert info is not None and info.server == secure.url and info.server.startswith('https://')
    assert info.ca_data == ca_pem(secure) and info.token == TOKEN and not info.insecure
    await whoami(info, secure, 'alice')


async def test_a_wrong_token_is_401(secure: LocalCluster, tmp_path: pathlib.Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path = kubeconfig(tmp_path / 'cfg', cluster=served(secure),
                      user={'token': 'wrong'})
    monkeypatch.setenv('KUBECONFIG', str(path))
    vault = credentials.Vault()   # no way to log in again: the 401 surfaces as a LoginError
    vault.populate([loginning.login_with_kubeconfig() or pytest.fail('no credentials')])
    api = client_.APIClient(vault, OperatorSettings())
    try:
        with pytest.raises(apierrors.LoginError):
            await api.request('GET', '/api/v1/namespaces')
    finally:
        await api.close()
    assert [entry['code'] for entry in secure.request_log()] == [401]


async def test_kubeconfig_with_client_certificate_data(mutual: LocalCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('KUBECONFIG', str(mutual.kubeconfig))
    info = loginning.login_with_kubeconfig()
    assert info is not None and info.certificate_data and info.private_key_data and info.token is None
    await whoami(info, mutual, 'kubernetes-admin')


async def test_kubeconfig_with_client_certificate_files(mutual: LocalCluster, tmp_path: pathlib.Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    assert mutual.emulator.certificates is not None
    cert, key = mutual.emulator.certificates.client('bob', groups=('developers',))
    mutual.apply({'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'ClusterRoleBinding',   # the O is its group
                  'metadata': {'name': 'developers'}, 'subjects': [{'kind': 'Group', 'name': 'developers'}],
                  'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'ClusterRole', 'name': 'view'}})
    (tmp_path / 'pki').mkdir()
    (tmp_path / 'pki' / 'ca.crt').write_bytes(ca_pem(mutual))
    (tmp_path / 'pki' / 'bob.crt').write_bytes(cert)
    (tmp_path / 'pki' / 'bob.key').write_bytes(key)
    path = kubeconfig(tmp_path / 'cfg', cluster={'server': mutual.url, 'certificate-authority': 'pki/ca.crt'},
                      user={'client-certificate': 'pki/bob.crt', 'client-key': 'pki/bob.key'})   # relative paths
    monkeypatch.setenv('KUBECONFIG', str(path))
    info = loginning.login_with_kubeconfig()
    assert info is not None and info.certificate_path == str(tmp_path / 'pki' / 'bob.crt')
    await whoami(info, mutual, 'bob')


def plugin(tmp_path: pathlib.Path, status: dict[str, Any]) -> pathlib.Path:
    """A client-go credential plugin: checks its ExecCredential input, prints the status given, and logs its runs."""
    script = tmp_path / 'bin' / 'credentials-plugin'
    script.parent.mkdir(exist_ok=True)
    script.write_text(
        f'#!{sys.executable}\n'
        'import json, os, sys\n'
        'info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])\n'
        'assert info["kind"] == "ExecCredential" and info["spec"]["interactive"] is False, info\n'
        'assert info["spec"]["cluster"]["server"].startswith("https://"), info\n'
        'assert sys.argv[1:] == ["get-token", "--cluster=emu"], sys.argv\n'
        'with open(os.environ["RUNS"], "a") as runs:\n'
        '    runs.write("run\\n")\n'
        f'print(json.dumps({{"apiVersion": info["apiVersion"], "kind": "ExecCredential", "status": {status!r}}}))\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def exec_user(tmp_path: pathlib.Path) -> dict[str, Any]:
    return {'exec': {'apiVersion': 'client.authentication.k8s.io/v1', 'command': './bin/credentials-plugin',
                     'args': ['get-token', '--cluster=emu'], 'provideClusterInfo': True, 'interactiveMode': 'Never',
                     'env': [{'name': 'RUNS', 'value': str(tmp_path / 'runs')}]}}


async def test_exec_plugin_with_a_token(secure: LocalCluster, tmp_path: pathlib.Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    plugin(tmp_path, {'token': TOKEN, 'expirationTimestamp': '2099-01-01T00:00:00Z'})
    path = kubeconfig(tmp_path / 'cfg', cluster=served(secure),
                      user=exec_user(tmp_path))
    monkeypatch.setenv('KUBECONFIG', str(path))
    info = loginning.login_with_kubeconfig()
    assert info is not None and info.token == TOKEN and info.expiration is not None
    assert (tmp_path / 'runs').read_text() == 'run\n'
    await whoami(info, secure, 'alice')


async def test_exec_plugin_with_a_client_certificate(mutual: LocalCluster, tmp_path: pathlib.Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    assert mutual.emulator.certificates is not None
    cert, key = mutual.emulator.certificates.client('carol')
    plugin(tmp_path, {'clientCertificateData': cert.decode(), 'clientKeyData': key.decode()})
    path = kubeconfig(tmp_path / 'cfg', cluster=served(mutual),
                      user=exec_user(tmp_path))
    monkeypatch.setenv('KUBECONFIG', str(path))
    await whoami(loginning.login_with_kubeconfig(), mutual, 'carol')


async def test_merged_kubeconfig_files(secure: LocalCluster, tmp_path: pathlib.Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """kubectl's rules: the first file to set `current-context` wins, and the first definition of each name."""
    first = kubeconfig(tmp_path / 'contexts.yaml', user={'token': TOKEN}, namespace='kube-public')
    second = kubeconfig(tmp_path / 'clusters.yaml', user={'token': 'a-wrong-one'}, current='elsewhere',
                        cluster=served(secure))
    third = kubeconfig(tmp_path / 'other.yaml', cluster={'server': 'https://never.invalid'}, context='elsewhere')
    paths = [first, tmp_path / 'missing.yaml', second, third]
    monkeypatch.setenv('KUBECONFIG', os.pathsep.join(str(path) for path in paths))
    info = loginning.login_with_kubeconfig()
    assert info is not None
    assert (info.server, info.token, info.default_namespace) == (secure.url, TOKEN, 'kube-public')
    await whoami(info, secure, 'alice')


# In-cluster: a service account's directory, the server from the environment as a pod has it.

def service_account(directory: pathlib.Path, cluster: LocalCluster, token: str) -> pathlib.Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / 'token').write_text(token)
    (directory / 'ca.crt').write_bytes(ca_pem(cluster))
    (directory / 'namespace').write_text('kube-public\n')
    return directory


async def test_service_account_directory(secure: LocalCluster, tmp_path: pathlib.Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    directory = service_account(tmp_path / 'serviceaccount', secure, TOKEN)
    monkeypatch.setenv('KUBERNETES_SERVICE_HOST', secure.emulator.host)
    monkeypatch.setenv('KUBERNETES_SERVICE_PORT', str(secure.emulator.port))
    info = loginning.login_with_service_account(directory=str(directory))
    assert info is not None and info.server == secure.url
    assert info.ca_path == str(directory / 'ca.crt') and info.default_namespace == 'kube-public'
    assert info.priority == loginning.PRIORITY_OF_SERVICE_ACCOUNT
    await whoami(info, secure, 'alice')


async def test_service_account_token_rotated_by_the_kubelet(secure: LocalCluster, tmp_path: pathlib.Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A projected token is rewritten in place; after the server's 401, the re-login reads the new one."""
    directory = service_account(tmp_path / 'serviceaccount', secure, TOKEN)
    monkeypatch.setenv('KUBERNETES_SERVICE_HOST', secure.emulator.host)
    monkeypatch.setenv('KUBERNETES_SERVICE_PORT', str(secure.emulator.port))

    async def login() -> credentials.ConnectionInfo | None:
        return loginning.login_with_service_account(directory=str(directory))

    vault = credentials.Vault(login)
    api = client_.APIClient(vault, OperatorSettings())
    try:
        assert await api.default_namespace() == 'kube-public'
        await api.request('GET', '/api/v1/namespaces')
        secure.rotate_token(TOKEN, 'projected-2')
        (directory / 'token').write_text('projected-2')
        await api.request('GET', '/api/v1/namespaces')
    finally:
        await api.close()
    assert vault.logins == 2
    assert [entry['code'] for entry in secure.request_log()] == [200, 401, 200]


# The plain local cluster (HTTP, no tokens): its kubeconfig, directly and through the client libraries.

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


# Piggybacking on the clients that an operator may bring along: over HTTPS with a token.

@pytest.mark.parametrize('login', [loginning.login_via_pykube, loginning.login_via_client])
async def test_piggybacking_over_https(secure: LocalCluster, monkeypatch: pytest.MonkeyPatch,
                                       login: Callable[[], credentials.ConnectionInfo | None]) -> None:
    monkeypatch.setenv('KUBECONFIG', str(secure.kubeconfig))
    info = login()
    assert info is not None and info.token == TOKEN and (info.ca_path or info.ca_data)
    await whoami(info, secure, 'alice')


# Malformed files: one LoginError, naming the file that holds the problem and the field.

@pytest.mark.parametrize('user, field', [
    ({'token': ['not', 'a', 'string']}, 'users[0].user.token'),
    ({'client-certificate-data': '%%% not base64'}, 'users[0].user.client-certificate-data'),
    ({'tokenFile': 'no-such-file'}, 'users[0].user.tokenFile'),
    ({'exec': {'command': './no-such-plugin'}}, 'users[0].user.exec.command'),
])
def test_malformed_kubeconfig_names_the_file_and_the_field(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
                                                           user: dict[str, Any], field: str) -> None:
    good = kubeconfig(tmp_path / 'contexts.yaml', cluster={'server': 'https://127.0.0.1:1'})
    bad = kubeconfig(tmp_path / 'users.yaml', user=user, context=None, current=None)   # the user is defined here
    monkeypatch.setenv('KUBECONFIG', os.pathsep.join([str(good), str(bad)]))
    with pytest.raises(apierrors.LoginError) as info:
        loginning.login_with_kubeconfig()
    message = str(info.value)
    assert message.startswith(f"Malformed kubeconfig {str(bad)!r} at {field!r}: "), message
    assert '\n' not in message and str(good) not in message


def test_malformed_yaml_names_the_file(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / 'broken.yaml'
    path.write_text('clusters: [{name: emu, cluster: {server: "https://x"}\n')
    monkeypatch.setenv('KUBECONFIG', str(path))
    with pytest.raises(apierrors.LoginError) as info:
        loginning.login_with_kubeconfig()
    assert str(info.value).startswith(f"Malformed kubeconfig {str(path)!r} at '<file>': cannot be read as YAML")
