"""The commonest server-side defaults of built-in kinds (what a real API server fills in on create).

Not the full upstream defaulting, just the fields operators and kubectl commonly read.
"""
from collections.abc import Callable
from typing import Any

Obj = dict[str, Any]


def _containers(pod_spec: Any) -> None:
    if not isinstance(pod_spec, dict):
        return
    for key, value in (('restartPolicy', 'Always'), ('dnsPolicy', 'ClusterFirst'),
                       ('schedulerName', 'default-scheduler'), ('terminationGracePeriodSeconds', 30),
                       ('securityContext', {})):
        pod_spec.setdefault(key, value)
    for field in ('containers', 'initContainers'):
        for container in pod_spec.get(field) or []:
            if isinstance(container, dict):
                container.setdefault('terminationMessagePath', '/dev/termination-log')
                container.setdefault('terminationMessagePolicy', 'File')
                container.setdefault('imagePullPolicy', _pull_policy(container.get('image')))
                container.setdefault('resources', {})
                for port in container.get('ports') or []:
                    if isinstance(port, dict):
                        port.setdefault('protocol', 'TCP')


def _pull_policy(image: Any) -> str:
    tag = str(image or '').rsplit('/', 1)[-1]
    return 'Always' if ':' not in tag or tag.endswith(':latest') else 'IfNotPresent'


def pod(obj: Obj) -> None:
    _containers(obj.get('spec'))
    status = obj.setdefault('status', {})
    status.setdefault('phase', 'Pending')
    status.setdefault('qosClass', 'BestEffort')


def service(obj: Obj) -> None:
    spec = obj.get('spec')
    if not isinstance(spec, dict):
        return
    spec.setdefault('type', 'ClusterIP')
    spec.setdefault('sessionAffinity', 'None')
    for port in spec.get('ports') or []:
        if isinstance(port, dict):
            port.setdefault('protocol', 'TCP')
            port.setdefault('targetPort', port.get('port'))


def workload(obj: Obj) -> None:
    """Deployments and ReplicaSets."""
    spec = obj.get('spec')
    if not isinstance(spec, dict):
        return
    spec.setdefault('replicas', 1)
    spec.setdefault('revisionHistoryLimit', 10)
    if obj.get('kind') == 'Deployment':
        spec.setdefault('progressDeadlineSeconds', 600)
        strategy = spec.setdefault('strategy', {})
        if isinstance(strategy, dict) and not strategy:
            strategy.update(type='RollingUpdate', rollingUpdate={'maxUnavailable': '25%', 'maxSurge': '25%'})
    _containers((spec.get('template') or {}).get('spec'))


ON_CREATE: dict[tuple[str, str], Callable[[Obj], None]] = {
    ('', 'pods'): pod,
    ('', 'services'): service,
    ('apps', 'deployments'): workload,
    ('apps', 'replicasets'): workload,
}


def apply(key: tuple[str, str], obj: Obj) -> None:
    fill = ON_CREATE.get(key)
    if fill is not None:
        fill(obj)
