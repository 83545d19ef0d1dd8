"""The store's namespace index (objects by namespace) follows every write, deletion and restore,
and the namespace controller deletes exactly a terminating namespace's own objects through it."""
from typing import Any

from kopf._cluster import jsoncodec
from kopf._cluster.apis.routing import Target
from kopf._cluster.controllers import sweeping
from kopf._cluster.pipeline import writing
from kopf._cluster.pipeline.state import State
from kopf._shared import resourcetable

OPTIONS = writing.Options()
CONFIGMAPS = ('', 'configmaps')
SECRETS = ('', 'secrets')
KINDS = {CONFIGMAPS: 'ConfigMap', SECRETS: 'Secret'}


def _namespace(state: State, name: str) -> None:
    resource = state.catalog.by_key(resourcetable.NAMESPACES.key)
    assert resource is not None
    body = {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': name}}
    writing.create(state, Target(resource, None, None), body, OPTIONS)


def _create(state: State, namespace: str, name: str, key: tuple[str, str] = CONFIGMAPS,
            finalizers: tuple[str, ...] = ()) -> None:
    resource = state.catalog.by_key(key)
    assert resource is not None
    body = {'apiVersion': 'v1', 'kind': KINDS[key], 'metadata': {'name': name, 'finalizers': list(finalizers)}}
    writing.create(state, Target(resource, namespace, None), body, OPTIONS)


def _found(state: State, namespace: str) -> list[tuple[str, str]]:
    return [(plural, obj['metadata']['name']) for (_, plural), obj in state.store.in_namespace(namespace)]


def _scanned(state: State, namespace: str) -> list[tuple[str, str]]:
    """What the full scan the index replaced finds: every kind in the store's order, each in insertion order."""
    return [(plural, name) for (_, plural), bucket in state.store.objects.items()
            for (ns, name) in bucket if ns == namespace]


def _unfinalize(state: State, namespace: str, name: str) -> None:
    resource = state.catalog.by_key(CONFIGMAPS)
    assert resource is not None
    current = state.store.get(CONFIGMAPS, namespace, name)
    assert current is not None
    candidate: dict[str, Any] = jsoncodec.clone(current)
    candidate['metadata']['finalizers'] = []
    writing.update(state, Target(resource, namespace, name), current, candidate, OPTIONS)


def test_the_index_follows_writes_and_deletions() -> None:
    state = State()
    _namespace(state, 'ns-a')
    _namespace(state, 'ns-b')
    _create(state, 'ns-a', 'z')
    _create(state, 'ns-b', 'y')
    _create(state, 'ns-a', 's', SECRETS)
    _create(state, 'ns-a', 'a')
    assert _found(state, 'ns-a') == _scanned(state, 'ns-a') == [('configmaps', 'z'), ('configmaps', 'a'),
                                                                ('secrets', 's')]
    assert _found(state, 'ns-b') == [('configmaps', 'y')]
    assert _found(state, 'nowhere') == []
    assert _found(state, '') == []   # cluster-scoped objects (the namespaces themselves) are in no namespace

    _unfinalize(state, 'ns-a', 'z')   # a modification keeps the object's place
    assert _found(state, 'ns-a') == _scanned(state, 'ns-a')

    resource = state.catalog.by_key(CONFIGMAPS)
    assert resource is not None
    writing.delete(state, Target(resource, 'ns-a', 'z'), OPTIONS)
    _create(state, 'ns-a', 'z')   # re-created: goes last among its kind, as in the bucket
    assert _found(state, 'ns-a') == _scanned(state, 'ns-a') == [('configmaps', 'a'), ('configmaps', 'z'),
                                                                ('secrets', 's')]
    writing.delete(state, Target(resource, 'ns-b', 'y'), OPTIONS)
    assert _found(state, 'ns-b') == []
    assert 'ns-b' not in state.store.namespaced


def test_namespace_deletion_deletes_its_objects_and_respects_finalizers() -> None:
    state = State()
    _namespace(state, 'doomed')
    _namespace(state, 'kept')
    _create(state, 'doomed', 'plain')
    _create(state, 'doomed', 'held', finalizers=('example.com/hold',))
    _create(state, 'doomed', 'secret', SECRETS)
    _create(state, 'kept', 'plain')
    namespaces = state.catalog.by_key(resourcetable.NAMESPACES.key)
    assert namespaces is not None
    writing.delete(state, Target(namespaces, None, 'doomed'), OPTIONS)

    assert sweeping.sweep(state)   # pending: the held object is still there
    assert _found(state, 'doomed') == [('configmaps', 'held')]
    held = state.store.get(CONFIGMAPS, 'doomed', 'held')
    assert held is not None and held['metadata'].get('deletionTimestamp')
    namespace = state.store.get(resourcetable.NAMESPACES.key, '', 'doomed')
    assert namespace is not None and namespace['status']['phase'] == 'Terminating'
    assert sweeping.sweep(state)   # still held: nothing changes
    assert state.store.get(resourcetable.NAMESPACES.key, '', 'doomed') is not None

    _unfinalize(state, 'doomed', 'held')
    sweeping.sweep(state)
    assert state.store.get(resourcetable.NAMESPACES.key, '', 'doomed') is None
    assert 'doomed' not in state.store.namespaced
    assert _found(state, 'kept') == [('configmaps', 'plain')]


def test_the_index_is_rebuilt_on_restore_and_state_reload(tmp_path: Any) -> None:
    state = State()
    _namespace(state, 'doomed')
    _create(state, 'doomed', 'b')
    _create(state, 'doomed', 'a', SECRETS)
    _create(state, 'default', 'other')
    before = _found(state, 'doomed')

    restored = State()
    restored.restore(state.snapshot())
    path = tmp_path / 'state.json'   # as `--state` saves and reloads it
    path.write_bytes(jsoncodec.dumps(state.snapshot()))
    reloaded = State()
    reloaded.restore(jsoncodec.loads(path.read_bytes()))

    for resumed in (restored, reloaded):
        assert _found(resumed, 'doomed') == _scanned(resumed, 'doomed') == sorted(before)   # snapshot order
        assert _found(resumed, 'default') == [('configmaps', 'other')]
        namespaces = resumed.catalog.by_key(resourcetable.NAMESPACES.key)
        assert namespaces is not None
        writing.delete(resumed, Target(namespaces, None, 'doomed'), OPTIONS)
        while sweeping.sweep(resumed):
            pass
        assert resumed.store.get(resourcetable.NAMESPACES.key, '', 'doomed') is None
        assert resumed.store.namespaced.get('doomed') is None
        assert _found(resumed, 'default') == [('configmaps', 'other')]
