"""The workload controllers inside a running local cluster: the failure knobs (control API over HTTP, and
annotations), a node going NotReady, the clock moved forward, Jobs failing, and nothing when turned off."""
import asyncio
import json
import time
import urllib.request
from typing import Any

from kopf.testing import LocalCluster

from ..waiting import eventually

Obj = dict[str, Any]


def _deployment(name: str, image: str = 'nginx', replicas: int = 1, annotations: Obj | None = None,
                **spec: Any) -> Obj:
    template: Obj = {'metadata': {'labels': {'app': name}}, 'spec': {'containers': [{'name': 'c', 'image': image}]}}
    if annotations:
        template['metadata']['annotations'] = annotations
    return {'apiVersion': 'apps/v1', 'kind': 'Deployment', 'metadata': {'name': name, 'namespace': 'default'},
            'spec': {'replicas': replicas, 'selector': {'matchLabels': {'app': name}}, 'template': template, **spec}}


def _pods(cluster: LocalCluster, app: str) -> list[Obj]:
    return [p for p in cluster.list('v1', 'Pod', 'default') if (p['metadata'].get('labels') or {}).get('app') == app]


def _waiting(cluster: LocalCluster, app: str, reason: str) -> list[Obj] | None:
    pods = _pods(cluster, app)
    found = [p for p in pods if any(((s.get('state') or {}).get('waiting') or {}).get('reason') == reason
                                    for s in p['status'].get('containerStatuses') or [])]
    return found if pods and len(found) == len(pods) else None


def _condition(obj: Obj | None, type: str) -> Obj:
    return next((c for c in ((obj or {}).get('status') or {}).get('conditions') or [] if c['type'] == type), {})


def _http(cluster: LocalCluster, method: str, path: str, body: Obj) -> Any:
    request = urllib.request.Request(f'{cluster.url}/_emulator{path}', method=method, data=json.dumps(body).encode(),
                                     headers={'Content-Type': 'application/json'})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


async def _control(cluster: LocalCluster, method: str, path: str, body: Obj) -> Any:
    return await asyncio.to_thread(_http, cluster, method, path, body)   # the server runs in this loop


async def test_image_pull_failure_by_the_http_control_api(local_cluster: LocalCluster) -> None:
    await _control(local_cluster, 'PUT', '/workloads', {'failingImages': ['registry.example/*']})
    local_cluster.apply(_deployment('pull', image='registry.example/app:1'))
    [pod] = await eventually(lambda: _waiting(local_cluster, 'pull', 'ErrImagePull'))
    assert pod['status']['phase'] == 'Pending'
    assert await _control(local_cluster, 'POST', '/clock/advance', {'seconds': 2}) == {'offset': 2.0}
    [pod] = await eventually(lambda: _waiting(local_cluster, 'pull', 'ImagePullBackOff'))
    deployment = local_cluster.get('apps/v1', 'Deployment', 'pull', 'default')
    assert _condition(deployment, 'Available')['status'] == 'False'


async def test_crash_loop_restarts_as_the_clock_moves(local_cluster: LocalCluster) -> None:
    local_cluster.apply(_deployment('crash', annotations={'emulator.kopf.dev/crash-loop': 'true'}))
    [pod] = await eventually(lambda: _waiting(local_cluster, 'crash', 'CrashLoopBackOff'))
    assert pod['status']['phase'] == 'Running'
    assert pod['status']['containerStatuses'][0]['restartCount'] == 1
    local_cluster.advance_clock(10)
    await eventually(lambda: [p for p in _pods(local_cluster, 'crash')
                              if p['status']['containerStatuses'][0]['restartCount'] == 2])


async def test_progress_deadline_exceeded_on_the_moved_clock(local_cluster: LocalCluster) -> None:
    local_cluster.apply(_deployment('slow', progressDeadlineSeconds=60,
                                    annotations={'emulator.kopf.dev/image-pull': 'fail'}))
    await eventually(lambda: _waiting(local_cluster, 'slow', 'ErrImagePull'))
    assert _condition(local_cluster.get('apps/v1', 'Deployment', 'slow', 'default'), 'Progressing')['status'] == 'True'
    local_cluster.advance_clock(61)
    progressing = await eventually(lambda: _condition(local_cluster.get('apps/v1', 'Deployment', 'slow', 'default'),
                                                      'Progressing').get('reason') == 'ProgressDeadlineExceeded'
                                   and _condition(local_cluster.get('apps/v1', 'Deployment', 'slow', 'default'),
                                                  'Progressing'))
    assert progressing['status'] == 'False'
    assert progressing['message'].endswith('has timed out progressing.')


async def test_a_node_not_ready_makes_its_pods_unready(local_cluster: LocalCluster) -> None:
    local_cluster.apply(_deployment('noded', replicas=2))
    await eventually(lambda: (local_cluster.get('apps/v1', 'Deployment', 'noded', 'default') or {})
                     .get('status', {}).get('availableReplicas') == 2)
    local_cluster.set_node_ready('kopf-local-node', False)
    await eventually(lambda: (local_cluster.get('apps/v1', 'Deployment', 'noded', 'default') or {})
                     .get('status', {}).get('availableReplicas') is None)
    assert all(_condition(p, 'Ready')['reason'] == 'NodeNotReady' for p in _pods(local_cluster, 'noded'))
    local_cluster.set_node_ready('kopf-local-node', True)
    await eventually(lambda: (local_cluster.get('apps/v1', 'Deployment', 'noded', 'default') or {})
                     .get('status', {}).get('availableReplicas') == 2)


async def test_a_job_failing_past_its_backoff_limit(local_cluster: LocalCluster) -> None:
    local_cluster.apply({'apiVersion': 'batch/v1', 'kind': 'Job',
                         'metadata': {'name': 'flaky', 'namespace': 'default',
                                      'annotations': {'emulator.kopf.dev/fail-pods': '5'}},
                         'spec': {'backoffLimit': 2, 'template': {'spec': {
                             'restartPolicy': 'Never', 'containers': [{'name': 'c', 'image': 'busybox'}]}}}})
    failed = await eventually(lambda: _condition(local_cluster.get('batch/v1', 'Job', 'flaky', 'default'), 'Failed'))
    job = local_cluster.get('batch/v1', 'Job', 'flaky', 'default')
    assert job is not None
    assert failed['reason'] == 'BackoffLimitExceeded'
    assert [c['type'] for c in job['status']['conditions']] == ['FailureTarget', 'Failed']
    assert job['status']['failed'] == 3 and 'completionTime' not in job['status']


async def test_a_job_failing_once_then_succeeding(local_cluster: LocalCluster) -> None:
    local_cluster.apply({'apiVersion': 'batch/v1', 'kind': 'Job',
                         'metadata': {'name': 'retried', 'namespace': 'default',
                                      'annotations': {'emulator.kopf.dev/fail-pods': '1'}},
                         'spec': {'completions': 2, 'template': {'spec': {
                             'restartPolicy': 'Never', 'containers': [{'name': 'c', 'image': 'busybox'}]}}}})
    await eventually(lambda: _condition(local_cluster.get('batch/v1', 'Job', 'retried', 'default'), 'Complete'))
    job = local_cluster.get('batch/v1', 'Job', 'retried', 'default')
    assert job is not None
    assert (job['status']['succeeded'], job['status']['failed']) == (2, 1)
    pods = [p for p in local_cluster.list('v1', 'Pod', 'default') if p['metadata']['name'].startswith('retried-')]
    assert sorted(p['status']['phase'] for p in pods) == ['Failed', 'Succeeded', 'Succeeded']
    assert all(p['metadata']['labels']['batch.kubernetes.io/controller-uid'] == job['metadata']['uid'] for p in pods)


async def test_turned_off_nothing_runs() -> None:
    async with LocalCluster(workloads=False) as cluster:
        cluster.apply(_deployment('idle'))
        cluster.apply({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'marker', 'namespace': 'default'}})
        await eventually(lambda: cluster.get('v1', 'ConfigMap', 'marker', 'default'))
        assert cluster.list('apps/v1', 'ReplicaSet', 'default') == []
        assert cluster.list('v1', 'Node') == []
        assert cluster.get('v1', 'ServiceAccount', 'default', 'default') is None


def _set(kind: str, name: str, **spec: Any) -> Obj:
    return {'apiVersion': 'apps/v1', 'kind': kind, 'metadata': {'name': name, 'namespace': 'default'},
            'spec': {'selector': {'matchLabels': {'app': name}}, **spec,
                     'template': {'metadata': {'labels': {'app': name}},
                                  'spec': {'containers': [{'name': 'c', 'image': 'redis'}]}}}}


async def test_statefulset_pods_in_order_with_stable_names(local_cluster: LocalCluster) -> None:
    local_cluster.apply(_set('StatefulSet', 'db', replicas=3, serviceName='db'))
    sts = await eventually(lambda: (s := local_cluster.get('apps/v1', 'StatefulSet', 'db', 'default'))
                           and s.get('status', {}).get('readyReplicas') == 3 and s)
    pods = sorted(_pods(local_cluster, 'db'), key=lambda p: p['metadata']['name'])
    assert [p['metadata']['name'] for p in pods] == ['db-0', 'db-1', 'db-2']
    assert [p['spec']['hostname'] for p in pods] == ['db-0', 'db-1', 'db-2']
    assert [p['metadata']['labels']['apps.kubernetes.io/pod-index'] for p in pods] == ['0', '1', '2']
    started = [p['status']['startTime'] for p in pods]
    assert started == sorted(started)   # one after another
    assert sts['status']['currentRevision'] == sts['status']['updateRevision']
    local_cluster.apply({**_set('StatefulSet', 'db', replicas=1, serviceName='db')})
    await eventually(lambda: [p['metadata']['name'] for p in _pods(local_cluster, 'db')] == ['db-0'])


async def test_daemonset_a_pod_per_node() -> None:
    async with LocalCluster(nodes=2) as cluster:
        cluster.apply(_set('DaemonSet', 'agent'))
        ds = await eventually(lambda: (d := cluster.get('apps/v1', 'DaemonSet', 'agent', 'default'))
                              and d.get('status', {}).get('numberReady') == 2 and d)
        assert ds['status']['desiredNumberScheduled'] == 2
        assert sorted(p['spec']['nodeName'] for p in _pods(cluster, 'agent')) == ['kopf-local-node',
                                                                                  'kopf-local-node-2']


async def test_cronjob_runs_a_job_when_the_clock_reaches_its_time(local_cluster: LocalCluster) -> None:
    local_cluster.apply({'apiVersion': 'batch/v1', 'kind': 'CronJob',
                         'metadata': {'name': 'tick', 'namespace': 'default'},
                         'spec': {'schedule': '* * * * *', 'jobTemplate': {'spec': {'template': {'spec': {
                             'restartPolicy': 'Never', 'containers': [{'name': 'c', 'image': 'busybox'}]}}}}}})
    await eventually(lambda: (local_cluster.get('batch/v1', 'CronJob', 'tick', 'default') or {}).get('status')
                     is not None)
    advanced_at = time.time()
    local_cluster.advance_clock(61)
    # The advanced clock's Job (its minute is after the real clock's), and maybe one more: the real clock
    # may reach a minute's start before the advance (the CronJob's creation time is the real clock's).
    jobs = await eventually(lambda: [j for j in local_cluster.list('batch/v1', 'Job', 'default')
                                     if j['metadata']['name'].startswith('tick-')
                                     and int(j['metadata']['name'].rsplit('-', 1)[1]) * 60 > advanced_at
                                     and _condition(j, 'Complete')])
    assert len(jobs) == 1 and jobs[0]['metadata']['ownerReferences'][0]['kind'] == 'CronJob'
    cronjob = await eventually(lambda: (c := local_cluster.get('batch/v1', 'CronJob', 'tick', 'default'))
                               and c['status'].get('lastSuccessfulTime') and not c['status'].get('active') and c)
    assert cronjob['status']['lastScheduleTime']


async def test_workloads_resume_from_a_state_file(tmp_path: Any) -> None:
    state = tmp_path / 'state.json'
    async with LocalCluster(state_file=state, workloads=False) as cluster:   # stored, never run
        cluster.apply(_deployment('kept', replicas=2))
    async with LocalCluster(state_file=state) as cluster:
        await eventually(lambda: (cluster.get('apps/v1', 'Deployment', 'kept', 'default') or {})
                         .get('status', {}).get('availableReplicas') == 2)
