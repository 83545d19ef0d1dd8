"""Deletion through kubectl 1.32 and the `kubernetes` client: namespaces, garbage collection by
ownerReferences with background, foreground and orphan propagation, finalizers (none added while deleting;
`kubectl delete` waits until the last one is removed)."""
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from kopf.testing import LocalCluster
from tests import backends, waiting
from tests.fidelity.conftest import Kubectl

ARGS = ('kopf.dev', 'v1', 'default', 'kopfexamples')


def _eventually(check: Callable[[], bool], timeout: float = 10) -> None:
    waiting.wait_for(check, within=timeout, interval=0.05)  # the one polling helper, with this file's defaults


def _kex(name: str, namespace: str = 'default', finalizers: list[str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {'name': name, 'namespace': namespace}
    if finalizers:
        meta['finalizers'] = finalizers
    return {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': meta, 'spec': {}}


def _owned(cluster: LocalCluster, name: str, owner: dict[str, Any], finalizers: list[str] | None = None,
           block: bool = True) -> None:
    ref = {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'name': owner['metadata']['name'],
           'uid': owner['metadata']['uid'], 'blockOwnerDeletion': block}
    meta: dict[str, Any] = {'name': name, 'ownerReferences': [ref]}
    if finalizers:
        meta['finalizers'] = finalizers
    cluster.apply({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': meta})


def test_kubectl_namespace_deletion(kubectl: Kubectl, cluster: LocalCluster) -> None:
    assert kubectl('create', 'namespace', 't37').returncode == 0
    cluster.apply(_kex('inside', 't37', ['x/y']))
    result = kubectl('delete', 'namespace', 't37', '--wait=false')
    assert result.returncode == 0 and result.stdout.strip() == 'namespace "t37" deleted', result.stderr
    assert kubectl('get', 'namespace', 't37', '-o', 'jsonpath={.status.phase}').stdout == 'Terminating'
    late = kubectl('-n', 't37', 'create', 'configmap', 'late')
    assert late.returncode == 1
    assert ('error: failed to create configmap: configmaps "late" is forbidden: unable to create new content in '
            'namespace t37 because it is being terminated') in late.stderr
    # kube-controller-manager's namespace controller marks the contents a moment later; the emulator at once.
    _eventually(lambda: bool(kubectl('-n', 't37', 'get', 'kex', 'inside', '-o',
                                     'jsonpath={.metadata.deletionTimestamp}').stdout), timeout=30)
    assert kubectl('get', 'namespace', 't37').returncode == 0     # held by the CR's finalizer
    patch = kubectl('-n', 't37', 'patch', 'kex', 'inside', '--type=merge', '-p', '{"metadata":{"finalizers":null}}')
    assert patch.returncode == 0, patch.stderr
    waited = kubectl('wait', '--for=delete', 'namespace/t37', '--timeout=40s')
    assert waited.returncode == 0, waited.stderr
    assert 'NotFound' in kubectl('get', 'namespace', 't37').stderr


def test_client_namespace_deletion(core: Any, custom: Any) -> None:
    kubernetes = pytest.importorskip('kubernetes')
    core.create_namespace({'metadata': {'name': 'c37'}})
    core.create_namespaced_config_map('c37', {'metadata': {'name': 'cm'}})
    custom.create_namespaced_custom_object('kopf.dev', 'v1', 'c37', 'kopfexamples', _kex('cr', 'c37'))
    core.delete_namespace('c37')

    def gone() -> bool:
        try:
            core.read_namespace('c37')
        except kubernetes.client.ApiException as exc:
            return bool(exc.status == 404)
        return False

    _eventually(gone)
    with pytest.raises(kubernetes.client.ApiException) as exc:
        core.read_namespaced_config_map('cm', 'c37')
    assert exc.value.status == 404


def test_kubectl_background_and_foreground(kubectl: Kubectl, cluster: LocalCluster) -> None:
    owner = cluster.apply(_kex('bg-owner'))[0]
    _owned(cluster, 'bg-child', owner)
    assert kubectl('delete', 'kex', 'bg-owner').returncode == 0           # kubectl's default: background
    assert kubectl('wait', '--for=delete', 'configmap/bg-child', '--timeout=10s').returncode == 0

    owner = cluster.apply(_kex('fg-owner'))[0]
    _owned(cluster, 'fg-child', owner, ['x/y'])
    result = kubectl('delete', 'kex', 'fg-owner', '--cascade=foreground', '--wait=false')
    assert result.returncode == 0, result.stderr
    _eventually(lambda: bool(kubectl('get', 'cm', 'fg-child', '-o', 'jsonpath={.metadata.deletionTimestamp}').stdout))
    finalizers = kubectl('get', 'kex', 'fg-owner', '-o', 'jsonpath={.metadata.finalizers}').stdout
    assert finalizers == '["foregroundDeletion"]'                        # the owner waits for its dependents
    kubectl('patch', 'cm', 'fg-child', '--type=merge', '-p', '{"metadata":{"finalizers":null}}')
    assert kubectl('wait', '--for=delete', 'kex/fg-owner', '--timeout=10s').returncode == 0
    assert 'NotFound' in kubectl('get', 'cm', 'fg-child').stderr


def test_client_orphan_and_background(core: Any, custom: Any, cluster: LocalCluster) -> None:
    owner = custom.create_namespaced_custom_object(*ARGS, _kex('or-client'))
    _owned(cluster, 'or-client-child', owner)
    custom.delete_namespaced_custom_object(*ARGS, 'or-client', propagation_policy='Orphan')
    _eventually(lambda: cluster.get('kopf.dev/v1', 'KopfExample', 'or-client', 'default') is None)
    child = core.read_namespaced_config_map('or-client-child', 'default')
    assert child.metadata.owner_references is None or child.metadata.owner_references == []

    owner = custom.create_namespaced_custom_object(*ARGS, _kex('bg-client'))
    _owned(cluster, 'bg-client-child', owner)
    custom.delete_namespaced_custom_object(*ARGS, 'bg-client', propagation_policy='Background')
    _eventually(lambda: cluster.get('v1', 'ConfigMap', 'bg-client-child', 'default') is None)


def test_no_new_finalizers_when_deleting_via_kubectl_and_client(kubectl: Kubectl, custom: Any,
                                                                cluster: LocalCluster) -> None:
    kubernetes = pytest.importorskip('kubernetes')
    cluster.apply(_kex('dying23', finalizers=['a/b']))
    assert kubectl('delete', 'kex', 'dying23', '--wait=false').returncode == 0
    result = kubectl('patch', 'kex', 'dying23', '--type=merge', '-p', '{"metadata":{"finalizers":["a/b","c/d"]}}')
    assert result.returncode == 1
    assert ('The KopfExample "dying23" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added '
            'if the object is being deleted, found new finalizers []string{"c/d"}') in result.stderr
    with pytest.raises(kubernetes.client.ApiException) as exc:
        custom.patch_namespaced_custom_object(*ARGS, 'dying23', {'metadata': {'finalizers': ['a/b', 'e/f']}})
    assert exc.value.status == 422
    custom.patch_namespaced_custom_object(*ARGS, 'dying23', {'metadata': {'finalizers': None}})


def test_client_watches_until_deleted(custom: Any, cluster: LocalCluster) -> None:
    kubernetes = pytest.importorskip('kubernetes')
    cluster.apply(_kex('slow26', finalizers=['kopf.dev/slow']))
    marked = custom.delete_namespaced_custom_object(*ARGS, 'slow26')
    assert marked['metadata']['deletionTimestamp']
    listed = custom.list_namespaced_custom_object(*ARGS, field_selector='metadata.name=slow26')
    events: list[str] = []

    def watch() -> None:
        stream = kubernetes.watch.Watch().stream(
            custom.list_namespaced_custom_object, *ARGS, field_selector='metadata.name=slow26',
            resource_version=listed['metadata']['resourceVersion'], timeout_seconds=10)
        for event in stream:
            events.append(event['type'])
            if event['type'] == 'DELETED':
                break

    thread = threading.Thread(target=watch)
    thread.start()
    if backends.is_envtest(cluster):  # no request log to see the watch open: give it the time
        time.sleep(2)
    else:
        _eventually(lambda: any('watch=true' in r['query'] and 'slow26' in r['query']
                                for r in cluster.request_log()))
    custom.patch_namespaced_custom_object(*ARGS, 'slow26', {'metadata': {'finalizers': None}})
    thread.join(timeout=10)
    assert events == ['DELETED']


def test_foreground_waits_only_for_blocking_dependents(custom: Any, cluster: LocalCluster) -> None:
    owner = custom.create_namespaced_custom_object(*ARGS, _kex('fg-client'))
    _owned(cluster, 'fg-loose', owner, ['x/y'], block=False)
    child = custom.create_namespaced_custom_object(*ARGS, _kex('fg-child'))     # a blocking chain of two
    child = custom.patch_namespaced_custom_object(*ARGS, 'fg-child', {'metadata': {'ownerReferences': [
        {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'name': 'fg-client', 'uid': owner['metadata']['uid'],
         'blockOwnerDeletion': True}]}})
    _owned(cluster, 'fg-grandchild', child, ['x/y'])
    custom.delete_namespaced_custom_object(*ARGS, 'fg-client', propagation_policy='Foreground')
    _eventually(lambda: bool((cluster.get('v1', 'ConfigMap', 'fg-grandchild', 'default') or {})
                             .get('metadata', {}).get('deletionTimestamp')))
    held = cluster.get('kopf.dev/v1', 'KopfExample', 'fg-client', 'default')
    assert held is not None and held['metadata']['finalizers'] == ['foregroundDeletion']
    middle = cluster.get('kopf.dev/v1', 'KopfExample', 'fg-child', 'default')
    assert middle is not None and middle['metadata']['finalizers'] == ['foregroundDeletion']   # nested: foreground
    cluster.apply({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'fg-grandchild', 'finalizers': None}})
    _eventually(lambda: cluster.get('kopf.dev/v1', 'KopfExample', 'fg-client', 'default') is None)
    loose = cluster.get('v1', 'ConfigMap', 'fg-loose', 'default')      # not blocking: its finalizer held nobody
    assert loose is not None and loose['metadata']['deletionTimestamp']
    cluster.apply({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'fg-loose', 'finalizers': None}})


def test_deletecollection_through_the_client(core: Any, cluster: LocalCluster) -> None:
    for name, tier in [('dcc1', 'x'), ('dcc2', 'x'), ('dcc3', 'y')]:
        cluster.apply({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': name, 'labels': {'dcc': tier}}})
    core.delete_collection_namespaced_config_map('default', label_selector='dcc=x')
    left = core.list_namespaced_config_map('default', label_selector='dcc')
    assert [item.metadata.name for item in left.items] == ['dcc3']
