"""Behaviours that Kubernetes' own conformance specs (`make conformance`, tools/conformance) expect of the local
cluster, each reduced to its essence: the spec's name is in each test's docstring."""
import http.client
import json
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest

from kopf.testing import LocalCluster

from ..waiting import wait_for

Obj = dict[str, Any]


def _call(cluster: LocalCluster, method: str, path: str, body: Any = None,
          content_type: str = 'application/json') -> tuple[int, Any]:
    parsed = urllib.parse.urlparse(cluster.url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)
    conn.request(method, path, body=None if body is None else json.dumps(body), headers={'Content-Type': content_type})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, json.loads(data) if data else None


@pytest.fixture(scope='module')
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster() as running:
        yield running


CONFIGMAPS = '/api/v1/namespaces/default/configmaps'


def test_foreground_deletion_is_not_blocked_by_a_dependency_cycle(cluster: LocalCluster) -> None:
    """Garbage collector should not be blocked by dependency circle [Conformance]: three objects, each owned
    by the next with `blockOwnerDeletion: true`; a foreground deletion of one deletes all three."""
    uids = {}
    for name in ('cyc1', 'cyc2', 'cyc3'):
        status, created = _call(cluster, 'POST', CONFIGMAPS, {'metadata': {'name': name}})
        assert status == 201, created
        uids[name] = created['metadata']['uid']
    for name, owner in (('cyc1', 'cyc3'), ('cyc2', 'cyc1'), ('cyc3', 'cyc2')):
        ref = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'name': owner, 'uid': uids[owner],
               'controller': True, 'blockOwnerDeletion': True}
        status, _ = _call(cluster, 'PATCH', f'{CONFIGMAPS}/{name}', {'metadata': {'ownerReferences': [ref]}},
                          'application/strategic-merge-patch+json')
        assert status == 200
    status, _ = _call(cluster, 'DELETE', f'{CONFIGMAPS}/cyc1',
                      {'propagationPolicy': 'Foreground', 'preconditions': {'uid': uids['cyc1']}})
    assert status == 200

    def gone() -> bool:
        names = {cm['metadata']['name'] for cm in cluster.list('v1', 'ConfigMap', 'default')}
        return not names & set(uids)

    wait_for(gone, within=30)


def test_a_quota_status_edited_by_hand_is_reset_by_the_periodic_resync() -> None:
    """ResourceQuota should apply changes to a resourcequota status [Conformance]: a status patched to other
    hard limits stays until the controller's full resync (`quota_resync`) puts `status.hard = spec.hard` back."""
    with LocalCluster(quota_resync=1.0) as cluster:
        path = '/api/v1/namespaces/default/resourcequotas'
        quota = {'metadata': {'name': 'q'}, 'spec': {'hard': {'cpu': '1', 'memory': '1Gi'}}}
        assert _call(cluster, 'POST', path, quota)[0] == 201
        wait_for(lambda: (cluster.get('v1', 'ResourceQuota', 'q', 'default') or {}).get('status', {}).get('hard'))
        hard = {'status': {'hard': {'cpu': '2', 'memory': '2Gi'}}}
        status, patched = _call(cluster, 'PATCH', f'{path}/q/status', hard, 'application/strategic-merge-patch+json')
        assert status == 200 and patched['status']['hard'] == {'cpu': '2', 'memory': '2Gi'}

        def reset() -> bool:
            current = cluster.get('v1', 'ResourceQuota', 'q', 'default') or {}
            return bool(current['status']['hard'] == {'cpu': '1', 'memory': '1Gi'})

        wait_for(reset, within=30)


def _crd(plural: str, schema: Obj | None) -> Obj:
    version: Obj = {'name': 'v1', 'served': True, 'storage': True}
    if schema is not None:
        version['schema'] = {'openAPIV3Schema': schema}
    return {'metadata': {'name': f'{plural}.example.com'},
            'spec': {'group': 'example.com', 'scope': 'Namespaced', 'versions': [version],
                     'names': {'plural': plural, 'kind': plural.capitalize()[:-1]}}}


GVK = [{'group': 'example.com', 'kind': 'Thing', 'version': 'v1'}]


@pytest.mark.parametrize('schema', [None, {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True},
                                    {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True,
                                     'properties': {'spec': {'type': 'object'}}}])
def test_v2_of_a_kind_preserving_unknown_fields_at_the_root_is_only_an_object(schema: Obj | None) -> None:
    """CustomResourcePublishOpenAPI works for CRD without validation schema [Conformance] (and "... preserving
    unknown fields at the schema root"): the v2 definition is `type: object` and the GVK, nothing else."""
    from kopf._cluster.openapi import documents
    definitions = documents.v2_document([_crd('things', schema)])['definitions']
    assert definitions['com.example.v1.Thing'] == {'type': 'object', 'x-kubernetes-group-version-kind': GVK}


def test_v2_of_a_kind_drops_what_swagger_cannot_say() -> None:
    """CustomResourcePublishOpenAPI works for CRD preserving unknown fields in an embedded object [Conformance]:
    the apiextensions server's `ToStructuralOpenAPIV2`, node by node."""
    from kopf._cluster.openapi import documents
    schema = {'type': 'object', 'properties': {'spec': {
        'type': 'object', 'required': ['a', 'n'], 'properties': {
            'a': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True, 'description': 'A',
                  'properties': {'x': {'type': 'string'}}},
            'n': {'type': 'object', 'nullable': True, 'properties': {'x': {'type': 'string'}}},
            'l': {'type': 'array', 'x-kubernetes-preserve-unknown-fields': True, 'items': {'type': 'string'}},
            's': {'type': 'string', 'anyOf': [{'pattern': 'a'}, {'pattern': 'b'}]}}}}}
    definition = documents.v2_document([_crd('things', schema)])['definitions']['com.example.v1.Thing']
    assert definition['properties']['spec'] == {'type': 'object', 'required': ['a'], 'properties': {
        'a': {'x-kubernetes-preserve-unknown-fields': True, 'description': 'A'},
        'n': {},
        'l': {'x-kubernetes-preserve-unknown-fields': True},
        's': {'type': 'string'}}}
    assert set(definition['properties']) == {'apiVersion', 'kind', 'metadata', 'spec'}
    assert definition['properties']['metadata']['$ref'].endswith('/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta')
    assert definition['type'] == 'object' and definition['x-kubernetes-group-version-kind'] == GVK
    v3 = documents.v3_document('apis/example.com/v1', [_crd('things', schema)])
    assert v3 is not None   # v3 keeps all of it
    assert v3['components']['schemas']['com.example.v1.Thing']['properties']['spec'] == schema['properties']['spec']


def test_a_binding_matching_only_namespaces_applies_to_all_its_policy_matches(cluster: LocalCluster) -> None:
    """ValidatingAdmissionPolicy should validate against a Deployment [Conformance]: a binding's
    `matchResources` with a `namespaceSelector` and no `resourceRules` does not narrow the resources."""
    namespace = {'metadata': {'name': 'vap', 'labels': {'vap': 'true'}}}
    assert _call(cluster, 'POST', '/api/v1/namespaces', namespace)[0] == 201
    policies = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies'
    policy = {'metadata': {'name': 'replicas.example.com'}, 'spec': {
        'matchConstraints': {'namespaceSelector': {'matchLabels': {'vap': 'true'}}, 'resourceRules': [
            {'apiGroups': ['apps'], 'apiVersions': ['v1'], 'resources': ['deployments'], 'operations': ['CREATE']}]},
        'validations': [{'expression': 'object.spec.replicas > 1'}]}}
    binding = {'metadata': {'name': 'replicas.example.com'}, 'spec': {
        'policyName': 'replicas.example.com', 'validationActions': ['Deny'],
        'matchResources': {'namespaceSelector': {'matchLabels': {'vap': 'true'}}}}}
    assert _call(cluster, 'POST', policies, policy)[0] == 201
    assert _call(cluster, 'POST', policies.replace('policies', 'policybindings'), binding)[0] == 201
    try:
        labels = {'app': 'x'}
        template = {'metadata': {'labels': labels}, 'spec': {'containers': [{'name': 'c', 'image': 'i'}]}}
        deployment = {'metadata': {'name': 'one'},
                      'spec': {'replicas': 1, 'selector': {'matchLabels': labels}, 'template': template}}
        status, body = _call(cluster, 'POST', '/apis/apps/v1/namespaces/vap/deployments', deployment)
        assert (status, body['reason']) == (422, 'Invalid'), body
        assert body['message'].endswith("denied request: failed expression: object.spec.replicas > 1")
    finally:
        _call(cluster, 'DELETE', f'{policies.replace("policies", "policybindings")}/replicas.example.com')
        _call(cluster, 'DELETE', f'{policies}/replicas.example.com')


def test_a_continue_token_expires_with_the_periodic_compaction_and_offers_an_inconsistent_rest() -> None:
    """Servers with support for API chunking should support continue listing from the last key if the original
    version has been compacted away, though the list is inconsistent [Slow] [Conformance]: the history is
    compacted every `compaction_interval` (to what the previous compaction saw); the 410 of an expired token
    carries a token that continues at the current resourceVersion."""
    with LocalCluster(compaction_interval=0.3) as cluster:
        for index in range(4):
            assert _call(cluster, 'POST', CONFIGMAPS, {'metadata': {'name': f'a{index}'}})[0] == 201
        status, first = _call(cluster, 'GET', f'{CONFIGMAPS}?limit=2')
        assert status == 200 and [cm['metadata']['name'] for cm in first['items']] == ['a0', 'a1']
        assert _call(cluster, 'POST', CONFIGMAPS, {'metadata': {'name': 'a4'}})[0] == 201
        token = first['metadata']['continue']
        expired = wait_for(lambda: (lambda answer: answer if answer[0] == 410 else None)(
            _call(cluster, 'GET', f'{CONFIGMAPS}?limit=2&continue={token}')), within=30, interval=0.1)
        body = expired[1]
        assert body['reason'] == 'Expired' and body['message'].startswith('The provided continue parameter is too old')
        status, rest = _call(cluster, 'GET', f'{CONFIGMAPS}?limit=2&continue={body["metadata"]["continue"]}')
        assert status == 200 and [cm['metadata']['name'] for cm in rest['items']] == ['a2', 'a3']
        assert rest['metadata']['resourceVersion'] != first['metadata']['resourceVersion']
        status, last = _call(cluster, 'GET', f'{CONFIGMAPS}?limit=2&continue={rest["metadata"]["continue"]}')
        names = [cm['metadata']['name'] for cm in last['items']]
        assert status == 200 and names == ['a4', 'kube-root-ca.crt']   # inconsistent: a4 is newer than the 1st page
        assert last['metadata']['resourceVersion'] == rest['metadata']['resourceVersion']


def test_no_compaction_when_its_interval_is_zero() -> None:
    from kopf._cluster.controllers import sweeping
    from kopf._cluster.pipeline import kindrules
    from kopf._cluster.pipeline.state import State
    for interval, compacted in ((0.0, 0), (300.0, 1)):
        state = State(settings=kindrules.Settings(compaction_interval=interval))
        state.compaction = (-1000.0, 1)   # long due, and the previous compaction saw rv 1
        sweeping.compact(state)
        assert state.store.compacted == compacted


def test_compactions_expire_the_history_of_a_quiet_cluster_too() -> None:
    """As the real compactor's own etcd write does, each compaction takes a resourceVersion: a token of a quiet
    cluster's list expires by the second compaction after it."""
    from kopf._cluster.controllers import sweeping
    from kopf._cluster.pipeline import kindrules
    from kopf._cluster.pipeline.state import State
    state = State(settings=kindrules.Settings(compaction_interval=300.0))
    listed = state.store.rv
    for _ in range(2):
        state.compaction = (-1000.0, state.compaction[1])   # due
        sweeping.compact(state)
    assert state.store.rv == listed + 2 and state.store.compacted == listed + 1 > listed


def test_the_stored_metadata_values_are_not_pruned_again_but_new_ones_are() -> None:
    from kopf._cluster.openapi import conforming
    stored = {'metadata': {'name': 'x', 'ownerReferences': [{'uid': 'u', 'name': 'o', 'kind': 'K',
                                                              'apiVersion': 'v1'}]}}
    same = {'metadata': dict(stored['metadata'])}
    assert conforming.normalise_metadata(same, stored) == []
    changed = {'metadata': {**stored['metadata'], 'ownerReferences': [{'uid': 'u', 'unknown': 1}]}}
    assert conforming.normalise_metadata(changed, stored) == [('metadata', 'ownerReferences', '0', 'unknown')]
    assert changed['metadata']['ownerReferences'] == [{'uid': 'u'}]
