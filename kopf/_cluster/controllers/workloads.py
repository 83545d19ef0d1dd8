"""The workload controllers at work: which objects to look at, when, and their plans written to the store.

`Workloads` follows the store's changes (a listener, as the watch hub is) and keeps an ordered set of the
objects to reconcile (a changed Pod: the Pod itself, for the kubelet, its controller, the Services of its
namespace) and a heap of clock times at which to look again (a Pod's start, a back-off, a deadline).
`step()` reconciles them with the pure controllers (`deployments`, `replicasets`, `jobs`, `kubelet`,
`serviceendpoints`) and writes their plans through the write pipeline; the controllers' task (`sweeping.Sweeper`)
runs it whenever there is something to do, and not at all when no workload exists.
"""
import heapq
import itertools
import logging
from collections.abc import Callable

from kopf._cluster import statuses
from kopf._cluster.apis.routing import Target
from kopf._cluster.controllers import (
    cronjobs,
    daemonsets,
    deployments,
    jobs,
    kubelet,
    replicasets,
    seeding,
    serviceendpoints,
    statefulsets,
)
from kopf._cluster.controllers.clock import Clock, stamp
from kopf._cluster.controllers.knobs import Knobs
from kopf._cluster.controllers.writeplans import (
    DEPLOYMENTS,
    ENDPOINTS,
    JOBS,
    NAMESPACES,
    NODES,
    PODS,
    REPLICASETS,
    SERVICES,
    SLICES,
    Create,
    Delete,
    Key,
    Obj,
    Plan,
    Update,
    controller_of,
)
from kopf._cluster.pipeline import writing
from kopf._cluster.pipeline.state import State
from kopf._cluster.store.objectstore import Change
from kopf._shared.resourcetable import Resource

logger = logging.getLogger(__name__)

Entry = tuple[str, str, str]    # (what, namespace, name)
OPTIONS = writing.Options(validation='Ignore', manager='kube-controller-manager')
BUDGET = 200                    # objects reconciled per step before the event loop serves requests again
RCS: Key = ('', 'replicationcontrollers')
OWNED: dict[str, str] = {'ReplicaSet': 'replicaset', 'Job': 'job', 'Deployment': 'deployment',
                         'StatefulSet': 'statefulset', 'DaemonSet': 'daemonset', 'CronJob': 'cronjob',
                         'ReplicationController': 'replicationcontroller'}
KINDS: dict[Key, str] = {DEPLOYMENTS: 'deployment', REPLICASETS: 'replicaset', JOBS: 'job', PODS: 'pod',
                         RCS: 'replicationcontroller',
                         SERVICES: 'service', statefulsets.STATEFULSETS: 'statefulset',
                         daemonsets.DAEMONSETS: 'daemonset', cronjobs.CRONJOBS: 'cronjob'}
KEYS: dict[str, Key] = {what: key for key, what in KINDS.items()}


class Workloads:
    def __init__(self, state: State, *, nodes: int = 1, kubelet_version: str = 'v1.34.4',
                 ca_pem: Callable[[], str | None] = lambda: None, wake: Callable[[], None] = lambda: None) -> None:
        self.state = state
        self.clock = Clock()
        self.knobs = Knobs()
        self.nodes = nodes
        self.kubelet_version = kubelet_version
        self.ca_pem = ca_pem
        self.wake = wake
        self.seeded = False
        self.dirty: dict[Entry, None] = {}
        self.timers: list[tuple[float, int, Entry]] = []
        self.services: dict[str, set[str]] = {}   # namespace -> names of Services with a selector
        self._seq = itertools.count()
        self._resources: dict[Key, Resource | None] = {}
        state.store.listeners.append(self._follow)

    # -- what to look at -------------------------------------------------------------------------

    def _follow(self, change: Change) -> None:
        obj = change.obj
        meta = obj['metadata']
        namespace, name = str(meta.get('namespace') or ''), str(meta['name'])
        before = len(self.dirty)
        what = KINDS.get(change.key)
        if what is not None and change.type != 'DELETED':
            self.dirty[(what, namespace, name)] = None
        if change.key in (PODS, REPLICASETS, JOBS):
            ref = controller_of(obj)
            if ref is not None and ref.get('kind') in OWNED:
                self.dirty[(OWNED[ref['kind']], namespace, str(ref.get('name')))] = None
        if change.key == PODS:
            for service in self.services.get(namespace, ()):
                self.dirty[('service', namespace, service)] = None
        elif change.key == SERVICES:
            self._follow_service(change, namespace, name)
        elif change.key == NAMESPACES and change.type == 'ADDED':
            self.dirty[('namespace', '', name)] = None
        elif change.key == NODES:
            self.dirty[('node', '', name)] = None
        if len(self.dirty) != before:
            self.wake()

    def _follow_service(self, change: Change, namespace: str, name: str) -> None:
        names = self.services.setdefault(namespace, set())
        if change.type != 'DELETED' and (change.obj.get('spec') or {}).get('selector'):
            names.add(name)
        else:
            names.discard(name)
        if change.type == 'DELETED':
            self.dirty[('gone-service', namespace, name)] = None

    def touch_all_pods(self) -> None:
        for pod in list(self.state.store.objects[PODS].values()):
            self.dirty[('pod', str(pod['metadata'].get('namespace') or ''), str(pod['metadata']['name']))] = None
        self.wake()

    def due_in(self) -> float:
        """Seconds until `step()` has something to do (0: now)."""
        if self.dirty or not self.seeded:
            return 0.0
        if not self.timers:
            return float('inf')
        return max(0.0, self.timers[0][0] - self.clock.now())

    # -- doing it --------------------------------------------------------------------------------

    def step(self) -> None:
        self.seed()
        now = self.clock.now()
        while self.timers and self.timers[0][0] <= now:
            self.dirty[heapq.heappop(self.timers)[2]] = None
        for _ in range(BUDGET):
            if not self.dirty:
                break
            entry = next(iter(self.dirty))
            del self.dirty[entry]
            try:
                plan = self._reconcile(entry, self.clock.now())
            except Exception:   # a bug of ours must not stop the other workloads
                logger.exception('The local cluster failed to reconcile %s %s/%s', *entry)
                continue
            if plan is not None:
                self._apply(plan, entry)

    def _reconcile(self, entry: Entry, now: float) -> Plan | None:
        what, namespace, name = entry
        store = self.state.store
        if what == 'namespace':
            self._seed_namespace(name)
            return None
        if what == 'node':
            self.touch_all_pods()
            for daemonset in list(store.objects[daemonsets.DAEMONSETS].values()):
                meta = daemonset['metadata']
                self.dirty[('daemonset', str(meta.get('namespace') or ''), str(meta['name']))] = None
            return None
        if what == 'gone-service':
            found = store.get(ENDPOINTS, namespace, name)
            return Plan([Delete(ENDPOINTS, found)]) if found is not None else None
        obj = store.get(KEYS[what], namespace, name)
        if obj is None:
            return None
        if what == 'pod':
            return kubelet.reconcile(obj, list(store.objects[NODES].values()), self.knobs, now)
        if what == 'service':
            pods = [o for k, o in store.in_namespace(namespace) if k == PODS]
            slices = [o for k, o in store.dependents_of({obj['metadata']['uid']}) if k == SLICES]
            return serviceendpoints.reconcile(obj, pods, store.get(ENDPOINTS, namespace, name), slices)
        owned = self._owned(obj, {'deployment': REPLICASETS, 'cronjob': JOBS}.get(what, PODS))
        if what == 'deployment':
            return deployments.reconcile(obj, owned, now)
        if what in ('replicaset', 'replicationcontroller'):
            return replicasets.reconcile(obj, owned, now, KEYS[what])
        if what == 'statefulset':
            return statefulsets.reconcile(obj, owned, now)
        if what == 'cronjob':
            return cronjobs.reconcile(obj, owned, now)
        if what == 'daemonset':
            return daemonsets.reconcile(obj, owned, list(store.objects[NODES].values()), now)
        return jobs.reconcile(obj, owned, now)

    def _owned(self, owner: Obj, key: Key) -> list[Obj]:
        uid = owner['metadata'].get('uid')
        return [obj for k, obj in self.state.store.dependents_of({uid}) if k == key
                and (controller_of(obj) or {}).get('uid') == uid]

    def _apply(self, plan: Plan, entry: Entry) -> None:
        for write in plan.writes:
            try:
                self._write(write)
            except statuses.ApiError as exc:   # e.g. a namespace being deleted meanwhile: looked at again later
                logger.debug('The local cluster could not write for %s %s/%s: %s', *entry, exc.message)
        if plan.wake_at is not None:
            heapq.heappush(self.timers, (plan.wake_at, next(self._seq), entry))

    def _resource(self, key: Key) -> Resource:
        if key not in self._resources:
            self._resources[key] = self.state.catalog.by_key(key)
        resource = self._resources[key]
        if resource is None:
            raise statuses.generic_not_found()
        return resource

    def _write(self, write: Create | Update | Delete) -> None:
        resource = self._resource(write.key)
        if isinstance(write, Create):
            namespace = write.obj['metadata'].get('namespace') if resource.namespaced else None
            created = writing.create(self.state, Target(resource, namespace, None), dict(write.obj), OPTIONS).obj
            if resource.has_status and write.obj.get('status') and created is not None:   # as a controller would
                self._write(Update(write.key, created, {**created, 'status': write.obj['status']}))
            return
        meta = write.obj['metadata'] if isinstance(write, Delete) else write.current['metadata']
        target = Target(resource, meta.get('namespace') or None, meta['name'])
        if isinstance(write, Delete):
            if self.state.store.get(write.key, meta.get('namespace') or '', meta['name']) is not None:
                writing.delete(self.state, target, writing.Options())
            return
        current, candidate = write.current, write.candidate
        if not resource.has_status:
            writing.update(self.state, target, current, candidate, OPTIONS)
            return
        main = {k: v for k, v in candidate.items() if k != 'status'}
        if main != {k: v for k, v in current.items() if k != 'status'}:
            current = writing.update(self.state, target, current, candidate, OPTIONS).obj or current
        if candidate.get('status') != current.get('status'):
            status = Target(resource, target.namespace, target.name, 'status')
            writing.update(self.state, status, current, {**current, 'status': candidate.get('status')}, OPTIONS)

    # -- what a cluster has before anyone writes -------------------------------------------------

    def seed(self) -> None:
        """Create what is missing of what a cluster has before anyone writes (once; the emulator does it on start)."""
        if self.seeded:
            return
        self.seeded = True
        store = self.state.store
        for index, name in enumerate(seeding.node_names(self.nodes)):
            if store.get(NODES, '', name) is None:
                self._create(seeding.node(name, index, self.kubelet_version))
        if store.get(SERVICES, 'default', 'kubernetes') is None:
            self._create(seeding.kubernetes_service())
        for namespace in list(store.objects[NAMESPACES].values()):
            self._seed_namespace(str(namespace['metadata']['name']))
        for key, what in KINDS.items():   # restored from a state file: their times are due again, if any
            for obj in list(store.objects[key].values()):
                self.dirty[(what, str(obj['metadata'].get('namespace') or ''), str(obj['metadata']['name']))] = None

    def _seed_namespace(self, name: str) -> None:
        store = self.state.store
        namespace = store.get(NAMESPACES, '', name)
        if namespace is None or namespace['metadata'].get('deletionTimestamp'):
            return
        if store.get(('', 'serviceaccounts'), name, 'default') is None:
            self._create(seeding.service_account(name))
        if store.get(('', 'configmaps'), name, 'kube-root-ca.crt') is None:
            self._create(seeding.root_ca(name, self.ca_pem()))

    def _create(self, obj: Obj) -> None:
        key = {'Node': NODES, 'Service': SERVICES, 'ServiceAccount': ('', 'serviceaccounts'),
               'ConfigMap': ('', 'configmaps')}[obj['kind']]
        try:
            self._write(Create(key, obj))
        except statuses.ApiError as exc:
            logger.debug('The local cluster could not create its %s: %s', obj['kind'], exc.message)

    # -- knobs -----------------------------------------------------------------------------------

    def set_node_ready(self, name: str, ready: bool) -> None:
        node = self.state.store.get(NODES, '', name)
        if node is None:
            raise ValueError(f'no such node: {name!r}')
        conditions = [c for c in (node.get('status') or {}).get('conditions') or [] if c.get('type') != 'Ready']
        candidate = {**node, 'status': {**node.get('status', {}),
                                        'conditions': [seeding.ready_condition(ready, stamp(self.clock.now())),
                                                       *conditions]}}
        self._write(Update(NODES, node, candidate))

    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)
        self.wake()
