"""The few controllers every operator relies on: namespace cleanup, CRD cleanup, garbage collection
(background by ownerReferences; foreground and orphan deletion by their finalizers).

`sweep()` is synchronous and idempotent; `Sweeper` runs it after deletions (when woken) and every second.
"""
import asyncio
import datetime
import logging
import time
from collections.abc import Callable

from kopf._cluster import jsoncodec
from kopf._cluster.apis.routing import Target
from kopf._cluster.controllers import quotasync, rolesync
from kopf._cluster.controllers.workloads import Workloads
from kopf._cluster.pipeline import metadata, writing
from kopf._cluster.pipeline.state import State
from kopf._cluster.store.objectstore import Obj
from kopf._shared import resourcetable

logger = logging.getLogger(__name__)

BACKGROUND = writing.Options(manager='kube-controller-manager')
FOREGROUND = writing.Options(propagation='Foreground', manager='kube-controller-manager')


class Sweeper:
    """The controllers' task: a sweep when woken (after deletions), else every second; 0.1 s while pending.

    The same task runs the workload controllers (`workloads.Workloads`) when they have something to do
    (`nudge()`: a workload changed; or a time they asked for is due), without sweeping for that.
    """

    def __init__(self, state: State, workloads: Workloads | None = None) -> None:
        self.state = state
        self.workloads = workloads
        self._wake = asyncio.Event()
        self._sweep = True
        self._stopping = False

    def reset(self) -> None:
        """Before each start (an event of the loop the server runs in now)."""
        self._wake = asyncio.Event()
        self._stopping = False

    def wake(self) -> None:
        self._sweep = True
        self._wake.set()

    def nudge(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stopping = True
        self._wake.set()

    async def run(self) -> None:
        pending = False
        swept = time.monotonic()
        while not self._stopping:
            interval = 0.1 if pending else 1.0
            due = self.workloads.due_in() if self.workloads is not None else interval
            seconds = min(interval - (time.monotonic() - swept), due)
            if seconds > 0:
                await _sleep_until(self._wake, seconds)
            else:   # more to do at once: still let the server answer requests in between
                await asyncio.sleep(0)
            self._wake.clear()
            if self.state.aggregation_due:
                self.state.aggregation_due = False
                _safely(rolesync.aggregate, self.state)
            quotasync.resync(self.state)
            compact(self.state)
            if self.state.quotas_due:
                _safely(quotasync.sync, self.state)
            if self._sweep or time.monotonic() - swept >= interval:
                self._sweep = False
                swept = time.monotonic()
                try:
                    pending = sweep(self.state)
                except Exception:   # a bug of ours must not stop garbage collection for good
                    logger.exception('The emulator controllers failed; retrying soon.')
                    pending = True
            if self.workloads is not None and self.workloads.due_in() == 0:
                self.workloads.step()


def _safely(controller: Callable[[State], None], state: State) -> None:
    try:
        controller(state)
    except Exception:   # a bug of ours must not stop the other controllers
        logger.exception('An emulator controller failed; it runs again on the next change.')


async def _sleep_until(event: asyncio.Event, seconds: float) -> None:
    """Wait for the event or the time, whichever first (no `wait_for`: in 3.11 it can swallow cancellations)."""
    try:
        async with asyncio.timeout(seconds):
            await event.wait()
    except TimeoutError:
        pass


def sweep(state: State) -> bool:
    """One pass of all controllers; returns True if something is still pending (poll again soon)."""
    pending = _namespaces(state)
    pending = _crds(state) or pending
    pending = _propagate(state) or pending
    _collect_garbage(state)
    _expire_events(state)
    return pending


def _delete(state: State, key: tuple[str, str], obj: Obj, options: writing.Options = BACKGROUND) -> None:
    resource = state.catalog.by_key(key)
    meta = obj['metadata']
    if resource is None or meta.get('deletionTimestamp'):
        return
    target = Target(resource, meta.get('namespace') or None, meta['name'])
    writing.delete(state, target, options)


def _namespaces(state: State) -> bool:
    store = state.store
    pending = False
    for namespace in list(store.iterate(resourcetable.NAMESPACES.key)):
        if not namespace['metadata'].get('deletionTimestamp'):
            continue
        # Only the namespace's own objects (indexed by the store), in the store's order (kind, then insertion).
        remaining = store.in_namespace(namespace['metadata']['name'])
        for key, obj in remaining:
            _delete(state, key, obj)
        if remaining:
            pending = True
        else:
            store.delete(resourcetable.NAMESPACES.key, namespace)
    return pending


def _crds(state: State) -> bool:
    store = state.store
    pending = False
    for crd in list(store.iterate(resourcetable.CRDS.key)):
        if not crd['metadata'].get('deletionTimestamp') or crd['metadata'].get('finalizers'):
            continue
        key = (crd['spec']['group'], crd['spec']['names']['plural'])
        objects = list(store.iterate(key))
        for obj in objects:
            _delete(state, key, obj)
        if store.count(key):
            pending = True
        else:
            store.delete(resourcetable.CRDS.key, crd)
    return pending


def _collect_garbage(state: State) -> None:
    if not state.deleted_uids:
        return
    gone = set(state.deleted_uids)
    state.deleted_uids.clear()
    store = state.store
    # Only the dependents of the deleted owners (indexed by the store), decided before any is deleted.
    doomed = [(key, obj) for key, obj in store.dependents_of(gone)
              if not any(ref.get('uid') in store.uids for ref in obj['metadata'].get('ownerReferences') or [])]
    for key, obj in doomed:
        _delete(state, key, obj)


def _propagate(state: State) -> bool:
    """Foreground: delete the dependents first; orphan: detach them; then drop the owner's finalizer."""
    pending = False
    for key, namespace, name in list(state.propagating):
        owner = state.store.get(key, namespace, name)
        finalizers = (owner or {}).get('metadata', {}).get('finalizers') or []
        marker = next((f for f in finalizers if f in ('foregroundDeletion', 'orphan')), None)
        if owner is None or marker is None:
            state.propagating.discard((key, namespace, name))
            continue
        uid = owner['metadata'].get('uid')
        dependents = _dependents(state, uid)
        for dep_key, dependent in dependents:
            if marker == 'orphan':
                _detach(state, dep_key, dependent, uid)
            else:   # dependents with dependents of their own go in the foreground too, as upstream's GC does
                nested = _dependents(state, dependent['metadata'].get('uid'))
                if any(_deleting_dependents(obj) for _, obj in nested):
                    _unblock(state, dep_key, dependent)   # a cycle: it must not wait for its own dependents
                _delete(state, dep_key, dependent, FOREGROUND if nested else BACKGROUND)
        if marker == 'orphan' or not _blocking(state, uid):   # only `blockOwnerDeletion: true` dependents hold it
            _drop_finalizer(state, key, owner, marker)
        else:
            pending = True
    return pending


def _dependents(state: State, uid: str | None) -> list[tuple[tuple[str, str], Obj]]:
    if uid is not None:
        return state.store.dependents_of({uid})
    return [(key, obj) for key, bucket in list(state.store.objects.items()) for obj in list(bucket.values())
            if any(ref.get('uid') == uid for ref in obj['metadata'].get('ownerReferences') or [])]


def _deleting_dependents(obj: Obj) -> bool:
    meta = obj['metadata']
    return bool(meta.get('deletionTimestamp')) and 'foregroundDeletion' in (meta.get('finalizers') or [])


def _unblock(state: State, key: tuple[str, str], obj: Obj) -> None:
    """Upstream's cycle breaker: a dependent not yet deleted whose own dependent is in foreground deletion
    gets `blockOwnerDeletion: false` on all its ownerReferences before its own foreground deletion."""
    if obj['metadata'].get('deletionTimestamp'):
        return
    candidate = jsoncodec.clone(obj)
    refs = candidate['metadata'].get('ownerReferences') or []
    if not any(ref.get('blockOwnerDeletion') for ref in refs):
        return
    for ref in refs:
        if ref.get('blockOwnerDeletion'):
            ref['blockOwnerDeletion'] = False
    _update(state, key, obj, candidate)


def _blocking(state: State, uid: str | None) -> bool:
    return any(ref.get('uid') == uid and ref.get('blockOwnerDeletion')
               for _, dependent in _dependents(state, uid) for ref in dependent['metadata']['ownerReferences'])


def _update(state: State, key: tuple[str, str], obj: Obj, candidate: Obj) -> None:
    resource = state.catalog.by_key(key)
    if resource is not None:
        meta = obj['metadata']
        writing.update(state, Target(resource, meta.get('namespace') or None, meta['name']), obj, candidate,
                       BACKGROUND)


def _detach(state: State, key: tuple[str, str], obj: Obj, uid: str | None) -> None:
    candidate = jsoncodec.clone(obj)
    refs = [ref for ref in candidate['metadata'].get('ownerReferences') or [] if ref.get('uid') != uid]
    candidate['metadata']['ownerReferences'] = refs
    _update(state, key, obj, candidate)


def _drop_finalizer(state: State, key: tuple[str, str], obj: Obj, marker: str) -> None:
    candidate = jsoncodec.clone(obj)
    candidate['metadata']['finalizers'] = [f for f in candidate['metadata']['finalizers'] if f != marker]
    _update(state, key, obj, candidate)


def compact(state: State) -> None:
    """kube-apiserver's compactor (`--etcd-compaction-interval`, 5 minutes): at every interval, the history up to
    the resourceVersion seen at the previous one is forgotten; watches and continue tokens older than that are
    410 Expired (a continue token's 410 offers an inconsistent continuation). As the compactor's own write to
    etcd (its `compact_rev_key`) does, each compaction takes a resourceVersion: even a quiet cluster moves on."""
    interval = state.settings.compaction_interval
    last, seen = state.compaction
    now = time.monotonic()
    if interval <= 0 or now - last < interval:
        return
    state.store.rv += 1   # no object of the API changed: no watch event
    state.compaction = (now, state.store.rv)
    if seen:
        state.store.compact_to(seen)


EVENT_KEYS = (('', 'events'), ('events.k8s.io', 'events'))


def _expire_events(state: State) -> None:
    """Delete Events older than the TTL (checked at most every few seconds)."""
    now = time.time()
    if now - state.events_swept < min(10.0, state.settings.event_ttl):
        return
    state.events_swept = now
    horizon = datetime.datetime.fromtimestamp(now - state.settings.event_ttl, datetime.UTC)
    cutoff = metadata.render(horizon)
    for key in EVENT_KEYS:
        for event in list(state.store.iterate(key)):
            if str(event['metadata'].get('creationTimestamp', '')) < cutoff:
                state.store.delete(key, event)
