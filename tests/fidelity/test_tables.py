"""`kubectl get` prints what a real server's Tables make it print: typed printer columns, -o wide, ages."""
import datetime
import re

from kopf._cluster.web import cells, tables
from kopf.testing import LocalCluster
from tests.fidelity.conftest import Kubectl

COLUMNS = [
    {'name': 'Replicas', 'type': 'integer', 'jsonPath': '.spec.replicas'},
    {'name': 'Ratio', 'type': 'number', 'jsonPath': '.spec.ratio'},
    {'name': 'Ready', 'type': 'boolean', 'jsonPath': '.status.ready'},
    {'name': 'Started', 'type': 'date', 'jsonPath': '.status.started'},
    {'name': 'Items', 'type': 'string', 'jsonPath': '.spec.items'},
    {'name': 'Wrong', 'type': 'integer', 'jsonPath': '.spec.text'},
    {'name': 'Detail', 'type': 'string', 'jsonPath': '.spec.detail', 'priority': 1},
]
CRD = {
    'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
    'metadata': {'name': 'columneds.kopf.dev'},
    'spec': {'group': 'kopf.dev', 'scope': 'Namespaced', 'names': {'plural': 'columneds', 'kind': 'Columned'},
             'versions': [{'name': 'v1', 'served': True, 'storage': True, 'additionalPrinterColumns': COLUMNS,
                           'schema': {'openAPIV3Schema': {'type': 'object',
                                                          'x-kubernetes-preserve-unknown-fields': True}}}]},
}


def _rows(output: str) -> list[list[str]]:
    return [re.split(r'\s{2,}', line.strip()) for line in output.splitlines()]


def test_typed_printer_columns_and_wide(kubectl: Kubectl, cluster: LocalCluster) -> None:
    started = (datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=5)).strftime('%Y-%m-%dT%H:%M:%SZ')
    cluster.apply(CRD, {'apiVersion': 'kopf.dev/v1', 'kind': 'Columned', 'metadata': {'name': 'c1'},
                        'spec': {'replicas': 3, 'ratio': 0.5, 'items': ['a', 'b'], 'text': 'x', 'detail': 'more'},
                        'status': {'ready': True, 'started': started}})
    result = kubectl('get', 'columneds')
    assert result.returncode == 0, result.stderr
    assert _rows(result.stdout) == [['NAME', 'REPLICAS', 'RATIO', 'READY', 'STARTED', 'ITEMS', 'WRONG'],
                                    ['c1', '3', '0.5', 'true', '5h', '["a","b"]']]   # WRONG: null, printed blank
    wide = kubectl('get', 'columneds', '-o', 'wide')
    assert _rows(wide.stdout)[0][-1] == 'DETAIL' and _rows(wide.stdout)[1][-1] == 'more'


def test_demo_crd_columns(kubectl: Kubectl, cluster: LocalCluster) -> None:
    """examples/crd.yaml declares columns, so no AGE: the real server adds Age only when none are declared."""
    cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': 'demo'},
                   'spec': {'duration': '1m'}})
    patched = kubectl('patch', 'kex', 'demo', '--subresource=status', '--type=merge', '-p',
                      '{"status":{"create_fn":{"children":["pod-1"],"message":"created"}}}')
    assert patched.returncode == 0, patched.stderr
    result = kubectl('get', 'kex', 'demo')
    assert _rows(result.stdout) == [['NAME', 'DURATION', 'CHILDREN', 'MESSAGE'],
                                    ['demo', '1m', '["pod-1"]', 'created']]


def test_builtin_columns(kubectl: Kubectl, cluster: LocalCluster) -> None:
    cluster.apply(CRD)   # its own, not the first test's (the module's cluster is shared; -k may run this one alone)
    cluster.apply({'apiVersion': 'apps/v1', 'kind': 'Deployment', 'metadata': {'name': 'dep'},
                   'spec': {'replicas': 2, 'selector': {'matchLabels': {'app': 'x'}}, 'paused': True,  # no Pods yet
                            'template': {'metadata': {'labels': {'app': 'x'}},
                                         'spec': {'containers': [{'name': 'main', 'image': 'nginx'}]}}}})
    rows = _rows(kubectl('get', 'deployment', 'dep', '-o', 'wide').stdout)
    assert rows[0] == ['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE', 'CONTAINERS', 'IMAGES', 'SELECTOR']
    assert rows[1][:2] == ['dep', '0/2'] and rows[1][3] == '0' and rows[1][5:] == ['main', 'nginx', 'app=x']
    assert rows[1][2] == '0'   # UP-TO-DATE: a paused Deployment gets no ReplicaSet (from either controller)
    assert _rows(kubectl('get', 'crd', 'columneds.kopf.dev').stdout)[0] == ['NAME', 'CREATED AT']


def test_human_durations_as_upstream() -> None:
    samples = {0: '0s', 119: '119s', 125: '2m5s', 600: '10m', 7200: '120m', 12000: '3h20m', 30 * 3600: '30h',
               76 * 3600: '3d4h', 400 * 86400: '400d', 760 * 86400: '2y30d', -5: '<invalid>'}
    assert {seconds: cells.human_duration(seconds) for seconds in samples} == samples
    assert tables.typed_cell('date', 'yesterday') == '<invalid>'
    assert tables.typed_cell('integer', '5') is None and tables.typed_cell('number', 2) == 2.0
    assert tables.typed_cell('string', {'b': 1, 'a': [True]}) == '{"a":[true],"b":1}'
