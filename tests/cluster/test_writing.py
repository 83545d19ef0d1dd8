"""The write pipeline over a bare State: no HTTP, no event loop (dicts in, dicts and changes out)."""
from typing import Any

import pytest

from kopf._cluster import jsoncodec, statuses
from kopf._cluster.apis.routing import Target
from kopf._cluster.pipeline import writing
from kopf._cluster.pipeline.state import State
from kopf._shared.resourcetable import Resource

CRD = {
    'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
    'metadata': {'name': 'kexes.kopf.dev'},
    'spec': {'group': 'kopf.dev', 'scope': 'Namespaced', 'names': {'plural': 'kexes', 'kind': 'Kex'},
             'versions': [{'name': 'v1', 'served': True, 'storage': True, 'subresources': {'status': {}},
                           'schema': {'openAPIV3Schema': {'type': 'object', 'properties': {
                               'spec': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True},
                               'status': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True}}}}}]},
}
OPTIONS = writing.Options()


@pytest.fixture
def state() -> State:
    state = State()
    crds = state.catalog.lookup('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')
    assert crds is not None
    writing.create(state, Target(crds, None, None), jsoncodec.clone(CRD), OPTIONS)
    return state


def _target(state: State, name: str | None = None, sub: str | None = None) -> Target:
    resource = state.catalog.lookup('kopf.dev', 'v1', 'kexes')
    assert resource is not None
    return Target(resource, 'default', name, sub)


def _create(state: State, name: str, **extra: Any) -> dict[str, Any]:
    body = {'apiVersion': 'kopf.dev/v1', 'kind': 'Kex', 'metadata': {'name': name}, **extra}
    return jsoncodec.loads(writing.create(state, _target(state), body, OPTIONS).data)  # type: ignore[no-any-return]


def _patch(state: State, name: str, patch: Any, sub: str | None = None,
           kind: str = 'application/merge-patch+json') -> dict[str, Any]:
    outcome = writing.patch(state, _target(state, name, sub), kind, patch, OPTIONS)
    return jsoncodec.loads(outcome.data)  # type: ignore[no-any-return]


def test_crd_is_served_and_established(state: State) -> None:
    crd = state.store.get(('apiextensions.k8s.io', 'customresourcedefinitions'), '', 'kexes.kopf.dev')
    assert crd is not None
    assert {c['type'] for c in crd['status']['conditions']} == {'NamesAccepted', 'Established'}
    assert [t for _, _, t in state.store.log][-2:] == ['ADDED', 'MODIFIED']


def test_one_global_resource_version(state: State) -> None:
    one, two = _create(state, 'one'), _create(state, 'two')
    assert int(two['metadata']['resourceVersion']) == int(one['metadata']['resourceVersion']) + 1
    assert state.store.rv == int(two['metadata']['resourceVersion'])


def test_noop_patch_keeps_rv_and_emits_nothing(state: State) -> None:
    obj = _create(state, 'same', spec={'a': 1})
    changes = len(state.store.history)
    again = _patch(state, 'same', {'spec': {'a': 1}})
    assert again['metadata']['resourceVersion'] == obj['metadata']['resourceVersion']
    assert len(state.store.history) == changes


@pytest.mark.parametrize('patch, sub, generation', [
    ({'spec': {'a': 2}}, None, 2),
    ({'metadata': {'labels': {'x': 'y'}}}, None, 1),
    ({'metadata': {'finalizers': ['a/b']}}, None, 1),
    ({'status': {'s': 1}}, 'status', 1),
])
def test_generation_rules(state: State, patch: Any, sub: str | None, generation: int) -> None:
    _create(state, 'gen', spec={'a': 1})
    assert _patch(state, 'gen', patch, sub)['metadata']['generation'] == generation


def test_status_endpoint_ignores_everything_else(state: State) -> None:
    _create(state, 'st', spec={'a': 1})
    result = _patch(state, 'st', {'status': {'s': 1}, 'spec': {'a': 9}, 'metadata': {'labels': {'l': 'v'}}}, 'status')
    assert result['status'] == {'s': 1} and result['spec'] == {'a': 1} and 'labels' not in result['metadata']
    result = _patch(state, 'st', {'status': {'s': 2}, 'spec': {'a': 3}})
    assert result['status'] == {'s': 1} and result['spec'] == {'a': 3}


def test_stale_rv_in_patch_conflicts(state: State) -> None:
    obj = _create(state, 'stale')
    _patch(state, 'stale', {'spec': {'a': 1}})
    with pytest.raises(statuses.ApiError) as exc:
        _patch(state, 'stale', {'metadata': {'resourceVersion': obj['metadata']['resourceVersion']}})
    assert exc.value.code == 409


def test_last_finalizer_removal_deletes_in_the_same_request(state: State) -> None:
    obj = _create(state, 'fin', metadata={'name': 'fin', 'finalizers': ['a/b']})
    marked = jsoncodec.loads(writing.delete(state, _target(state, 'fin'), OPTIONS).data)
    assert marked['metadata']['deletionTimestamp'] and marked['metadata']['generation'] == 2
    before = len(state.store.history)
    result = _patch(state, 'fin', {'metadata': {'finalizers': None}})
    assert result['metadata']['resourceVersion'] == marked['metadata']['resourceVersion']
    assert [c.type for c in list(state.store.history)[before:]] == ['DELETED']
    assert state.store.get(('kopf.dev', 'kexes'), 'default', 'fin') is None
    assert obj['metadata']['uid'] in state.deleted_uids


def test_generate_name_and_invalid_names(state: State) -> None:
    body = {'apiVersion': 'kopf.dev/v1', 'kind': 'Kex', 'metadata': {'generateName': 'x-'}}
    created = jsoncodec.loads(writing.create(state, _target(state), body, OPTIONS).data)
    assert created['metadata']['name'].startswith('x-') and len(created['metadata']['name']) == 7
    with pytest.raises(statuses.ApiError) as exc:
        _create(state, 'Not_Valid')
    assert exc.value.code == 422 and exc.value.details is not None
    assert exc.value.details['causes'][0]['field'] == 'metadata.name'


def test_history_compaction_and_changes_since(state: State) -> None:
    obj = _create(state, 'h1')
    rv = int(obj['metadata']['resourceVersion'])
    _patch(state, 'h1', {'spec': {'a': 1}})
    since = state.store.changes_since(('kopf.dev', 'kexes'), rv)
    assert since is not None and [c.type for c in since] == ['MODIFIED']
    state.store.compact()
    assert state.store.changes_since(('kopf.dev', 'kexes'), rv) is None
    assert state.store.changes_since(('kopf.dev', 'kexes'), state.store.rv) == []


def test_a_status_write_shares_the_unchanged_parts_of_the_stored_object(state: State) -> None:
    _create(state, 'shared', spec={'a': {'b': 1}})
    _patch(state, 'shared', {'status': {'one': {'x': 1}}}, sub='status')
    before = state.store.get(('kopf.dev', 'kexes'), 'default', 'shared')
    assert before is not None
    _patch(state, 'shared', {'status': {'two': {'y': 2}}}, sub='status')
    after = state.store.get(('kopf.dev', 'kexes'), 'default', 'shared')
    assert after is not None and after is not before and after['metadata'] is not before['metadata']
    assert after['spec'] is before['spec'] and after['status']['one'] is before['status']['one']
    assert after['status'] == {'one': {'x': 1}, 'two': {'y': 2}} and before['status'] == {'one': {'x': 1}}


def test_a_changed_schema_shows_on_stored_objects_in_field_order(state: State) -> None:
    _create(state, 'defaulted', spec={'b': 1})
    crds = state.catalog.lookup('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')
    assert crds is not None
    schema = CRD['spec']['versions'][0]['schema']['openAPIV3Schema']   # type: ignore[index]
    spec = {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True,
            'properties': {'a': {'type': 'integer', 'default': 0}}}
    patch = {'spec': {'versions': [{**CRD['spec']['versions'][0],   # type: ignore[index]
                                    'schema': {'openAPIV3Schema': {**schema, 'properties': {
                                        **schema['properties'], 'spec': spec}}}}]}}
    writing.patch(state, Target(crds, None, 'kexes.kopf.dev'), 'application/merge-patch+json', patch, OPTIONS)
    stored = state.store.get(('kopf.dev', 'kexes'), 'default', 'defaulted')
    assert stored is not None and list(stored['spec'].items()) == [('a', 0), ('b', 1)]


@pytest.mark.parametrize('old, new, changed', [
    ({'spec': {'a': 1}, 'status': {'x': 1}}, {'spec': {'a': 1}, 'status': {'x': 2}}, False),
    ({'spec': {'a': 1}}, {'spec': {'a': 2}}, True),
    ({'spec': {'a': 1}}, {'spec': {'a': 1}, 'data': {}}, True),
    ({'spec': {'a': 1}, 'data': 1}, {'spec': {'a': 1}}, True),
    ({'metadata': {'a': 1}, 'kind': 'K', 'spec': 1.0}, {'metadata': {'a': 2}, 'kind': 'L', 'spec': 1}, False),
])
def test_the_content_that_moves_the_generation(old: dict[str, Any], new: dict[str, Any], changed: bool) -> None:
    resource = Resource('g', 'v1', 'things', 'Thing', namespaced=True, subresources=('status',), custom=True)
    assert writing._content_changed(new, old, resource) is changed


@pytest.mark.parametrize('path', [
    '/apis/kopf.dev/v1/namespaces/default/kexes/a', '/apis/kopf.dev/v1/namespaces/default/kexes/a/status',
    '/apis/kopf.dev/v1/namespaces/default/kexes/status', '/api/v1/namespaces/x', '/api/v1/namespaces/x/status',
    '/api/v1/namespaces/x/finalize', '/api/v1/namespaces/default/pods/p/status', '/apis/kopf.dev/v1/kexes/a',
])
def test_an_object_routed_by_its_collection_as_resolved_in_full(state: State, path: str) -> None:
    from kopf._cluster.apis import routing
    first = path.rsplit('/', 2)[0] + '/other' + ('/' + path.rsplit('/', 1)[1] if path.count('/') > 6 else '')
    routes: dict[object, object] = {}
    for seen in [first, path]:   # a sibling's resolution teaches the collection's route
        try:
            routing.remember_collection(state.catalog, routes, seen, (routing.resolve(state.catalog, seen), False))
        except statuses.ApiError:
            pass
    derived = routing.object_route(routes, path)
    assert derived is None or derived == (routing.resolve(state.catalog, path), False)
    unknown = routing.object_route(routes, '/api/v1/namespaces/x/pods')
    assert unknown is None
