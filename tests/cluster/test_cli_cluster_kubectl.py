"""kubectl's habits against `kopf cluster` as a user runs it (a process, its kubeconfig file):
`get --sort-by`, `-o custom-columns`, `get events`, `auth can-i`, `auth whoami`."""
import datetime
import pathlib
import re
import subprocess
import sys

import pytest
import yaml

from tests.fidelity.conftest import kubectl_binary

BINARY = kubectl_binary()


def _ago(minutes: int) -> str:
    return (datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=minutes, seconds=5)
            ).strftime('%Y-%m-%dT%H:%M:%SZ')


@pytest.mark.kubectl
@pytest.mark.skipif(BINARY is None, reason='kubectl is not installed')
def test_kubectl_habits_against_kopf_cluster(tmp_path: pathlib.Path) -> None:
    manifests = [{'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': name}, 'data': {'k': value}}
                 for name, value in [('b', '2'), ('a', '3'), ('c', '1')]]
    manifests.append({'apiVersion': 'v1', 'kind': 'Event', 'metadata': {'name': 'ev1'},
                      'involvedObject': {'kind': 'ConfigMap', 'name': 'a', 'namespace': 'default'},
                      'reason': 'Because', 'message': 'some text', 'type': 'Normal',
                      'firstTimestamp': _ago(20), 'lastTimestamp': _ago(10), 'count': 2})
    (tmp_path / 'objects.yaml').write_text(yaml.safe_dump_all(manifests))
    kubeconfig = tmp_path / 'kc'
    proc = subprocess.Popen([sys.executable, '-m', 'kopf', 'cluster', '--port', '0', '--kubeconfig', str(kubeconfig),
                             '--apply', str(tmp_path / 'objects.yaml')],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith('Kubernetes API emulator serving at'), proc.stderr
        proc.stdout.readline()   # the kubeconfig line: written by now

        def kubectl(*args: str) -> subprocess.CompletedProcess[str]:
            assert BINARY is not None
            return subprocess.run([BINARY, f'--kubeconfig={kubeconfig}', f'--cache-dir={tmp_path / "cache"}', *args],
                                  capture_output=True, text=True, timeout=60)

        def rows(result: subprocess.CompletedProcess[str]) -> list[list[str]]:
            assert result.returncode == 0, result.stderr
            return [re.split(r'\s{2,}', line.strip()) for line in result.stdout.splitlines()]

        ours = '--field-selector=metadata.name!=kube-root-ca.crt'   # every namespace has that one too
        assert [row[0] for row in rows(kubectl('get', 'cm', ours, '--sort-by=.data.k'))] == ['NAME', 'c', 'b', 'a']
        assert rows(kubectl('get', 'cm', ours, '--sort-by=.data.k', '-o', 'custom-columns=N:.metadata.name,K:.data.k')
                    ) == [['N', 'K'], ['c', '1'], ['b', '2'], ['a', '3']]
        assert rows(kubectl('get', 'events')) == [['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'],
                                                  ['10m', 'Normal', 'Because', 'configmap/a', 'some text']]
        assert kubectl('auth', 'can-i', 'create', 'pods').stdout == 'yes\n'
        assert kubectl('auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}').stdout == 'kubernetes-admin'
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 0 and 'Traceback' not in stderr, stderr
