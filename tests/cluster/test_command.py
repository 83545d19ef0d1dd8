"""`kopf cluster` as a user runs it: a subprocess, real signals, real files."""
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

import kopf

COMMAND = [sys.executable, '-m', 'kopf', 'cluster', '--port', '0']


def _start(tmp_path: pathlib.Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([*COMMAND, '--kubeconfig', str(tmp_path / 'kc'), *args], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith('Kubernetes API emulator serving at http://127.0.0.1:'), line + proc.stderr.read()
    return proc, line.split()[-1]


@pytest.mark.parametrize('signum', [signal.SIGTERM, signal.SIGINT])
def test_serves_until_signalled_then_exits_zero(tmp_path: pathlib.Path, signum: int) -> None:
    proc, url = _start(tmp_path)
    try:
        with urllib.request.urlopen(f'{url}/version') as response:
            assert response.status == 200
        config = (tmp_path / 'kc').read_text()
        assert f'server: {url}' in config and 'current-context: kopf-local' in config
    finally:
        proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 0, stderr
    assert 'Traceback' not in stderr


def test_default_kubeconfig_in_cwd_and_apply(tmp_path: pathlib.Path) -> None:
    examples = pathlib.Path(kopf.__file__).parent.parent / 'examples'
    proc = subprocess.Popen([*COMMAND, '--apply', str(examples / 'crd.yaml'), '--apply', str(examples / 'obj.yaml')],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, 'HOME': str(tmp_path / 'home')})
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split()[-1]
        assert str(tmp_path / 'kopf-cluster.kubeconfig') in proc.stdout.readline()
        path = '/apis/kopf.dev/v1/namespaces/default/kopfexamples/kopf-example-1'
        with urllib.request.urlopen(f'{url}{path}') as response:
            assert response.status == 200
        assert not (tmp_path / 'home' / '.kube').exists()
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


def _fails(tmp_path: pathlib.Path, *args: str) -> str:
    proc = subprocess.run([*COMMAND, '--kubeconfig', str(tmp_path / 'kc'), *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode != 0
    assert 'Traceback' not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not (tmp_path / 'kc').exists()
    return proc.stderr.strip()


def test_malformed_yaml_is_one_line(tmp_path: pathlib.Path) -> None:
    (tmp_path / 'bad.yaml').write_text('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [unclosed\n')
    assert 'malformed YAML' in _fails(tmp_path, '--apply', str(tmp_path / 'bad.yaml'))


def test_non_structural_crd_is_one_line(tmp_path: pathlib.Path) -> None:
    (tmp_path / 'crd.yaml').write_text(
        'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: xs.x.dev}\n'
        'spec:\n  group: x.dev\n  scope: Namespaced\n  names: {plural: xs, kind: X}\n'
        '  versions:\n  - name: v1\n    served: true\n    storage: true\n'
        '    schema: {openAPIV3Schema: {type: object, properties: {spec: {}}}}\n')
    message = _fails(tmp_path, '--apply', str(tmp_path / 'crd.yaml'))
    assert 'CustomResourceDefinition/xs.x.dev' in message and 'is invalid' in message


def test_missing_file_is_one_line(tmp_path: pathlib.Path) -> None:
    assert 'cannot read' in _fails(tmp_path, '--apply', str(tmp_path / 'absent.yaml'))


def test_port_in_use_is_one_line(tmp_path: pathlib.Path) -> None:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        sock.listen()
        port = sock.getsockname()[1]
        proc = subprocess.run([sys.executable, '-m', 'kopf', 'cluster', '--port', str(port),
                               '--kubeconfig', str(tmp_path / 'kc')], capture_output=True, text=True, timeout=30)
    assert proc.returncode != 0
    assert proc.stderr.strip().count('\n') == 0 and f'cannot listen on 127.0.0.1:{port}' in proc.stderr
    assert not (tmp_path / 'kc').exists()


def test_kubeconfig_written_only_when_serving(tmp_path: pathlib.Path) -> None:
    proc, url = _start(tmp_path)
    try:
        started = time.monotonic()
        assert (tmp_path / 'kc').exists()   # the URL line is printed after the file is written
        with urllib.request.urlopen(f'{url}/healthz') as response:
            assert response.read() == b'ok'
        assert time.monotonic() - started < 5
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


def test_state_file_survives_restarts(tmp_path: pathlib.Path) -> None:
    manifest = tmp_path / 'cm.yaml'
    manifest.write_text('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kept}\ndata: {a: b}\n')
    proc, url = _start(tmp_path, '--state', str(tmp_path / 'state.json'), '--apply', str(manifest))
    with urllib.request.urlopen(f'{url}/api/v1/namespaces/default/configmaps/kept') as response:
        first = response.read()
    proc.terminate()
    proc.communicate(timeout=20)
    assert (tmp_path / 'state.json').exists()
    proc, url = _start(tmp_path, '--state', str(tmp_path / 'state.json'))
    try:
        with urllib.request.urlopen(f'{url}/api/v1/namespaces/default/configmaps/kept') as response:
            assert response.read() == first      # same uid, same resourceVersion
        with urllib.request.urlopen(f'{url}/api/v1/namespaces') as response:
            assert b'kube-system' in response.read()
        request = urllib.request.Request(f'{url}/api/v1/namespaces/default/configmaps', method='POST',
                                         data=json.dumps({'metadata': {'name': 'later'}}).encode(),
                                         headers={'Content-Type': 'application/json'})
        with urllib.request.urlopen(request) as response:
            later = json.loads(response.read())
        kept_rv = int(json.loads(first)['metadata']['resourceVersion'])
        assert int(later['metadata']['resourceVersion']) > kept_rv   # the counter continues, never restarts
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


def test_verbose_prints_a_line_per_request(tmp_path: pathlib.Path) -> None:
    proc, url = _start(tmp_path, '-v')
    try:
        with urllib.request.urlopen(f'{url}/api/v1/namespaces/default/configmaps?limit=5') as response:
            assert response.status == 200
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(f'{url}/api/v1/namespaces/default/configmaps/absent')
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=20)
    lines = stderr.splitlines()
    assert re.search(r'^GET /api/v1/namespaces/default/configmaps\?limit=5 200 \d+\.\dms$', stderr, re.M), lines
    assert re.search(r'^GET /api/v1/namespaces/default/configmaps/absent 404 \d+\.\dms$', stderr, re.M), lines


def test_unwritable_kubeconfig_is_one_line(tmp_path: pathlib.Path) -> None:
    (tmp_path / 'file').write_text('')
    proc = subprocess.run([*COMMAND, '--kubeconfig', str(tmp_path / 'file' / 'kc')], capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode != 0 and 'Traceback' not in proc.stderr
    assert 'cannot write the kubeconfig' in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def _request(url: str, method: str = 'GET', body: object = None) -> tuple[int, dict[str, object]]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={'Content-Type': 'application/json'})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.mark.parametrize('history, writes, expired', [(3, 2, False), (3, 4, True), (None, 20, False)])
def test_history_size_bounds_a_continue_token(tmp_path: pathlib.Path, history: int | None, writes: int,
                                              expired: bool) -> None:
    proc, url = _start(tmp_path, *(['--history-size', str(history)] if history else []))
    path = f'{url}/api/v1/namespaces/default/configmaps'
    try:
        for name in ('a', 'b'):
            assert _request(path, 'POST', {'metadata': {'name': name}})[0] == 201
        status, page = _request(f'{path}?limit=1')
        token = page['metadata']['continue']  # type: ignore[index]
        for n in range(writes):
            assert _request(f'{path}/b', 'PUT', {'metadata': {'name': 'b'}, 'data': {'n': str(n)}})[0] == 200
        status, page = _request(f'{path}?limit=1&continue={token}')
    finally:
        proc.terminate()
        proc.communicate(timeout=20)
    assert (status, page.get('reason')) == ((410, 'Expired') if expired else (200, None))


def test_history_size_must_be_positive(tmp_path: pathlib.Path) -> None:
    result = subprocess.run([*COMMAND, '--history-size', '0'], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 2 and "'--history-size'" in result.stderr
