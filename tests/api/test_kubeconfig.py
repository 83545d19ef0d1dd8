import base64
import datetime
import json
import os
import pathlib
import stat
import subprocess
import sys
from typing import Any

import pytest
import yaml

from kopf._api import apierrors, kubeconfig, loginning

PEM = b'-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def write(path: pathlib.Path, doc: Any) -> pathlib.Path:
    path.write_text(yaml.safe_dump(doc) if not isinstance(doc, str) else doc)
    return path


def config(*, server: str = 'https://1.2.3.4:6443', user: dict[str, Any] | None = None,
           cluster: dict[str, Any] | None = None, namespace: str | None = 'ns1', name: str = 'c') -> dict[str, Any]:
    context: dict[str, Any] = {'cluster': name, 'user': name}
    if namespace:
        context['namespace'] = namespace
    return {
        'apiVersion': 'v1', 'kind': 'Config',
        'clusters': [{'name': name, 'cluster': {'server': server, **(cluster or {})}}],
        'users': [{'name': name, 'user': user or {}}],
        'contexts': [{'name': name, 'context': context}],
        'current-context': name,
    }


def test_token_and_ca_data(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path / 'cfg', config(user={'token': 'abc'}, cluster={'certificate-authority-data': b64(PEM)}))
    info = kubeconfig.load([path])
    assert info.server == 'https://1.2.3.4:6443'
    assert info.token == 'abc'
    assert info.ca_data == PEM
    assert info.ca_path is None
    assert info.default_namespace == 'ns1'
    assert info.as_http_headers() == {'Authorization': 'Bearer abc'}


def test_relative_files_are_relative_to_the_config(tmp_path: pathlib.Path) -> None:
    (tmp_path / 'sub').mkdir()
    (tmp_path / 'sub' / 'ca.crt').write_bytes(PEM)
    (tmp_path / 'sub' / 'c.crt').write_bytes(PEM)
    (tmp_path / 'sub' / 'c.key').write_bytes(b'key')
    (tmp_path / 'sub' / 'token').write_text('from-file\n')
    path = write(tmp_path / 'sub' / 'cfg', config(
        cluster={'certificate-authority': 'ca.crt'},
        user={'client-certificate': 'c.crt', 'client-key': 'c.key', 'tokenFile': 'token'}))
    info = kubeconfig.load([path])
    assert info.ca_path == str(tmp_path / 'sub' / 'ca.crt')
    assert info.certificate_path == str(tmp_path / 'sub' / 'c.crt')
    assert info.private_key_path == str(tmp_path / 'sub' / 'c.key')
    assert info.token == 'from-file'


def test_client_cert_data_insecure_proxy_basic(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path / 'cfg', config(
        cluster={'insecure-skip-tls-verify': True, 'proxy-url': 'http://proxy:3128'},
        user={'client-certificate-data': b64(PEM), 'client-key-data': b64(b'KEY'),
              'username': 'u', 'password': 'p'}))
    info = kubeconfig.load([path])
    assert info.insecure is True
    assert info.proxy_url == 'http://proxy:3128'
    assert info.certificate_data == PEM
    assert info.private_key_data == b'KEY'
    assert (info.username, info.password) == ('u', 'p')


def test_token_wins_over_token_file(tmp_path: pathlib.Path) -> None:
    (tmp_path / 'token').write_text('file')
    path = write(tmp_path / 'cfg', config(user={'token': 'inline', 'tokenFile': 'token'}))
    assert kubeconfig.load([path]).token == 'inline'


def test_auth_provider_access_token(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path / 'cfg', config(user={'auth-provider': {'name': 'gcp', 'config': {'access-token': 'at'}}}))
    assert kubeconfig.load([path]).token == 'at'


def test_explicit_context(tmp_path: pathlib.Path) -> None:
    doc = config(user={'token': 'a'}, name='a')
    other = config(user={'token': 'b'}, server='https://other', name='b', namespace=None)
    for key in ['clusters', 'users', 'contexts']:
        doc[key] += other[key]
    path = write(tmp_path / 'cfg', doc)
    info = kubeconfig.load([path], context='b')
    assert (info.server, info.token, info.default_namespace) == ('https://other', 'b', None)


def test_merged_files_first_definition_wins(tmp_path: pathlib.Path) -> None:
    first = {'current-context': 'b', 'users': [{'name': 'b', 'user': {'token': 'first'}}]}
    second = config(user={'token': 'second'}, name='a')
    third = config(user={'token': 'third'}, server='https://third', name='b')
    paths = [write(tmp_path / '1', first), write(tmp_path / '2', second), write(tmp_path / '3', third)]
    info = kubeconfig.load(paths)
    assert info.server == 'https://third'  # the context & cluster `b` come from the 3rd file
    assert info.token == 'first'  # the user `b` from the 1st file


def test_config_paths_from_env(tmp_path: pathlib.Path) -> None:
    a = write(tmp_path / 'a', {})
    b = write(tmp_path / 'b', {})
    env = {'KUBECONFIG': os.pathsep.join([str(a), str(tmp_path / 'missing'), str(b)])}
    assert kubeconfig.config_paths(env) == [a, b]


def test_config_paths_default(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('HOME', str(tmp_path))
    assert kubeconfig.config_paths({}) == []
    (tmp_path / '.kube').mkdir()
    path = write(tmp_path / '.kube' / 'config', {})
    assert kubeconfig.config_paths({}) == [path]


def test_login_with_kubeconfig_via_env(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = write(tmp_path / 'a', {'current-context': 'c'})
    b = write(tmp_path / 'b', config(user={'token': 'T'}, namespace=None))
    monkeypatch.setenv('KUBECONFIG', os.pathsep.join([str(a), str(b)]))
    info = loginning.login_with_kubeconfig()
    assert info is not None and info.token == 'T'


def test_login_with_kubeconfig_without_files(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('KUBECONFIG', str(tmp_path / 'nope'))
    assert loginning.login_with_kubeconfig() is None


@pytest.mark.parametrize('doc, field', [
    ('{not: [valid', '<file>'),
    ('- a list', '<file>'),
    ({'clusters': {'a': 1}}, 'clusters'),
    ({'users': [{'user': {}}]}, 'users[0].name'),
    ({'clusters': [{'name': 'c', 'cluster': 'str'}]}, 'clusters[0].cluster'),
    ({}, 'current-context'),
    (config(cluster={'certificate-authority-data': '%%%'}), 'clusters[0].cluster.certificate-authority-data'),
    (config(cluster={'certificate-authority': 'missing.crt'}), 'clusters[0].cluster.certificate-authority'),
    (config(server=''), 'clusters[0].cluster.server'),
    (config(cluster={'insecure-skip-tls-verify': 'yes'}), 'clusters[0].cluster.insecure-skip-tls-verify'),
    (config(user={'token': 123}), 'users[0].user.token'),
    (config(user={'exec': {'args': []}}), 'users[0].user.exec.command'),
])
def test_malformed_config_names_the_file_and_field(tmp_path: pathlib.Path, doc: Any, field: str) -> None:
    path = write(tmp_path / 'broken.yaml', doc)
    with pytest.raises(apierrors.LoginError) as info:
        kubeconfig.load([path])
    assert str(path) in str(info.value)
    assert repr(field) in str(info.value)


def test_undefined_cluster_of_context(tmp_path: pathlib.Path) -> None:
    doc = config()
    doc['clusters'] = []
    path = write(tmp_path / 'cfg', doc)
    with pytest.raises(apierrors.LoginError) as info:
        kubeconfig.load([path])
    assert str(info.value) == f"cluster 'c' (of context 'c') is not defined in {path}"


def test_undefined_context_says_so_in_one_line(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path / 'empty.kc', {'current-context': 'nothing'})
    with pytest.raises(apierrors.LoginError) as info:
        kubeconfig.load([path])
    assert str(info.value) == f"context 'nothing' is not defined in {path}"


@pytest.mark.parametrize('value, expected', [
    ('{tmp}/missing', 'KUBECONFIG={tmp}/missing: no such file'),
    ('{tmp}/a:{tmp}/b', 'KUBECONFIG={tmp}/a:{tmp}/b: no such files'),
    ('{tmp}/missing:{tmp}/cfg', None),  # kubectl skips the missing ones of a list
    ('', None),
])
def test_kubeconfig_set_to_files_that_do_not_exist(tmp_path: pathlib.Path, value: str, expected: str | None) -> None:
    write(tmp_path / 'cfg', config())
    environ = {'KUBECONFIG': value.format(tmp=tmp_path)}
    assert kubeconfig.missing(environ) == (None if expected is None else expected.format(tmp=tmp_path))


def _plugin(tmp_path: pathlib.Path, status: dict[str, Any], exit_code: int = 0) -> pathlib.Path:
    script = tmp_path / 'plugin.py'
    script.write_text(
        f'#!{sys.executable}\n'
        'import json, os, sys\n'
        'info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])\n'
        'assert info["kind"] == "ExecCredential", info\n'
        'print(json.dumps({"apiVersion": info["apiVersion"], "kind": "ExecCredential", '
        f'"status": {json.dumps(status)} | {{"token": os.environ.get("EXTRA", "") + sys.argv[1]}}'
        ' if "token" in ' + json.dumps(status) + ' else ' + json.dumps(status) + '}))\n'
        f'sys.exit({exit_code})\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_exec_plugin_token_and_expiration(tmp_path: pathlib.Path) -> None:
    _plugin(tmp_path, {'token': 'x', 'expirationTimestamp': '2030-01-01T00:00:00Z'})
    path = write(tmp_path / 'cfg', config(user={'exec': {
        'apiVersion': 'client.authentication.k8s.io/v1', 'command': './plugin.py', 'args': ['-arg'],
        'env': [{'name': 'EXTRA', 'value': 'tok'}]}}))
    info = kubeconfig.load([path])
    assert info.token == 'tok-arg'
    assert info.expiration == datetime.datetime(2030, 1, 1, tzinfo=datetime.UTC)


@pytest.mark.parametrize('stamp, expected', [
    ('2030-01-01T00:00:00.123456Z', datetime.datetime(2030, 1, 1, 0, 0, 0, 123456, tzinfo=datetime.UTC)),
    ('2030-01-01T02:00:00+02:00', datetime.datetime(2030, 1, 1, tzinfo=datetime.UTC)),
    ('2030-01-01T00:00:00', datetime.datetime(2030, 1, 1, tzinfo=datetime.UTC)),  # no zone: UTC
])
def test_exec_plugin_expiration_formats(tmp_path: pathlib.Path, stamp: str, expected: datetime.datetime) -> None:
    _plugin(tmp_path, {'token': 'x', 'expirationTimestamp': stamp})
    path = write(tmp_path / 'cfg', config(user={'exec': {'command': './plugin.py', 'args': ['a']}}))
    assert kubeconfig.load([path]).expiration == expected


def test_exec_plugin_bad_expiration(tmp_path: pathlib.Path) -> None:
    _plugin(tmp_path, {'token': 'x', 'expirationTimestamp': 'tomorrow'})
    path = write(tmp_path / 'cfg', config(user={'exec': {'command': './plugin.py', 'args': ['a']}}))
    with pytest.raises(apierrors.LoginError, match='bad expirationTimestamp'):
        kubeconfig.load([path])


def test_exec_plugin_client_certificates(tmp_path: pathlib.Path) -> None:
    _plugin(tmp_path, {'clientCertificateData': PEM.decode(), 'clientKeyData': 'KEY'})
    path = write(tmp_path / 'cfg', config(user={'exec': {'command': str(tmp_path / 'plugin.py')}}))
    info = kubeconfig.load([path])
    assert info.certificate_data == PEM
    assert info.private_key_data == b'KEY'
    assert info.token is None


def test_exec_plugin_failure(tmp_path: pathlib.Path) -> None:
    _plugin(tmp_path, {'token': 'x'}, exit_code=3)
    path = write(tmp_path / 'cfg', config(user={'exec': {'command': './plugin.py', 'args': ['a']}}))
    with pytest.raises(apierrors.LoginError, match='exited with 3'):
        kubeconfig.load([path])


def test_exec_plugin_missing_command(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path / 'cfg', config(user={'exec': {'command': './nope'}}))
    with pytest.raises(apierrors.LoginError, match='failed to run'):
        kubeconfig.load([path])


# Service accounts.

def test_service_account(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv('KUBERNETES_SERVICE_HOST', raising=False)
    (tmp_path / 'token').write_text('sa-token\n')
    (tmp_path / 'ca.crt').write_bytes(PEM)
    (tmp_path / 'namespace').write_text('myns')
    info = loginning.login_with_service_account(directory=str(tmp_path))
    assert info is not None
    assert info.server == 'https://kubernetes.default.svc'
    assert info.token == 'sa-token'
    assert info.ca_path == str(tmp_path / 'ca.crt')
    assert info.default_namespace == 'myns'


def test_service_account_host_from_env(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('KUBERNETES_SERVICE_HOST', '10.0.0.1')
    monkeypatch.setenv('KUBERNETES_SERVICE_PORT', '8443')
    (tmp_path / 'token').write_text('t')
    info = loginning.login_with_service_account(directory=str(tmp_path))
    assert info is not None and info.server == 'https://10.0.0.1:8443'
    assert info.ca_path is None and info.default_namespace is None


def test_no_service_account(tmp_path: pathlib.Path) -> None:
    assert loginning.login_with_service_account(directory=str(tmp_path)) is None


# Piggybacking on pykube-ng and the kubernetes client.

def test_login_via_pykube(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / 'cfg', config(user={'token': 'pk'}, cluster={'certificate-authority-data': b64(PEM)}))
    monkeypatch.setenv('KUBECONFIG', str(path))
    info = loginning.login_via_pykube()
    assert info is not None
    assert (info.server, info.token, info.default_namespace) == ('https://1.2.3.4:6443', 'pk', 'ns1')
    assert info.ca_path is not None and pathlib.Path(info.ca_path).read_bytes() == PEM


def test_login_via_client(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / 'cfg', config(user={'token': 'kc'}))
    monkeypatch.setenv('KUBECONFIG', str(path))
    monkeypatch.delenv('KUBERNETES_SERVICE_HOST', raising=False)
    info = loginning.login_via_client()
    assert info is not None
    assert (info.server, info.scheme, info.token, info.default_namespace) == (
        'https://1.2.3.4:6443', 'Bearer', 'kc', 'ns1')


def test_priorities_of_the_builtin_logins(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / 'cfg', config(user={'token': 'T'}))
    monkeypatch.setenv('KUBECONFIG', str(path))
    monkeypatch.delenv('KUBERNETES_SERVICE_HOST', raising=False)
    (tmp_path / 'token').write_text('t')
    assert (info := loginning.login_with_kubeconfig()) is not None and info.priority == 10
    assert (info := loginning.login_with_service_account(directory=str(tmp_path))) is not None
    assert info.priority == 20
    assert (info := loginning.login_via_pykube()) is not None and info.priority == 20
    assert (info := loginning.login_via_client()) is not None and info.priority == 10


async def test_login_by_defaults_reads_the_kubeconfig_itself_with_clients_installed(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / 'cfg', config(user={'token': 'T'}))
    monkeypatch.setenv('KUBECONFIG', str(path))
    monkeypatch.delenv('KUBERNETES_SERVICE_HOST', raising=False)
    found = await loginning.login_by_defaults()
    assert [(info.priority, info.token) for info in found] == [(10, 'T')]  # kopf's own kubeconfig login


async def test_login_by_defaults_in_a_pod_uses_only_the_service_account(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # One identity, as the client libraries pick it: a rejected token means a re-login,
    # never a silent switch to the kubeconfig's user (maybe of another cluster).
    path = write(tmp_path / 'cfg', config(server='https://other:6443', user={'token': 'KC'}))
    monkeypatch.setenv('KUBECONFIG', str(path))
    monkeypatch.setenv('KUBERNETES_SERVICE_HOST', '10.0.0.1')
    (tmp_path / 'token').write_text('SA\n')
    original = loginning.login_with_service_account

    def login_with_service_account(**_: Any) -> Any:
        return original(directory=str(tmp_path))

    monkeypatch.setattr(loginning, 'login_with_service_account', login_with_service_account)
    found = await loginning.login_by_defaults()
    assert [(info.server, info.token, info.priority) for info in found] == [('https://10.0.0.1:443', 'SA', 20)]


def test_login_by_defaults_imports_no_client_when_kopf_can_log_in_itself(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path / 'cfg', config(user={'token': 'T'}))
    code = ('import asyncio, sys; from kopf._api import loginning; '
            'found = asyncio.run(loginning.login_by_defaults()); '
            'print(len(found), [m for m in ("kubernetes", "pykube") if m in sys.modules])')
    env = {**os.environ, 'KUBECONFIG': str(path), 'HOME': str(tmp_path)}
    env.pop('KUBERNETES_SERVICE_HOST', None)
    out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == '1 []'


async def test_login_by_defaults_uses_the_installed_clients_for_auth_providers(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    provider = {'name': 'oidc', 'config': {'id-token': 'T', 'client-id': 'c', 'idp-issuer-url': 'https://x'}}
    path = write(tmp_path / 'cfg', config(user={'auth-provider': provider}))
    monkeypatch.setenv('KUBECONFIG', str(path))
    monkeypatch.delenv('KUBERNETES_SERVICE_HOST', raising=False)
    calls: list[str] = []
    for name in ['login_via_pykube', 'login_via_client']:
        fn = getattr(loginning, name)
        monkeypatch.setattr(loginning, name, lambda fn=fn, name=name, **kw: calls.append(name) or fn(**kw))
    await loginning.login_by_defaults()
    assert calls == ['login_via_pykube', 'login_via_client']


async def test_login_by_defaults_falls_back_to_the_clients_when_its_own_login_fails(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    path = write(tmp_path / 'cfg', config(user={'token': 'T'}))
    monkeypatch.setenv('KUBECONFIG', str(path))
    monkeypatch.delenv('KUBERNETES_SERVICE_HOST', raising=False)

    def broken(**_: Any) -> None:
        raise apierrors.LoginError('cannot read it')

    monkeypatch.setattr(loginning, 'login_with_kubeconfig', broken)
    found = await loginning.login_by_defaults()
    assert sorted(info.priority for info in found) == [10, 20]  # the kubernetes client & pykube-ng
    assert {info.token for info in found} == {'T'}
    assert any('failed: cannot read it' in r.getMessage() for r in caplog.records)


async def test_login_by_defaults_names_a_missing_kubeconfig_once(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv('KUBECONFIG', str(tmp_path / 'missing'))
    monkeypatch.setenv('HOME', str(tmp_path))
    monkeypatch.delenv('KUBERNETES_SERVICE_HOST', raising=False)
    with pytest.raises(apierrors.LoginError) as info:
        await loginning.login_by_defaults()
    assert str(info.value) == f'KUBECONFIG={tmp_path / "missing"}: no such file'
    assert not caplog.records  # no client library is asked to find the same nothing


async def test_login_by_defaults_reports_a_broken_kubeconfig_once(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    path = write(tmp_path / 'empty.kc', {'current-context': 'nothing'})
    monkeypatch.setenv('KUBECONFIG', str(path))
    monkeypatch.delenv('KUBERNETES_SERVICE_HOST', raising=False)
    with pytest.raises(apierrors.LoginError) as info:
        await loginning.login_by_defaults()
    assert str(info.value) == f"context 'nothing' is not defined in {path}"
    assert not caplog.records  # the client libraries fail on it too, but their words are not repeated


async def test_login_by_defaults_without_any_source(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv('KUBECONFIG', raising=False)
    monkeypatch.setenv('HOME', str(tmp_path))
    monkeypatch.delenv('KUBERNETES_SERVICE_HOST', raising=False)
    with pytest.raises(apierrors.LoginError, match=r'^no credentials found: no \$KUBECONFIG, no ~/.kube/config'):
        await loginning.login_by_defaults()


# -- the plain-YAML reader (the fast path) and PyYAML agree ------------------------------------------

KUBECTL_STYLE = f"""\
apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: {b64(PEM)}
    server: https://127.0.0.1:6443
  name: kind-kind
- cluster:
    insecure-skip-tls-verify: true
    proxy-url: http://proxy.local:3128
    server: "https://10.0.0.1"
  name: 'other''s'
contexts:
- context:
    cluster: kind-kind
    namespace: default
    user: kind-kind
  name: kind-kind
current-context: kind-kind
kind: Config
preferences: {{}}
users:
- name: kind-kind
  user:
    client-certificate-data: {b64(PEM)}
    client-key-data: {b64(PEM)}
- name: eks
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      args:
      - --region
      - eu-west-1
      - eks
      - get-token
      command: aws
      env:
        - name: AWS_PROFILE
          value: dev
      interactiveMode: IfAvailable
      provideClusterInfo: false
# a comment line
    # an indented comment line
"""

EMULATOR_STYLE = """\
apiVersion: v1
kind: Config
clusters:
- name: kopf-local
  cluster:
    server: http://127.0.0.1:36925
users:
- name: kopf-local
  user: {}
contexts:
- name: kopf-local
  context:
    cluster: kopf-local
    user: kopf-local
    namespace: default
current-context: kopf-local
preferences: {}
"""


DIGITS_FIRST = """\
clusters:
- name: c
  cluster:
    server: https://10.0.0.1
users:
- name: u
  user:
    password: 5f4dcc3b5aa765d61d8327deb882cf99
    token: 0123abcd.e5f6
    client-certificate: 10.0.0.1.crt
"""


@pytest.mark.parametrize('text', [KUBECTL_STYLE, EMULATOR_STYLE, DIGITS_FIRST,
                                  yaml.safe_dump(config(user={'token': 'abc'})), ''])
def test_plain_reader_reads_usual_kubeconfigs_as_pyyaml_does(text: str) -> None:
    assert kubeconfig._read_plain_yaml(text) == yaml.safe_load(text)


@pytest.mark.parametrize('text', [
    'a: on', 'a: yes', 'a: 012', 'a: 0x1F', 'a: 1.5', 'a: .inf', 'a: 2020-01-01', 'a: -1', 'a: 1:20', 'a: 1_000',
    'on: a', '1: a', 'a: &x b', 'a: *x', 'a: !!str b', 'a: [b]', 'a: {b: c}', 'a: |\n  b', 'a: >\n  b',
    'a: 3.', 'a: 12:30', 'a: 0777', 'a: 0b1', 'a: +1', 'a: 1.0e+3', 'a: 2020-01-01T00:00:00Z', 'a: .',
    'a: b: c', 'a: b # comment', 'a: "b\\"c"', 'a: "b\\nc"', "a: 'b'c'", 'a: b\n  c', '---\na: b', 'a:\n-\n  b',
    'a:\tb', 'a: b\r\n', 'a: \u00e9', '- - a', 'a: <<', '"a": b', 'a: ~x', ': a', 'a: b\n - c', 'a\nb: c',
])
def test_plain_reader_refuses_the_rest(text: str) -> None:
    with pytest.raises(kubeconfig._NotPlain):
        kubeconfig._read_plain_yaml(text)


def test_plain_reader_and_pyyaml_agree_on_random_documents() -> None:
    import random
    rnd = random.Random(7)
    usual = ['a', 'name', 'b-c', 'x y', 'http://h:1/p', 'a:b', 'a#b', '--opt', "'q'", "'it''s'", '"dq"', '{}', '[]',
             '0', '7', 'true', 'False', 'null', '~', 'Null']
    tricky = ['on', 'yes', 'n', '012', '1.5', '-1', 'a: b', 'a #b', '"a\\"', '{ }', 'c:', '-x', '-', '.5', '2020-01-01',
              '<<', '=', '*a', '&a', '!t', '%x', '@x', 'é', 'a\tb', '', ' ', '#', '1_0', '0x1', '1e3', '.inf',
              '5f4dcc3b', '10.0.0.1', '1.2.3', '0o17', '0b', '0b1', '2020-1', '123abc', '+1', '.kube/x', '-.inf', '09',
              '0777', '1e+3', '1.0e+3', '3.', '12:30', '190:20:30.15', '2020-01-01T00:00:00Z', '-0', '+x', '-1x', '.']

    def word(keys: tuple[str, ...] = ()) -> str:
        return rnd.choice((keys or usual) if rnd.random() < 0.95 else tricky + usual)

    def node(depth: int, indent: int, dash_at_key: bool, item: bool = False) -> list[str]:
        kinds = ['map'] if depth == 0 else ['map', 'scalar'] if item else ['map', 'seq', 'scalar']
        kind = rnd.choice(kinds if depth < 3 else ['scalar'])
        pad = ' ' * indent
        if kind == 'map':
            lines = []
            for _ in range(rnd.randint(1, 3)):
                key = word(('name', 'a', 'b-c', 'x y', 'certificate-authority-data', 'a.b/c', '--x'))
                child = node(depth + 1, indent + rnd.choice([2, 4]), rnd.random() < 0.5)
                if len(child) == 1 and not child[0].startswith(' '):
                    lines.append(f'{pad}{key}:{rnd.choice([" "] * 8 + ["  ", ""])}{child[0]}')
                else:
                    lines.append(f'{pad}{key}:')
                    lines.extend(child)
                if rnd.random() < 0.1:
                    lines.append(' ' * rnd.randint(0, 6) + '# note')
            return lines
        if kind == 'seq':
            base = indent - 2 if dash_at_key and indent >= 2 else indent
            lines = []
            for _ in range(rnd.randint(1, 3)):
                child = node(depth + 1, base + 2, rnd.random() < 0.5, item=rnd.random() < 0.95)
                first = child[0][base + 2:] if child[0].startswith(' ' * (base + 2)) else child[0]
                lines.append(' ' * base + '- ' + first)
                lines.extend(child[1:])
            return lines
        return [word()]

    plain = 0
    for _ in range(3000):
        text = '\n'.join(node(0, 0, False)) + rnd.choice(['\n', ''])
        if rnd.random() < 0.2:  # a random mutation: a character dropped or a space/colon/dash inserted
            pos = rnd.randrange(len(text) + 1)
            text = text[:pos] + rnd.choice(['', ' ', ':', '- ', '\n', '#']) + text[pos + 1:]
        try:
            expected: Any = ('ok', yaml.safe_load(text))
        except (yaml.YAMLError, ValueError):  # ValueError: e.g. a timestamp with month 13
            expected = ('error',)
        try:
            got: Any = ('ok', kubeconfig._read_plain_yaml(text))
        except kubeconfig._NotPlain:
            continue
        plain += 1
        assert got == expected, text
        assert [type(v) for v in _leaves(got[1])] == [type(v) for v in _leaves(expected[1])], text
    assert plain > 600  # the reader does not refuse everything


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in [key, *_leaves(item)]]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def test_a_kubeconfig_that_the_plain_reader_refuses_is_read_by_pyyaml(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path / 'config', '{"apiVersion": "v1", "clusters": [{"name": "c", "cluster": '
                                      '{"server": "https://h:1"}}], "contexts": [{"name": "c", "context": '
                                      '{"cluster": "c"}}], "current-context": "c"}')
    assert kubeconfig.load([path]).server == 'https://h:1'


def test_a_kubeconfig_that_is_no_yaml_at_all_is_a_login_error(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path / 'config', 'a: [b\n')
    with pytest.raises(apierrors.LoginError, match='cannot be read as YAML'):
        kubeconfig.load([path])


def test_a_usual_kubeconfig_is_read_without_importing_pyyaml(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path / 'config', EMULATOR_STYLE)
    code = ('import sys, pathlib, kopf._api.kubeconfig as k; '
            f'info = k.load([pathlib.Path({str(path)!r})]); print(info.server, "yaml" in sys.modules)')
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert proc.stdout.split() == ['http://127.0.0.1:36925', 'False']
