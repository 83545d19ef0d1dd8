"""Workloads as real clients see them: kubectl's rollout, scale, undo, wait, expose, `get -o wide`, and the
official `kubernetes` client reading the same statuses; garbage collection of Pods with their ReplicaSet.

Pods run only in the local cluster (envtest has kube-controller-manager but no scheduler or kubelet), so
the tests that need running Pods are `emulator_only`; what kube-controller-manager also produces (the
ReplicaSet of a Deployment, the Pods of a Job) is compared field by field on both backends.
"""
import json
import subprocess
from typing import Any

import pytest

from .. import backends
from ..backends import Cluster
from ..waiting import wait_for
from .conftest import Kubectl

RUNS_PODS = 'Pods run only in the local cluster (envtest has no scheduler or kubelet)'


def _json(result: subprocess.CompletedProcess[str]) -> Any:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _pods(kubectl: Kubectl, namespace: str, selector: str) -> list[dict[str, Any]]:
    return list(_json(kubectl('get', 'pods', '-n', namespace, '-l', selector, '-o', 'json'))['items'])


def _running(kubectl: Kubectl, namespace: str, selector: str, count: int) -> list[dict[str, Any]]:
    def check() -> list[dict[str, Any]] | None:
        pods = [p for p in _pods(kubectl, namespace, selector) if not p['metadata'].get('deletionTimestamp')]
        ready = [p for p in pods if p['status'].get('phase') == 'Running'
                 and all(c.get('ready') for c in p['status'].get('containerStatuses') or [])]
        return pods if len(pods) == count and len(ready) == count else None
    return wait_for(check, within=30)  # type: ignore[no-any-return]


@pytest.mark.kubectl
@pytest.mark.emulator_only(reason=RUNS_PODS)
def test_kubectl_rollout_scale_undo_restart(kubectl: Kubectl, namespace: str) -> None:
    created = kubectl('create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=2', '-n', namespace)
    assert created.returncode == 0, created.stderr
    status = kubectl('rollout', 'status', 'deployment/web', '-n', namespace, '--timeout=30s', timeout=40)
    assert status.returncode == 0, status.stderr
    assert 'successfully rolled out' in status.stdout
    pods = _running(kubectl, namespace, 'app=web', 2)
    assert all(p['spec']['nodeName'] == 'kopf-local-node' for p in pods)
    assert all(p['metadata']['labels'].get('pod-template-hash') for p in pods)

    scaled = kubectl('scale', 'deployment/web', '--replicas=4', '-n', namespace)
    assert scaled.returncode == 0, scaled.stderr
    _running(kubectl, namespace, 'app=web', 4)

    def rolled_out(command: tuple[str, ...], image: str, revision: str) -> None:
        changed = kubectl(*command, '-n', namespace)
        assert changed.returncode == 0, changed.stderr
        status = kubectl('rollout', 'status', 'deployment/web', '-n', namespace, '--timeout=30s', timeout=40)
        assert status.returncode == 0, status.stderr
        pods = _running(kubectl, namespace, 'app=web', 4)
        assert {p['spec']['containers'][0]['image'] for p in pods} == {image}
        deployment = _json(kubectl('get', 'deployment', 'web', '-n', namespace, '-o', 'json'))
        assert deployment['metadata']['annotations']['deployment.kubernetes.io/revision'] == revision
        assert deployment['status']['observedGeneration'] == deployment['metadata']['generation']

    rolled_out(('set', 'image', 'deployment/web', 'nginx=nginx:1.28'), 'nginx:1.28', '2')
    rolled_out(('rollout', 'undo', 'deployment/web'), 'nginx:1.27', '3')   # revision 1's ReplicaSet, as revision 3

    restarted = kubectl('rollout', 'restart', 'deployment/web', '-n', namespace)
    assert restarted.returncode == 0, restarted.stderr
    assert kubectl('rollout', 'status', 'deployment/web', '-n', namespace, '--timeout=30s', timeout=40).returncode == 0
    history = kubectl('rollout', 'history', 'deployment/web', '-n', namespace)
    assert history.returncode == 0, history.stderr
    assert '4' in history.stdout.split()


@pytest.mark.kubectl
@pytest.mark.emulator_only(reason=RUNS_PODS)
def test_kubectl_get_pods_wide_and_status_column(kubectl: Kubectl, namespace: str) -> None:
    assert kubectl('run', 'solo', '--image=busybox', '-n', namespace).returncode == 0
    _running(kubectl, namespace, 'run=solo', 1)
    wide = kubectl('get', 'pods', 'solo', '-n', namespace, '-o', 'wide')
    assert wide.returncode == 0, wide.stderr
    header, row = wide.stdout.splitlines()[:2]
    assert header.split()[:7] == ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE']
    cells = row.split()
    assert cells[:3] == ['solo', '1/1', 'Running']
    assert cells[5].startswith('10.244.') and cells[6] == 'kopf-local-node'


@pytest.mark.kubectl
@pytest.mark.emulator_only(reason=RUNS_PODS)
def test_kubectl_wait_for_job_complete(kubectl: Kubectl, namespace: str) -> None:
    created = kubectl('create', 'job', 'once', '--image=busybox', '-n', namespace, '--', 'true')
    assert created.returncode == 0, created.stderr
    waited = kubectl('wait', '--for=condition=complete', 'job/once', '-n', namespace, '--timeout=30s', timeout=40)
    assert waited.returncode == 0, waited.stderr
    job = _json(kubectl('get', 'job', 'once', '-n', namespace, '-o', 'json'))
    assert job['status']['succeeded'] == 1
    assert [c['type'] for c in job['status']['conditions']] == ['SuccessCriteriaMet', 'Complete']
    assert job['status']['startTime'] <= job['status']['completionTime']


@pytest.mark.kubectl
@pytest.mark.emulator_only(reason=RUNS_PODS)
def test_kubectl_expose_gives_endpoints(kubectl: Kubectl, namespace: str) -> None:
    assert kubectl('create', 'deployment', 'api', '--image=nginx', '--replicas=2', '--port=80',
                   '-n', namespace).returncode == 0
    exposed = kubectl('expose', 'deployment', 'api', '--port=8080', '--target-port=80', '-n', namespace)
    assert exposed.returncode == 0, exposed.stderr
    pods = _running(kubectl, namespace, 'app=api', 2)

    def addresses() -> set[str] | None:
        endpoints = _json(kubectl('get', 'endpoints', 'api', '-n', namespace, '-o', 'json'))
        found = {a['ip'] for subset in endpoints.get('subsets') or [] for a in subset.get('addresses') or []}
        return found if len(found) == 2 else None
    assert wait_for(addresses) == {p['status']['podIP'] for p in pods}
    slices = _json(kubectl('get', 'endpointslices', '-n', namespace, '-l', 'kubernetes.io/service-name=api',
                           '-o', 'json'))['items']
    assert len(slices) == 1
    assert slices[0]['ports'] == [{'name': '', 'port': 80, 'protocol': 'TCP'}]
    assert all(e['conditions']['ready'] for e in slices[0]['endpoints'])
    service = _json(kubectl('get', 'service', 'api', '-n', namespace, '-o', 'json'))
    assert service['spec']['clusterIP'].startswith('10.')


@pytest.mark.emulator_only(reason=RUNS_PODS)
def test_kubernetes_client_sees_statuses_and_gc_deletes_pods(api_client: Any, namespace: str) -> None:
    import kubernetes
    apps = kubernetes.client.AppsV1Api(api_client)
    core = kubernetes.client.CoreV1Api(api_client)
    body = {'metadata': {'name': 'seen'}, 'spec': {
        'replicas': 3, 'selector': {'matchLabels': {'app': 'seen'}},
        'template': {'metadata': {'labels': {'app': 'seen'}}, 'spec': {'containers': [{'name': 'c', 'image': 'x'}]}}}}
    apps.create_namespaced_deployment(namespace, body)

    def available() -> Any:
        status = apps.read_namespaced_deployment_status('seen', namespace).status
        return status if status.available_replicas == 3 else None
    status = wait_for(available)
    assert (status.replicas, status.updated_replicas, status.ready_replicas) == (3, 3, 3)
    assert {c.type: (c.status, c.reason) for c in status.conditions} == {
        'Available': ('True', 'MinimumReplicasAvailable'), 'Progressing': ('True', 'NewReplicaSetAvailable')}
    pods = core.list_namespaced_pod(namespace, label_selector='app=seen').items
    assert len(pods) == 3
    assert all(p.status.phase == 'Running' and p.status.pod_ip and p.status.host_ip for p in pods)
    assert all({c.type for c in p.status.conditions} >= {'PodScheduled', 'Initialized', 'ContainersReady', 'Ready'}
               for p in pods)
    assert all(p.status.container_statuses[0].ready and p.status.container_statuses[0].started for p in pods)
    scale = apps.read_namespaced_deployment_scale('seen', namespace)
    assert scale.status.replicas == 3

    [rs] = apps.list_namespaced_replica_set(namespace, label_selector='app=seen').items
    apps.delete_namespaced_replica_set(rs.metadata.name, namespace)
    # The Deployment makes a new ReplicaSet (same name), the old one's Pods go by garbage collection.
    old = {p.metadata.uid for p in pods}
    wait_for(lambda: not old & {p.metadata.uid for p in core.list_namespaced_pod(namespace).items})


def test_namespace_defaults(cluster: Cluster, namespace: str) -> None:
    """What the service-account and root-CA controllers make in every namespace, and the `kubernetes` Service."""
    assert wait_for(lambda: cluster.get('v1', 'ServiceAccount', 'default', namespace), within=30)
    root_ca = wait_for(lambda: cluster.get('v1', 'ConfigMap', 'kube-root-ca.crt', namespace), within=30)
    assert set(root_ca['data']) == {'ca.crt'}
    assert 'kubernetes.io/description' in root_ca['metadata']['annotations']
    service = wait_for(lambda: cluster.get('v1', 'Service', 'kubernetes', 'default'))
    assert service['metadata']['labels'] == {'component': 'apiserver', 'provider': 'kubernetes'}
    assert [(p['name'], p['port'], p['protocol']) for p in service['spec']['ports']] == [('https', 443, 'TCP')]
    if not backends.is_envtest(cluster):   # envtest has no nodes (no kubelet registers one)
        assert service['spec']['clusterIP'] == '10.96.0.1'
        node = wait_for(lambda: cluster.get('v1', 'Node', 'kopf-local-node'))
        assert {c['type']: c['status'] for c in node['status']['conditions']}['Ready'] == 'True'


def test_pods_of_a_job_as_the_controller_manager_makes_them(cluster: Cluster, namespace: str) -> None:
    cluster.apply({'apiVersion': 'batch/v1', 'kind': 'Job', 'metadata': {'name': 'compared', 'namespace': namespace},
                   'spec': {'template': {'spec': {'restartPolicy': 'Never',
                                                  'containers': [{'name': 'c', 'image': 'busybox'}]}}}})
    job = wait_for(lambda: cluster.get('batch/v1', 'Job', 'compared', namespace))
    uid = job['metadata']['uid']
    [pod] = wait_for(lambda: [p for p in cluster.list('v1', 'Pod', namespace)
                              if p['metadata']['name'].startswith('compared-')] or None, within=30)
    assert pod['metadata']['generateName'] == 'compared-'
    assert pod['metadata']['labels'] == {'batch.kubernetes.io/controller-uid': uid,
                                         'batch.kubernetes.io/job-name': 'compared',
                                         'controller-uid': uid, 'job-name': 'compared'}
    assert pod['metadata']['ownerReferences'] == [{'apiVersion': 'batch/v1', 'kind': 'Job', 'name': 'compared',
                                                   'uid': uid, 'controller': True, 'blockOwnerDeletion': True}]
    status = wait_for(lambda: (cluster.get('batch/v1', 'Job', 'compared', namespace) or {}).get('status')
                      .get('startTime') and cluster.get('batch/v1', 'Job', 'compared', namespace)['status'])
    assert status['startTime']


def _deployment(name: str) -> dict[str, Any]:
    return {'apiVersion': 'apps/v1', 'kind': 'Deployment', 'metadata': {'name': name, 'labels': {'app': name}},
            'spec': {'replicas': 2, 'selector': {'matchLabels': {'app': name}},
                     'template': {'metadata': {'labels': {'app': name}},
                                  'spec': {'containers': [{'name': 'c', 'image': 'nginx:1.27'}]}}}}


def test_replicaset_of_a_deployment_as_the_controller_manager_makes_it(cluster: Cluster, namespace: str) -> None:
    """The fields both kube-controller-manager and the local cluster set on a Deployment's ReplicaSet."""
    body = _deployment('compared')
    body['metadata']['namespace'] = namespace
    cluster.apply(body)
    deployment = wait_for(lambda: cluster.get('apps/v1', 'Deployment', 'compared', namespace))

    def replicaset() -> dict[str, Any] | None:
        found = [rs for rs in cluster.list('apps/v1', 'ReplicaSet', namespace)
                 if rs['metadata']['name'].startswith('compared-')]
        return found[0] if found and (found[0].get('status') or {}).get('observedGeneration') else None
    rs = wait_for(replicaset, within=30)
    hashed = rs['metadata']['labels']['pod-template-hash']
    assert rs['metadata']['name'] == f'compared-{hashed}'
    assert rs['metadata']['labels'] == {'app': 'compared', 'pod-template-hash': hashed}
    assert rs['metadata']['annotations'] == {'deployment.kubernetes.io/desired-replicas': '2',
                                             'deployment.kubernetes.io/max-replicas': '3',
                                             'deployment.kubernetes.io/revision': '1'}
    [ref] = rs['metadata']['ownerReferences']
    assert ref == {'apiVersion': 'apps/v1', 'kind': 'Deployment', 'name': 'compared',
                   'uid': deployment['metadata']['uid'], 'controller': True, 'blockOwnerDeletion': True}
    assert rs['spec']['replicas'] == 2
    assert rs['spec']['selector'] == {'matchLabels': {'app': 'compared', 'pod-template-hash': hashed}}
    assert rs['spec']['template']['metadata']['labels'] == {'app': 'compared', 'pod-template-hash': hashed}
    assert rs['status']['observedGeneration'] == 1
    if not backends.is_envtest(cluster):
        return
    # On envtest, the Pods exist (no kubelet runs them): the controller-manager's Pod names and owners.
    pods = wait_for(lambda: [p for p in cluster.list('v1', 'Pod', namespace)
                             if p['metadata'].get('labels', {}).get('app') == 'compared'] or None)
    assert all(p['metadata']['generateName'] == f'compared-{hashed}-' for p in pods)


@pytest.mark.kubectl
@pytest.mark.emulator_only(reason=RUNS_PODS)
def test_kubectl_status_column_of_failing_pods(kubectl: Kubectl, namespace: str) -> None:
    for name, knob in [('crashy', 'emulator.kopf.dev/crash-loop=true'), ('pully', 'emulator.kopf.dev/image-pull=fail'),
                       ('done', 'emulator.kopf.dev/run-seconds=0')]:
        extra = ['--restart=Never'] if name == 'done' else []
        assert kubectl('run', name, '--image=busybox', f'--annotations={knob}', *extra, '-n', namespace).returncode == 0

    def columns() -> dict[str, list[str]] | None:
        result = kubectl('get', 'pods', 'crashy', 'pully', 'done', '-n', namespace)
        rows = {line.split()[0]: line.split()[1:] for line in result.stdout.splitlines()[1:]}
        wanted = {'crashy': 'CrashLoopBackOff', 'pully': 'ImagePullBackOff', 'done': 'Completed'}
        return rows if all(rows.get(k, ['', ''])[1] == v for k, v in wanted.items()) else None
    rows = wait_for(columns, within=30)
    assert rows['crashy'][0] == '0/1' and rows['crashy'][2] == '1'  # RESTARTS, then "(Ns ago)"
    assert rows['crashy'][3].startswith('(') and rows['crashy'][4] == 'ago)'
    assert rows['pully'][:3] == ['0/1', 'ImagePullBackOff', '0']
    assert rows['done'][:3] == ['0/1', 'Completed', '0']


@pytest.mark.emulator_only(reason=RUNS_PODS)
def test_bare_pods_run_until_deleted_unless_annotated(cluster: Cluster, namespace: str) -> None:
    def pod(name: str, **annotations: str) -> dict[str, Any]:
        return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': name, 'namespace': namespace,
                                                                'annotations': annotations},
                'spec': {'restartPolicy': 'Never', 'containers': [{'name': 'c', 'image': 'busybox'}]}}

    def phase(name: str) -> str:
        return str(((cluster.get('v1', 'Pod', name, namespace) or {}).get('status') or {}).get('phase'))

    cluster.apply(pod('bare'), pod('timed', **{'emulator.kopf.dev/run-seconds': '0.5'}),
                  pod('failing', **{'emulator.kopf.dev/exit-code': '3'}))
    wait_for(lambda: phase('timed') == 'Succeeded' and phase('failing') == 'Failed', within=30)
    wait_for(lambda: phase('bare') == 'Running', within=30)
    cluster.advance_clock(3600)  # type: ignore[union-attr]
    cluster.apply(pod('later'))   # a write after the jump: the controllers have looked at the Pods again
    wait_for(lambda: phase('later') == 'Running', within=30)
    assert phase('bare') == 'Running'


def test_pods_of_a_replication_controller(cluster: Cluster, namespace: str) -> None:
    meta = {'name': 'rc', 'namespace': namespace}
    cluster.apply({'apiVersion': 'v1', 'kind': 'ReplicationController', 'metadata': meta,
                   'spec': {'replicas': 2, 'selector': {'app': 'rc'}, 'template': {
                       'metadata': {'labels': {'app': 'rc'}},
                       'spec': {'containers': [{'name': 'c', 'image': 'busybox'}]}}}})
    def owned() -> list[dict[str, Any]]:
        return [p for p in cluster.list('v1', 'Pod', namespace) if p['metadata']['name'].startswith('rc-')]
    pods = wait_for(lambda: len(owned()) == 2 and owned(), within=30)
    assert {ref['kind'] for p in pods for ref in p['metadata']['ownerReferences']} == {'ReplicationController'}
    status = wait_for(lambda: (cluster.get('v1', 'ReplicationController', 'rc', namespace) or {}).get('status'))
    assert status['replicas'] == 2
