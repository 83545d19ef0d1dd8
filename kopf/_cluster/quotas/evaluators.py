"""What an object costs in a namespace's ResourceQuotas, as k8s.io/kubernetes `pkg/quota/v1/evaluator` counts it.

Every kind counts as `count/<plural>[.<group>]` (ConfigMaps, Secrets, ReplicationControllers,
ResourceQuotas, Services and PersistentVolumeClaims also by their short names). Pods add `pods`
and their compute resources (`requests.cpu`/`cpu`, `limits.cpu`, memory, ephemeral storage,
hugepages, extended resources: the containers' sum or the largest init container, plus the
overhead), unless they are finished; Services add `services.loadbalancers` and
`services.nodeports`; PersistentVolumeClaims their `requests.storage`, also per storage class.
Quotas with scopes (Terminating, NotTerminating, BestEffort, NotBestEffort, PriorityClass,
CrossNamespacePodAffinity) count only the Pods in those scopes. Pure: no I/O.

    usage(key, obj, now) -> {resource name: Quantity};  matches(quota, key, obj) -> bool
    constraints(required names, key, obj) -> the "must specify …" text, or ''
"""
import datetime
from collections.abc import Iterable, Mapping
from typing import Any

from kopf._cluster.quotas.quantities import ONE, ZERO, Quantity, parse

Usage = dict[str, Quantity]
PODS, SERVICES, PVCS = ('', 'pods'), ('', 'services'), ('', 'persistentvolumeclaims')
SHORT_NAMES = {('', 'configmaps'): 'configmaps', ('', 'secrets'): 'secrets', ('', 'resourcequotas'): 'resourcequotas',
               ('', 'replicationcontrollers'): 'replicationcontrollers', SERVICES: 'services',
               PVCS: 'persistentvolumeclaims', PODS: 'pods'}
COMPUTE = ('cpu', 'memory', 'ephemeral-storage')
POD_SCOPES = ('Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort', 'PriorityClass',
              'CrossNamespacePodAffinity')
STORAGE_CLASS = '.storageclass.storage.k8s.io/'


def count_name(key: tuple[str, str]) -> str:
    group, plural = key
    return f'count/{plural}.{group}' if group else f'count/{plural}'


def names(key: tuple[str, str]) -> set[str] | None:
    """The resource names an evaluator of this kind counts (None: any name of its prefixes, for Pods, PVCs)."""
    if key in (PODS, PVCS):
        return None
    found = {count_name(key)}
    if key in SHORT_NAMES:
        found.add(SHORT_NAMES[key])
    if key == SERVICES:
        found |= {'services.loadbalancers', 'services.nodeports'}
    return found


def counted(key: tuple[str, str], name: str) -> bool:
    """Whether this kind's evaluator counts this resource name (MatchingResources)."""
    fixed = names(key)
    if fixed is not None:
        return name in fixed
    if key == PVCS:
        return name in (count_name(key), 'persistentvolumeclaims', 'requests.storage') or (
            STORAGE_CLASS in name and name.endswith(('/requests.storage', '/persistentvolumeclaims')))
    plain = name.removeprefix('requests.').removeprefix('limits.')
    return name in (count_name(key), 'pods') or plain in COMPUTE or plain.startswith('hugepages-') or (
        name.startswith('requests.') and '/' in name)


def usage(key: tuple[str, str], obj: Mapping[str, Any], now: datetime.datetime) -> Usage:
    if key == PODS:
        return _pod_usage(obj, now)
    found: Usage = {name: ONE for name in names(key) or {count_name(key)}}
    if key == SERVICES:
        spec = obj.get('spec') or {}
        kind = spec.get('type') or 'ClusterIP'
        found['services.loadbalancers'] = ONE if kind == 'LoadBalancer' else ZERO
        ports = len(spec.get('ports') or ()) if kind in ('NodePort', 'LoadBalancer') else 0
        if kind == 'LoadBalancer' and spec.get('allocateLoadBalancerNodePorts') is False:
            ports = 0
        found['services.nodeports'] = parse(ports) or ZERO
    elif key == PVCS:
        found = {count_name(key): ONE, 'persistentvolumeclaims': ONE}
        storage = parse(((obj.get('spec') or {}).get('resources') or {}).get('requests', {}).get('storage'))
        klass = (obj.get('spec') or {}).get('storageClassName')
        if klass:
            found[f'{klass}{STORAGE_CLASS}persistentvolumeclaims'] = ONE
        if storage is not None:
            found['requests.storage'] = storage
            if klass:
                found[f'{klass}{STORAGE_CLASS}requests.storage'] = storage
    return found


def _pod_usage(pod: Mapping[str, Any], now: datetime.datetime) -> Usage:
    found: Usage = {count_name(PODS): ONE}
    if not _alive(pod, now):
        return found
    spec = pod.get('spec') or {}
    requests = _pod_total(spec, 'requests')
    limits = _pod_total(spec, 'limits')
    found['pods'] = ONE
    for name in COMPUTE:
        if name in requests:
            found[name] = found[f'requests.{name}'] = requests[name]
        if name in limits:
            found[f'limits.{name}'] = limits[name]
    for name, quantity in requests.items():
        if name.startswith('hugepages-'):
            found[name] = found[f'requests.{name}'] = quantity
        elif '/' in name and not name.startswith('kubernetes.io/'):
            found[f'requests.{name}'] = quantity
    return found


def _alive(pod: Mapping[str, Any], now: datetime.datetime) -> bool:
    """QuotaV1Pod: finished Pods, and Pods past their deletion grace period, do not count."""
    if (pod.get('status') or {}).get('phase') in ('Succeeded', 'Failed'):
        return False
    meta = pod.get('metadata') or {}
    stamp, grace = meta.get('deletionTimestamp'), meta.get('deletionGracePeriodSeconds')
    if stamp and grace is not None:
        deleted = datetime.datetime.fromisoformat(str(stamp).replace('Z', '+00:00'))
        return now <= deleted + datetime.timedelta(seconds=int(grace))
    return True


def _pod_total(spec: Mapping[str, Any], which: str) -> Usage:
    """The containers' sum, or the largest init container where larger, plus the overhead (PodRequests)."""
    total: Usage = {}
    for container in spec.get('containers') or ():
        for name, quantity in _resources(container, which).items():
            total[name] = total.get(name, ZERO) + quantity
    for container in spec.get('initContainers') or ():
        for name, quantity in _resources(container, which).items():
            if name not in total or quantity.value > total[name].value:
                total[name] = quantity
    for name, value in (spec.get('overhead') or {}).items():
        if name in total and (found := parse(value)) is not None:
            total[name] = total[name] + found
    return total


def _resources(container: Mapping[str, Any], which: str) -> Usage:
    given = ((container.get('resources') or {}).get(which) or {})
    return {name: q for name, value in given.items() if (q := parse(value)) is not None}


def scopes(quota: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The quota's scopes as selector requirements (`spec.scopes` and `spec.scopeSelector`)."""
    spec = quota.get('spec') or {}
    found = [{'scopeName': scope, 'operator': 'Exists'} for scope in spec.get('scopes') or ()]
    return found + list((spec.get('scopeSelector') or {}).get('matchExpressions') or ())


def matches(quota: Mapping[str, Any], key: tuple[str, str], obj: Mapping[str, Any]) -> bool:
    """Whether the quota's status tracks something of this kind, and the object is in all its scopes."""
    hard = (quota.get('status') or {}).get('hard') or {}
    if not any(counted(key, name) for name in hard):
        return False
    return all(key == PODS and in_scope(requirement, obj) for requirement in scopes(quota))


def in_scope(requirement: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    spec = pod.get('spec') or {}
    scope, operator = requirement.get('scopeName'), requirement.get('operator')
    if scope == 'PriorityClass':
        klass, values = spec.get('priorityClassName'), requirement.get('values') or ()
        return {'In': klass in values, 'NotIn': klass not in values, 'Exists': bool(klass),
                'DoesNotExist': not klass}.get(str(operator), False)
    found = {'Terminating': spec.get('activeDeadlineSeconds') is not None and spec['activeDeadlineSeconds'] >= 0,
             'BestEffort': _best_effort(spec), 'CrossNamespacePodAffinity': _cross_namespace(spec)}
    found['NotTerminating'] = not found['Terminating']
    found['NotBestEffort'] = not found['BestEffort']
    inside = found.get(str(scope), False)
    return inside if operator in ('Exists', 'In', None) else not inside


def _best_effort(spec: Mapping[str, Any]) -> bool:
    containers = [*(spec.get('containers') or ()), *(spec.get('initContainers') or ())]
    return not any(name in COMPUTE[:2] for c in containers for which in ('requests', 'limits')
                   for name in _resources(c, which))


def _cross_namespace(spec: Mapping[str, Any]) -> bool:
    affinity = spec.get('affinity') or {}
    terms = [term for kind in ('podAffinity', 'podAntiAffinity') for section in (
        'requiredDuringSchedulingIgnoredDuringExecution', 'preferredDuringSchedulingIgnoredDuringExecution')
        for term in (affinity.get(kind) or {}).get(section) or ()]
    return any((term.get('podAffinityTerm') or term).get('namespaces') or
               (term.get('podAffinityTerm') or term).get('namespaceSelector') is not None for term in terms)


def constraints(required: Iterable[str], key: tuple[str, str], obj: Mapping[str, Any]) -> str:
    """A Pod must state what its quotas limit of cpu and memory, per container: the text of what is missing."""
    wanted = {name for name in required if name in ('cpu', 'memory', 'requests.cpu', 'requests.memory',
                                                     'limits.cpu', 'limits.memory')}
    if key != PODS or not wanted:
        return ''
    spec = obj.get('spec') or {}
    missing: dict[str, set[str]] = {}
    for container in [*(spec.get('containers') or ()), *(spec.get('initContainers') or ())]:
        requests, limits = _resources(container, 'requests'), _resources(container, 'limits')
        have = {*(f'requests.{n}' for n in requests), *requests, *(f'limits.{n}' for n in limits)}
        for name in wanted - have:
            missing.setdefault(name, set()).add(str(container.get('name') or ''))
    return '; '.join(f'{name} for: {",".join(sorted(missing[name]))}' for name in sorted(missing))
