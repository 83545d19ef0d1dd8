"""The fake scheduler and kubelet: a Pod is bound to a Ready node, then Pending, then Running and Ready.

`reconcile(pod, nodes, knobs, now)` decides a Pod's next state from its own fields (its `startTime`, its
annotations: see `knobs`) and the clock, so that a second look at an unchanged Pod changes nothing:

- no `spec.nodeName` (and the default `schedulerName`): bound to a Ready, schedulable node (by a stable hash
  of its name), `startTime` set,
  Pending with ContainerCreating; or PodScheduled=False (Unschedulable) if no node fits;
- `start-delay` later: Running, containers running and ready, all conditions True, a `podIP`;
  with a failing image: Pending, ErrImagePull and 1 s later ImagePullBackOff;
  with a crash loop: Running, CrashLoopBackOff, `restartCount` growing at back-offs of 10 s, 20 s, ... 5 min;
  on a NotReady node: not ready (Ready=False, NodeNotReady);
- Pods that do not restart (restartPolicy Never/OnFailure) of a Job finish `run-seconds` after they start:
  Succeeded with exit code 0, else Failed; those of no Job run until deleted, unless annotated (`knobs`).
"""
import hashlib
import zlib
from typing import Any

from kopf._cluster.controllers import clock, knobs, podstates
from kopf._cluster.controllers.writeplans import PODS, Obj, Plan, condition

SCHEDULER = 'default-scheduler'   # the only scheduler here: Pods naming another one stay unbound
PULL_BACKOFF_AFTER = 1.0
CRASH_BACKOFF = (10.0, 300.0)   # the first back-off and the cap, doubling in between (as the kubelet's)


def node_ready(node: Obj) -> bool:
    for cond in (node.get('status') or {}).get('conditions') or []:
        if cond.get('type') == 'Ready':
            return bool(cond.get('status') == 'True')
    return False


def node_address(node: Obj) -> str:
    for address in (node.get('status') or {}).get('addresses') or []:
        if address.get('type') == 'InternalIP':
            return str(address.get('address'))
    return '172.18.0.2'


def pod_ip(pod: Obj) -> str:
    digest = zlib.crc32(str(pod['metadata'].get('uid', '')).encode())
    return f'10.244.{(digest >> 8) % 256}.{digest % 254 + 1}'


def choose_node(pod: Obj, nodes: list[Obj]) -> Obj | None:
    selector = (pod.get('spec') or {}).get('nodeSelector') or {}
    fits = [node for node in nodes if node_ready(node) and not (node.get('spec') or {}).get('unschedulable')
            and all((node['metadata'].get('labels') or {}).get(k) == v for k, v in selector.items())]
    if not fits:
        return None
    fits.sort(key=lambda node: str(node['metadata']['name']))
    return fits[zlib.crc32(str(pod['metadata']['name']).encode()) % len(fits)]


def _unschedulable(candidate: Obj, nodes: int, now: float) -> None:
    status = candidate['status']
    conditions = [condition(status.get('conditions') or [], 'PodScheduled', 'False', 'Unschedulable',
                            f'0/{nodes} nodes are available: {nodes} node(s) were not ready '
                            'or did not match the Pod\'s node affinity/selector.',
                            clock.stamp(now), probe_time=True)]
    status.update(phase='Pending', conditions=conditions)


def reconcile(pod: Obj, nodes: list[Obj], settings: knobs.Knobs, now: float) -> Plan:
    plan = Plan()
    if pod['metadata'].get('deletionTimestamp') or podstates.finished(pod):
        return plan
    candidate: Obj = {**pod, 'spec': dict(pod.get('spec') or {}), 'status': dict(pod.get('status') or {})}
    status = candidate['status']
    node_name = candidate['spec'].get('nodeName')
    by_name = {node['metadata']['name']: node for node in nodes}
    if not node_name and candidate['spec'].get('schedulerName', SCHEDULER) != SCHEDULER:
        return plan   # another scheduler's Pod (none runs here): it waits, as for a real cluster without it
    if not node_name:
        node = choose_node(pod, nodes)
        if node is None:
            _unschedulable(candidate, len(nodes), now)
            plan.update(PODS, pod, candidate)
            return plan
        node_name = candidate['spec']['nodeName'] = node['metadata']['name']
    node = by_name.get(node_name)
    started = clock.parse(status.get('startTime'))
    if started is None:
        started = now
        status['startTime'] = clock.stamp(now)
    status['hostIP'] = node_address(node) if node is not None else '172.18.0.2'
    status['hostIPs'] = [{'ip': status['hostIP']}]
    behaviour = knobs.pod_behaviour(pod, settings)
    running_at = started + behaviour.start_delay
    ready_node = node is not None and node_ready(node)
    restarts = candidate['spec'].get('restartPolicy', 'Always') == 'Always'
    finishes_at = None if restarts or behaviour.run_seconds is None else running_at + behaviour.run_seconds
    if now < running_at:
        _pending(candidate, 'ContainerCreating', '', now)
        plan.wake(running_at)
    elif behaviour.pull_fails:
        backoff = now >= running_at + PULL_BACKOFF_AFTER
        _pending(candidate, 'ImagePullBackOff' if backoff else 'ErrImagePull', 'pull', now)
        if not backoff:
            plan.wake(running_at + PULL_BACKOFF_AFTER)
    elif behaviour.crashes:
        plan.wake(_crashing(candidate, running_at, now))
    elif finishes_at is not None and now >= finishes_at:
        _finished(candidate, running_at, finishes_at, behaviour.exit_code, now)
    else:
        _running(candidate, running_at, ready_node, now)
        if finishes_at is not None:
            plan.wake(finishes_at)
    plan.update(PODS, pod, candidate)
    return plan


def _containers(pod: Obj) -> list[Obj]:
    return [c for c in (pod.get('spec') or {}).get('containers') or [] if isinstance(c, dict)]


def _image(container: Obj) -> str:
    image = str(container.get('image') or '')
    name = image.rsplit('/', 1)[-1]
    if ':' not in name and '@' not in name:
        image += ':latest'
    if '/' not in image:
        image = 'library/' + image
    if image.count('/') == 1 and '.' not in image.split('/', 1)[0]:
        image = 'docker.io/' + image
    return image


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _conditions(pod: Obj, ready: bool, reason: str, message: str, now: float, *, started: bool = True) -> list[Obj]:
    old = (pod.get('status') or {}).get('conditions') or []
    stamp = clock.stamp(now)
    state = 'True' if ready else 'False'
    return [
        condition(old, 'PodReadyToStartContainers', 'True' if started else 'False', '', '', stamp, probe_time=True),
        condition(old, 'Initialized', 'True', '', '', stamp, probe_time=True),
        condition(old, 'Ready', state, reason, message, stamp, probe_time=True),
        condition(old, 'ContainersReady', state, reason, message, stamp, probe_time=True),
        condition(old, 'PodScheduled', 'True', '', '', stamp, probe_time=True),
    ]


def _unready(pod: Obj) -> str:
    return f'containers with unready status: [{" ".join(str(c.get("name")) for c in _containers(pod))}]'


def _base(container: Obj) -> Obj:
    return {'name': container.get('name'), 'image': _image(container), 'imageID': '', 'ready': False,
            'restartCount': 0, 'started': False, 'lastState': {}}


def _pending(pod: Obj, reason: str, pull: str, now: float) -> None:
    statuses = []
    for container in _containers(pod):
        entry = _base(container)
        waiting: dict[str, Any] = {'reason': reason}
        if pull:
            image = container.get('image')
            waiting['message'] = (f'Back-off pulling image "{image}"' if reason == 'ImagePullBackOff' else
                                  f'failed to pull and unpack image "{_image(container)}": failed to resolve '
                                  f'reference "{_image(container)}": not found (simulated by the local cluster)')
        entry['state'] = {'waiting': waiting}
        statuses.append(entry)
    pod['status'].update(phase='Pending', containerStatuses=statuses, qosClass='BestEffort',
                         conditions=_conditions(pod, False, 'ContainersNotReady', _unready(pod), now,
                                                started=bool(pull)))


def _started(container: Obj, pod: Obj, running_at: float, restarts: int = 0) -> Obj:
    entry = _base(container)
    seed = f'{pod["metadata"].get("uid")}/{container.get("name")}/{restarts}'
    entry.update(imageID=f'{_image(container).rsplit(":", 1)[0]}@sha256:{_digest(_image(container))}',
                 containerID=f'containerd://{_digest(seed)}', started=True, restartCount=restarts)
    entry['state'] = {'running': {'startedAt': clock.stamp(running_at)}}
    return entry


def _with_ip(pod: Obj) -> None:
    ip = pod_ip(pod)
    pod['status'].update(podIP=ip, podIPs=[{'ip': ip}])


def _running(pod: Obj, running_at: float, node_ready: bool, now: float) -> None:
    statuses = []
    for container in _containers(pod):
        entry = _started(container, pod, running_at)
        entry['ready'] = node_ready
        statuses.append(entry)
    reason, message = ('', '') if node_ready else ('NodeNotReady', 'the node of this pod is not ready')
    _with_ip(pod)
    pod['status'].update(phase='Running', containerStatuses=statuses, qosClass='BestEffort',
                         conditions=_conditions(pod, node_ready, reason, message, now))


def _restarts(running_at: float, now: float) -> tuple[int, float, float]:
    """Restarts so far of a container crashing at once, its last crash time, and the next restart time."""
    first, cap = CRASH_BACKOFF
    restarts, crashed, backoff = 1, running_at, first
    while crashed + backoff <= now:
        crashed += backoff
        restarts += 1
        backoff = min(cap, backoff * 2)
    return restarts, crashed, crashed + backoff


def _crashing(pod: Obj, running_at: float, now: float) -> float:
    restarts, crashed, next_restart = _restarts(running_at, now)
    statuses = []
    for container in _containers(pod):
        entry = _started(container, pod, running_at, restarts)
        entry['started'] = False
        backoff = int(next_restart - crashed)
        entry['state'] = {'waiting': {
            'reason': 'CrashLoopBackOff',
            'message': f'back-off {backoff}s restarting failed container={container.get("name")} '
                       f'pod={pod["metadata"]["name"]}_{pod["metadata"].get("namespace")}'
                       f'({pod["metadata"].get("uid")})'}}
        entry['lastState'] = {'terminated': {
            'exitCode': 1, 'reason': 'Error', 'startedAt': clock.stamp(crashed), 'finishedAt': clock.stamp(crashed),
            'containerID': entry['containerID']}}
        statuses.append(entry)
    _with_ip(pod)
    pod['status'].update(phase='Running', containerStatuses=statuses, qosClass='BestEffort',
                         conditions=_conditions(pod, False, 'ContainersNotReady', _unready(pod), now))
    return next_restart


def _finished(pod: Obj, running_at: float, finished_at: float, exit_code: int, now: float) -> None:
    statuses = []
    for container in _containers(pod):
        entry = _started(container, pod, running_at)
        entry['started'] = False
        entry['state'] = {'terminated': {
            'exitCode': exit_code, 'reason': 'Completed' if exit_code == 0 else 'Error',
            'startedAt': clock.stamp(running_at), 'finishedAt': clock.stamp(finished_at),
            'containerID': entry['containerID']}}
        statuses.append(entry)
    reason = 'PodCompleted' if exit_code == 0 else 'PodFailed'
    _with_ip(pod)
    pod['status'].update(phase='Succeeded' if exit_code == 0 else 'Failed', containerStatuses=statuses,
                         qosClass='BestEffort',
                         conditions=_conditions(pod, False, reason, '', now, started=False))
