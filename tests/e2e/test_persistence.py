"""Persistence end to end: each storage configuration, for each of {preserving CRD, strict CRD, ConfigMap},
across an operator killed with SIGKILL between handlers and restarted (`kopf run` subprocesses
against one local cluster in a thread)."""
import collections
import functools
import os
import pathlib
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from .. import backends, waiting
from ..backends import Cluster
from .conftest import CRD

OPERATOR = pathlib.Path(__file__).parent / 'operators' / 'persistence.py'
STRICT_CRD = {
    'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
    'metadata': {'name': 'kopfstricts.kopf.dev'},
    'spec': {'group': 'kopf.dev', 'scope': 'Namespaced',
             'names': {'plural': 'kopfstricts', 'singular': 'kopfstrict', 'kind': 'KopfStrict'},
             'versions': [{'name': 'v1', 'served': True, 'storage': True, 'subresources': {'status': {}},
                           'schema': {'openAPIV3Schema': {'type': 'object', 'properties': {
                               'spec': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True},
                               'status': {'type': 'object', 'properties': {'phase': {'type': 'string'}}},
                           }}}}]},
}
KINDS = [('kopf.dev/v1', 'KopfExample'), ('kopf.dev/v1', 'KopfStrict'), ('v1', 'ConfigMap')]
STORAGES = ['annotations-progress', 'status-progress', 'smart-progress', 'annotations-diffbase', 'status-diffbase']
PRUNING = {'status-progress': 'status.my-op', 'status-diffbase': 'status.my-op-base'}


@pytest.fixture(scope='module')
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    with backends.cluster(request) as local:
        local.apply(str(CRD), STRICT_CRD)
        yield local


def make_objects(namespace: str) -> list[dict[str, Any]]:
    objs = []
    for api_version, kind in KINDS:
        obj: dict[str, Any] = {'apiVersion': api_version, 'kind': kind,
                               'metadata': {'name': f'{kind.lower()}-1', 'namespace': namespace,
                                            'labels': {'e2e': 'persistence'}}}
        obj.update({'data': {'key': 'value'}} if kind == 'ConfigMap' else {'spec': {'field': 'value'}})
        objs.append(obj)
    return objs


class Operator:
    def __init__(self, cluster: Cluster, namespace: str, storage: str, log: pathlib.Path, *, block: bool):
        env = {**os.environ, 'KUBECONFIG': str(cluster.kubeconfig), 'E2E_LOG': str(log), 'E2E_STORAGE': storage}
        if block:
            env['E2E_BLOCK'] = '1'
        self.proc = subprocess.Popen([sys.executable, '-m', 'kopf', 'run', '-n', namespace, '--standalone',
                                      str(OPERATOR)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)

    def stop(self, signum: int) -> tuple[int, str]:
        self.proc.send_signal(signum)
        output, _ = self.proc.communicate(timeout=20)
        return self.proc.returncode, output


def read_log(log: pathlib.Path, *, seen: bool = False) -> dict[str, list[str]]:
    """The handlers' calls by object; or (`seen=True`) the resourceVersions the `on.event` handler saw."""
    lines: dict[str, list[str]] = collections.defaultdict(list)
    for line in log.read_text().splitlines() if log.exists() else []:
        obj, what = line.split(' ', 1)
        if what.startswith('seen ') == seen:
            lines[obj].append(what.removeprefix('seen '))
    return lines


BARRIER = 'kopf.zalando.org/e2e-barrier'  # a Kopf-owned annotation: not in the essence, no handler's cause


def barrier(cluster: Cluster, objs: list[dict[str, Any]], log: pathlib.Path) -> None:
    """Every cycle of the objects' earlier events has ended (as the in-process `Sightings.barrier`, through the
    operator's `on.event` records): a change that causes nothing is made and seen, twice, for each object."""
    for obj in objs:
        name = f"{obj['kind']}/{obj['metadata']['name']}"
        for _ in range(2):
            [applied] = cluster.apply({'apiVersion': obj['apiVersion'], 'kind': obj['kind'], 'metadata': {
                'name': obj['metadata']['name'], 'namespace': obj['metadata']['namespace'],
                'annotations': {BARRIER: uuid.uuid4().hex}}})
            rv = int(applied['metadata']['resourceVersion'])
            wait_for(lambda name=name, rv=rv: max(map(int, read_log(log, seen=True)[name]), default=0) >= rv)


wait_for = functools.partial(waiting.wait_for, within=30.0, interval=0.05)


@pytest.mark.parametrize('storage', STORAGES)
def test_three_handlers_once_each_across_sigkill(cluster: Cluster, storage: str, tmp_path: pathlib.Path) -> None:
    namespace = f'p-{storage}'
    log = tmp_path / 'calls.log'
    cluster.apply({'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': namespace}})
    objs = make_objects(namespace)
    names = [f"{obj['kind']}/{obj['metadata']['name']}" for obj in objs]

    first = Operator(cluster, namespace, storage, log, block=True)
    try:
        cluster.apply(*objs)
        wait_for(lambda: all('fn3 start create' in read_log(log)[name] for name in names))
    finally:
        first.proc.kill()  # SIGKILL: between the handlers (fn3 is running, fn1 awaits its retry)
        first.proc.wait()
    before = read_log(log)
    assert all(before[name] == ['fn1 fail create', 'fn2 success create', 'fn3 start create'] for name in names)

    second = Operator(cluster, namespace, storage, log, block=False)
    try:
        wait_for(lambda: all('fn1 success create' in read_log(log)[name] and
                             'fn3 success create' in read_log(log)[name] for name in names))
        for obj in objs:  # an update is handled as an update, not as a creation
            cluster.apply({**obj, **({'data': {'key': 'changed'}} if obj['kind'] == 'ConfigMap'
                                     else {'spec': {'field': 'changed'}})})
        wait_for(lambda: all('update update' in read_log(log)[name] for name in names))
        barrier(cluster, objs, log)  # whatever the operator would do after the update is done
    finally:
        code, output = second.stop(signal.SIGTERM)
    assert code == 0, output

    calls = read_log(log)
    for name in names:
        successes = collections.Counter(what for what in calls[name] if 'success' in what)
        assert successes == {'fn1 success create': 1, 'fn2 success create': 1, 'fn3 success create': 1}, calls[name]
        assert calls[name].count('fn1 fail create') == 1
        assert calls[name].count('update update') == 1
        assert not [what for what in calls[name] if what.endswith(('resume',))]

    field = PRUNING.get(storage)
    warnings = [line for line in output.splitlines() if 'would prune the field' in line]
    if field is None:
        assert not warnings
    else:
        assert len([w for w in warnings if 'kopfstricts.kopf.dev' in w and field in w]) == 1, warnings
        assert len([w for w in warnings if 'configmaps' in w and field in w]) == 1, warnings
        assert not [w for w in warnings if 'kopfexamples' in w]
