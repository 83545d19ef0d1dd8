"""The store's sorted keys per kind: what iteration and a paged list see, kept exact across writes.

A list page bisects to its continue point in the kind's sorted keys (kept until an object is added or
removed), instead of sorting and scanning every object of the kind per page."""
import pytest

from kopf._cluster.apis.routing import Target
from kopf._cluster.pipeline.state import State
from kopf._cluster.store import reading
from kopf._cluster.store.objectstore import ObjKey, Store

KEY = ('', 'configmaps')
NAMES = [('b', 'x'), ('a', 'z'), ('ab', 'a'), ('a', 'y'), ('', 'c'), ('b', 'a'), ('a-', 'q'), ('a', 'a')]


def _store(keys: list[ObjKey]) -> Store:
    store = Store()
    for namespace, name in keys:
        store.put(KEY, {'metadata': {'name': name, 'namespace': namespace}})
    return store


def _scanned(store: Store, namespace: str | None, after: ObjKey | None) -> list[ObjKey]:
    """What the full scan that the bisection replaced finds."""
    return [k for k in sorted(store.objects[KEY]) if (namespace is None or k[0] == namespace)
            and (after is None or k > after)]


@pytest.mark.parametrize('namespace', [None, '', 'a', 'a-', 'ab', 'b', 'c', 'aa'])
@pytest.mark.parametrize('after', [None, ('a', 'y'), ('a', 'zz'), ('', ''), ('b', 'x'), ('zzz', 'z'), ('a-', 'a')])
def test_keys_are_the_scan(namespace: str | None, after: ObjKey | None) -> None:
    store = _store(NAMES)
    assert store.keys(KEY, namespace, after) == _scanned(store, namespace, after)


def test_keys_follow_additions_and_removals() -> None:
    store = _store(NAMES)
    assert store.keys(KEY) == sorted(NAMES)   # kept from here on
    store.put(KEY, {'metadata': {'name': 'b', 'namespace': 'a'}})
    store.delete(KEY, {'metadata': {'name': 'x', 'namespace': 'b'}})
    expected = sorted((set(NAMES) | {('a', 'b')}) - {('b', 'x')})
    assert store.keys(KEY) == expected
    assert [(o['metadata']['namespace'], o['metadata']['name']) for o in store.iterate(KEY)] == expected
    store.put(KEY, {'metadata': {'name': 'b', 'namespace': 'a', 'labels': {'x': 'y'}}})   # a modification
    assert store.keys(KEY) == expected
    store.clear()
    assert store.keys(KEY) == []


def test_keys_are_a_copy() -> None:
    store = _store(NAMES)
    keys = store.keys(KEY)
    keys.clear()
    assert store.keys(KEY) == sorted(NAMES)


@pytest.mark.parametrize('limit', [1, 2, 3, 7, 8, 100])
@pytest.mark.parametrize('namespace', [None, 'a'])
def test_paged_list_visits_each_object_once_in_order(limit: int, namespace: str | None) -> None:
    state = State()
    resource = state.catalog.by_key(KEY)
    assert resource is not None
    for ns, name in NAMES:
        state.store.put(KEY, {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': name, 'namespace': ns}})
    target = Target(resource, namespace, None)
    seen: list[ObjKey] = []
    remaining: list[int] = []
    token = ''
    while True:
        params = {'limit': str(limit), **({'continue': token} if token else {})}
        items, meta = reading.select(state.store, target, params)
        seen.extend((o['metadata']['namespace'], o['metadata']['name']) for o in items)
        token = meta.get('continue', '')
        if not token:
            break
        remaining.append(meta['remainingItemCount'])
    expected = _scanned(state.store, namespace, None)
    assert seen == expected
    assert remaining == [len(expected) - limit * (page + 1) for page in range(len(remaining))]
