"""kubectl against `kopf cluster` as a user runs it (a process, its kubeconfig file): its habits (`get --sort-by`,
`-o custom-columns`, `get events`, `auth can-i`, `auth whoami`), `explain`, and `create`/`apply`/`edit` with and
without `--validate`."""
import contextlib
import datetime
import json
import os
import pathlib
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml

from tests.fidelity.conftest import STRICT_CRD, kubectl_binary

BINARY = kubectl_binary()
Run = Callable[..., subprocess.CompletedProcess[str]]


def _ago(minutes: int) -> str:
    return (datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=minutes, seconds=5)
            ).strftime('%Y-%m-%dT%H:%M:%SZ')


@contextlib.contextmanager
def _kopf_cluster(tmp_path: pathlib.Path, manifests: list[dict[str, Any]]) -> Iterator[Run]:
    """`kopf cluster --kubeconfig PATH --apply FILE` in a process; kubectl with that kubeconfig (and `env` added)."""
    (tmp_path / 'objects.yaml').write_text(yaml.safe_dump_all(manifests))
    kubeconfig = tmp_path / 'kc'
    proc = subprocess.Popen([sys.executable, '-m', 'kopf', 'cluster', '--port', '0', '--kubeconfig', str(kubeconfig),
                             '--apply', str(tmp_path / 'objects.yaml')],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith('Kubernetes API emulator serving at'), proc.stderr
        proc.stdout.readline()   # the kubeconfig line: written by now

        def kubectl(*args: str, input: str | None = None, env: dict[str, str] | None = None
                    ) -> subprocess.CompletedProcess[str]:
            assert BINARY is not None
            return subprocess.run([BINARY, f'--kubeconfig={kubeconfig}', f'--cache-dir={tmp_path / "cache"}', *args],
                                  capture_output=True, text=True, timeout=60, input=input,
                                  env={**os.environ, **(env or {})})

        yield kubectl
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 0 and 'Traceback' not in stderr, stderr


def _rows(result: subprocess.CompletedProcess[str]) -> list[list[str]]:
    assert result.returncode == 0, result.stderr
    return [re.split(r'\s{2,}', line.strip()) for line in result.stdout.splitlines()]


@pytest.mark.kubectl
@pytest.mark.skipif(BINARY is None, reason='kubectl is not installed')
def test_kubectl_habits_against_kopf_cluster(tmp_path: pathlib.Path) -> None:
    manifests = [{'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': name}, 'data': {'k': value}}
                 for name, value in [('b', '2'), ('a', '3'), ('c', '1')]]
    manifests.append({'apiVersion': 'v1', 'kind': 'Event', 'metadata': {'name': 'ev1'},
                      'involvedObject': {'kind': 'ConfigMap', 'name': 'a', 'namespace': 'default'},
                      'reason': 'Because', 'message': 'some text', 'type': 'Normal',
                      'firstTimestamp': _ago(20), 'lastTimestamp': _ago(10), 'count': 2})
    with _kopf_cluster(tmp_path, manifests) as kubectl:
        ours = '--field-selector=metadata.name!=kube-root-ca.crt'   # every namespace has that one too
        assert [row[0] for row in _rows(kubectl('get', 'cm', ours, '--sort-by=.data.k'))] == ['NAME', 'c', 'b', 'a']
        assert _rows(kubectl('get', 'cm', ours, '--sort-by=.data.k', '-o',
                             'custom-columns=N:.metadata.name,K:.data.k')) == [['N', 'K'], ['c', '1'], ['b', '2'],
                                                                                ['a', '3']]
        assert _rows(kubectl('get', 'events')) == [['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'],
                                                   ['10m', 'Normal', 'Because', 'configmap/a', 'some text']]
        assert kubectl('auth', 'can-i', 'create', 'pods').stdout == 'yes\n'
        assert kubectl('auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}').stdout == 'kubernetes-admin'


EDITOR = """
import os, pathlib, sys
path = pathlib.Path(sys.argv[-1])
text = path.read_text()
if os.environ['EDIT_NEW'] not in text:   # kubectl opens the file again after a rejected edit: leave it as it is
    path.write_text(text.replace(os.environ['EDIT_OLD'], os.environ['EDIT_NEW']))
"""


@pytest.mark.kubectl
@pytest.mark.skipif(BINARY is None, reason='kubectl is not installed')
def test_explain_and_validation_against_kopf_cluster(tmp_path: pathlib.Path) -> None:
    (tmp_path / 'editor.py').write_text(EDITOR)
    with _kopf_cluster(tmp_path, [STRICT_CRD]) as kubectl:
        explained = kubectl('explain', 'deployment.spec.strategy')
        assert explained.returncode == 0, explained.stderr
        assert 'rollingUpdate\t<RollingUpdateDeployment>' in explained.stdout
        explained = kubectl('explain', 'stricts.spec')
        assert explained.returncode == 0, explained.stderr
        assert 'KIND:       Strict' in explained.stdout and 'size\t<integer>' in explained.stdout
        objects = {'strict/one': {'apiVersion': 'kopf.dev/v1', 'kind': 'Strict', 'metadata': {'name': 'one'},
                                  'spec': {'size': 1}},
                   'configmap/one': {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'one'},
                                     'data': {'size': '1'}}}
        for what, obj in objects.items():
            junk = json.dumps({**obj, 'junk': 1})
            for verb in ('create', 'apply'):
                failed = kubectl(verb, '-f', '-', input=junk)
                assert failed.returncode != 0 and 'unknown field "junk"' in failed.stderr, (verb, what, failed.stderr)
                passed = kubectl(verb, '-f', '-', '--validate=false', input=junk)
                assert passed.returncode == 0, (verb, what, passed.stderr)
                assert kubectl('delete', what).returncode == 0
            assert kubectl('create', '-f', '-', input=json.dumps(obj)).returncode == 0
            kind = f'"kind": "{obj["kind"]}",'
            size = '"size": 1' if what.startswith('strict') else '"size": "1"'

            def edit(old: str, new: str, *flags: str, what: str = what) -> subprocess.CompletedProcess[str]:
                return kubectl('edit', what, '-o', 'json', *flags, env={
                    'KUBE_EDITOR': f'{sys.executable} {tmp_path / "editor.py"}', 'EDIT_OLD': old, 'EDIT_NEW': new})

            edited = edit(size, size.replace('1', '2'))
            assert edited.returncode == 0, (what, edited.stderr)
            rejected = edit(kind, f'{kind} "junk": 1,')
            assert rejected.returncode != 0 and '"one" is invalid' in rejected.stderr, (what, rejected.stderr)
            ignored = edit(kind, f'{kind} "junk": 1,', '--validate=false')
            assert ignored.returncode == 0, (what, ignored.stderr)
            got = json.loads(kubectl('get', what, '-o', 'json').stdout)
            assert 'junk' not in got and (got.get('spec') or got.get('data')) == json.loads(
                '{' + size.replace('1', '2') + '}'), (what, got)
