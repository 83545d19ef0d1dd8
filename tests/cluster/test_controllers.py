"""The workload controllers' decisions as pure functions over dict literals and `now` (no store, no loop)."""
import copy
from typing import Any

import pytest

from kopf._cluster.controllers import (
    clock,
    cronjobs,
    daemonsets,
    deployments,
    jobs,
    knobs,
    kubelet,
    replicasets,
    serviceendpoints,
    statefulsets,
    writeplans,
)
from kopf._cluster.controllers.writeplans import Create, Delete, Update

NOW = 1_800_000_000.0
Obj = dict[str, Any]


def _node(ready: bool = True, name: str = 'kopf-local-node') -> Obj:
    return {'metadata': {'name': name, 'labels': {}}, 'spec': {},
            'status': {'conditions': [{'type': 'Ready', 'status': 'True' if ready else 'False'}],
                       'addresses': [{'type': 'InternalIP', 'address': '172.18.0.2'}]}}


def _pod(name: str = 'p', *, annotations: Obj | None = None, restart: str = 'Always', **status: Any) -> Obj:
    meta: Obj = {'name': name, 'namespace': 'ns', 'uid': f'uid-{name}', 'creationTimestamp': clock.stamp(NOW - 60)}
    if annotations:
        meta['annotations'] = annotations
    return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': meta,
            'spec': {'containers': [{'name': 'c', 'image': 'nginx'}], 'restartPolicy': restart}, 'status': status}


def _dep_status(plan: Any) -> Obj:
    return next(w.candidate['status'] for w in plan.writes  # type: ignore[no-any-return]
                if isinstance(w, Update) and w.key == writeplans.DEPLOYMENTS)


def _step(pod: Obj, now: float, nodes: list[Obj] | None = None, settings: knobs.Knobs | None = None) -> Obj:
    plan = kubelet.reconcile(pod, [_node()] if nodes is None else nodes, settings or knobs.Knobs(), now)
    return plan.writes[0].candidate if plan.writes else pod  # type: ignore[union-attr]


@pytest.mark.parametrize('value, total, up, expected', [
    ('25%', 3, True, 1), ('25%', 3, False, 0), (2, 10, True, 2), ('50%', 5, False, 2), ('x%', 4, True, 0),
    ('3', 10, False, 3), (None, 10, True, 0),
])
def test_int_or_percent(value: Any, total: int, up: bool, expected: int) -> None:
    assert writeplans.scaled(value, total, up) == expected


@pytest.mark.parametrize('strategy, replicas, expected', [
    ({}, 4, (1, 1)), ({'type': 'RollingUpdate', 'rollingUpdate': {'maxSurge': 0, 'maxUnavailable': 0}}, 4, (0, 1)),
    ({'type': 'Recreate'}, 3, (0, 3)), ({'rollingUpdate': {'maxSurge': '100%', 'maxUnavailable': 0}}, 2, (2, 0)),
])
def test_deployment_limits(strategy: Obj, replicas: int, expected: tuple[int, int]) -> None:
    assert deployments.limits({'spec': {'replicas': replicas, 'strategy': strategy}}) == expected


def test_kubelet_pod_lifecycle_by_the_clock() -> None:
    pod = _step(_pod(), NOW)
    assert pod['spec']['nodeName'] == 'kopf-local-node'
    assert pod['status']['phase'] == 'Pending'
    assert pod['status']['containerStatuses'][0]['state'] == {'waiting': {'reason': 'ContainerCreating'}}
    assert kubelet.reconcile(pod, [_node()], knobs.Knobs(), NOW).wake_at == NOW + 0.05
    running = _step(pod, NOW + 1)
    assert running['status']['phase'] == 'Running'
    assert running['status']['podIP'].startswith('10.244.')
    assert {c['type']: c['status'] for c in running['status']['conditions']} == {
        'PodReadyToStartContainers': 'True', 'Initialized': 'True', 'Ready': 'True', 'ContainersReady': 'True',
        'PodScheduled': 'True'}
    assert kubelet.reconcile(running, [_node()], knobs.Knobs(), NOW + 2).writes == []   # nothing more to do


def test_kubelet_no_ready_node_leaves_the_pod_unscheduled() -> None:
    pod = _step(_pod(), NOW, nodes=[_node(ready=False)])
    assert 'nodeName' not in pod['spec']
    assert pod['status']['conditions'][0]['reason'] == 'Unschedulable'


def test_kubelet_node_not_ready_makes_pods_unready() -> None:
    running = _step(_step(_pod(), NOW), NOW + 1)
    unready = _step(running, NOW + 2, nodes=[_node(ready=False)])
    assert unready['status']['phase'] == 'Running'
    assert {c['type']: c['status'] for c in unready['status']['conditions']}['Ready'] == 'False'
    assert not unready['status']['containerStatuses'][0]['ready']


def test_kubelet_image_pull_failure() -> None:
    pod = _step(_step(_pod(annotations={knobs.IMAGE_PULL: 'fail'}), NOW), NOW + 0.5)
    assert pod['status']['phase'] == 'Pending'
    assert pod['status']['containerStatuses'][0]['state']['waiting']['reason'] == 'ErrImagePull'
    later = _step(pod, NOW + 5)
    assert later['status']['containerStatuses'][0]['state']['waiting']['reason'] == 'ImagePullBackOff'
    by_glob = _step(_step(_pod(), NOW, settings=knobs.Knobs(failing_images=['ngin*'])), NOW + 0.5,
                    settings=knobs.Knobs(failing_images=['ngin*']))
    assert by_glob['status']['containerStatuses'][0]['state']['waiting']['reason'] == 'ErrImagePull'


@pytest.mark.parametrize('elapsed, restarts, backoff', [(0, 1, 10), (9, 1, 10), (10, 2, 20), (31, 3, 40)])
def test_kubelet_crash_loop(elapsed: float, restarts: int, backoff: int) -> None:
    pod = _step(_pod(annotations={knobs.CRASH_LOOP: 'true'}), NOW)
    crashed = _step(pod, NOW + 0.05 + elapsed)
    status = crashed['status']['containerStatuses'][0]
    assert crashed['status']['phase'] == 'Running'
    assert status['restartCount'] == restarts
    assert status['state']['waiting']['reason'] == 'CrashLoopBackOff'
    assert f'back-off {backoff}s' in status['state']['waiting']['message']
    assert status['lastState']['terminated']['exitCode'] == 1
    assert not status['ready']


@pytest.mark.parametrize('exit_code, phase', [('0', 'Succeeded'), ('3', 'Failed')])
def test_kubelet_pods_that_do_not_restart_finish(exit_code: str, phase: str) -> None:
    pod = _step(_pod(restart='Never', annotations={knobs.EXIT_CODE: exit_code}), NOW)
    assert _step(pod, NOW + 0.06)['status']['phase'] == 'Running'
    done = _step(pod, NOW + 1)
    assert done['status']['phase'] == phase
    assert done['status']['containerStatuses'][0]['state']['terminated']['exitCode'] == int(exit_code)


JOB_REF = {'apiVersion': 'batch/v1', 'kind': 'Job', 'name': 'j', 'uid': 'uid-j', 'controller': True}


@pytest.mark.parametrize('restart', ['Never', 'OnFailure'])
def test_kubelet_pods_of_a_job_finish_after_run_seconds(restart: str) -> None:
    pod = _pod(restart=restart)
    pod['metadata']['ownerReferences'] = [JOB_REF]
    started = _step(pod, NOW)
    assert kubelet.reconcile(_step(started, NOW + 0.06), [_node()], knobs.Knobs(), NOW + 0.06).wake_at == NOW + 0.1
    assert _step(started, NOW + 1)['status']['phase'] == 'Succeeded'


@pytest.mark.parametrize('owners', [[], [{**JOB_REF, 'controller': False}], [{**JOB_REF, 'kind': 'ReplicaSet'}]])
def test_kubelet_pods_of_no_job_run_until_deleted(owners: list[Obj]) -> None:
    pod = _pod(restart='Never')
    pod['metadata']['ownerReferences'] = owners
    running = _step(_step(pod, NOW), NOW + 0.06)
    assert running['status']['phase'] == 'Running'
    later = kubelet.reconcile(running, [_node()], knobs.Knobs(), NOW + 3600)
    assert later.writes == [] and later.wake_at is None


@pytest.mark.parametrize('annotations, finished_at, phase', [
    ({knobs.RUN_SECONDS: '2'}, NOW + 2.05, 'Succeeded'),
    ({knobs.EXIT_CODE: '2'}, NOW + 0.1, 'Failed'),
    ({knobs.RUN_SECONDS: '1', knobs.EXIT_CODE: '0'}, NOW + 1.05, 'Succeeded'),
])
def test_kubelet_pods_of_no_job_finish_when_annotated(annotations: Obj, finished_at: float, phase: str) -> None:
    started = _step(_pod(restart='Never', annotations=annotations), NOW)
    assert _step(started, finished_at - 0.01)['status']['phase'] == 'Running'
    done = _step(started, finished_at)
    assert done['status']['phase'] == phase
    assert done['status']['containerStatuses'][0]['state']['terminated']['finishedAt'] == clock.stamp(finished_at)


def _ready_pod(name: str, since: float, node: str = 'n') -> Obj:
    pod = _pod(name, phase='Running', podIP=f'10.0.0.{len(name)}',
               conditions=[{'type': 'Ready', 'status': 'True', 'lastTransitionTime': clock.stamp(since)}])
    pod['spec']['nodeName'] = node
    pod['metadata']['labels'] = {'app': 'x'}
    return pod


def _rs(name: str = 'rs', replicas: int = 2, **extra: Any) -> Obj:
    return {'apiVersion': 'apps/v1', 'kind': 'ReplicaSet',
            'metadata': {'name': name, 'namespace': 'ns', 'uid': f'uid-{name}', 'generation': 1},
            'spec': {'replicas': replicas, 'template': {'metadata': {'labels': {'app': 'x'}}, 'spec': {}}, **extra}}


def test_replicaset_creates_missing_pods_and_counts_status() -> None:
    plan = replicasets.reconcile(_rs(replicas=3), [_ready_pod('a', NOW - 10)], NOW)
    created = [w for w in plan.writes if isinstance(w, Create)]
    assert len(created) == 2
    assert created[0].obj['metadata']['generateName'] == 'rs-'
    assert created[0].obj['metadata']['ownerReferences'][0]['uid'] == 'uid-rs'
    [status] = [w for w in plan.writes if isinstance(w, Update)]
    assert status.candidate['status'] == {'replicas': 1, 'fullyLabeledReplicas': 1, 'readyReplicas': 1,
                                          'availableReplicas': 1, 'observedGeneration': 1}


def test_replicaset_deletes_the_least_ready_first_and_waits_for_min_ready_seconds() -> None:
    pending = _pod('b')
    pending['spec']['nodeName'] = 'n'
    plan = replicasets.reconcile(_rs(replicas=1, minReadySeconds=30), [_ready_pod('a', NOW - 10), pending], NOW)
    assert [w.obj['metadata']['name'] for w in plan.writes if isinstance(w, Delete)] == ['b']
    assert plan.wake_at == NOW + 20   # when `a` becomes available


def _dep(replicas: int = 4, image: str = 'v1', **spec: Any) -> Obj:
    return {'apiVersion': 'apps/v1', 'kind': 'Deployment',
            'metadata': {'name': 'd', 'namespace': 'ns', 'uid': 'uid-d', 'generation': 1},
            'spec': {'replicas': replicas, 'selector': {'matchLabels': {'app': 'x'}}, 'progressDeadlineSeconds': 600,
                     'template': {'metadata': {'labels': {'app': 'x'}}, 'spec': {'containers': [{'image': image}]}},
                     **spec}}


def _settled(rs: Obj, available: int | None = None) -> Obj:
    rs = copy.deepcopy(rs)
    count = rs['spec']['replicas'] if available is None else available
    rs['status'] = {'replicas': rs['spec']['replicas'], 'readyReplicas': count, 'availableReplicas': count}
    return rs


def test_deployment_creates_its_first_replicaset() -> None:
    plan = deployments.reconcile(_dep(), [], NOW)
    [create] = [w for w in plan.writes if isinstance(w, Create)]
    rs = create.obj
    hashed = rs['metadata']['labels']['pod-template-hash']
    assert rs['metadata']['name'] == f'd-{hashed}' and rs['spec']['replicas'] == 4
    assert rs['metadata']['annotations'][deployments.REVISION] == '1'
    [update] = [w for w in plan.writes if isinstance(w, Update)]
    assert update.candidate['metadata']['annotations'][deployments.REVISION] == '1'
    assert update.candidate['status']['conditions'][1]['reason'] == 'NewReplicaSetCreated'


def test_deployment_rolls_within_surge_and_unavailability() -> None:
    old = _settled(deployments.new_replicaset(_dep(image='v1'), 4, 1))
    old['metadata']['uid'] = 'uid-old'
    changed = _dep(image='v2')
    plan = deployments.reconcile(changed, [old], NOW)
    [new] = [w.obj for w in plan.writes if isinstance(w, Create)]
    assert new['spec']['replicas'] == 1   # maxSurge 25% of 4
    assert new['metadata']['annotations'][deployments.REVISION] == '2'
    # Next pass: the new one is not available yet; the old may lose only maxUnavailable (1).
    new['metadata']['uid'] = 'uid-new'
    plan = deployments.reconcile(changed, [old, {**new, 'status': {'replicas': 1}}], NOW)
    replicas = {w.candidate['metadata']['name']: w.candidate['spec']['replicas']
                for w in plan.writes if isinstance(w, Update) and w.key == writeplans.REPLICASETS}
    assert replicas == {old['metadata']['name']: 3}
    status = _dep_status(plan)
    assert status['conditions'][1]['reason'] == 'ReplicaSetUpdated'


def test_deployment_complete_and_its_conditions() -> None:
    dep = _dep(replicas=2)
    rs = _settled(deployments.new_replicaset(dep, 2, 1))
    plan = deployments.reconcile(dep, [rs], NOW)
    status = _dep_status(plan)
    assert {k: v for k, v in status.items() if k != 'conditions'} == {
        'observedGeneration': 1, 'replicas': 2, 'updatedReplicas': 2, 'readyReplicas': 2, 'availableReplicas': 2}
    assert [(c['type'], c['status'], c['reason']) for c in status['conditions']] == [
        ('Available', 'True', 'MinimumReplicasAvailable'), ('Progressing', 'True', 'NewReplicaSetAvailable')]


def test_deployment_progress_deadline_exceeded() -> None:
    dep = _dep(replicas=2, progressDeadlineSeconds=60)
    rs = _settled(deployments.new_replicaset(dep, 2, 1), available=0)
    plan = deployments.reconcile(dep, [rs], NOW)
    first = next(w.candidate for w in plan.writes if isinstance(w, Update) and w.key == writeplans.DEPLOYMENTS)
    assert plan.wake_at == pytest.approx(NOW + 60, abs=1)   # the condition's time has whole seconds
    later = deployments.reconcile(first, [rs], NOW + 61)
    status = _dep_status(later)
    assert (status['conditions'][1]['status'], status['conditions'][1]['reason']) == ('False',
                                                                                      'ProgressDeadlineExceeded')


def test_deployment_rollback_bumps_the_old_revision_and_cleans_history() -> None:
    dep = _dep(replicas=1, image='v1', revisionHistoryLimit=1)
    first = _settled(deployments.new_replicaset(dep, 1, 1))
    second = deployments.new_replicaset(_dep(replicas=1, image='v2'), 0, 2)
    third = deployments.new_replicaset(_dep(replicas=1, image='v3'), 0, 3)
    plan = deployments.reconcile(dep, [first, {**second, 'status': {'replicas': 0}},
                                       {**third, 'status': {'replicas': 0}}], NOW)
    bumped = [w.candidate for w in plan.writes if isinstance(w, Update) and w.key == writeplans.REPLICASETS]
    assert bumped[0]['metadata']['annotations'][deployments.REVISION] == '4'
    assert [w.obj['metadata']['name'] for w in plan.writes if isinstance(w, Delete)] == [second['metadata']['name']]


def _job(**spec: Any) -> Obj:
    return {'apiVersion': 'batch/v1', 'kind': 'Job', 'metadata': {'name': 'j', 'namespace': 'ns', 'uid': 'uid-j'},
            'spec': {'completions': 2, 'parallelism': 1, 'backoffLimit': 1, 'template': {'spec': {}}, **spec}}


def _finished(phase: str) -> Obj:
    return _pod(f'p-{phase}', phase=phase)


@pytest.mark.parametrize('pods, created, conditions, counts', [
    ([], 1, [], {'active': 0}),
    ([_finished('Succeeded')], 1, [], {'succeeded': 1}),
    ([_finished('Succeeded'), _finished('Succeeded')], 0, ['SuccessCriteriaMet', 'Complete'], {'succeeded': 2}),
    ([_finished('Failed')], 1, [], {'failed': 1}),
    ([_finished('Failed'), _finished('Failed')], 0, ['FailureTarget', 'Failed'], {'failed': 2}),
])
def test_job_outcomes(pods: list[Obj], created: int, conditions: list[str], counts: Obj) -> None:
    plan = jobs.reconcile(_job(), pods, NOW)
    assert len([w for w in plan.writes if isinstance(w, Create)]) == created
    status = next(w.candidate['status'] for w in plan.writes if isinstance(w, Update))
    assert [c['type'] for c in status.get('conditions', [])] == conditions
    assert {k: status.get(k, 0) for k in counts} == counts
    assert ('completionTime' in status) == ('Complete' in conditions)
    assert status['startTime'] == clock.stamp(NOW)


def test_job_fails_its_first_pods_as_annotated() -> None:
    job = _job()
    job['metadata']['annotations'] = {knobs.FAIL_PODS: '1'}
    [create] = [w for w in jobs.reconcile(job, [], NOW).writes if isinstance(w, Create)]
    assert create.obj['metadata']['annotations'][knobs.EXIT_CODE] == '1'
    [create] = [w for w in jobs.reconcile(job, [_finished('Failed')], NOW).writes if isinstance(w, Create)]
    assert knobs.EXIT_CODE not in create.obj['metadata'].get('annotations', {})


def test_endpoints_of_ready_and_unready_pods() -> None:
    service = {'metadata': {'name': 's', 'namespace': 'ns', 'uid': 'uid-s'}, 'apiVersion': 'v1', 'kind': 'Service',
               'spec': {'selector': {'app': 'x'}, 'ports': [{'name': 'http', 'port': 80, 'targetPort': 8080,
                                                             'protocol': 'TCP'}]}}
    ready, unready = _ready_pod('a', NOW), _ready_pod('bb', NOW)
    unready['status']['conditions'][0]['status'] = 'False'
    plan = serviceendpoints.reconcile(service, [unready, ready, _pod('c')], None, [])
    [ep, eps] = [w.obj for w in plan.writes if isinstance(w, Create)]
    assert ep['subsets'] == [{'addresses': [{'ip': '10.0.0.1', 'nodeName': 'n', 'targetRef': {
        'kind': 'Pod', 'namespace': 'ns', 'name': 'a', 'uid': 'uid-a'}}],
        'notReadyAddresses': [{'ip': '10.0.0.2', 'nodeName': 'n', 'targetRef': {
            'kind': 'Pod', 'namespace': 'ns', 'name': 'bb', 'uid': 'uid-bb'}}],
        'ports': [{'name': 'http', 'port': 8080, 'protocol': 'TCP'}]}]
    assert eps['metadata']['labels'][serviceendpoints.SERVICE_NAME] == 's'
    assert [e['conditions']['ready'] for e in eps['endpoints']] == [True, False]


def _sts(replicas: int = 3, **spec: Any) -> Obj:
    return {'apiVersion': 'apps/v1', 'kind': 'StatefulSet',
            'metadata': {'name': 's', 'namespace': 'ns', 'uid': 'uid-s', 'generation': 1},
            'spec': {'replicas': replicas, 'template': {'metadata': {'labels': {'app': 'x'}}, 'spec': {}}, **spec}}


def _member(sts: Obj, index: int, ready: bool = True) -> Obj:
    pod = statefulsets.pod_for(sts, index)
    pod['metadata']['uid'] = f'uid-{index}'
    pod['status'] = {'phase': 'Running' if ready else 'Pending',
                     'conditions': [{'type': 'Ready', 'status': 'True' if ready else 'False',
                                     'lastTransitionTime': clock.stamp(NOW - 5)}]}
    return pod


@pytest.mark.parametrize('ready, policy, created', [
    ([True], 'OrderedReady', ['s-1']), ([False], 'OrderedReady', []), ([False], 'Parallel', ['s-1', 's-2']),
])
def test_statefulset_creates_in_order(ready: list[bool], policy: str, created: list[str]) -> None:
    sts = _sts(podManagementPolicy=policy)
    pods = [_member(sts, i, r) for i, r in enumerate(ready)]
    plan = statefulsets.reconcile(sts, pods, NOW)
    assert [w.obj['metadata']['name'] for w in plan.writes if isinstance(w, Create)] == created


def test_statefulset_scales_down_from_the_highest_and_updates_from_the_highest() -> None:
    sts = _sts(replicas=1)
    plan = statefulsets.reconcile(sts, [_member(sts, 0), _member(sts, 1), _member(sts, 2)], NOW)
    assert [w.obj['metadata']['name'] for w in plan.writes if isinstance(w, Delete)] == ['s-2']
    changed = _sts(replicas=2)
    changed['spec']['template']['spec'] = {'containers': [{'image': 'v2'}]}
    plan = statefulsets.reconcile(changed, [_member(sts, 0), _member(sts, 1)], NOW)
    assert [w.obj['metadata']['name'] for w in plan.writes if isinstance(w, Delete)] == ['s-1']


def test_daemonset_places_a_pod_per_fitting_node() -> None:
    ds = {'apiVersion': 'apps/v1', 'kind': 'DaemonSet', 'metadata': {'name': 'd', 'namespace': 'ns', 'uid': 'u'},
          'spec': {'template': {'metadata': {'labels': {'app': 'x'}}, 'spec': {'nodeSelector': {'role': 'edge'}}}}}
    edge, other = _node(name='a'), _node(name='b')
    edge['metadata']['labels'] = {'role': 'edge'}
    plan = daemonsets.reconcile(ds, [], [edge, other], NOW)
    assert [w.obj['spec']['nodeName'] for w in plan.writes if isinstance(w, Create)] == ['a']
    status = next(w.candidate['status'] for w in plan.writes if isinstance(w, Update))
    assert (status['desiredNumberScheduled'], status['currentNumberScheduled']) == (1, 0)


def _epoch(text: str) -> float:
    moment = clock.parse(text)
    assert moment is not None
    return moment


@pytest.mark.parametrize('schedule, after, expected', [
    ('*/15 * * * *', '2026-01-01T10:07:30Z', '2026-01-01T10:15:00Z'),
    ('0 3 * * *', '2026-01-01T03:00:00Z', '2026-01-02T03:00:00Z'),
    ('30 9 * * mon-fri', '2026-01-02T10:00:00Z', '2026-01-05T09:30:00Z'),   # Friday after 9:30 -> Monday
    ('0 0 29 2 *', '2026-03-01T00:00:00Z', '2028-02-29T00:00:00Z'),
    ('@hourly', '2026-01-01T10:59:00Z', '2026-01-01T11:00:00Z'),
    ('0 12 1 * 0', '2026-01-01T13:00:00Z', '2026-01-04T12:00:00Z'),          # day of month OR day of week
])
def test_cron_next_time(schedule: str, after: str, expected: str) -> None:
    assert cronjobs.next_time(schedule, _epoch(after)) == _epoch(expected)


@pytest.mark.parametrize('schedule', ['* * * *', '61 * * * *', '*/x * * * *'])
def test_cron_refuses_malformed_schedules(schedule: str) -> None:
    with pytest.raises(ValueError):
        cronjobs.parse(schedule)


def _cronjob(**spec: Any) -> Obj:
    return {'apiVersion': 'batch/v1', 'kind': 'CronJob',
            'metadata': {'name': 'cj', 'namespace': 'ns', 'uid': 'uid-cj', 'creationTimestamp': '2026-01-01T10:00:00Z'},
            'spec': {'schedule': '*/10 * * * *', 'jobTemplate': {'spec': {'template': {'spec': {}}}}, **spec}}


def test_cronjob_creates_the_latest_due_job_and_looks_again_at_the_next_time() -> None:
    plan = cronjobs.reconcile(_cronjob(), [], _epoch('2026-01-01T10:25:00Z'))
    [create] = [w for w in plan.writes if isinstance(w, Create)]
    assert create.obj['metadata']['name'] == f'cj-{int(_epoch("2026-01-01T10:20:00Z") // 60)}'
    assert create.obj['metadata']['annotations'][cronjobs.SCHEDULED] == '2026-01-01T10:20:00Z'
    assert plan.wake_at == _epoch('2026-01-01T10:30:00Z')
    status = next(w.candidate['status'] for w in plan.writes if isinstance(w, Update))
    assert status == {'lastScheduleTime': '2026-01-01T10:20:00Z'}


def test_cronjob_forbid_skips_while_one_is_active_and_history_is_limited() -> None:
    running = {'metadata': {'name': 'cj-1', 'uid': 'u1', 'namespace': 'ns'}, 'status': {}}
    done = [{'metadata': {'name': f'cj-{i}', 'namespace': 'ns'},
             'status': {'completionTime': f'2026-01-01T0{i}:00:00Z',
                        'conditions': [{'type': 'Complete', 'status': 'True'}]}} for i in range(2, 6)]
    plan = cronjobs.reconcile(_cronjob(concurrencyPolicy='Forbid'), [running, *done], _epoch('2026-01-01T10:25:00Z'))
    assert not [w for w in plan.writes if isinstance(w, Create)]
    assert [w.obj['metadata']['name'] for w in plan.writes if isinstance(w, Delete)] == ['cj-2']   # 3 kept
    status = next(w.candidate['status'] for w in plan.writes if isinstance(w, Update))
    assert [a['name'] for a in status['active']] == ['cj-1']
    assert status['lastSuccessfulTime'] == '2026-01-01T05:00:00Z'


def test_deployment_recreate_scales_the_old_down_before_the_new_up() -> None:
    old = _settled(deployments.new_replicaset(_dep(replicas=2, image='v1'), 2, 1))
    changed = _dep(replicas=2, image='v2', strategy={'type': 'Recreate'})
    [new] = [w.obj for w in deployments.reconcile(changed, [old], NOW).writes if isinstance(w, Create)]
    assert new['spec']['replicas'] == 0
    scaled = {w.candidate['metadata']['name']: w.candidate['spec']['replicas']
              for w in deployments.reconcile(changed, [old, new], NOW).writes
              if isinstance(w, Update) and w.key == writeplans.REPLICASETS}
    assert scaled == {old['metadata']['name']: 0}   # the new one waits for the old Pods to go
    gone = {**old, 'spec': {**old['spec'], 'replicas': 0}, 'status': {'replicas': 0}}
    scaled = {w.candidate['metadata']['name']: w.candidate['spec']['replicas']
              for w in deployments.reconcile(changed, [gone, new], NOW).writes
              if isinstance(w, Update) and w.key == writeplans.REPLICASETS}
    assert scaled == {new['metadata']['name']: 2}
