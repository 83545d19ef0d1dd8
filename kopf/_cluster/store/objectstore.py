"""In-memory object storage with ONE global resourceVersion counter and a bounded change history.

Writes are plain synchronous calls (the event loop serialises them); each persisted change is
serialised to JSON once, and the same bytes serve the HTTP response and every watcher.

The store also indexes ownership (dependents by owner uid, live uids) and namespaces (the objects in each)
on every write and deletion, so that garbage collection and namespace cleanup cost in proportion to the
dependents of what was deleted or to the namespace's own objects, not to all objects.
"""
import bisect
import collections
from collections.abc import Callable, Iterator
from typing import Any

from kopf._cluster import jsoncodec, statuses
from kopf._cluster.openapi import fieldorder

Key = tuple[str, str]           # (group, plural)
ObjKey = tuple[str, str]        # (namespace or '', name)
Obj = dict[str, Any]
Location = tuple[Key, ObjKey]


class Change:
    """One persisted change; it keeps its own watch line (the serialised object inside it, shared by all watchers
    and by the write's answer): the other lines (a selector's transitions) are built lazily from it."""

    __slots__ = ('_line', '_others', 'key', 'obj', 'old', 'rv', 'type')

    def __init__(self, rv: int, key: Key, type: str, obj: Obj, old: Obj | None, data: bytes) -> None:
        self.rv = rv
        self.key = key
        self.type = type
        self.obj = obj          # the state after the change (for DELETED: the last state with the deletion RV)
        self.old = old          # the state before (for MODIFIED; used by selector transitions)
        self._line = _prefix(type) + data + b'}\n'
        self._others: dict[str, bytes] | None = None

    @property
    def namespace(self) -> str:
        return str(self.obj['metadata'].get('namespace') or '')

    @property
    def data(self) -> bytes:
        """The serialised `obj` (a copy out of its line: the history keeps the line only)."""
        return self._line[len(_prefix(self.type)):-2]

    def line(self, type: str | None = None) -> bytes:
        """The watch line for this change, as `type` (defaults to its own); for a transition out, old content."""
        if type is None or type == self.type:
            return self._line
        others = self._others if self._others is not None else {}
        line = others.get(type)
        if line is None:
            data = self.data
            if type == 'DELETED' and self.type == 'MODIFIED' and self.old is not None:
                gone = jsoncodec.clone(self.old)
                gone['metadata']['resourceVersion'] = str(self.rv)
                data = jsoncodec.dumps(gone)
            line = others[type] = _prefix(type) + data + b'}\n'
            self._others = others
        return line


def _indexed_alike(old: Obj, new: Obj) -> bool:
    """Whether two versions' metadata are indexed alike: the same uid and owner references."""
    return bool(old.get('uid') == new.get('uid') and old.get('ownerReferences') == new.get('ownerReferences'))


_PREFIXES: dict[str, bytes] = {}


def _prefix(type: str) -> bytes:
    prefix = _PREFIXES.get(type)
    if prefix is None:
        prefix = _PREFIXES[type] = b'{"type":"' + type.encode() + b'","object":'
    return prefix


class Store:
    """Objects by storage key and (namespace, name), the RV counter, and the retained history."""

    def __init__(self, history_size: int = 10000, log_size: int = 10000) -> None:
        self.rv = 0
        self.objects: dict[Key, dict[ObjKey, Obj]] = collections.defaultdict(dict)
        self.history: collections.deque[Change] = collections.deque()
        self.history_size = history_size
        self.compacted = 0   # changes with rv <= compacted are gone from the history
        self.log: collections.deque[tuple[str, str, str]] = collections.deque(maxlen=log_size)
        self.listeners: list[Callable[[Change], None]] = []
        self.dependents: dict[str, set[Location]] = {}    # owner uid -> where its dependents are stored
        self.owners: dict[Location, tuple[Any, ...]] = {}  # a dependent's location -> its owners' uids
        self.uids: collections.Counter[Any] = collections.Counter()   # uids of the stored objects
        self.order: dict[Location, int] = {}     # insertion order within a bucket (dict order is kept)
        self.namespaced: dict[str, set[Location]] = {}   # namespace -> where its objects are stored
        self.ordered: dict[Key, list[ObjKey]] = {}   # a kind's keys sorted; dropped when one is added or removed
        self._seq = 0

    def next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def get(self, key: Key, namespace: str, name: str) -> Obj | None:
        return self.objects[key].get((namespace, name))

    def iterate(self, key: Key, namespace: str | None = None) -> Iterator[Obj]:
        """Objects of a kind, sorted by namespace then name, optionally in one namespace only."""
        bucket = self.objects[key]
        for objkey in self.keys(key, namespace):
            yield bucket[objkey]

    def keys(self, key: Key, namespace: str | None = None, after: ObjKey | None = None) -> list[ObjKey]:
        """A kind's object keys sorted by namespace then name (a copy), optionally in one namespace only,
        optionally only those after `after` (a list's continue point): found by bisection, so that a page of
        a paged list costs its own objects, not all of them (the sorted keys are kept until the set changes)."""
        ordered = self.ordered.get(key)
        if ordered is None:
            ordered = self.ordered[key] = sorted(self.objects[key])
        low, high = 0, len(ordered)
        if namespace is not None:   # (ns,) sorts before (ns, any name); (ns + NUL,) after them and before others
            low, high = bisect.bisect_left(ordered, (namespace,)), bisect.bisect_left(ordered, (namespace + '\0',))
        if after is not None:
            low = max(low, bisect.bisect_right(ordered, after))
        return ordered[low:high]

    def count(self, key: Key, namespace: str | None = None) -> int:
        if namespace is None:
            return len(self.objects[key])
        return sum(1 for ns, _ in self.objects[key] if ns == namespace)

    def save(self, key: Key, obj: Obj, old: Obj | None, arranged: bool = False) -> Change:
        """Persist a created or modified object with a fresh RV; returns the change (already published).

        `arranged`: the object is in kube-apiserver's field order already (a seeded object made so once)."""
        rv = self.rv + 1
        obj['metadata']['resourceVersion'] = str(rv)
        if not arranged:
            fieldorder.arrange(obj, old)   # once here: every answer made of it is in kube-apiserver's field order
        try:
            data = jsoncodec.dumps_kept(obj)   # first: what cannot be sent is never stored
        except jsoncodec.TooDeep:   # e.g. after a JSON patch's `add` deep inside
            qualified = f'{key[1]}.{key[0]}' if key[0] else key[1]
            raise statuses.bad_request(f'{qualified} "{obj["metadata"].get("name")}": the object would be nested '
                                       f'deeper than {jsoncodec.MAX_DEPTH} levels (the limit of the local cluster)'
                                       ) from None
        self.rv = rv
        self.put(key, obj)
        return self._record(Change(rv, key, 'ADDED' if old is None else 'MODIFIED', obj, old, data))

    def delete(self, key: Key, obj: Obj) -> Change:
        """Remove an object; the DELETED change carries its last state with the deletion's RV."""
        meta = obj['metadata']
        objkey = (meta.get('namespace') or '', meta['name'])
        self._unindex((key, objkey), self.objects[key].pop(objkey, None))
        self.order.pop((key, objkey), None)
        self.ordered.pop(key, None)
        located = self.namespaced.get(objkey[0])   # kept across saves (same place), dropped only here
        if located is not None:
            located.discard((key, objkey))
            if not located:
                del self.namespaced[objkey[0]]
        rv = self.next_rv()
        gone = jsoncodec.clone(obj)
        gone['metadata']['resourceVersion'] = str(rv)
        return self._record(Change(rv, key, 'DELETED', gone, None, jsoncodec.dumps(gone)))

    def put(self, key: Key, obj: Obj) -> None:
        """Store an object as it is (no RV, no change, no event): for restoring a snapshot, and for `save()`."""
        meta = obj['metadata']
        objkey = (meta.get('namespace') or '', meta['name'])
        bucket = self.objects[key]
        old = bucket.get(objkey)
        if old is not None and _indexed_alike(old['metadata'], meta):   # a new version: the indexes stay as they are
            bucket[objkey] = obj
            return
        if old is None:
            self.ordered.pop(key, None)
        self._unindex((key, objkey), old)
        bucket[objkey] = obj
        self._index((key, objkey), obj)

    def clear(self) -> None:
        self.objects.clear()
        self.history.clear()
        self.dependents.clear()
        self.owners.clear()
        self.uids.clear()
        self.order.clear()
        self.namespaced.clear()
        self.ordered.clear()

    def dependents_of(self, uids: set[str]) -> list[tuple[Key, Obj]]:
        """The stored objects with an owner reference to any of `uids`, in the store's iteration order."""
        found: set[Location] = set()
        for uid in uids:
            found.update(self.dependents.get(uid, ()))
        if not found:
            return []
        return self._located(found)

    def in_namespace(self, namespace: str) -> list[tuple[Key, Obj]]:
        """The stored objects in a namespace (any kind), in the store's iteration order (kind, then insertion)."""
        found = self.namespaced.get(namespace)
        if not namespace or not found:
            return []
        return self._located(found)

    def _located(self, found: set[Location]) -> list[tuple[Key, Obj]]:
        keys = {key: index for index, key in enumerate(self.objects)}
        located = sorted(found, key=lambda location: (keys[location[0]], self.order[location]))
        return [(key, self.objects[key][objkey]) for key, objkey in located]

    def _index(self, location: Location, obj: Obj) -> None:
        if location not in self.order:
            self._seq += 1
            self.order[location] = self._seq
            if location[1][0]:
                self.namespaced.setdefault(location[1][0], set()).add(location)
        meta = obj['metadata']
        self.uids[meta.get('uid')] += 1
        owners = tuple(ref.get('uid') for ref in meta.get('ownerReferences') or [])
        if owners:
            self.owners[location] = owners
            for uid in owners:
                if uid is not None:
                    self.dependents.setdefault(uid, set()).add(location)

    def _unindex(self, location: Location, obj: Obj | None) -> None:
        if obj is None:
            return
        uid = obj['metadata'].get('uid')
        self.uids[uid] -= 1
        if self.uids[uid] <= 0:
            del self.uids[uid]
        for owner in self.owners.pop(location, ()):
            dependents = self.dependents.get(owner)
            if dependents is not None:
                dependents.discard(location)
                if not dependents:
                    del self.dependents[owner]

    def _record(self, change: Change) -> Change:
        self.history.append(change)
        while len(self.history) > self.history_size:
            self.compacted = self.history.popleft().rv
        self.log.append((str(change.obj['metadata'].get('uid', '')), str(change.rv), change.type))
        for listener in self.listeners:
            listener(change)
        return change

    def compact(self, keep: int = 0) -> None:
        """Forget all history but the last `keep` changes (and any rv at or below the current one)."""
        while len(self.history) > keep:
            self.history.popleft()
        self.compacted = self.history[0].rv - 1 if self.history else self.rv

    def compact_to(self, rv: int) -> None:
        """Forget the changes up to `rv`, as etcd's compaction at a revision does (`rv` itself stays readable)."""
        while self.history and self.history[0].rv <= rv:
            self.history.popleft()
        self.compacted = max(self.compacted, rv)

    def changes_since(self, key: Key, rv: int) -> list[Change] | None:
        """Changes of a kind newer than `rv`, oldest first; None if `rv` is older than the history."""
        if rv < self.compacted:
            return None
        found: list[Change] = []
        for change in reversed(self.history):
            if change.rv <= rv:
                break
            if change.key == key:
                found.append(change)
        found.reverse()
        return found
