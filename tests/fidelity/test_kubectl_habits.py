"""kubectl's habits that a new user has on day one: `get --sort-by`, `-o custom-columns`, `get events`.

Run on both backends: the expected outputs are a real kube-apiserver 1.34's.
"""
import datetime
import re

import pytest

from tests.backends import Cluster
from tests.fidelity.conftest import Http, Kubectl

TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io'


def _rows(output: str) -> list[list[str]]:
    return [re.split(r'\s{2,}', line.strip()) for line in output.splitlines()]


def _ago(minutes: int, micro: bool = False) -> str:
    moment = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=minutes, seconds=5)
    return moment.strftime('%Y-%m-%dT%H:%M:%S.%fZ' if micro else '%Y-%m-%dT%H:%M:%SZ')


@pytest.fixture(scope='module')
def sortables(cluster: Cluster, namespace: str) -> str:
    for name, value in [('b', '2'), ('a', '3'), ('c', '1')]:
        cluster.apply({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': name, 'namespace': namespace,
                                                                             'labels': {'sortable': 'yes'}},
                       'data': {'k': value}})
    return namespace


def test_sort_by_a_field_outside_metadata(kubectl: Kubectl, sortables: str) -> None:
    """kubectl asks for `includeObject=Object` to sort by any field: rows need whole objects."""
    result = kubectl('get', 'cm', '-n', sortables, '-l', 'sortable=yes', '--sort-by=.data.k')
    assert result.returncode == 0, result.stderr
    assert [row[0] for row in _rows(result.stdout)] == ['NAME', 'c', 'b', 'a']


def test_custom_columns_sorted(kubectl: Kubectl, sortables: str) -> None:
    result = kubectl('get', 'cm', '-n', sortables, '-l', 'sortable=yes', '--sort-by=.data.k',
                     '-o', 'custom-columns=NAME:.metadata.name,K:.data.k')
    assert result.returncode == 0, result.stderr
    assert _rows(result.stdout) == [['NAME', 'K'], ['c', '1'], ['b', '2'], ['a', '3']]


@pytest.mark.parametrize('include, expected', [
    ('Object', {'kind': 'ConfigMap', 'apiVersion': 'v1', 'data': {'k': '3'}}),
    ('Metadata', {'kind': 'PartialObjectMetadata', 'apiVersion': 'meta.k8s.io/v1'}),
    ('', {'kind': 'PartialObjectMetadata', 'apiVersion': 'meta.k8s.io/v1'}),
])
def test_include_object_in_table_rows(raw: Http, sortables: str, include: str, expected: dict[str, str]) -> None:
    for path in (f'/api/v1/namespaces/{sortables}/configmaps?labelSelector=sortable%3Dyes',
                 f'/api/v1/namespaces/{sortables}/configmaps/a?'):
        code, _, table = raw.request('GET', f'{path}&includeObject={include}', headers={'Accept': TABLE})
        assert code == 200 and table['kind'] == 'Table'
        row = next(row for row in table['rows'] if row['object']['metadata']['name'] == 'a')
        assert {key: row['object'][key] for key in expected} == expected
        assert (row['object'].get('data') is not None) == (include == 'Object')


def test_include_object_none_and_invalid(raw: Http, sortables: str) -> None:
    path = f'/api/v1/namespaces/{sortables}/configmaps?labelSelector=sortable%3Dyes&includeObject='
    code, _, table = raw.request('GET', path + 'None', headers={'Accept': TABLE})
    assert code == 200 and [row['object'] for row in table['rows']] == [None, None, None]
    code, _, status = raw.request('GET', path + 'Bad', headers={'Accept': TABLE})
    assert (code, status['reason']) == (400, 'BadRequest')
    assert status['message'] == ('Unable to convert to Table as requested: includeObject: Invalid value: "Bad": '
                                 "must be 'Metadata', 'Object', 'None', or empty")


def test_get_events_columns(kubectl: Kubectl, cluster: Cluster, namespace: str) -> None:
    cluster.apply({'apiVersion': 'v1', 'kind': 'Event', 'metadata': {'name': 'ev-habits', 'namespace': namespace},
                   'involvedObject': {'kind': 'ConfigMap', 'name': 'a', 'namespace': namespace, 'apiVersion': 'v1'},
                   'reason': 'Because', 'message': '  some text  ', 'type': 'Normal', 'source': {'component': 'me'},
                   'firstTimestamp': _ago(20), 'lastTimestamp': _ago(10), 'count': 3})
    result = kubectl('get', 'events', '-n', namespace)
    assert result.returncode == 0, result.stderr
    assert _rows(result.stdout) == [['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'],
                                    ['10m', 'Normal', 'Because', 'configmap/a', 'some text']]
    wide = kubectl('get', 'events', '-n', namespace, '-o', 'wide')
    assert _rows(wide.stdout)[0] == ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'SUBOBJECT', 'SOURCE', 'MESSAGE',
                                     'FIRST SEEN', 'COUNT', 'NAME']
    assert re.split(r'\s+', wide.stdout.splitlines()[1].strip()) == ['10m', 'Normal', 'Because', 'configmap/a',
                                                                   'me', 'some', 'text', '20m', '3', 'ev-habits']


def test_get_events_of_events_k8s_io(kubectl: Kubectl, cluster: Cluster, namespace: str) -> None:
    """The new group's events (`kubectl get events.v1.events.k8s.io`): the same columns, by their own fields."""
    cluster.apply({'apiVersion': 'events.k8s.io/v1', 'kind': 'Event',
                   'metadata': {'name': 'ev-new', 'namespace': namespace},
                   'regarding': {'kind': 'Pod', 'name': 'p1', 'namespace': namespace},
                   'reason': 'Started', 'note': 'a note', 'type': 'Warning', 'action': 'Starting',
                   'reportingController': 'kopf.dev/ctl', 'reportingInstance': 'ctl-1',
                   'eventTime': _ago(12, micro=True)})
    result = kubectl('get', 'events.v1.events.k8s.io', '-n', namespace, '--field-selector', 'metadata.name=ev-new')
    assert result.returncode == 0, result.stderr
    assert _rows(result.stdout) == [['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'],
                                    ['12m', 'Warning', 'Started', 'pod/p1', 'a note']]
