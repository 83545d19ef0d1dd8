"""The endpoints controllers: a Service with a selector gets an Endpoints and an EndpointSlice of its Pods.

`reconcile(service, pods, endpoints, slices)` gets the Service, the Pods of its namespace, its Endpoints
(same name) and its EndpointSlices (label `kubernetes.io/service-name`), and plans both: ready Pods
with an IP as `addresses` (EndpointSlice: `conditions.ready`), the others as `notReadyAddresses`
(`ready: false`), the ports with named target ports resolved against each Pod's containers.
"""

from kopf._cluster.controllers import podstates
from kopf._cluster.controllers.writeplans import ENDPOINTS, SLICES, Create, Delete, Obj, Plan, owner_ref

SERVICE_NAME = 'kubernetes.io/service-name'
MANAGED_BY = 'endpointslice.kubernetes.io/managed-by'
MANAGER = 'endpointslice-controller.k8s.io'


def selected(service: Obj, pods: list[Obj]) -> list[Obj]:
    selector = (service.get('spec') or {}).get('selector') or {}
    found = [pod for pod in pods if selector and (pod.get('status') or {}).get('podIP')
             and not pod['metadata'].get('deletionTimestamp') and not podstates.finished(pod)
             and selector.items() <= (pod['metadata'].get('labels') or {}).items()]
    return sorted(found, key=lambda pod: str(pod['metadata']['name']))


def _target_port(port: Obj, pod: Obj | None) -> int:
    target = port.get('targetPort', port.get('port'))
    if isinstance(target, int):
        return target
    for container in ((pod or {}).get('spec') or {}).get('containers') or []:
        for declared in container.get('ports') or []:
            if declared.get('name') == target:
                return int(declared.get('containerPort') or 0)
    try:
        return int(str(target))
    except ValueError:
        return int(port.get('port') or 0)


def _ports(service: Obj, pod: Obj | None) -> list[Obj]:
    return [{'name': port.get('name', ''), 'port': _target_port(port, pod), 'protocol': port.get('protocol', 'TCP')}
            for port in (service.get('spec') or {}).get('ports') or [] if isinstance(port, dict)]


def _target_ref(pod: Obj) -> Obj:
    meta = pod['metadata']
    return {'kind': 'Pod', 'namespace': meta.get('namespace'), 'name': meta['name'], 'uid': meta.get('uid')}


def endpoints_of(service: Obj, pods: list[Obj]) -> Obj:
    meta = service['metadata']
    body: Obj = {'apiVersion': 'v1', 'kind': 'Endpoints',
                 'metadata': {'name': meta['name'], 'namespace': meta.get('namespace')}}
    if meta.get('labels'):
        body['metadata']['labels'] = dict(meta['labels'])
    ready: list[Obj] = []
    unready: list[Obj] = []
    for pod in pods:
        address = {'ip': pod['status']['podIP'], 'nodeName': (pod.get('spec') or {}).get('nodeName'),
                   'targetRef': _target_ref(pod)}
        (ready if podstates.ready(pod) else unready).append(address)
    if ready or unready:
        subset: Obj = {}
        if ready:
            subset['addresses'] = ready
        if unready:
            subset['notReadyAddresses'] = unready
        subset['ports'] = _ports(service, pods[0])
        body['subsets'] = [subset]
    return body


def slice_of(service: Obj, pods: list[Obj], name: str | None) -> Obj:
    meta = service['metadata']
    labels = {**(meta.get('labels') or {}), SERVICE_NAME: meta['name'], MANAGED_BY: MANAGER}
    slice_meta: Obj = {'namespace': meta.get('namespace'), 'labels': labels, 'ownerReferences': [owner_ref(service)]}
    if name:
        slice_meta['name'] = name
    else:
        slice_meta['generateName'] = f'{meta["name"]}-'
    endpoints = [{'addresses': [pod['status']['podIP']],
                  'conditions': {'ready': podstates.ready(pod), 'serving': podstates.ready(pod), 'terminating': False},
                  'nodeName': (pod.get('spec') or {}).get('nodeName'), 'targetRef': _target_ref(pod)}
                 for pod in pods]
    body: Obj = {'apiVersion': 'discovery.k8s.io/v1', 'kind': 'EndpointSlice', 'metadata': slice_meta,
                 'addressType': 'IPv4', 'endpoints': endpoints,
                 'ports': _ports(service, pods[0] if pods else None)}
    return body


def _merged(current: Obj, desired: Obj) -> Obj:
    meta = {**current['metadata'], **{k: v for k, v in desired['metadata'].items() if k != 'generateName'}}
    if 'labels' not in desired['metadata']:
        meta.pop('labels', None)
    merged = {**current, **{k: v for k, v in desired.items() if k != 'metadata'}, 'metadata': meta}
    if 'subsets' not in desired:
        merged.pop('subsets', None)
    return merged


def reconcile(service: Obj, pods: list[Obj], endpoints: Obj | None, slices: list[Obj]) -> Plan:
    plan = Plan()
    spec = service.get('spec') or {}
    if service['metadata'].get('deletionTimestamp') or not spec.get('selector') or spec.get('type') == 'ExternalName':
        return plan
    chosen = selected(service, pods)
    desired = endpoints_of(service, chosen)
    if endpoints is None:
        plan.writes.append(Create(ENDPOINTS, desired))
    else:
        plan.update(ENDPOINTS, endpoints, _merged(endpoints, desired))
    ours = [s for s in slices if (s['metadata'].get('labels') or {}).get(MANAGED_BY) == MANAGER]
    if not ours:
        plan.writes.append(Create(SLICES, slice_of(service, chosen, None)))
    else:
        first, *rest = sorted(ours, key=lambda s: str(s['metadata']['name']))
        plan.update(SLICES, first, _merged(first, slice_of(service, chosen, first['metadata']['name'])))
        for extra in rest:
            plan.writes.append(Delete(SLICES, extra))
    return plan
