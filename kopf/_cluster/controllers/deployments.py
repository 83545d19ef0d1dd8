"""The Deployment controller: ReplicaSets by pod template, rolling updates, revisions, status and conditions.

`reconcile(deployment, replicasets, now)` gets the ReplicaSets the Deployment controls and plans one
step of its rollout, as upstream's controller does per sync:

- the new ReplicaSet is the one whose template (without `pod-template-hash`) is the Deployment's; if none,
  it is created as `<deployment>-<hash>` with the `pod-template-hash` label in its selector and template and
  the next `deployment.kubernetes.io/revision` (also set on the Deployment); an older one that matches again
  (`kubectl rollout undo`) gets the next revision;
- RollingUpdate: the new one scales up within `replicas + maxSurge`, the old ones down while
  `replicas - maxUnavailable` stay available (unhealthy ones first, then the oldest);
  Recreate: the old ones go to zero first, the new one scales up when their Pods are gone;
- old ReplicaSets with no replicas beyond `revisionHistoryLimit` are deleted, oldest first;
- status: `observedGeneration`, `replicas`, `updatedReplicas`, `readyReplicas`, `availableReplicas`,
  `unavailableReplicas`, and the conditions Available and Progressing (NewReplicaSetCreated,
  ReplicaSetUpdated, NewReplicaSetAvailable, or ProgressDeadlineExceeded after `progressDeadlineSeconds`).
"""
import copy
from typing import Any

from kopf._cluster import jsoncodec
from kopf._cluster.controllers import clock
from kopf._cluster.controllers.writeplans import (
    DEPLOYMENTS,
    REPLICASETS,
    Create,
    Delete,
    Obj,
    Plan,
    condition,
    owner_ref,
    scaled,
    without_zeros,
)

HASH_LABEL = 'pod-template-hash'
REVISION = 'deployment.kubernetes.io/revision'
DESIRED = 'deployment.kubernetes.io/desired-replicas'
MAX_REPLICAS = 'deployment.kubernetes.io/max-replicas'
SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789'   # upstream's `rand.SafeEncodeString`
SKIPPED_ANNOTATIONS = {'kubectl.kubernetes.io/last-applied-configuration', REVISION, 'deployment.kubernetes.io/'
                       'revision-history', DESIRED, MAX_REPLICAS}


def template_hash(template: Obj, collisions: int = 0) -> str:
    """A stable hash of a pod template (FNV-1a of its canonical JSON), encoded as upstream encodes its hash."""
    data = jsoncodec.dumps(_sorted(template)) + (str(collisions).encode() if collisions else b'')
    value = 0x811c9dc5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return ''.join(SAFE_ALPHABET[int(digit) % len(SAFE_ALPHABET)] for digit in str(value))


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def _without_hash(template: Obj) -> Obj:
    template = copy.deepcopy(template or {})
    labels = (template.get('metadata') or {}).get('labels')
    if isinstance(labels, dict):
        labels.pop(HASH_LABEL, None)
    return template


def revision(obj: Obj) -> int:
    try:
        return int((obj['metadata'].get('annotations') or {}).get(REVISION, 0))
    except (TypeError, ValueError):
        return 0


def _replicas(obj: Obj) -> int:
    value = (obj.get('spec') or {}).get('replicas')
    return int(value) if value is not None else 1


def _status(obj: Obj, field: str) -> int:
    return int((obj.get('status') or {}).get(field) or 0)


def limits(deployment: Obj) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) resolved for the Deployment's replicas; never both zero."""
    spec = deployment.get('spec') or {}
    strategy = spec.get('strategy') or {}
    if strategy.get('type') == 'Recreate':
        return 0, _replicas(deployment)
    rolling = strategy.get('rollingUpdate') or {}
    replicas = _replicas(deployment)
    surge = scaled(rolling.get('maxSurge', '25%'), replicas, True)
    unavailable = scaled(rolling.get('maxUnavailable', '25%'), replicas, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def new_replicaset(deployment: Obj, replicas: int, number: int) -> Obj:
    meta = deployment['metadata']
    spec = deployment.get('spec') or {}
    template = copy.deepcopy(spec.get('template') or {})
    hashed = template_hash(template)
    template.setdefault('metadata', {}).setdefault('labels', {})[HASH_LABEL] = hashed
    selector = copy.deepcopy(spec.get('selector') or {})
    selector.setdefault('matchLabels', {})[HASH_LABEL] = hashed
    annotations = {k: v for k, v in (meta.get('annotations') or {}).items() if k not in SKIPPED_ANNOTATIONS}
    annotations.update({DESIRED: str(_replicas(deployment)),
                        MAX_REPLICAS: str(_replicas(deployment) + limits(deployment)[0]), REVISION: str(number)})
    rs_spec: Obj = {'replicas': replicas, 'selector': selector, 'template': template}
    if spec.get('minReadySeconds'):
        rs_spec['minReadySeconds'] = spec['minReadySeconds']
    labels = dict(template['metadata']['labels'])
    return {'apiVersion': 'apps/v1', 'kind': 'ReplicaSet',
            'metadata': {'name': f'{meta["name"]}-{hashed}', 'namespace': meta.get('namespace'), 'labels': labels,
                         'annotations': annotations, 'ownerReferences': [owner_ref(deployment)]},
            'spec': rs_spec}


def _scaled(rs: Obj, replicas: int, deployment: Obj, number: int | None = None) -> Obj:
    candidate = {**rs, 'metadata': copy.deepcopy(rs['metadata']), 'spec': {**(rs.get('spec') or {})}}
    candidate['spec']['replicas'] = replicas
    annotations = candidate['metadata'].setdefault('annotations', {})
    annotations[DESIRED] = str(_replicas(deployment))
    annotations[MAX_REPLICAS] = str(_replicas(deployment) + limits(deployment)[0])
    if number is not None:
        annotations[REVISION] = str(number)
    min_ready = (deployment.get('spec') or {}).get('minReadySeconds')
    if min_ready:
        candidate['spec']['minReadySeconds'] = min_ready
    else:
        candidate['spec'].pop('minReadySeconds', None)
    return candidate


def reconcile(deployment: Obj, replicasets: list[Obj], now: float) -> Plan:
    plan = Plan()
    meta = deployment['metadata']
    if meta.get('deletionTimestamp'):
        return plan
    spec = deployment.get('spec') or {}
    template = _without_hash(spec.get('template') or {})
    live = [rs for rs in replicasets if not rs['metadata'].get('deletionTimestamp')]
    new = next((rs for rs in live if _without_hash((rs.get('spec') or {}).get('template') or {}) == template), None)
    olds = sorted((rs for rs in live if rs is not new), key=revision)
    top = max((revision(rs) for rs in live), default=0)
    replicas = _replicas(deployment)
    surge = limits(deployment)[0]
    recreate = (spec.get('strategy') or {}).get('type') == 'Recreate'
    specs = {rs['metadata']['name']: _replicas(rs) for rs in live}
    created = False
    paused = bool(spec.get('paused'))
    if new is None and not paused:
        total = sum(specs.values())
        if recreate:
            start = 0 if any(specs.values()) or any(_status(rs, 'replicas') for rs in olds) else replicas
        elif not any(specs.values()):
            start = replicas
        else:
            start = max(0, min(replicas, replicas + surge - total))
        new = new_replicaset(deployment, start, top + 1)
        plan.writes.append(Create(REPLICASETS, new))
        specs[new['metadata']['name']] = start
        top += 1
        created = True
    bump = None
    if new is not None and not created and revision(new) < top and not paused:   # back to an older template
        bump = top = top + 1
    if new is not None and not created and not paused:
        _rollout(plan, deployment, new, olds, specs, recreate, bump)
    _clean_history(plan, deployment, olds, specs)
    _write_status(plan, deployment, new, live, top, created, now)
    return plan


def _rollout(plan: Plan, deployment: Obj, new: Obj, olds: list[Obj], specs: dict[str, int], recreate: bool,
             bump: int | None) -> None:
    replicas = _replicas(deployment)
    surge, unavailable = limits(deployment)
    name = new['metadata']['name']
    if recreate:
        old_pods = sum(_status(rs, 'replicas') for rs in olds)
        for rs in olds:
            specs[rs['metadata']['name']] = 0
        wanted = replicas if old_pods == 0 else 0
        specs[name] = wanted if old_pods == 0 else specs[name]
    else:
        olds_total = sum(specs[rs['metadata']['name']] for rs in olds)
        if not olds_total:
            specs[name] = replicas
        elif specs[name] < replicas:
            room = replicas + surge - sum(specs.values())
            specs[name] += max(0, min(room, replicas - specs[name]))
        min_available = replicas - unavailable
        new_unavailable = specs[name] - _status(new, 'availableReplicas')
        room = sum(specs.values()) - min_available - new_unavailable
        by_health = sorted(olds, key=lambda rs: (_status(rs, 'availableReplicas') >= _replicas(rs), revision(rs)))
        for rs in by_health:
            cut = min(specs[rs['metadata']['name']], max(0, room))
            specs[rs['metadata']['name']] -= cut
            room -= cut
    for rs in [new, *olds]:
        wanted = specs[rs['metadata']['name']]
        number = bump if rs is new else None
        if wanted != _replicas(rs) or number is not None or (rs is new and _annotations_stale(rs, deployment)):
            plan.update(REPLICASETS, rs, _scaled(rs, wanted, deployment, number))


def _annotations_stale(rs: Obj, deployment: Obj) -> bool:
    annotations = rs['metadata'].get('annotations') or {}
    return annotations.get(DESIRED) != str(_replicas(deployment))


def _clean_history(plan: Plan, deployment: Obj, olds: list[Obj], specs: dict[str, int]) -> None:
    limit = (deployment.get('spec') or {}).get('revisionHistoryLimit')
    limit = 10 if limit is None else int(limit)
    idle = [rs for rs in olds if specs[rs['metadata']['name']] == 0 and _status(rs, 'replicas') == 0]
    for rs in idle[:max(0, len(idle) - limit)]:
        plan.writes.append(Delete(REPLICASETS, rs))


def _write_status(plan: Plan, deployment: Obj, new: Obj | None, live: list[Obj], top: int, created: bool,
                  now: float) -> None:
    meta = deployment['metadata']
    replicas = _replicas(deployment)
    _, unavailable = limits(deployment)
    counts = {
        'replicas': sum(_status(rs, 'replicas') for rs in live),
        'updatedReplicas': _status(new, 'replicas') if new is not None and not created else 0,
        'readyReplicas': sum(_status(rs, 'readyReplicas') for rs in live),
        'availableReplicas': sum(_status(rs, 'availableReplicas') for rs in live),
    }
    counts['unavailableReplicas'] = max(0, replicas - counts['availableReplicas'])
    status: Obj = {'observedGeneration': int(meta.get('generation') or 1), **counts}
    stamp = clock.stamp(now)
    old = (deployment.get('status') or {}).get('conditions') or []
    available = counts['availableReplicas'] >= replicas - unavailable
    conditions = [condition(old, 'Available', 'True' if available else 'False',
                            'MinimumReplicasAvailable' if available else 'MinimumReplicasUnavailable',
                            'Deployment has minimum availability.' if available else
                            'Deployment does not have minimum availability.', stamp, update_time=True)]
    status['conditions'] = [conditions[0], _progressing(plan, deployment, new, counts, created, now)]
    status = without_zeros(status)
    number = top if new is not None else 0
    annotations = dict(meta.get('annotations') or {})
    candidate = {**deployment, 'status': status}
    if number and annotations.get(REVISION) != str(number):
        annotations[REVISION] = str(number)
        candidate['metadata'] = {**meta, 'annotations': annotations}
    plan.update(DEPLOYMENTS, deployment, candidate)


def _progressing(plan: Plan, deployment: Obj, new: Obj | None, counts: dict[str, int], created: bool,
                 now: float) -> Obj:
    """The Progressing condition: paused, complete, a new ReplicaSet, progressing, or past its deadline."""
    spec = deployment.get('spec') or {}
    replicas = _replicas(deployment)
    old_status = deployment.get('status') or {}
    old = old_status.get('conditions') or []
    stamp = clock.stamp(now)
    name = new['metadata']['name'] if new is not None else ''
    complete = new is not None and not created and counts['updatedReplicas'] == replicas \
        and counts['replicas'] == replicas and counts['availableReplicas'] == replicas
    previous = next((c for c in old if c.get('type') == 'Progressing'), None)
    progressed = any(counts[k] != int(old_status.get(k) or 0) for k in counts)
    deadline = spec.get('progressDeadlineSeconds')
    if spec.get('paused'):
        progressing = condition(old, 'Progressing', 'Unknown', 'DeploymentPaused', 'Deployment is paused', stamp,
                                update_time=True)
    elif complete:
        progressing = condition(old, 'Progressing', 'True', 'NewReplicaSetAvailable',
                                f'ReplicaSet "{name}" has successfully progressed.', stamp, update_time=True)
    elif created:
        progressing = condition(old, 'Progressing', 'True', 'NewReplicaSetCreated',
                                f'Created new replica set "{name}"', stamp, update_time=True)
    elif progressed or previous is None or previous.get('reason') == 'NewReplicaSetAvailable':
        progressing = condition(old, 'Progressing', 'True', 'ReplicaSetUpdated', f'ReplicaSet "{name}" is progressing.',
                                stamp, update_time=True)
        if progressed:
            progressing['lastUpdateTime'] = stamp
    else:
        progressing = dict(previous)
    if not complete and not spec.get('paused') and deadline is not None and progressing.get('status') == 'True':
        since = clock.parse(progressing.get('lastUpdateTime')) or now
        if since + int(deadline) <= now:
            progressing = condition(old, 'Progressing', 'False', 'ProgressDeadlineExceeded',
                                    f'ReplicaSet "{name}" has timed out progressing.', stamp, update_time=True)
        else:
            plan.wake(since + int(deadline))
    return progressing
