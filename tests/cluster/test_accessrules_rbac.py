"""RBAC over HTTP on the local cluster: who is refused what, tokens from TokenRequest, impersonation, escalation,
aggregation by the controller, quotas and managedFields — the requests a real server answers the same way
(tests/fidelity/differential/ compares them with one on envtest)."""
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from kopf.testing import LocalCluster

from ..waiting import wait_for

RBAC = '/apis/rbac.authorization.k8s.io/v1'


@pytest.fixture(scope='module')
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster() as local:
        yield local


def call(cluster: LocalCluster, method: str, path: str, body: Any = None, **headers: str) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    sent = urllib.request.Request(cluster.url + path, data=data, method=method,
                                  headers={'Content-Type': 'application/json', **headers})
    try:
        with urllib.request.urlopen(sent, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def as_(user: str, group: str | None = None) -> dict[str, str]:
    return {'Impersonate-User': user, **({'Impersonate-Group': group} if group else {})}


def test_users_get_only_what_is_bound(cluster: LocalCluster) -> None:
    code, body = call(cluster, 'GET', '/api/v1/namespaces/default/configmaps', **as_('alice'))
    assert (code, body['message']) == (403, 'configmaps is forbidden: User "alice" cannot list resource "configmaps" '
                                              'in API group "" in the namespace "default"')
    code, body = call(cluster, 'GET', '/api/v1/nodes', **as_('alice'))
    assert body['message'].endswith('cannot list resource "nodes" in API group "" at the cluster scope')
    code, body = call(cluster, 'GET', '/apis/no.such/v1/things', **as_('alice'))
    assert (code, body['details']) == (403, {'group': 'no.such', 'kind': 'things'})   # before routing: no 404
    assert call(cluster, 'GET', '/apis', **as_('alice'))[0] == 200   # system:discovery
    binding = {'metadata': {'name': 'alice-view'}, 'roleRef': {'kind': 'ClusterRole', 'name': 'view'},
               'subjects': [{'kind': 'User', 'name': 'alice'}]}
    assert call(cluster, 'POST', f'{RBAC}/namespaces/default/rolebindings', binding)[0] == 201
    assert call(cluster, 'GET', '/api/v1/namespaces/default/configmaps', **as_('alice'))[0] == 200
    code, body = call(cluster, 'POST', '/api/v1/namespaces/default/configmaps', {'metadata': {'name': 'x'}},
                      **as_('alice'))
    assert code == 403 and 'cannot create resource "configmaps"' in body['message']


def test_tokens_impersonation_and_escalation(cluster: LocalCluster) -> None:
    assert call(cluster, 'POST', '/api/v1/namespaces/default/serviceaccounts', {'metadata': {'name': 'bot'}})[0] == 201
    code, issued = call(cluster, 'POST', '/api/v1/namespaces/default/serviceaccounts/bot/token', {'spec': {}})
    assert code == 201 and issued['spec']['expirationSeconds'] == 3600
    bearer = {'Authorization': f'Bearer {issued["status"]["token"]}'}
    code, me = call(cluster, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {}, **bearer)
    assert me['status']['userInfo']['username'] == 'system:serviceaccount:default:bot'
    code, body = call(cluster, 'GET', '/api/v1/namespaces/default/pods', **bearer, **as_('alice'))
    assert (code, body['message']) == (403, 'users "alice" is forbidden: User "system:serviceaccount:default:bot" '
                                              'cannot impersonate resource "users" in API group "" '
                                              'at the cluster scope')
    making = {'verbs': ['create'], 'apiGroups': ['rbac.authorization.k8s.io'], 'resources': ['roles']}
    role = {'metadata': {'name': 'maker'}, 'rules': [making]}
    assert call(cluster, 'POST', f'{RBAC}/namespaces/default/roles', role)[0] == 201
    binding = {'metadata': {'name': 'bot-makes'}, 'roleRef': {'kind': 'Role', 'name': 'maker'},
               'subjects': [{'kind': 'ServiceAccount', 'name': 'bot'}]}
    assert call(cluster, 'POST', f'{RBAC}/namespaces/default/rolebindings', binding)[0] == 201
    reading = {'verbs': ['get'], 'apiGroups': [''], 'resources': ['secrets']}
    greedy = {'metadata': {'name': 'greedy'}, 'rules': [reading]}
    code, body = call(cluster, 'POST', f'{RBAC}/namespaces/default/roles', greedy, **bearer)
    assert code == 403 and body['message'].endswith('is attempting to grant RBAC permissions not currently held:\n'
                                                    '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}')
    call(cluster, 'DELETE', '/api/v1/namespaces/default/serviceaccounts/bot')
    assert call(cluster, 'GET', '/api/v1/namespaces/default/pods', **bearer)[0] == 200   # as the admin: no auth here


def test_aggregation_quotas_and_managed_fields(cluster: LocalCluster) -> None:
    part = {'metadata': {'name': 'kex-viewer', 'labels': {'rbac.authorization.k8s.io/aggregate-to-view': 'true'}},
            'rules': [{'verbs': ['get'], 'apiGroups': ['kopf.dev'], 'resources': ['kopfexamples']}]}
    assert call(cluster, 'POST', f'{RBAC}/clusterroles', part, **{'User-Agent': 'tester/1.0'})[0] == 201
    wait_for(lambda: 'kopfexamples' in json.dumps(call(cluster, 'GET', f'{RBAC}/clusterroles/view')[1]['rules']))
    quota = {'metadata': {'name': 'q'}, 'spec': {'hard': {'count/configmaps': '1'}}}
    assert call(cluster, 'POST', '/api/v1/namespaces/default/resourcequotas', quota)[0] == 201
    wait_for(lambda: (call(cluster, 'GET', '/api/v1/namespaces/default/resourcequotas/q')[1].get('status') or {})
             .get('used'))
    used = call(cluster, 'GET', '/api/v1/namespaces/default/resourcequotas/q')[1]['status']['used']['count/configmaps']
    code, body = call(cluster, 'POST', '/api/v1/namespaces/default/configmaps', {'metadata': {'name': 'c2'}})
    if used == '1':   # the kube-root-ca.crt of the namespace is there already
        assert (code, body['message']) == (403, 'configmaps "c2" is forbidden: exceeded quota: q, requested: '
                                                 'count/configmaps=1, used: count/configmaps=1, '
                                                 'limited: count/configmaps=1')
    created = call(cluster, 'GET', f'{RBAC}/clusterroles/kex-viewer')[1]
    assert created['metadata']['managedFields'][0]['manager'] == 'tester'
