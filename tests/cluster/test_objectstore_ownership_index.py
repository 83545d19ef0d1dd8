"""The store's ownership index (dependents by owner uid) follows every write, deletion and restore."""
from typing import Any

from kopf._cluster.apis.routing import Target
from kopf._cluster.controllers import sweeping
from kopf._cluster.pipeline import writing
from kopf._cluster.pipeline.state import State

OPTIONS = writing.Options()
KEY = ('', 'configmaps')


def _create(state: State, name: str, owners: tuple[str, ...] = ()) -> dict[str, Any]:
    resource = state.catalog.by_key(KEY)
    assert resource is not None
    refs = [{'apiVersion': 'v1', 'kind': 'ConfigMap', 'name': 'x', 'uid': uid} for uid in owners]
    body = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': name, 'ownerReferences': refs}}
    writing.create(state, Target(resource, 'default', None), body, OPTIONS)
    obj = state.store.get(KEY, 'default', name)
    assert obj is not None
    return obj


def _delete(state: State, name: str) -> None:
    resource = state.catalog.by_key(KEY)
    assert resource is not None
    writing.delete(state, Target(resource, 'default', name), OPTIONS)


def _names(state: State, *uids: str) -> list[str]:
    return [obj['metadata']['name'] for _, obj in state.store.dependents_of(set(uids))]


def test_dependents_follow_writes_and_deletions() -> None:
    state = State()
    owner = _create(state, 'owner')['metadata']['uid']
    other = _create(state, 'other')['metadata']['uid']
    _create(state, 'b', (owner,))
    _create(state, 'a', (owner, other))
    _create(state, 'c', (other,))
    assert _names(state, owner) == ['b', 'a']   # the store's own order (insertion), as a full scan gives
    assert _names(state, owner, other) == ['b', 'a', 'c']

    resource = state.catalog.by_key(KEY)
    assert resource is not None
    current = state.store.get(KEY, 'default', 'a')
    assert current is not None
    candidate = {**current, 'metadata': {**current['metadata'], 'ownerReferences': []}}
    writing.update(state, Target(resource, 'default', 'a'), current, candidate, OPTIONS)
    assert _names(state, owner) == ['b']
    assert _names(state, other) == ['c']

    _delete(state, 'b')
    assert _names(state, owner) == []
    assert owner in state.store.uids
    _delete(state, 'owner')
    assert owner not in state.store.uids


def test_garbage_collection_spares_dependents_with_a_live_owner() -> None:
    state = State()
    owner = _create(state, 'owner')['metadata']['uid']
    other = _create(state, 'other')['metadata']['uid']
    _create(state, 'only-owned', (owner,))
    _create(state, 'co-owned', (owner, other))
    _create(state, 'unrelated')
    _delete(state, 'owner')
    sweeping.sweep(state)
    names = {obj['metadata']['name'] for obj in state.store.iterate(KEY)}
    assert names == {'other', 'co-owned', 'unrelated'}


def test_the_index_is_rebuilt_on_restore() -> None:
    state = State()
    owner = _create(state, 'owner')['metadata']['uid']
    _create(state, 'dependent', (owner,))
    restored = State()
    restored.restore(state.snapshot())
    assert _names(restored, owner) == ['dependent']
    _delete(restored, 'owner')
    sweeping.sweep(restored)
    assert restored.store.get(KEY, 'default', 'dependent') is None
