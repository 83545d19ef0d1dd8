"""Server-side apply (`application/apply-patch+yaml`): managers and conflicts, via kubectl and the client."""
import json
import pathlib
from typing import Any

import pytest
import yaml

from kopf.testing import LocalCluster
from tests import backends
from tests.fidelity.conftest import Http, Kubectl

CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\ndata: {data}\n'


def _apply(kubectl: Kubectl, name: str, data: dict[str, str], *flags: str) -> Any:
    return kubectl('apply', '--server-side', *flags, '-f', '-', input=CM.format(name=name, data=json.dumps(data)))


def test_kubectl_server_side_apply(kubectl: Kubectl, cluster: LocalCluster) -> None:
    logged = not backends.is_envtest(cluster)  # the emulator's request log: what kubectl sent
    mark = len(cluster.request_log()) if logged else 0  # type: ignore[union-attr]
    result = _apply(kubectl, 'ssa1', {'a': '1', 'b': '2'})
    assert result.returncode == 0 and result.stdout.strip() == 'configmap/ssa1 serverside-applied', result.stderr
    if logged:
        patches = [r for r in cluster.request_log()[mark:] if r['method'] == 'PATCH']  # type: ignore[union-attr]
        assert patches[0]['contentType'] == 'application/apply-patch+yaml'
        assert 'fieldManager=kubectl' in patches[0]['query'] and patches[0]['code'] == 201

    result = _apply(kubectl, 'ssa1', {'a': '10'})          # the same manager: b is no longer applied, so it goes
    assert result.returncode == 0, result.stderr
    stored = cluster.get('v1', 'ConfigMap', 'ssa1', 'default')
    assert stored is not None and stored['data'] == {'a': '10'}

    result = _apply(kubectl, 'ssa1', {'a': '20'}, '--field-manager=other')
    assert result.returncode == 1
    assert 'Apply failed with 1 conflict: conflict with "kubectl": .data.a' in result.stderr
    assert '--force-conflicts' in result.stderr            # kubectl's own advice follows the server's message
    assert _apply(kubectl, 'ssa1', {'a': '10', 'x': '1'}, '--field-manager=other').returncode == 0   # co-owned

    result = _apply(kubectl, 'ssa1', {'a': '20'}, '--field-manager=other', '--force-conflicts')
    assert result.returncode == 0, result.stderr
    stored = cluster.get('v1', 'ConfigMap', 'ssa1', 'default')
    assert stored is not None and stored['data'] == {'a': '20'}   # x: no longer applied by "other"
    result = _apply(kubectl, 'ssa1', {'a': '10'})
    assert result.returncode == 1 and 'conflict with "other": .data.a' in result.stderr


def test_kubectl_apply_conflicts_with_an_update_manager(kubectl: Kubectl, cluster: LocalCluster) -> None:
    assert kubectl('create', 'configmap', 'ssa2', '--from-literal=a=1').returncode == 0
    assert kubectl('patch', 'configmap', 'ssa2', '-p', '{"data":{"b":"2"}}').returncode == 0
    result = _apply(kubectl, 'ssa2', {'a': '1', 'b': '3'})
    assert result.returncode == 1
    assert 'Apply failed with 1 conflict: conflict with "kubectl-patch" using v1: .data.b' in result.stderr
    result = _apply(kubectl, 'ssa2', {'a': '5', 'b': '3'})
    assert 'Apply failed with 2 conflicts: conflicts with "kubectl-create" using v1:\n- .data.a\n' \
           'conflicts with "kubectl-patch" using v1:\n- .data.b' in result.stderr


def test_client_server_side_apply_of_a_custom_resource(custom: Any) -> None:
    kubernetes = pytest.importorskip('kubernetes')
    body = {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': 'ssa-cr'},
            'spec': {'duration': '1m', 'items': ['a']}}
    args = ('kopf.dev', 'v1', 'default', 'kopfexamples', 'ssa-cr')
    custom.patch_namespaced_custom_object(*args, body, field_manager='first',   # 201: the client returns None
                                          _content_type='application/apply-patch+yaml')
    assert custom.get_namespaced_custom_object(*args)['spec'] == {'duration': '1m', 'items': ['a']}
    body['spec'] = {'duration': '2m'}
    with pytest.raises(kubernetes.client.ApiException) as exc:
        custom.patch_namespaced_custom_object(*args, body, field_manager='second',
                                              _content_type='application/apply-patch+yaml')
    status = json.loads(exc.value.body)
    assert exc.value.status == 409 and status['reason'] == 'Conflict'
    assert status['details']['causes'] == [{'reason': 'FieldManagerConflict', 'message': 'conflict with "first"',
                                            'field': '.spec.duration'}]
    forced = custom.patch_namespaced_custom_object(*args, body, field_manager='second', force=True,
                                                   _content_type='application/apply-patch+yaml')
    assert forced['spec'] == {'duration': '2m', 'items': ['a']}   # the items stay with "first"


def test_apply_requires_a_field_manager(raw: Http) -> None:
    path = '/api/v1/namespaces/default/configmaps/ssa3'
    body = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'ssa3'}}
    status, _, error = raw.request('PATCH', path, body, 'application/apply-patch+yaml')
    assert status == 422
    assert error['message'] == 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: ' \
                               'is required for apply patch'
    status, _, error = raw.request('PATCH', f'{path}?force=true&fieldManager=x', {}, 'application/merge-patch+json')
    assert status == 422 and error['details']['causes'][0]['field'] == 'force'


def test_kubectl_server_side_apply_of_builtins(kubectl: Kubectl, cluster: LocalCluster) -> None:
    deployment = {'apiVersion': 'apps/v1', 'kind': 'Deployment', 'metadata': {'name': 'ssa-dep'},
                  'spec': {'replicas': 1, 'selector': {'matchLabels': {'a': 'b'}},
                           'template': {'metadata': {'labels': {'a': 'b'}}, 'spec': {'containers': [
                               {'name': 'c', 'image': 'nginx', 'ports': [{'containerPort': 80}]}]}}}}
    service = {'apiVersion': 'v1', 'kind': 'Service', 'metadata': {'name': 'ssa-svc'},
               'spec': {'selector': {'a': 'b'}, 'ports': [{'port': 80}]}}
    for obj in (deployment, service, service):     # ports' protocol defaults to TCP: the same item, not a second
        result = kubectl('apply', '--server-side', '-f', '-', input=yaml.safe_dump(obj))
        assert result.returncode == 0, result.stderr
    stored = cluster.get('v1', 'Service', 'ssa-svc', 'default')
    assert stored is not None and [p['port'] for p in stored['spec']['ports']] == [80]
    deployment['spec']['template']['spec']['containers'][0]['image'] = 'nginx:2'
    assert kubectl('apply', '--server-side', '-f', '-', input=yaml.safe_dump(deployment)).returncode == 0
    assert kubectl('scale', 'deployment', 'ssa-dep', '--replicas=3').returncode == 0
    result = kubectl('apply', '--server-side', '-f', '-', input=yaml.safe_dump(deployment))
    agent = pathlib.Path(kubectl.base[0]).name     # kubectl names unnamed managers after its binary
    assert (f'Apply failed with 1 conflict: conflict with "{agent}" with subresource "scale" using apps/v1: '
            '.spec.replicas') in result.stderr
    stored = cluster.get('apps/v1', 'Deployment', 'ssa-dep', 'default')
    assert stored is not None and stored['spec']['replicas'] == 3
    assert stored['spec']['template']['spec']['containers'][0]['image'] == 'nginx:2'
