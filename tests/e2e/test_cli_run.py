"""`kopf run` as a process: against a separate `kopf cluster` process via KUBECONFIG, and --local-cluster."""
import functools
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import threading

import pytest
from click.testing import CliRunner

from kopf.cli import main

from .. import waiting
from .conftest import CRD, ROOT

HANDLERS = '''
import kopf

@kopf.on.create('kopfexamples')
def create_fn(spec, **_):
    return {'message': f"created with {spec['field']}"}
'''


wait_for = functools.partial(waiting.wait_for, within=30.0, interval=0.05)


@pytest.mark.kubectl
@pytest.mark.skipif(shutil.which('kubectl') is None, reason='kubectl is not installed')
def test_kopf_run_against_a_kopf_cluster_process(tmp_path: pathlib.Path) -> None:
    kubeconfig = tmp_path / 'kubeconfig'
    handlers = tmp_path / 'handlers.py'
    handlers.write_text(HANDLERS)
    env = {**os.environ, 'KUBECONFIG': str(kubeconfig)}
    server = subprocess.Popen([sys.executable, '-m', 'kopf', 'cluster', '--port', '0', '--kubeconfig', str(kubeconfig),
                               '--apply', str(CRD)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    operator = None
    try:
        wait_for(kubeconfig.exists)
        operator = subprocess.Popen([sys.executable, '-m', 'kopf', 'run', '-A', str(handlers)], env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        subprocess.run(['kubectl', 'apply', '-f', str(ROOT / 'examples' / 'obj.yaml')], env=env, check=True,
                       capture_output=True)

        def status() -> str:
            proc = subprocess.run(['kubectl', 'get', 'kopfexample', 'kopf-example-1', '-o',
                                   'jsonpath={.status.create_fn.message}'], env=env, capture_output=True, text=True)
            return proc.stdout
        assert wait_for(status) == 'created with value'
        operator.send_signal(signal.SIGINT)
        output, _ = operator.communicate(timeout=20)
        assert operator.returncode == 0, output
        assert "Handler 'create_fn' succeeded." in output
        assert 'Creation is processed: 1 succeeded; 0 failed.' in output
        assert 'Traceback' not in output
    finally:
        if operator is not None and operator.poll() is None:
            operator.kill()
        server.terminate()
        server.wait(timeout=20)


def test_kopf_run_local_cluster_handles_the_example_and_exits_zero_on_sigterm() -> None:
    operator = subprocess.Popen(
        [sys.executable, '-m', 'kopf', 'run', '-A', '--local-cluster', '--apply', str(CRD),
         '--apply', str(ROOT / 'examples' / 'obj.yaml'), str(ROOT / 'examples' / '01-minimal' / 'example.py')],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    watchdog = threading.Timer(30, operator.kill)  # never hang the suite if the operator misbehaves
    watchdog.start()
    try:
        assert operator.stdout is not None
        for line in operator.stdout:
            lines.append(line)
            if 'Creation is processed' in line:
                break
        operator.send_signal(signal.SIGTERM)
        output, _ = operator.communicate(timeout=20)
    finally:
        watchdog.cancel()
        if operator.poll() is None:
            operator.kill()
    assert operator.returncode == 0, ''.join(lines) + output
    assert "Handler 'create_fn' succeeded." in ''.join(lines)


@pytest.mark.parametrize('args, message', [
    (['-A', '/nonexistent/handlers.py'], 'No such file: /nonexistent/handlers.py'),
    (['-A', '-m', 'no_such_module_here'], "Cannot import the module 'no_such_module_here'"),
    (['--apply', 'x.yaml'], '--apply works only with --local-cluster'),
    (['--state', 'x.json'], '--state works only with --local-cluster'),
    (['--kubeconfig', 'kc'], '--kubeconfig works only with --local-cluster (for a real cluster, set KUBECONFIG)'),
    (['--git-version', 'v1.31.0+k3s1'], '--git-version works only with --local-cluster'),
    (['--tls-san', 'k3s'], '--tls-san works only with --local-cluster'),
    (['-A', '-n', 'ns'], 'Either --namespace or --all-namespaces'),
])
def test_kopf_run_refuses_clearly(args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ['run', *args])
    assert result.exit_code != 0
    assert message in result.output
    assert 'Traceback' not in result.output


@pytest.mark.parametrize('content, message', [
    ('{garbage', 'Error: Cannot resume from the state file state.json: JSONDecodeError('),
    ('{"objects": 5}', 'Error: Cannot resume from the state file state.json: '),
])
def test_kopf_run_local_cluster_with_a_broken_state_file(tmp_path: pathlib.Path, content: str, message: str) -> None:
    (tmp_path / 'state.json').write_text(content)
    (tmp_path / 'handlers.py').write_text(HANDLERS)
    result = subprocess.run([sys.executable, '-m', 'kopf', 'run', '-A', '--local-cluster', '--state', 'state.json',
                             'handlers.py'], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.startswith(message) and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert (tmp_path / 'state.json').read_text() == content   # not overwritten by an empty cluster


def test_kopf_run_local_cluster_state_in_a_new_directory(tmp_path: pathlib.Path) -> None:
    """The state file's directory is created on save, as the kubeconfig's is."""
    (tmp_path / 'handlers.py').write_text(HANDLERS)
    operator = subprocess.Popen([sys.executable, '-m', 'kopf', 'run', '-A', '--local-cluster', '--state',
                                 'new/dir/state.json', '--kubeconfig', 'other/kc', 'handlers.py'], cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(lambda: (tmp_path / 'other' / 'kc').exists())
    finally:
        operator.send_signal(signal.SIGINT)
        output, _ = operator.communicate(timeout=30)
    assert operator.returncode == 0, output
    assert '"resourceVersion"' in (tmp_path / 'new' / 'dir' / 'state.json').read_text()


def test_kopf_run_refuses_unsupported_handler_kinds(tmp_path: pathlib.Path) -> None:
    path = tmp_path / 'webhooks.py'
    path.write_text("import kopf\n\n@kopf.on.validate('kopfexamples', id='my-webhook')\ndef fn(**_): pass\n")
    result = subprocess.run([sys.executable, '-m', 'kopf', 'run', '-A', str(path)], capture_output=True, text=True,
                            timeout=30, env={**os.environ, 'KUBECONFIG': str(tmp_path / 'none')})
    assert result.returncode == 1
    assert "Admission handlers ('my-webhook') need a webhook server" in result.stderr
    assert 'Traceback' not in result.stderr


def test_kopf_run_with_an_unreachable_cluster_exits_nonzero(tmp_path: pathlib.Path) -> None:
    kubeconfig = tmp_path / 'kubeconfig'
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
        "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:9'}}]\n"
        "users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n")
    path = tmp_path / 'handlers.py'
    path.write_text(HANDLERS)
    result = subprocess.run([sys.executable, '-m', 'kopf', 'run', '-A', str(path)], capture_output=True, text=True,
                            timeout=60, env={**os.environ, 'KUBECONFIG': str(kubeconfig)})
    assert result.returncode == 1
    assert 'Cannot reach the Kubernetes API' in result.stderr
    assert 'Traceback' not in result.stderr


CLIENT_HANDLERS = '''
import kubernetes
import kopf

@kopf.on.create('kopfexamples')
def create_fn(name, namespace, **_):
    # A blocking call of the official client, configured from KUBECONFIG: the local cluster's.
    api = kubernetes.client.CustomObjectsApi(kubernetes.config.new_client_from_config())
    obj = api.get_namespaced_custom_object('kopf.dev', 'v1', namespace, 'kopfexamples', name)
    print(f"CLIENT SAW {obj['metadata']['name']}", flush=True)
'''


def test_local_cluster_serves_the_handlers_own_clients(tmp_path: pathlib.Path) -> None:
    path = tmp_path / 'handlers.py'
    path.write_text(CLIENT_HANDLERS)
    env = {**os.environ, 'KUBECONFIG': str(tmp_path / 'must-not-be-used')}
    operator = subprocess.Popen(
        [sys.executable, '-m', 'kopf', 'run', '-A', '--local-cluster', '--apply', str(CRD),
         '--apply', str(ROOT / 'examples' / 'obj.yaml'), str(path)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines: list[str] = []
    watchdog = threading.Timer(30, operator.kill)  # never hang the suite if the operator misbehaves
    watchdog.start()
    try:
        assert operator.stdout is not None
        for line in operator.stdout:
            lines.append(line)
            if 'Creation is processed' in line:
                break
        operator.send_signal(signal.SIGINT)
        operator.communicate(timeout=20)
    finally:
        watchdog.cancel()
        if operator.poll() is None:
            operator.kill()
    assert 'CLIENT SAW kopf-example-1\n' in lines, ''.join(lines)
    assert operator.returncode == 0


STUCK_HANDLERS = '''
import time
import kopf

@kopf.on.startup()
def tune(settings, **_):
    settings.process.ultimate_exiting_timeout = 0.5

@kopf.on.create('kopfexamples')
def create_fn(**_):
    print('STUCK', flush=True)
    time.sleep(3600)
'''


def test_a_stuck_operator_kills_itself_after_the_ultimate_exiting_timeout(tmp_path: pathlib.Path) -> None:
    path = tmp_path / 'handlers.py'
    path.write_text(STUCK_HANDLERS)
    operator = subprocess.Popen(
        [sys.executable, '-m', 'kopf', 'run', '-A', '--local-cluster', '--apply', str(CRD),
         '--apply', str(ROOT / 'examples' / 'obj.yaml'), str(path)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    watchdog = threading.Timer(30, operator.kill)
    watchdog.start()
    try:
        assert operator.stdout is not None
        for line in operator.stdout:
            if 'STUCK' in line:
                break
        operator.send_signal(signal.SIGTERM)
        output, _ = operator.communicate(timeout=20)
    finally:
        watchdog.cancel()
        if operator.poll() is None:
            operator.kill()
    assert operator.returncode == -signal.SIGKILL
    assert 'did not exit within 0.5 seconds' in output
