"""kubectl's habits that a new user has on day one: `get --sort-by`, `-o custom-columns`, `get events`,
`auth can-i` and `auth whoami` (the access reviews).

Run on both backends: the expected outputs are a real kube-apiserver 1.34's.
"""
import datetime
import json
import re
from typing import Any

import pytest

from kopf.testing import LocalCluster
from tests import backends
from tests.backends import Cluster
from tests.fidelity.conftest import Http, Kubectl
from tests.waiting import wait_for

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


def test_auth_can_i_answers(kubectl: Kubectl, namespace: str) -> None:
    for args in (['create', 'pods'], ['delete', 'configmaps', '-n', namespace], ['get', 'pods', '--subresource=log'],
                 ['get', '/healthz']):
        result = kubectl('auth', 'can-i', *args)
        assert (result.returncode, result.stdout.strip()) == (0, 'yes'), (args, result.stderr)


def test_auth_can_i_answers_by_rbac(kubectl: Kubectl, cluster: Cluster, namespace: str) -> None:
    """A user bound to `view` in one namespace: yes to what view allows there, no to the rest (exit code 1)."""
    cluster.apply({'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'RoleBinding',
                   'metadata': {'name': 'carol-views', 'namespace': namespace},
                   'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'ClusterRole', 'name': 'view'},
                   'subjects': [{'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'User', 'name': 'carol'}]})

    def answer(*args: str) -> tuple[int, str]:
        result = kubectl('auth', 'can-i', *args, '--as', 'carol')
        return result.returncode, result.stdout.strip()

    wait_for(lambda: answer('list', 'pods', '-n', namespace) == (0, 'yes'), within=30)  # a real server's cache
    assert answer('get', 'configmaps', '-n', namespace) == (0, 'yes')
    assert answer('delete', 'pods', '-n', namespace) == (1, 'no')
    assert answer('get', 'secrets', '-n', namespace) == (1, 'no')   # view leaves Secrets out
    assert answer('list', 'pods', '-n', 'default') == (1, 'no')


def test_auth_can_i_list(kubectl: Kubectl) -> None:
    result = kubectl('auth', 'can-i', '--list')
    assert result.returncode == 0, result.stderr
    rows = _rows(result.stdout)
    assert rows[0] == ['Resources', 'Non-Resource URLs', 'Resource Names', 'Verbs']
    assert ['*.*', '[]', '[]', '[*]'] in rows


def test_auth_whoami(kubectl: Kubectl, cluster: Cluster) -> None:
    result = kubectl('auth', 'whoami', '-o', 'json')
    assert result.returncode == 0, result.stderr
    review = json.loads(result.stdout)
    assert review['kind'] == 'SelfSubjectReview' and review['apiVersion'] == 'authentication.k8s.io/v1'
    assert 'system:masters' in review['status']['userInfo']['groups']
    assert review['status']['userInfo']['username'] == (
        'kopf-envtest-admin' if backends.is_envtest(cluster) else 'kubernetes-admin')


def _review(raw: Http, path: str, kind: str, spec: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    group = 'authentication.k8s.io' if 'authentication' in path else 'authorization.k8s.io'
    code, _, body = raw.request('POST', path, {'apiVersion': f'{group}/v1', 'kind': kind, 'spec': spec})
    return code, body


SAR = '/apis/authorization.k8s.io/v1/subjectaccessreviews'
LSAR = '/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews'
SSAR = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews'
TOKENS = '/apis/authentication.k8s.io/v1/tokenreviews'


@pytest.mark.parametrize('path, kind, spec, field, message', [
    (SSAR, 'SelfSubjectAccessReview', {}, 'spec.resourceAttributes',
     'Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified'),
    (SAR, 'SubjectAccessReview', {'resourceAttributes': {'verb': 'list', 'resource': 'pods'}}, 'spec.user',
     'Invalid value: "": at least one of user or group must be specified'),
    (LSAR, 'LocalSubjectAccessReview', {'user': 'u', 'resourceAttributes': {'verb': 'list', 'resource': 'pods'}},
     'spec.resourceAttributes.namespace', 'Invalid value: "": must match metadata.namespace'),
    (LSAR, 'LocalSubjectAccessReview', {'user': 'u', 'resourceAttributes': {'namespace': 'other', 'verb': 'list',
                                                                            'resource': 'pods'}},
     'spec.resourceAttributes.namespace', 'Invalid value: "other": must match metadata.namespace'),
])
def test_invalid_reviews_as_real(raw: Http, path: str, kind: str, spec: dict[str, Any], field: str,
                                 message: str) -> None:
    code, status = _review(raw, path, kind, spec)
    assert (code, status['reason']) == (422, 'Invalid')
    assert status['message'] == f'.authorization.k8s.io "" is invalid: {field}: {message}'
    assert status['details'] == {'group': 'authorization.k8s.io', 'causes': [
        {'reason': 'FieldValueInvalid', 'message': message, 'field': field}]}


def test_token_reviews(raw: Http) -> None:
    code, status = _review(raw, TOKENS, 'TokenReview', {})
    assert (code, status['reason'], status['message']) == (400, 'BadRequest',
                                                          'token is required for TokenReview in authentication')
    code, review = _review(raw, TOKENS, 'TokenReview', {'token': 'no-such-token'})
    assert (code, review['status']) == (201, {'user': {}, 'error': 'invalid bearer token'})


def test_reviews_are_create_only_and_never_stored(raw: Http) -> None:
    code, _, status = raw.request('GET', SSAR)
    assert (code, status['reason']) == (405, 'MethodNotAllowed')
    code, review = _review(raw, SSAR, 'SelfSubjectAccessReview', {'resourceAttributes': {'verb': 'get',
                                                                                          'resource': 'pods'}})
    assert (code, review['status']['allowed'], review['spec']['resourceAttributes']['verb']) == (201, True, 'get')


@pytest.mark.emulator_only(reason='forbid() rules are the emulator\'s; a real server has RBAC')
def test_auth_can_i_follows_the_denials(kubectl: Kubectl, cluster: LocalCluster, raw: Http, namespace: str) -> None:
    cluster.forbid('delete', 'configmaps', namespace=namespace)
    cluster.forbid('*', 'secrets', user='alice')
    try:
        denied = kubectl('auth', 'can-i', 'delete', 'cm', '-n', namespace)
        assert (denied.returncode, denied.stdout.strip()) == (1, 'no - denied by a forbid() rule of the local cluster')
        assert kubectl('auth', 'can-i', 'delete', 'cm', '-n', 'default').stdout.strip() == 'yes'
        assert kubectl('auth', 'can-i', 'get', 'secrets', '--as', 'alice').stdout.strip().startswith('no')
        assert kubectl('auth', 'can-i', 'get', 'secrets').stdout.strip() == 'yes'
        forbidden = kubectl('get', 'secrets', '--as', 'alice')   # as the request itself would be
        assert 'User "alice" cannot list resource "secrets"' in forbidden.stderr
        code, review = _review(raw, SAR, 'SubjectAccessReview', {'user': 'alice', 'resourceAttributes': {
            'verb': 'list', 'resource': 'secrets', 'namespace': 'default'}})
        assert (code, review['status']['allowed'], review['status']['denied']) == (201, False, True)
        listed = kubectl('auth', 'can-i', '--list', '-n', namespace)
        assert 'except what forbid() rules of the local cluster deny' in listed.stdout + listed.stderr
        assert kubectl('auth', 'whoami', '--as', 'alice', '-o', 'jsonpath={.status.userInfo.username}'
                       ).stdout == 'alice'
    finally:
        cluster.allow_all()
