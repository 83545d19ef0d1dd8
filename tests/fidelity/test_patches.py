"""Strategic-merge directives on built-ins through kubectl 1.32 and the `kubernetes` client; a client's patch of
a built-in is a strategic merge on both."""
import json
from typing import Any

import pytest

from kopf.testing import LocalCluster
from tests import backends
from tests.fidelity.conftest import Kubectl

DEPLOYMENT = {
    'apiVersion': 'apps/v1', 'kind': 'Deployment', 'metadata': {'name': 'smp'},
    'spec': {'selector': {'matchLabels': {'app': 'smp'}},
             'strategy': {'type': 'RollingUpdate', 'rollingUpdate': {'maxSurge': 1}},
             'template': {'metadata': {'labels': {'app': 'smp'}},
                          'spec': {'containers': [{'name': 'a', 'image': 'x'}, {'name': 'b', 'image': 'x'},
                                                  {'name': 'c', 'image': 'x'}]}}},
}


@pytest.mark.envtest_xfail(reason='"$bogus" in a strategic merge patch: kube-apiserver ignores it as an unknown '
                                   'field (kubectl warns), the emulator answers 400 "unknown patch directive"')
def test_kubectl_strategic_directives(kubectl: Kubectl, cluster: LocalCluster) -> None:
    cluster.apply(DEPLOYMENT)
    order = {'spec': {'template': {'spec': {
        '$setElementOrder/containers': [{'name': 'c'}, {'name': 'a'}],
        'containers': [{'name': 'b', '$patch': 'delete'}, {'name': 'a', 'image': 'y'}]}}}}
    result = kubectl('patch', 'deployment', 'smp', '--type', 'strategic', '-p', json.dumps(order))
    assert result.returncode == 0, result.stderr
    stored = cluster.get('apps/v1', 'Deployment', 'smp', 'default')
    assert stored is not None
    assert [(c['name'], c['image']) for c in stored['spec']['template']['spec']['containers']] == [('c', 'x'),
                                                                                                   ('a', 'y')]
    retain = {'spec': {'strategy': {'$retainKeys': ['type'], 'type': 'Recreate'}}}
    result = kubectl('patch', 'deployment', 'smp', '--type', 'strategic', '-p', json.dumps(retain))
    assert result.returncode == 0, result.stderr
    stored = cluster.get('apps/v1', 'Deployment', 'smp', 'default')
    assert stored is not None and stored['spec']['strategy'] == {'type': 'Recreate'}
    result = kubectl('patch', 'deployment', 'smp', '-p', '{"spec":{"$bogus":1}}')
    assert result.returncode == 1 and 'Error from server (BadRequest)' in result.stderr
    assert 'unknown patch directive: $bogus' in result.stderr


@pytest.mark.envtest_xfail(reason='"$patch: merge" on a map: kube-apiserver answers 500 ("unknown patch type: '
                                   'merge in map"), the emulator 400 BadRequest')
def test_client_strategic_directives(core: Any, cluster: LocalCluster) -> None:
    cluster.apply({'apiVersion': 'v1', 'kind': 'ConfigMap',
                   'metadata': {'name': 'smp-cm', 'finalizers': ['a/b', 'c/d']}, 'data': {'k': '1', 'l': '2'}})
    patched = core.patch_namespaced_config_map('smp-cm', 'default', {
        'metadata': {'$deleteFromPrimitiveList/finalizers': ['a/b']}, 'data': {'$patch': 'replace', 'x': '1'}})
    assert patched.metadata.finalizers == ['c/d'] and patched.data == {'x': '1'}
    kubernetes = __import__('kubernetes')
    try:
        core.patch_namespaced_config_map('smp-cm', 'default', {'data': {'$patch': 'merge'}})
    except kubernetes.client.ApiException as exc:
        assert exc.status == 400 and json.loads(exc.body)['reason'] == 'BadRequest'
    else:
        raise AssertionError('a map cannot be "$patch: merge"d')
    core.patch_namespaced_config_map('smp-cm', 'default', {'metadata': {'finalizers': None}})


def test_client_patch_of_a_builtin_is_strategic(core: Any, cluster: LocalCluster) -> None:
    cluster.apply({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'cm10-client'}, 'data': {'k': '1'}})
    logged = not backends.is_envtest(cluster)  # the emulator's request log: the patch's content type
    mark = len(cluster.request_log()) if logged else 0  # type: ignore[union-attr]
    patched = core.patch_namespaced_config_map('cm10-client', 'default', {'data': {'k': '2'}})
    assert patched.data == {'k': '2'}
    if logged:
        patches = [r for r in cluster.request_log()[mark:] if r['method'] == 'PATCH']  # type: ignore[union-attr]
        assert [p['contentType'] for p in patches] == ['application/strategic-merge-patch+json']
