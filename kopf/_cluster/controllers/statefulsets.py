"""The StatefulSet controller: Pods with stable names `<set>-0` ... `<set>-(N-1)`, made and removed in order.

`reconcile(sts, pods, now)` gets the StatefulSet's own Pods and plans, as upstream's OrderedReady policy
does, one step at a time: the lowest missing ordinal is created when all lower ones are Running and Ready
(`Parallel`: all at once); extra ordinals go highest first; on a template change (RollingUpdate) the
highest Pod of an old revision is deleted when all are ready (it comes back with the new template).
Pods carry `statefulset.kubernetes.io/pod-name`, `apps.kubernetes.io/pod-index`, `controller-revision-hash`,
`hostname` and `subdomain`; the status has the counts, `currentRevision`, `updateRevision`.
"""
import copy

from kopf._cluster.controllers import podstates
from kopf._cluster.controllers.deployments import template_hash
from kopf._cluster.controllers.replicasets import pod_from_template
from kopf._cluster.controllers.writeplans import PODS, Create, Delete, Key, Obj, Plan, count, without_zeros

STATEFULSETS: Key = ('apps', 'statefulsets')
REVISION_LABEL = 'controller-revision-hash'


def ordinal(sts: Obj, pod: Obj) -> int | None:
    prefix = f'{sts["metadata"]["name"]}-'
    name = str(pod['metadata']['name'])
    tail = name[len(prefix):] if name.startswith(prefix) else ''
    return int(tail) if tail.isdigit() else None


def revision(sts: Obj) -> str:
    return f'{sts["metadata"]["name"]}-{template_hash((sts.get("spec") or {}).get("template") or {})}'


def pod_for(sts: Obj, index: int) -> Obj:
    spec = sts.get('spec') or {}
    pod = pod_from_template(sts, spec.get('template') or {}, '')
    name = f'{sts["metadata"]["name"]}-{index}'
    meta = pod['metadata']
    meta.pop('generateName', None)
    meta['name'] = name
    meta['labels'].update({'statefulset.kubernetes.io/pod-name': name, 'apps.kubernetes.io/pod-index': str(index),
                           REVISION_LABEL: revision(sts)})
    pod['spec'] = copy.deepcopy(pod['spec'])
    pod['spec']['hostname'] = name
    if spec.get('serviceName'):
        pod['spec']['subdomain'] = spec['serviceName']
    return pod


def reconcile(sts: Obj, pods: list[Obj], now: float) -> Plan:
    plan = Plan()
    if sts['metadata'].get('deletionTimestamp'):
        return plan
    spec = sts.get('spec') or {}
    replicas = count(spec.get('replicas'), 1)
    parallel = spec.get('podManagementPolicy') == 'Parallel'
    by_index = {i: pod for pod in pods if (i := ordinal(sts, pod)) is not None and podstates.active(pod)}
    healthy = all(podstates.phase(p) == 'Running' and podstates.ready(p) for p in by_index.values())
    update = revision(sts)
    extra = sorted((i for i in by_index if i >= replicas), reverse=True)
    missing = [i for i in range(replicas) if i not in by_index]
    if extra and (parallel or healthy):
        for i in extra if parallel else extra[:1]:
            plan.writes.append(Delete(PODS, by_index[i]))
    elif missing and (parallel or healthy):
        for i in missing if parallel else missing[:1]:
            plan.writes.append(Create(PODS, pod_for(sts, i)))
    elif healthy and (spec.get('updateStrategy') or {}).get('type', 'RollingUpdate') == 'RollingUpdate':
        partition = count(((spec.get('updateStrategy') or {}).get('rollingUpdate') or {}).get('partition'), 0)
        stale = [i for i in sorted(by_index, reverse=True) if i >= partition
                 and (by_index[i]['metadata'].get('labels') or {}).get(REVISION_LABEL) != update]
        if stale:
            plan.writes.append(Delete(PODS, by_index[stale[0]]))
    live = [p for i, p in by_index.items() if i < replicas]
    updated = [p for p in live if (p['metadata'].get('labels') or {}).get(REVISION_LABEL) == update]
    min_ready = count(spec.get('minReadySeconds'), 0)
    old = sts.get('status') or {}
    current = old.get('currentRevision') or update
    if len(updated) == replicas:
        current = update
    status = without_zeros({
        'observedGeneration': int(sts['metadata'].get('generation') or 1),
        'replicas': len(live), 'readyReplicas': sum(1 for p in live if podstates.ready(p)),
        'currentReplicas': len(updated) if current == update else len(live) - len(updated),
        'updatedReplicas': len(updated),
        'availableReplicas': sum(1 for p in live if podstates.available(p, min_ready, now)),
    }, 'replicas', 'availableReplicas')
    status.update(currentRevision=current, updateRevision=update, collisionCount=0)
    plan.update(STATEFULSETS, sts, {**sts, 'status': status})
    return plan
