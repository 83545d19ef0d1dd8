"""The ReplicaSet controller (and the ReplicationController's, the same): as many active Pods as `spec.replicas`,
and the counts in its status.

`reconcile(rs, pods, now)` gets the ReplicaSet's own Pods (those it controls) and plans the Pods to
create (from its template, named `<rs>-xxxxx`) or to delete (unscheduled, then pending, then not ready,
newest first, as upstream prefers), and its status: `replicas`, `fullyLabeledReplicas`, `readyReplicas`,
`availableReplicas` (ready for `minReadySeconds`), `observedGeneration`.
"""
import copy

from kopf._cluster.controllers import clock, podstates
from kopf._cluster.controllers.writeplans import (
    PODS,
    REPLICASETS,
    Create,
    Delete,
    Key,
    Obj,
    Plan,
    count,
    owner_ref,
    without_zeros,
)

BURST = 500   # pods created per pass at most (as upstream's slow-start batches, simplified)


def pod_from_template(owner: Obj, template: Obj, prefix: str) -> Obj:
    template = copy.deepcopy(template)
    meta = template.get('metadata') or {}
    pod_meta: Obj = {'generateName': prefix, 'namespace': owner['metadata'].get('namespace'),
                     'labels': dict(meta.get('labels') or {}), 'ownerReferences': [owner_ref(owner)]}
    if meta.get('annotations'):
        pod_meta['annotations'] = dict(meta['annotations'])
    return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': pod_meta, 'spec': template.get('spec') or {}}


def _deletion_rank(pod: Obj) -> tuple[int, float]:
    spec, status = pod.get('spec') or {}, pod.get('status') or {}
    if not spec.get('nodeName'):
        rank = 0
    elif podstates.phase(pod) == 'Pending':
        rank = 1
    elif not podstates.ready(pod):
        rank = 2
    else:
        rank = 3
    created = clock.parse(pod['metadata'].get('creationTimestamp')) or 0.0
    return rank, -created if status is not None else 0.0


def reconcile(rs: Obj, pods: list[Obj], now: float, key: Key = REPLICASETS) -> Plan:
    plan = Plan()
    if rs['metadata'].get('deletionTimestamp'):
        return plan
    spec = rs.get('spec') or {}
    wanted = count(spec.get('replicas'), 1)
    active = [pod for pod in pods if podstates.active(pod)]
    missing = wanted - len(active)
    if missing > 0:
        template = spec.get('template') or {}
        for _ in range(min(missing, BURST)):
            plan.writes.append(Create(PODS, pod_from_template(rs, template, f'{rs["metadata"]["name"]}-')))
    elif missing < 0:
        for pod in sorted(active, key=_deletion_rank)[:-missing]:
            plan.writes.append(Delete(PODS, pod))
        active = sorted(active, key=_deletion_rank)[-missing:]
    min_ready = int(spec.get('minReadySeconds') or 0)
    labels = ((spec.get('template') or {}).get('metadata') or {}).get('labels') or {}
    status = without_zeros({
        'replicas': len(active),
        'fullyLabeledReplicas': sum(1 for p in active if labels.items() <= (p['metadata'].get('labels') or {}).items()),
        'readyReplicas': sum(1 for p in active if podstates.ready(p)),
        'availableReplicas': sum(1 for p in active if podstates.available(p, min_ready, now)),
        'observedGeneration': int(rs['metadata'].get('generation') or 1),
    }, 'replicas')
    for pod in active:
        moment = podstates.available_at(pod, min_ready)
        if moment is not None and moment > now:
            plan.wake(moment)
    old = rs.get('status') or {}
    if old.get('conditions'):
        status['conditions'] = old['conditions']
    plan.update(key, rs, {**rs, 'status': status})
    return plan
