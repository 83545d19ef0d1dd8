"""The commonest server-side defaults of built-in kinds (what a real API server fills in on create).

Not the full upstream defaulting, just the fields operators and kubectl commonly read back, as a
real 1.34 kube-apiserver (without controllers) answers a create: `ON_CREATE` by (group, plural).
Each filler gets the object with its `metadata.uid` already assigned (Jobs' selectors use it).
"""
import ipaddress
import random
from collections.abc import Callable
from typing import Any

from kopf._cluster.quotas import quantities

Obj = dict[str, Any]
SERVICE_RANGE = ipaddress.ip_network('10.96.0.0/12')   # the emulator's service-cluster-ip-range
NODE_PORTS = (30000, 32767)


def _fill(target: Any, **defaults: Any) -> None:
    if isinstance(target, dict):
        for key, value in defaults.items():
            target.setdefault(key, value)


def _spec(obj: Obj) -> dict[str, Any]:
    spec = obj.get('spec')
    return spec if isinstance(spec, dict) else {}


def _containers(pod_spec: Any, restart: str | None = 'Always') -> None:
    if not isinstance(pod_spec, dict):
        return
    if restart is not None:
        pod_spec.setdefault('restartPolicy', restart)
    _fill(pod_spec, dnsPolicy='ClusterFirst', schedulerName='default-scheduler', terminationGracePeriodSeconds=30,
          securityContext={})
    for field in ('containers', 'initContainers'):
        for container in pod_spec.get(field) or []:
            if isinstance(container, dict):
                _fill(container, terminationMessagePath='/dev/termination-log', terminationMessagePolicy='File',
                      imagePullPolicy=_pull_policy(container.get('image')), resources={})
                for port in container.get('ports') or []:
                    _fill(port, protocol='TCP')


def _template(template: Any, restart: str | None = 'Always') -> None:
    if isinstance(template, dict):
        template.setdefault('metadata', {})   # a Go struct, not a pointer: always written, `{}` when empty
        _containers(template.get('spec'), restart)


def _pull_policy(image: Any) -> str:
    tag = str(image or '').rsplit('/', 1)[-1]
    return 'Always' if ':' not in tag or tag.endswith(':latest') else 'IfNotPresent'


def pod(obj: Obj) -> None:
    _containers(obj.get('spec'))
    _fill(obj.get('spec'), enableServiceLinks=True, priority=0, preemptionPolicy='PreemptLowerPriority')
    status = obj.setdefault('status', {})
    status.setdefault('phase', 'Pending')
    status.setdefault('qosClass', qos_class(_spec(obj)))


def qos_class(spec: dict[str, Any]) -> str:
    """Guaranteed (cpu and memory limited, requests equal to limits), BestEffort (nothing asked), else Burstable."""
    listed = [*(spec.get('containers') or []), *(spec.get('initContainers') or [])]
    containers = [container for container in listed if isinstance(container, dict)]
    asked = []
    for container in containers:
        resources = container.get('resources') or {}
        limits = {k: quantities.parse(v) for k, v in (resources.get('limits') or {}).items() if k in ('cpu', 'memory')}
        requests = {k: quantities.parse(v) for k, v in (resources.get('requests') or {}).items()
                    if k in ('cpu', 'memory')}
        asked.append((requests, limits))
    if not any(requests or limits for requests, limits in asked):
        return 'BestEffort'
    if all(set(limits) == {'cpu', 'memory'} and all(requests.get(k, limits[k]) == limits[k] for k in limits)
           for requests, limits in asked):
        return 'Guaranteed'
    return 'Burstable'


def service(obj: Obj) -> None:
    spec = obj.get('spec')
    if not isinstance(spec, dict):
        return
    _fill(spec, type='ClusterIP', sessionAffinity='None')
    kind = spec['type']
    for port in spec.get('ports') or []:
        if isinstance(port, dict):
            _fill(port, protocol='TCP', targetPort=port.get('port'))
            if kind in ('NodePort', 'LoadBalancer'):
                port.setdefault('nodePort', random.randint(*NODE_PORTS))
    if kind != 'ExternalName':
        if not spec.get('clusterIP'):
            spec['clusterIP'] = str(SERVICE_RANGE[random.randrange(10, SERVICE_RANGE.num_addresses - 1)])
        _fill(spec, clusterIPs=[spec['clusterIP']], internalTrafficPolicy='Cluster')
        if spec['clusterIP'] != 'None' or spec.get('selector'):
            _fill(spec, ipFamilies=['IPv4'], ipFamilyPolicy='SingleStack')
    if kind in ('NodePort', 'LoadBalancer'):
        spec.setdefault('externalTrafficPolicy', 'Cluster')
    if kind == 'LoadBalancer':
        spec.setdefault('allocateLoadBalancerNodePorts', True)
    obj.setdefault('status', {}).setdefault('loadBalancer', {})


def deployment(obj: Obj) -> None:
    spec = _spec(obj)
    _fill(spec, replicas=1, revisionHistoryLimit=10, progressDeadlineSeconds=600)
    strategy = spec.setdefault('strategy', {})
    if isinstance(strategy, dict) and not strategy:
        strategy.update(type='RollingUpdate', rollingUpdate={'maxUnavailable': '25%', 'maxSurge': '25%'})
    _template(spec.get('template'))
    obj.setdefault('status', {})


def replicaset(obj: Obj) -> None:
    _fill(_spec(obj), replicas=1)
    _template(_spec(obj).get('template'))
    obj.setdefault('status', {}).setdefault('replicas', 0)


def replication_controller(obj: Obj) -> None:
    spec = _spec(obj)
    _fill(spec, replicas=1)
    template = spec.get('template')
    labels = ((template.get('metadata') or {}).get('labels') or {}) if isinstance(template, dict) else {}
    if labels:
        _fill(spec, selector=dict(labels))
        if not obj['metadata'].get('labels'):
            obj['metadata']['labels'] = dict(labels)
    _template(template)
    obj.setdefault('status', {}).setdefault('replicas', 0)


def daemonset(obj: Obj) -> None:
    spec = _spec(obj)
    _fill(spec, revisionHistoryLimit=10, updateStrategy={'type': 'RollingUpdate',
                                                         'rollingUpdate': {'maxUnavailable': 1, 'maxSurge': 0}})
    _template(spec.get('template'))
    obj['metadata'].setdefault('annotations', {}).setdefault('deprecated.daemonset.template.generation', '1')
    _fill(obj.setdefault('status', {}), currentNumberScheduled=0, numberMisscheduled=0, desiredNumberScheduled=0,
          numberReady=0)


def statefulset(obj: Obj) -> None:
    spec = _spec(obj)
    _fill(spec, replicas=1, podManagementPolicy='OrderedReady', revisionHistoryLimit=10,
          updateStrategy={'type': 'RollingUpdate', 'rollingUpdate': {'partition': 0}},
          persistentVolumeClaimRetentionPolicy={'whenDeleted': 'Retain', 'whenScaled': 'Retain'})
    _template(spec.get('template'))
    _fill(obj.setdefault('status', {}), replicas=0, availableReplicas=0)


def job(obj: Obj) -> None:
    """Also the selector and labels the server generates: `batch.kubernetes.io/controller-uid` of the Job's uid."""
    spec = _spec(obj)
    if spec.get('completions') is None and spec.get('parallelism') is None:
        spec.update(completions=1, parallelism=1)
    _fill(spec, parallelism=1, backoffLimit=6, completionMode='NonIndexed', suspend=False, manualSelector=False)
    if spec.get('podFailurePolicy') is None:
        spec.setdefault('podReplacementPolicy', 'TerminatingOrFailed')
    template = spec.get('template')
    if isinstance(template, dict):
        _containers(template.get('spec'), restart=None)
        if not spec.get('manualSelector'):
            meta = obj['metadata']
            uid, name = meta.get('uid', ''), meta.get('name', '')
            generated = {'batch.kubernetes.io/controller-uid': uid, 'batch.kubernetes.io/job-name': name,
                         'controller-uid': uid, 'job-name': name}
            labels = template.setdefault('metadata', {}).setdefault('labels', {})
            labels.update(generated)
            spec.setdefault('selector', {'matchLabels': {'batch.kubernetes.io/controller-uid': uid}})
            if not meta.get('labels'):
                meta['labels'] = dict(labels)


def cronjob(obj: Obj) -> None:
    spec = _spec(obj)
    _fill(spec, concurrencyPolicy='Allow', suspend=False, successfulJobsHistoryLimit=3, failedJobsHistoryLimit=1)
    job_template = spec.get('jobTemplate')
    if isinstance(job_template, dict):
        job_template.setdefault('metadata', {})
        job_spec = job_template.get('spec')
        if isinstance(job_spec, dict) and isinstance(job_spec.get('template'), dict):
            job_spec['template'].setdefault('metadata', {})
            _containers(job_spec['template'].get('spec'), restart=None)


def hpa(obj: Obj) -> None:
    spec = _spec(obj)
    spec.setdefault('minReplicas', 1)
    if obj.get('apiVersion') == 'autoscaling/v2' and not spec.get('metrics'):
        spec['metrics'] = [{'type': 'Resource', 'resource': {'name': 'cpu', 'target': {
            'type': 'Utilization', 'averageUtilization': 80}}}]


def pod_template(obj: Obj) -> None:
    _template(obj.get('template'))


def endpoints(obj: Obj) -> None:
    for subset in obj.get('subsets') or []:
        for port in (subset.get('ports') or []) if isinstance(subset, dict) else []:
            _fill(port, protocol='TCP')


def limit_range(obj: Obj) -> None:
    for limit in _spec(obj).get('limits') or []:
        if isinstance(limit, dict) and limit.get('type') == 'Container':
            if limit.get('max') and not limit.get('default'):
                limit['default'] = dict(limit['max'])
            if limit.get('default') and not limit.get('defaultRequest'):
                limit['defaultRequest'] = dict(limit['default'])


def resource_quota(obj: Obj) -> None:
    """Quantities written canonically (`1000m` is `1`); the (typed) status is there, empty until counted."""
    hard = _spec(obj).get('hard')
    if isinstance(hard, dict):
        obj['spec']['hard'] = {name: quantities.canonical(value) for name, value in hard.items()}
    obj.setdefault('status', {})


def volume_claim(obj: Obj) -> None:
    _fill(_spec(obj), volumeMode='Filesystem')
    _fill(obj.setdefault('status', {}), phase='Pending')


def volume(obj: Obj) -> None:
    spec = _spec(obj)
    _fill(spec, persistentVolumeReclaimPolicy='Retain', volumeMode='Filesystem')
    _fill(spec.get('hostPath'), type='')
    _fill(obj.setdefault('status', {}), phase='Pending')


def admission_policy(obj: Obj) -> None:
    spec = _spec(obj)
    _fill(spec, failurePolicy='Fail')
    constraints = spec.get('matchConstraints')
    _fill(constraints, matchPolicy='Equivalent', namespaceSelector={}, objectSelector={})
    for rule in (constraints or {}).get('resourceRules') or [] if isinstance(constraints, dict) else []:
        _fill(rule, scope='*')


def endpoint_slice(obj: Obj) -> None:
    for endpoint in obj.get('endpoints') or []:
        _fill(endpoint, conditions={})


def priority_level(obj: Obj) -> None:
    _fill(_spec(obj).get('limited'), lendablePercent=0)


def _device_requests(spec: Any) -> None:
    devices = spec.get('devices') if isinstance(spec, dict) else None
    for request in (devices or {}).get('requests') or [] if isinstance(devices, dict) else []:
        if isinstance(request, dict):
            _fill(request.get('exactly'), allocationMode='ExactCount', count=1)


def resource_claim(obj: Obj) -> None:
    _device_requests(obj.get('spec'))


def resource_claim_template(obj: Obj) -> None:
    spec = _spec(obj)
    spec.setdefault('metadata', {})
    _device_requests(spec.get('spec'))


def priority_class(obj: Obj) -> None:
    obj.setdefault('preemptionPolicy', 'PreemptLowerPriority')


def csi_driver(obj: Obj) -> None:
    _fill(_spec(obj), attachRequired=True, fsGroupPolicy='ReadWriteOnceWithFSType', podInfoOnMount=False,
          requiresRepublish=False, seLinuxMount=False, storageCapacity=False, volumeLifecycleModes=['Persistent'])


def storage_class(obj: Obj) -> None:
    _fill(obj, reclaimPolicy='Delete', volumeBindingMode='Immediate')


def event(obj: Obj) -> None:
    """A core/v1 Event: its reporting fields are not `omitempty` (empty when not given)."""
    _fill(obj, reportingComponent='', reportingInstance='', source={})


def volume_attachment(obj: Obj) -> None:
    _fill(obj.setdefault('status', {}), attached=False)


ON_CREATE: dict[tuple[str, str], Callable[[Obj], None]] = {
    ('', 'pods'): pod,
    ('', 'services'): service,
    ('', 'podtemplates'): pod_template,
    ('', 'replicationcontrollers'): replication_controller,
    ('', 'endpoints'): endpoints,
    ('', 'events'): event,
    ('', 'limitranges'): limit_range,
    ('', 'persistentvolumeclaims'): volume_claim,
    ('', 'resourcequotas'): resource_quota,
    ('', 'persistentvolumes'): volume,
    ('apps', 'deployments'): deployment,
    ('apps', 'replicasets'): replicaset,
    ('apps', 'daemonsets'): daemonset,
    ('apps', 'statefulsets'): statefulset,
    ('batch', 'jobs'): job,
    ('batch', 'cronjobs'): cronjob,
    ('autoscaling', 'horizontalpodautoscalers'): hpa,
    ('admissionregistration.k8s.io', 'validatingadmissionpolicies'): admission_policy,
    ('discovery.k8s.io', 'endpointslices'): endpoint_slice,
    ('flowcontrol.apiserver.k8s.io', 'prioritylevelconfigurations'): priority_level,
    ('resource.k8s.io', 'resourceclaims'): resource_claim,
    ('resource.k8s.io', 'resourceclaimtemplates'): resource_claim_template,
    ('scheduling.k8s.io', 'priorityclasses'): priority_class,
    ('storage.k8s.io', 'csidrivers'): csi_driver,
    ('storage.k8s.io', 'storageclasses'): storage_class,
    ('storage.k8s.io', 'volumeattachments'): volume_attachment,
}


def apply(key: tuple[str, str], obj: Obj) -> None:
    fill = ON_CREATE.get(key)
    if fill is not None:
        fill(obj)


def service_ports(obj: Obj) -> None:
    spec = _spec(obj)
    for port in spec.get('ports') or []:
        if isinstance(port, dict):
            _fill(port, protocol='TCP', targetPort=port.get('port'))


#: The defaults a real server fills on every write, as it decodes: here those of list items an update or an
#: apply may add (containers and their ports, Services' ports); nothing allocated (IPs, node ports) again.
ON_UPDATE: dict[tuple[str, str], Callable[[Obj], None]] = {
    ('', 'pods'): lambda obj: _containers(obj.get('spec'), None),
    ('', 'podtemplates'): pod_template,
    ('', 'services'): service_ports,
    ('apps', 'deployments'): lambda obj: _template(_spec(obj).get('template')),
    ('apps', 'replicasets'): lambda obj: _template(_spec(obj).get('template')),
    ('apps', 'daemonsets'): lambda obj: _template(_spec(obj).get('template')),
    ('apps', 'statefulsets'): lambda obj: _template(_spec(obj).get('template')),
}


def on_update(key: tuple[str, str], obj: Obj) -> None:
    fill = ON_UPDATE.get(key)
    if fill is not None:
        fill(obj)
