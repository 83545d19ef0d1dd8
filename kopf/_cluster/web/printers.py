"""The cells kube-apiserver prints for built-in kinds (its internal printers), and relative ages.

The columns (names, types, priorities, descriptions) are the real server's, read from its Table
answers into the generated resource table; `CELLS` computes each column's value as its printers do
(with the cell makers and ages of `cells`).

Wide columns (priority 1) appear in `kubectl get -o wide` only.
"""
import datetime
import functools
from collections.abc import Mapping
from typing import Any

from kopf._cluster.web.cells import (
    AGE,
    NAME,
    NONE,
    Cell,
    age,
    boolean,
    count,
    get,
    human_duration,
    integer,
    jsonpath,
    text,
    when,
)
from kopf._shared import resourcetable


def _pod_ready(obj: Mapping[str, Any]) -> str:
    statuses = jsonpath(obj, '.status.containerStatuses') or []
    containers = jsonpath(obj, '.spec.containers') or []
    return f'{sum(1 for s in statuses if s.get("ready"))}/{len(containers)}'


def _pod_status(obj: Mapping[str, Any]) -> str:
    """The STATUS column as the server's pod printer computes it: the phase, or a container's reason."""
    status = obj.get('status') or {}
    reason = str(status.get('reason') or status.get('phase') or 'Pending')
    running = False
    for container in reversed(status.get('containerStatuses') or []):
        state = container.get('state') or {}
        waiting, terminated = state.get('waiting') or {}, state.get('terminated') or {}
        if waiting.get('reason'):
            reason = str(waiting['reason'])
        elif terminated.get('reason'):
            reason = str(terminated['reason'])
        elif terminated:
            reason = f'ExitCode:{terminated.get("exitCode", 0)}'
        elif container.get('ready') and 'running' in state:
            running = True
    if reason == 'Completed' and running:
        ready = any(c.get('type') == 'Ready' and c.get('status') == 'True' for c in status.get('conditions') or [])
        reason = 'Running' if ready else 'NotReady'
    if obj['metadata'].get('deletionTimestamp'):
        reason = 'Terminating'
    return reason


def _pod_restarts(obj: Mapping[str, Any]) -> str:
    """RESTARTS: the sum, and how long ago the last one was (`3 (12s ago)`), as the server's pod printer."""
    statuses = jsonpath(obj, '.status.containerStatuses') or []
    restarts = sum(int(s.get('restartCount') or 0) for s in statuses)
    finished = [str(((s.get('lastState') or {}).get('terminated') or {}).get('finishedAt') or '') for s in statuses]
    last = max(finished, default='')
    return f'{restarts} ({age(last)} ago)' if restarts and last else str(restarts)


def _ports(obj: Mapping[str, Any]) -> str:
    ports = jsonpath(obj, '.spec.ports') or []
    texts = [f'{p.get("port")}{":" + str(p["nodePort"]) if p.get("nodePort") else ""}/{p.get("protocol", "TCP")}'
             for p in ports]
    return ','.join(texts) or NONE


def _labels(path: str) -> Cell:
    """A plain label map as `labels.FormatLabels` prints it (sorted `k=v`, `<none>` when empty)."""
    return lambda obj: ','.join(f'{k}={v}' for k, v in sorted((jsonpath(obj, path) or {}).items())) or NONE


def _selector(path: str) -> Cell:
    """A LabelSelector as `metav1.FormatLabelSelector` prints it."""
    def cell(obj: Mapping[str, Any]) -> str:
        selector = jsonpath(obj, path) or {}
        parts = [f'{k}={v}' for k, v in sorted((selector.get('matchLabels') or {}).items())]
        for expression in selector.get('matchExpressions') or []:
            operator, values = expression.get('operator', ''), ','.join(expression.get('values') or [])
            key = expression.get('key', '')
            parts.append({'In': f'{key} in ({values})', 'NotIn': f'{key} notin ({values})',
                          'Exists': key, 'DoesNotExist': f'!{key}'}.get(operator, key))
        return ','.join(parts) or NONE
    return cell


def _names(path: str, field: str) -> Cell:
    return lambda obj: ','.join(str(c.get(field, '')) for c in jsonpath(obj, path) or []) or NONE


def _joined(path: str, empty: str = NONE, separator: str = ',') -> Cell:
    return lambda obj: separator.join(str(v) for v in jsonpath(obj, path) or []) or empty


def _limited(values: list[str], empty: str = NONE) -> str:
    """At most three values, then `+ N more...`, as the endpoint printers do."""
    if not values:
        return empty
    more = f' + {len(values) - 3} more...' if len(values) > 3 else ''
    return ','.join(values[:3]) + more


def _endpoints(obj: Mapping[str, Any]) -> str:
    found = [f'{address.get("ip")}:{port.get("port")}' if subset.get('ports') else str(address.get('ip'))
             for subset in obj.get('subsets') or [] for address in subset.get('addresses') or []
             for port in subset.get('ports') or [{}]]
    return _limited(found)


def _slice_endpoints(obj: Mapping[str, Any]) -> str:
    return _limited([a for e in obj.get('endpoints') or [] for a in e.get('addresses') or []], '<unset>')


def _workload(prefix: str, selector: Cell) -> list[tuple[str, Cell]]:
    return [('Containers', _names(f'{prefix}.spec.containers', 'name')),
            ('Images', _names(f'{prefix}.spec.containers', 'image')), ('Selector', selector)]


def _condition(obj: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    return next((c for c in jsonpath(obj, '.status.conditions') or [] if c.get('type') == kind), None)


def _has(obj: Mapping[str, Any], kind: str) -> bool:
    return (_condition(obj, kind) or {}).get('status') == 'True'


def _job_status(obj: Mapping[str, Any]) -> str:
    for kind, shown in (('Failed', 'Failed'), ('Complete', 'Complete'), ('FailureTarget', 'FailureTarget'),
                        ('SuccessCriteriaMet', 'SuccessCriteriaMet'), ('Suspended', 'Suspended')):
        if _has(obj, kind):
            return shown
    return 'Terminating' if obj['metadata'].get('deletionTimestamp') else 'Running'


def _job_completions(obj: Mapping[str, Any]) -> str:
    succeeded = jsonpath(obj, '.status.succeeded') or 0
    completions = jsonpath(obj, '.spec.completions')
    if completions is not None:
        return f'{succeeded}/{completions}'
    parallelism = jsonpath(obj, '.spec.parallelism') or 0
    return f'{succeeded}/1 of {parallelism}' if parallelism > 1 else f'{succeeded}/1'


def _job_duration(obj: Mapping[str, Any]) -> str:
    started = jsonpath(obj, '.status.startTime')
    if not started:
        return ''
    finished = jsonpath(obj, '.status.completionTime')
    if not finished:
        return age(started)
    moment = datetime.datetime.fromisoformat(str(finished).replace('Z', '+00:00'))
    return age(started, moment)


def _node_status(obj: Mapping[str, Any]) -> str:
    ready = _condition(obj, 'Ready')
    status = {'True': 'Ready', 'False': 'NotReady'}.get(str((ready or {}).get('status')), 'Unknown')
    return status + (',SchedulingDisabled' if jsonpath(obj, '.spec.unschedulable') else '')


def _node_roles(obj: Mapping[str, Any]) -> str:
    labels = obj['metadata'].get('labels') or {}
    roles = {key.split('/', 1)[1] for key in labels if key.startswith('node-role.kubernetes.io/') and '/' in key}
    roles |= {value for key, value in labels.items() if key == 'kubernetes.io/role' and value}
    return ','.join(sorted(r for r in roles if r)) or NONE


def _address(kind: str) -> Cell:
    return lambda obj: next((a.get('address') for a in jsonpath(obj, '.status.addresses') or []
                             if a.get('type') == kind), NONE)


MODES = {'ReadWriteOnce': 'RWO', 'ReadOnlyMany': 'ROX', 'ReadWriteMany': 'RWX', 'ReadWriteOncePod': 'RWOP'}


def _modes(path: str) -> Cell:
    return lambda obj: ','.join(MODES.get(m, m) for m in jsonpath(obj, path) or [])


def _claim(obj: Mapping[str, Any]) -> str:
    ref = jsonpath(obj, '.spec.claimRef') or {}
    return f'{ref.get("namespace")}/{ref.get("name")}' if ref else ''


def _pvc_capacity(obj: Mapping[str, Any]) -> str:
    return str(jsonpath(obj, '.status.capacity.storage') or '') if jsonpath(obj, '.spec.volumeName') else ''


def _storage_class(obj: Mapping[str, Any]) -> str:
    annotated = (obj['metadata'].get('annotations') or {}).get('volume.beta.kubernetes.io/storage-class')
    return str(annotated or jsonpath(obj, '.spec.storageClassName') or '')


def _quota(limits: bool) -> Cell:
    def cell(obj: Mapping[str, Any]) -> str:
        hard, used = jsonpath(obj, '.status.hard') or {}, jsonpath(obj, '.status.used') or {}
        names = sorted(n for n in hard if n.startswith('limits.') == limits)
        return ', '.join(f'{n}: {used.get(n, "0")}/{hard[n]}' for n in names)
    return cell


def _external_ip(obj: Mapping[str, Any]) -> str:
    external = list(jsonpath(obj, '.spec.externalIPs') or [])
    if jsonpath(obj, '.spec.type') == 'LoadBalancer':
        ingress = [i.get('ip') or i.get('hostname') for i in jsonpath(obj, '.status.loadBalancer.ingress') or []]
        return ','.join(external + ingress) or '<pending>'
    if jsonpath(obj, '.spec.type') == 'ExternalName':
        return str(jsonpath(obj, '.spec.externalName') or NONE)
    return ','.join(external) or NONE


def _controller(obj: Mapping[str, Any]) -> str:
    ref = next((r for r in obj['metadata'].get('ownerReferences') or [] if r.get('controller')), None)
    if ref is None:
        return NONE
    group = str(ref.get('apiVersion', '')).rpartition('/')[0]
    return f'{str(ref.get("kind", "")).lower()}{"." + group if group else ""}/{ref.get("name")}'


def _hpa_targets(obj: Mapping[str, Any]) -> str:
    metrics = jsonpath(obj, '.spec.metrics') or []
    if not metrics and jsonpath(obj, '.spec.targetCPUUtilizationPercentage') is not None:   # autoscaling/v1
        return f'cpu: <unknown>/{jsonpath(obj, ".spec.targetCPUUtilizationPercentage")}%'
    texts = []
    for metric in metrics:
        source = metric.get(str(metric.get('type', '')).replace('Resource', 'resource').lower()) or {}
        target = source.get('target') or {}
        wanted = f'{target["averageUtilization"]}%' if 'averageUtilization' in target else (
            target.get('averageValue') or target.get('value') or '')
        name = source.get('name') or (source.get('metric') or {}).get('name') or ''
        texts.append(f'{name}: <unknown>/{wanted}')
    return _limited(texts) if texts else NONE


def _reference(obj: Mapping[str, Any]) -> str:
    return f"{jsonpath(obj, '.spec.scaleTargetRef.kind')}/{jsonpath(obj, '.spec.scaleTargetRef.name')}"


def _binding_subjects(kind: str) -> Cell:
    def cell(obj: Mapping[str, Any]) -> str:
        subjects = [s for s in obj.get('subjects') or [] if s.get('kind') == kind]
        if kind == 'ServiceAccount':
            return ', '.join(f'{s.get("namespace", "")}/{s.get("name", "")}' for s in subjects)
        return ', '.join(str(s.get('name', '')) for s in subjects)
    return cell


def _csr_condition(obj: Mapping[str, Any]) -> str:
    kinds = [str(c.get('type')) for c in jsonpath(obj, '.status.conditions') or []]
    return ','.join(kinds) or 'Pending'


def _apiservice(obj: Mapping[str, Any]) -> str:
    service = jsonpath(obj, '.spec.service')
    return f'{service.get("namespace")}/{service.get("name")}' if service else 'Local'


def _available(obj: Mapping[str, Any]) -> str:
    condition = _condition(obj, 'Available')
    if condition is None:
        return 'Unknown'
    status = str(condition.get('status'))
    return status if status == 'True' else f'{status} ({condition.get("reason", "")})'


def _parameters(path: str, unset: str = NONE) -> Cell:
    def cell(obj: Mapping[str, Any]) -> str:
        ref = jsonpath(obj, path)
        if not ref:
            return unset
        group = ref.get('apiGroup') or str(ref.get('apiVersion', '')).rpartition('/')[0]
        return f'{ref.get("kind")}{"." + group if group else ""}/{ref.get("name", "")}'.rstrip('/')
    return cell


def _ingress_address(obj: Mapping[str, Any]) -> str:
    return ','.join(str(i.get('ip') or i.get('hostname')) for i in jsonpath(obj, '.status.loadBalancer.ingress') or [])


def _parent_ref(obj: Mapping[str, Any]) -> str:
    ref = jsonpath(obj, '.spec.parentRef') or {}
    if not ref:
        return ''
    resource = f'{ref.get("resource")}.{ref["group"]}' if ref.get('group') else str(ref.get('resource'))
    return f'{resource.lower()}{"/" + ref["namespace"] if ref.get("namespace") else ""}/{ref.get("name")}'


def _claim_state(obj: Mapping[str, Any]) -> str:
    deleted = ['deleted'] if obj['metadata'].get('deletionTimestamp') else []
    if not jsonpath(obj, '.status.allocation'):
        return ','.join(deleted or ['pending'])
    return ','.join(deleted + ['allocated'] + (['reserved'] if jsonpath(obj, '.status.reservedFor') else []))


def _queuing(field: str) -> Cell:
    def cell(obj: Mapping[str, Any]) -> Any:
        queuing = jsonpath(obj, '.spec.limited.limitResponse.queuing')
        return NONE if not queuing else queuing.get(field, 0)
    return cell


def _dangling(obj: Mapping[str, Any]) -> str:
    condition = _condition(obj, 'Dangling')
    return '?' if condition is None else str(condition.get('status'))


RS_LIKE: list[tuple[str, Cell]] = [
    ('Desired', integer('.spec.replicas')), ('Current', integer('.status.replicas')),
    ('Ready', integer('.status.readyReplicas')),
]

# The cells of each built-in's columns by column name (the columns themselves come from the real server's
# Tables: `Resource.table_columns`); Name and Age are common. A column without a cell prints `<none>`.
# Events compute their cells together (`tables.event_cells`).
LISTED: dict[tuple[str, str], list[tuple[str, Cell]]] = {
    ('', 'componentstatuses'): [('Status', lambda obj: 'Healthy' if _has(obj, 'Healthy') else 'Unhealthy'),
                                ('Message', lambda obj: str((_condition(obj, 'Healthy') or {}).get('message', ''))),
                                ('Error', lambda obj: str((_condition(obj, 'Healthy') or {}).get('error', '')))],
    ('', 'configmaps'): [('Data', lambda obj: len(obj.get('data') or {}) + len(obj.get('binaryData') or {}))],
    ('', 'endpoints'): [('Endpoints', _endpoints)],
    ('', 'namespaces'): [('Status', get('.status.phase', ''))],
    ('', 'nodes'): [('Status', _node_status), ('Roles', _node_roles),
                    ('Version', get('.status.nodeInfo.kubeletVersion', '')),
                    ('Internal-IP', _address('InternalIP')), ('External-IP', _address('ExternalIP')),
                    ('OS-Image', get('.status.nodeInfo.osImage', '<unknown>')),
                    ('Kernel-Version', get('.status.nodeInfo.kernelVersion', '<unknown>')),
                    ('Container-Runtime', get('.status.nodeInfo.containerRuntimeVersion', '<unknown>'))],
    ('', 'persistentvolumeclaims'): [
        ('Status', get('.status.phase', '')), ('Volume', get('.spec.volumeName', '')), ('Capacity', _pvc_capacity),
        ('Access Modes', _modes('.status.accessModes')), ('StorageClass', _storage_class),
        ('VolumeAttributesClass', get('.spec.volumeAttributesClassName', '<unset>')),
        ('VolumeMode', get('.spec.volumeMode', '<unset>'))],
    ('', 'persistentvolumes'): [
        ('Capacity', get('.spec.capacity.storage', '')), ('Access Modes', _modes('.spec.accessModes')),
        ('Reclaim Policy', get('.spec.persistentVolumeReclaimPolicy', '')), ('Status', get('.status.phase', '')),
        ('Claim', _claim), ('StorageClass', _storage_class),
        ('VolumeAttributesClass', get('.spec.volumeAttributesClassName', '<unset>')),
        ('Reason', get('.status.reason', '')), ('VolumeMode', get('.spec.volumeMode', '<unset>'))],
    ('', 'pods'): [('Ready', _pod_ready), ('Status', _pod_status), ('Restarts', _pod_restarts),
                   ('IP', get('.status.podIP')), ('Node', get('.spec.nodeName')),
                   ('Nominated Node', get('.status.nominatedNodeName')), ('Readiness Gates', lambda obj: NONE)],
    ('', 'podtemplates'): [('Containers', _names('.template.spec.containers', 'name')),
                           ('Images', _names('.template.spec.containers', 'image')),
                           ('Pod Labels', _labels('.template.metadata.labels'))],
    ('', 'replicationcontrollers'): RS_LIKE + _workload('.spec.template', _labels('.spec.selector')),
    ('', 'resourcequotas'): [('Request', _quota(False)), ('Limit', _quota(True))],
    ('', 'secrets'): [('Type', get('.type', '')), ('Data', lambda obj: len(obj.get('data') or {}))],
    ('', 'serviceaccounts'): [('Secrets', count('.secrets'))],
    ('', 'services'): [('Type', get('.spec.type', '')), ('Cluster-IP', get('.spec.clusterIP')),
                       ('External-IP', _external_ip), ('Port(s)', _ports), ('Selector', _labels('.spec.selector'))],
    ('apiregistration.k8s.io', 'apiservices'): [('Service', _apiservice), ('Available', _available)],
    ('apps', 'controllerrevisions'): [('Controller', _controller), ('Revision', integer('.revision'))],
    ('apps', 'daemonsets'): [
        ('Desired', integer('.status.desiredNumberScheduled')), ('Current', integer('.status.currentNumberScheduled')),
        ('Ready', integer('.status.numberReady')), ('Up-to-date', integer('.status.updatedNumberScheduled')),
        ('Available', integer('.status.numberAvailable')),
        ('Node Selector', _labels('.spec.template.spec.nodeSelector')),
        *_workload('.spec.template', _selector('.spec.selector'))],
    ('apps', 'deployments'): [
        ('Ready', lambda obj: f"{jsonpath(obj, '.status.readyReplicas') or 0}/{jsonpath(obj, '.spec.replicas') or 0}"),
        ('Up-to-date', integer('.status.updatedReplicas')), ('Available', integer('.status.availableReplicas')),
        *_workload('.spec.template', _selector('.spec.selector'))],
    ('apps', 'replicasets'): RS_LIKE + _workload('.spec.template', _selector('.spec.selector')),
    ('apps', 'statefulsets'): [
        ('Ready', lambda obj: f"{jsonpath(obj, '.status.readyReplicas') or 0}/{jsonpath(obj, '.spec.replicas') or 0}"),
        *_workload('.spec.template', _selector('.spec.selector'))],
    ('autoscaling', 'horizontalpodautoscalers'): [
        ('Reference', _reference),
        ('Targets', _hpa_targets), ('MinPods', text('.spec.minReplicas', '<unset>')),
        ('MaxPods', integer('.spec.maxReplicas')), ('Replicas', integer('.status.currentReplicas'))],
    ('batch', 'cronjobs'): [
        ('Schedule', get('.spec.schedule', '')), ('Timezone', get('.spec.timeZone')),
        ('Suspend', lambda obj: str(bool(jsonpath(obj, '.spec.suspend')))), ('Active', count('.status.active')),
        ('Last Schedule', when('.status.lastScheduleTime')),
        *_workload('.spec.jobTemplate.spec.template', _selector('.spec.jobTemplate.spec.selector'))],
    ('batch', 'jobs'): [('Status', _job_status), ('Completions', _job_completions), ('Duration', _job_duration),
                        *_workload('.spec.template', _selector('.spec.selector'))],
    ('certificates.k8s.io', 'certificatesigningrequests'): [
        ('SignerName', get('.spec.signerName', '')), ('Requestor', get('.spec.username', '')),
        ('RequestedDuration', lambda obj: human_duration(obj['spec']['expirationSeconds'])
         if jsonpath(obj, '.spec.expirationSeconds') else NONE), ('Condition', _csr_condition)],
    ('networking.k8s.io', 'ingressclasses'): [('Controller', get('.spec.controller', '')),
                                              ('Parameters', _parameters('.spec.parameters'))],
    ('networking.k8s.io', 'ingresses'): [
        ('Class', get('.spec.ingressClassName')),
        ('Hosts', lambda obj: ','.join(r.get('host') or '*' for r in jsonpath(obj, '.spec.rules') or []) or '*'),
        ('Address', _ingress_address), ('Ports', lambda obj: '80, 443' if jsonpath(obj, '.spec.tls') else '80')],
    ('networking.k8s.io', 'ipaddresses'): [('ParentRef', _parent_ref)],
    ('networking.k8s.io', 'networkpolicies'): [('Pod-Selector', _selector('.spec.podSelector'))],
    ('networking.k8s.io', 'servicecidrs'): [('CIDRs', _joined('.spec.cidrs', ''))],
    ('policy', 'poddisruptionbudgets'): [('Min Available', text('.spec.minAvailable', 'N/A')),
                                         ('Max Unavailable', text('.spec.maxUnavailable', 'N/A')),
                                         ('Allowed Disruptions', integer('.status.disruptionsAllowed'))],
    **{('rbac.authorization.k8s.io', plural): [
        ('Role', lambda obj: f"{jsonpath(obj, '.roleRef.kind')}/{jsonpath(obj, '.roleRef.name')}"),
        ('Users', _binding_subjects('User')), ('Groups', _binding_subjects('Group')),
        ('ServiceAccounts', _binding_subjects('ServiceAccount'))]
       for plural in ('rolebindings', 'clusterrolebindings')},
    ('storage.k8s.io', 'csidrivers'): [
        ('AttachRequired', boolean('.spec.attachRequired', True)), ('PodInfoOnMount', boolean('.spec.podInfoOnMount')),
        ('StorageCapacity', boolean('.spec.storageCapacity')),
        ('TokenRequests', lambda obj: ','.join(str(t.get('audience', '')) for t in jsonpath(obj, '.spec.tokenRequests')
                                               or []) or '<unset>'),
        ('RequiresRepublish', boolean('.spec.requiresRepublish')), ('Modes', _joined('.spec.volumeLifecycleModes'))],
    ('storage.k8s.io', 'csinodes'): [('Drivers', count('.spec.drivers'))],
    ('storage.k8s.io', 'storageclasses'): [
        ('Provisioner', get('.provisioner', '')), ('ReclaimPolicy', get('.reclaimPolicy', 'Delete')),
        ('VolumeBindingMode', get('.volumeBindingMode', 'Immediate')),
        ('AllowVolumeExpansion', boolean('.allowVolumeExpansion'))],
    ('storage.k8s.io', 'volumeattachments'): [
        ('Attacher', get('.spec.attacher', '')), ('PV', get('.spec.source.persistentVolumeName', '')),
        ('Node', get('.spec.nodeName', '')), ('Attached', boolean('.status.attached'))],
    ('storage.k8s.io', 'volumeattributesclasses'): [('DriverName', get('.driverName', ''))],
    ('admissionregistration.k8s.io', 'mutatingwebhookconfigurations'): [('Webhooks', count('.webhooks'))],
    ('admissionregistration.k8s.io', 'validatingwebhookconfigurations'): [('Webhooks', count('.webhooks'))],
    ('admissionregistration.k8s.io', 'validatingadmissionpolicies'): [
        ('Validations', count('.spec.validations')), ('ParamKind', _parameters('.spec.paramKind', '<unset>'))],
    ('admissionregistration.k8s.io', 'validatingadmissionpolicybindings'): [
        ('PolicyName', get('.spec.policyName', '')), ('ParamRef', _parameters('.spec.paramRef', '<unset>'))],
    ('scheduling.k8s.io', 'priorityclasses'): [
        ('Value', integer('.value')), ('Global-Default', boolean('.globalDefault')),
        ('PreemptionPolicy', get('.preemptionPolicy', ''))],
    ('coordination.k8s.io', 'leases'): [('Holder', get('.spec.holderIdentity', ''))],
    ('node.k8s.io', 'runtimeclasses'): [('Handler', get('.handler', ''))],
    ('discovery.k8s.io', 'endpointslices'): [
        ('AddressType', get('.addressType', '')), ('Endpoints', _slice_endpoints),
        ('Ports', lambda obj: ','.join(str(p.get('port', '')) for p in obj.get('ports') or []) or '<unset>')],
    ('resource.k8s.io', 'resourceclaims'): [('State', _claim_state)],
    ('resource.k8s.io', 'resourceslices'): [('Node', get('.spec.nodeName', '')), ('Driver', get('.spec.driver', '')),
                                            ('Pool', get('.spec.pool.name', ''))],
    ('flowcontrol.apiserver.k8s.io', 'flowschemas'): [
        ('PriorityLevel', get('.spec.priorityLevelConfiguration.name', '')),
        ('MatchingPrecedence', integer('.spec.matchingPrecedence')),
        ('DistinguisherMethod', get('.spec.distinguisherMethod.type')), ('MissingPL', _dangling)],
    ('flowcontrol.apiserver.k8s.io', 'prioritylevelconfigurations'): [
        ('Type', get('.spec.type', '')),
        ('NominalConcurrencyShares', lambda obj: NONE if obj['spec'].get('type') == 'Exempt' else
         jsonpath(obj, '.spec.limited.nominalConcurrencyShares') or 0),
        ('Queues', _queuing('queues')), ('HandSize', _queuing('handSize')),
        ('QueueLengthLimit', _queuing('queueLengthLimit'))],
}
CELLS: dict[tuple[str, str], dict[str, Cell]] = {key: dict(cells) for key, cells in LISTED.items()}
COMMON: dict[str, Cell] = {
    'Name': lambda obj: obj['metadata']['name'],
    'Age': lambda obj: age(obj['metadata'].get('creationTimestamp')),
    'Created At': lambda obj: obj['metadata'].get('creationTimestamp'),
}


@functools.cache
def _columns() -> dict[tuple[str, str], tuple[Mapping[str, Any], ...]]:
    return {resource.key: resource.table_columns for resource in resourcetable.BUILTINS}


def builtin_columns(key: tuple[str, str]) -> list[tuple[dict[str, Any], Cell]]:
    """The real server's columns of a built-in kind (Name and Age if it has none), with their cells."""
    cells = CELLS.get(key, {})
    definitions: tuple[Mapping[str, Any], ...] = _columns().get(key) or (NAME, AGE)
    result: list[tuple[dict[str, Any], Cell]] = []
    for definition in definitions:
        name = str(definition['name'])
        result.append((dict(definition), cells.get(name) or COMMON.get(name) or (lambda obj: NONE)))
    return result
