"""The emulator's whole state: the store, the catalog of served resources, and what follows from changes."""
import os
import time
import uuid
from collections.abc import Callable
from typing import Any

from kopf._cluster import jsoncodec
from kopf._cluster.apis.catalog import Catalog
from kopf._cluster.apis.routing import Target
from kopf._cluster.openapi import fieldorder, validation
from kopf._cluster.patchtypes import fieldowners
from kopf._cluster.patchtypes.fieldowners import Managers
from kopf._cluster.pipeline import kindrules, metadata
from kopf._cluster.rbac import bootstrap, resolver
from kopf._cluster.rbac.authorizer import Authorizer
from kopf._cluster.store.objectstore import Change, Store
from kopf._shared import resourcetable, schemas

QUOTAS = ('', 'resourcequotas')


class State:
    """Store + catalog; keeps the catalog in sync with stored CRDs and notes deleted owners for GC."""

    def __init__(self, history_size: int = 10000, settings: kindrules.Settings | None = None) -> None:
        self.settings = settings or kindrules.Settings()
        self.store = Store(history_size=history_size)
        self.catalog = Catalog()
        self.deleted_uids: set[str] = set()
        self.propagating: set[tuple[tuple[str, str], str, str]] = set()   # foreground/orphan deletions
        self.events_swept = 0.0
        self.managers: dict[str, Managers] = {}   # uid -> field ownership for server-side apply
        self.authorizer = Authorizer(lambda key: self.store.objects[key].values())
        self.token_key = os.urandom(32)   # signs the ServiceAccount tokens that TokenRequest issues
        self.aggregation_due = False      # a ClusterRole changed: the aggregation controller runs soon
        self.quota_namespaces: set[str] = set()   # where ResourceQuotas are (changes there may change usage)
        self.quotas_due: set[str] = set()         # namespaces whose quotas' status the controller recomputes soon
        self.quotas_resynced = time.monotonic()   # the last full resync of all quotas (status edits are undone)
        self.compaction = (time.monotonic(), 0)   # the last compaction's time, and the rv it saw (compacted next)
        self.wake: Callable[[], None] = lambda: None   # the controllers' wake-up (set by the emulator)
        self.store.listeners.append(self._follow)
        for name in resourcetable.INITIAL_NAMESPACES:
            self._seed_namespace(name)
        self._seed_rbac()

    def _seed_rbac(self) -> None:
        """The bootstrap policy, as a real server ensures it at every start (only the missing objects)."""
        for key, obj in bootstrap.seeded(metadata.now()):
            meta = obj['metadata']
            if self.store.get(key, meta.get('namespace') or '', meta['name']) is None:
                self.store.save(key, obj, None, arranged=True)

    def _seed_namespace(self, name: str) -> None:
        obj = {
            'kind': 'Namespace', 'apiVersion': 'v1',
            'metadata': {'name': name, 'uid': str(uuid.uuid4()), 'creationTimestamp': metadata.now(),
                         'labels': {'kubernetes.io/metadata.name': name}},
            'spec': {'finalizers': ['kubernetes']}, 'status': {'phase': 'Active'},
        }
        self.store.save(resourcetable.NAMESPACES.key, obj, None)

    def _follow(self, change: Change) -> None:
        self.authorizer.follow(change.key)
        if change.key == resolver.CLUSTER_ROLES:
            self.aggregation_due = True
            self.wake()
        if change.key == QUOTAS or self.quota_namespaces:
            self._follow_quotas(change)
        if change.key == resourcetable.CRDS.key:
            name = change.obj['metadata']['name']
            if change.type == 'DELETED':
                self.catalog.drop_custom(name)
            else:
                self.catalog.set_custom(name, resourcetable.served_resources(change.obj))
                if change.old is not None and _schemas(change.old) != _schemas(change.obj):
                    self._reconform(change.obj)
        meta = change.obj['metadata']
        if change.type == 'DELETED' and meta.get('uid'):
            self.deleted_uids.add(meta['uid'])
            self.managers.pop(meta['uid'], None)
        elif meta.get('deletionTimestamp') and {'foregroundDeletion', 'orphan'} & set(meta.get('finalizers') or ()):
            self.propagating.add((change.key, meta.get('namespace') or '', meta['name']))

    def _follow_quotas(self, change: Change) -> None:
        namespace = change.namespace
        if change.key == QUOTAS:
            if change.type == 'DELETED' and self.store.count(QUOTAS, namespace) == 0:
                self.quota_namespaces.discard(namespace)
            elif change.type != 'DELETED':
                self.quota_namespaces.add(namespace)
        if namespace in self.quota_namespaces and (change.key != QUOTAS or change.type == 'ADDED' or
                                                   _spec(change.old) != _spec(change.obj)):
            self.quotas_due.add(namespace)
            self.wake()

    def _reconform(self, crd: dict[str, Any]) -> None:
        """A changed schema shows on stored objects as a real server shows it on read: defaults filled in,
        unknown fields pruned — without a new resourceVersion or a watch event (nothing was written)."""
        spec = crd['spec']
        storage = next((v for v in spec['versions'] if v.get('storage')), None)
        schema = ((storage or {}).get('schema') or {}).get('openAPIV3Schema')
        if not isinstance(schema, dict):
            return
        bucket = self.store.objects[(spec['group'], spec['names']['plural'])]
        for key, obj in list(bucket.items()):
            candidate = jsoncodec.clone(obj)
            validation.apply_defaults(candidate, schema)
            schemas.prune(candidate, schema)
            if candidate != obj:
                fieldorder.arrange(candidate)   # stored objects are in field order (what a write shares stays so)
                bucket[key] = candidate

    def record_write(self, target: Target, manager: str, before: dict[str, Any] | None, after: dict[str, Any]) -> None:
        """Note an ordinary (non-apply) write for the field ownership that server-side apply checks."""
        identity = fieldowners.identity_of(manager, 'Update', target.resource.api_version, target.subresource)
        self.managers.setdefault(after['metadata'].get('uid', ''), Managers()).record(identity, before, after,
                                                                                      target.resource)

    def snapshot(self) -> dict[str, Any]:
        """Everything needed to resume: the RV counter and all objects (the watch history is not kept)."""
        objects = [[group, plural, obj] for (group, plural), bucket in sorted(self.store.objects.items())
                   for obj in bucket.values()]
        owners: dict[str, list[Any]] = {}
        for uid, managers in self.managers.items():
            managers.settle()
            owners[uid] = [[list(identity), sorted(list(path) for path in paths)]
                           for identity, paths in managers.owned.items()]
        return {'resourceVersion': self.store.rv, 'objects': objects, 'managers': owners,
                'tokenKey': self.token_key.hex()}

    def restore(self, snapshot: dict[str, Any]) -> None:
        """Replace the state with a snapshot; older resourceVersions get 410 Expired, as after a compaction."""
        self.store.clear()
        for group, plural, obj in snapshot['objects']:
            meta = obj['metadata']
            self.store.put((group, plural), obj)
            if (group, plural) == resourcetable.CRDS.key:
                self.catalog.set_custom(meta['name'], resourcetable.served_resources(obj))
        self.store.rv = self.store.compacted = int(snapshot['resourceVersion'])
        self.quota_namespaces = {namespace for namespace, _ in self.store.objects[QUOTAS]}
        if snapshot.get('tokenKey'):   # the tokens issued before the restart stay valid
            self.token_key = bytes.fromhex(snapshot['tokenKey'])
        self.authorizer.invalidate()
        self._seed_rbac()
        self.managers = {uid: Managers(owned={tuple(identity): {tuple(path) for path in paths}
                                              for identity, paths in owned})
                         for uid, owned in (snapshot.get('managers') or {}).items()}


def _spec(obj: dict[str, Any] | None) -> Any:
    return (obj or {}).get('spec')


def _schemas(crd: dict[str, Any]) -> list[Any]:
    return [(v.get('name'), v.get('storage'), v.get('schema')) for v in crd['spec'].get('versions') or []]
