"""The DaemonSet controller: one Pod per Ready node that its node selector matches.

`reconcile(ds, pods, nodes, now)` gets the DaemonSet's own Pods and the nodes; it plans a Pod
(`<ds>-xxxxx`, bound to its node by `spec.nodeName`, as with upstream's node affinity) for every fitting
node without one, deletes Pods on nodes that no longer fit, replaces Pods of an older template
(RollingUpdate, one at a time), and writes the status counts.
"""
from kopf._cluster.controllers import kubelet, podstates
from kopf._cluster.controllers.deployments import template_hash
from kopf._cluster.controllers.replicasets import pod_from_template
from kopf._cluster.controllers.writeplans import PODS, Create, Delete, Key, Obj, Plan, count

DAEMONSETS: Key = ('apps', 'daemonsets')
REVISION_LABEL = 'controller-revision-hash'


def _fits(ds: Obj, node: Obj) -> bool:
    spec = ((ds.get('spec') or {}).get('template') or {}).get('spec') or {}
    labels = node['metadata'].get('labels') or {}
    return all(labels.get(k) == v for k, v in (spec.get('nodeSelector') or {}).items())


def reconcile(ds: Obj, pods: list[Obj], nodes: list[Obj], now: float) -> Plan:
    plan = Plan()
    if ds['metadata'].get('deletionTimestamp'):
        return plan
    spec = ds.get('spec') or {}
    template = spec.get('template') or {}
    hashed = template_hash(template)
    wanted = {str(n['metadata']['name']) for n in nodes if _fits(ds, n)}
    active = [p for p in pods if podstates.active(p)]
    by_node: dict[str, Obj] = {}
    for pod in active:
        node = str((pod.get('spec') or {}).get('nodeName') or '')
        if node not in wanted or node in by_node:
            plan.writes.append(Delete(PODS, pod))
        else:
            by_node[node] = pod
    for node in sorted(wanted - set(by_node)):
        pod = pod_from_template(ds, template, f'{ds["metadata"]["name"]}-')
        pod['metadata']['labels'].update({REVISION_LABEL: hashed, 'pod-template-generation':
                                          str(ds['metadata'].get('generation') or 1)})
        pod['spec'] = {**pod['spec'], 'nodeName': node}
        plan.writes.append(Create(PODS, pod))
    stale = [p for p in by_node.values() if (p['metadata'].get('labels') or {}).get(REVISION_LABEL) != hashed]
    if stale and all(podstates.ready(p) for p in by_node.values()):
        plan.writes.append(Delete(PODS, sorted(stale, key=lambda p: str(p['metadata']['name']))[0]))
    placed = list(by_node.values())
    ready_nodes = {str(n['metadata']['name']) for n in nodes if kubelet.node_ready(n)}
    min_ready = count(spec.get('minReadySeconds'), 0)
    status = {
        'currentNumberScheduled': len(placed), 'desiredNumberScheduled': len(wanted), 'numberMisscheduled': 0,
        'numberReady': sum(1 for p in placed if podstates.ready(p)),
        'observedGeneration': int(ds['metadata'].get('generation') or 1),
        'updatedNumberScheduled': sum(1 for p in placed
                                      if (p['metadata'].get('labels') or {}).get(REVISION_LABEL) == hashed),
        'numberAvailable': sum(1 for p in placed if podstates.available(p, min_ready, now)),
    }
    unavailable = len(wanted & ready_nodes) - status['numberAvailable']
    if unavailable > 0:
        status['numberUnavailable'] = unavailable
    if not status['numberAvailable']:
        del status['numberAvailable']
    plan.update(DAEMONSETS, ds, {**ds, 'status': status})
    return plan
