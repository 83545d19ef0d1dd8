"""Structural pruning (fields a schema does not declare are dropped, unless preserved) at the function level:
`prune`, `unknown_fields`, `survives`."""
import copy
from typing import Any

import pytest

from kopf._shared import schemas
from kopf._shared.schemas import Index

STRING = {'type': 'string'}
OBJ = {'type': 'object'}
PRESERVE = {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True}


def root(**properties: Any) -> dict[str, Any]:
    return {'type': 'object', 'properties': properties}


STRICT = root(  # a strict CRD: spec required, spec.size an integer, status.phase the only status field
    spec={'type': 'object', 'properties': {'size': {'type': 'integer'}}},
    status={'type': 'object', 'properties': {'phase': STRING}},
)
KOPF_EXAMPLE = root(spec=PRESERVE, status=PRESERVE)  # examples/crd.yaml-like
PEERING = root(status=PRESERVE)  # KopfPeering: status only


# (id, schema, object before, object after, pruned paths)
CASES: list[tuple[str, Any, Any, Any, list[tuple[str, ...]]]] = [
    (
        'status-kopf-dropped-on-strict-schema', STRICT,
        {'status': {'phase': 'ok', 'kopf': {'progress': {}}}},
        {'status': {'phase': 'ok'}},
        [('status', 'kopf')],
    ),
    (
        'handler-results-dropped-on-strict-schema', STRICT,
        {'status': {'create_fn': {'message': 'hello'}}},
        {'status': {}},
        [('status', 'create_fn')],
    ),
    (
        'object-without-properties-drops-everything', root(status=OBJ),
        {'status': {'phase': 'ok', 'kopf': {'x': 1}}},
        {'status': {}},
        [('status', 'phase'), ('status', 'kopf')],
    ),
    (
        'preserve-unknown-keeps-everything', KOPF_EXAMPLE,
        {'spec': {'a': {'b': [1, {'c': 2}]}}, 'status': {'kopf': {'progress': {'fn': {}}}}},
        {'spec': {'a': {'b': [1, {'c': 2}]}}, 'status': {'kopf': {'progress': {'fn': {}}}}},
        [],
    ),
    (
        'preserve-unknown-parent-does-not-protect-declared-child',
        root(status={'type': 'object', 'x-kubernetes-preserve-unknown-fields': True, 'properties': {'kopf': OBJ}}),
        {'status': {'other': {'x': 1}, 'kopf': {'progress': {'fn': {}}}}},
        {'status': {'other': {'x': 1}, 'kopf': {}}},
        [('status', 'kopf', 'progress')],
    ),
    (
        'preserve-unknown-with-additional-properties-prunes-each-value',
        root(status={'type': 'object', 'x-kubernetes-preserve-unknown-fields': True,
                     'additionalProperties': {'type': 'object', 'properties': {'a': STRING}}}),
        {'status': {'x': {'a': 'k', 'b': 'd'}}},
        {'status': {'x': {'a': 'k'}}},
        [('status', 'x', 'b')],
    ),
    (
        'undeclared-top-level-field-dropped', STRICT,
        {'spec': {'size': 1}, 'junk': {'a': 1}},
        {'spec': {'size': 1}},
        [('junk',)],
    ),
    (
        'root-apiversion-kind-metadata-never-pruned', root(spec=OBJ),
        {'apiVersion': 'kopf.dev/v1', 'kind': 'X', 'metadata': {'name': 'x', 'labels': {'a': 'b'}}},
        {'apiVersion': 'kopf.dev/v1', 'kind': 'X', 'metadata': {'name': 'x', 'labels': {'a': 'b'}}},
        [],
    ),
    (
        'root-metadata-kept-even-if-schema-declares-it-narrowly',
        root(metadata={'type': 'object', 'properties': {'name': {'type': 'string', 'maxLength': 5}}}),
        {'metadata': {'name': 'x', 'annotations': {'kopf.zalando.org/fn': '{}'}, 'finalizers': ['f'],
                      'labels': {'l': 'v'}, 'ownerReferences': [{'uid': 'u', 'kind': 'K', 'name': 'n'}]}},
        {'metadata': {'name': 'x', 'annotations': {'kopf.zalando.org/fn': '{}'}, 'finalizers': ['f'],
                      'labels': {'l': 'v'}, 'ownerReferences': [{'uid': 'u', 'kind': 'K', 'name': 'n'}]}},
        [],
    ),
    (
        'additional-properties-map-of-strings', root(data={'type': 'object', 'additionalProperties': STRING}),
        {'data': {'a': 'x', 'b': 'y'}},
        {'data': {'a': 'x', 'b': 'y'}},
        [],
    ),
    (
        'additional-properties-objects-pruned-inside',
        root(data={'type': 'object', 'additionalProperties': {'type': 'object', 'properties': {'v': STRING}}}),
        {'data': {'a': {'v': '1', 'w': '2'}}},
        {'data': {'a': {'v': '1'}}},
        [('data', 'a', 'w')],
    ),
    (
        'array-items-pruned-with-index',
        root(list={'type': 'array', 'items': {'type': 'object', 'properties': {'n': STRING}}}),
        {'list': [{'n': 'a'}, {'n': 'b', 'junk': 1}]},
        {'list': [{'n': 'a'}, {'n': 'b'}]},
        [('list', '1', 'junk')],
    ),
    (
        'array-without-items-empties-object-items', root(list={'type': 'array'}),
        {'list': [1, {'a': 1}, 'x']},
        {'list': [1, {}, 'x']},
        [('list', '1', 'a')],
    ),
    (
        'array-of-preserve-unknown-items',
        root(list={'type': 'array', 'items': PRESERVE}),
        {'list': [{'a': {'b': 1}}]},
        {'list': [{'a': {'b': 1}}]},
        [],
    ),
    (
        'preserve-unknown-array-items-keep-unknown',
        root(list={'type': 'array', 'x-kubernetes-preserve-unknown-fields': True,
                   'items': {'type': 'object', 'properties': {'n': {'type': 'object', 'properties': {}}}}}),
        {'list': [{'n': {'x': 1}, 'other': {'y': 2}}]},
        {'list': [{'n': {}, 'other': {'y': 2}}]},
        [('list', '0', 'n', 'x')],
    ),
    (
        'embedded-resource-keeps-its-apiversion-kind-metadata',
        root(template={'type': 'object', 'x-kubernetes-embedded-resource': True,
                       'properties': {'spec': {'type': 'object', 'properties': {'a': STRING}}}}),
        {'template': {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'p'},
                      'spec': {'a': 'x', 'b': 'y'}, 'z': 1}},
        {'template': {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'p'}, 'spec': {'a': 'x'}}},
        [('template', 'spec', 'b'), ('template', 'z')],
    ),
    (
        'embedded-resource-with-non-string-kind-is-pruned',
        root(template={'type': 'object', 'x-kubernetes-embedded-resource': True, 'properties': {}}),
        {'template': {'kind': {'not': 'a string'}, 'metadata': 'not a map'}},
        {'template': {}},
        [('template', 'kind'), ('template', 'metadata')],
    ),
    (
        'nested-apiversion-kind-metadata-without-embedded-flag-are-pruned',
        root(spec={'type': 'object', 'properties': {}}),
        {'spec': {'apiVersion': 'v1', 'kind': 'X', 'metadata': {}}},
        {'spec': {}},
        [('spec', 'apiVersion'), ('spec', 'kind'), ('spec', 'metadata')],
    ),
    (
        'scalars-under-typed-schemas-untouched', STRICT,
        {'spec': {'size': 'big'}},  # type errors are validation's business, not pruning's
        {'spec': {'size': 'big'}},
        [],
    ),
    (
        'object-value-where-a-scalar-is-declared-is-emptied', STRICT,
        {'status': {'phase': {'a': 1}}},
        {'status': {'phase': {}}},
        [('status', 'phase', 'a')],
    ),
    (
        'peering-status-preserved', PEERING,
        {'status': {'peer-1': {'priority': 0, 'lastseen': 'x'}}, 'spec': {'x': 1}},
        {'status': {'peer-1': {'priority': 0, 'lastseen': 'x'}}},
        [('spec',)],
    ),
    (
        'int-or-string-leaf-kept',
        root(spec={'type': 'object', 'properties': {'port': {'x-kubernetes-int-or-string': True}}}),
        {'spec': {'port': 8080}},
        {'spec': {'port': 8080}},
        [],
    ),
]


@pytest.mark.parametrize('schema, before, after, expected', [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_prune(schema: Any, before: Any, after: Any, expected: list[tuple[str, ...]]) -> None:
    obj = copy.deepcopy(before)
    original = copy.deepcopy(before)
    assert schemas.unknown_fields(obj, schema) == expected
    assert obj == original  # unknown_fields does not modify
    assert schemas.prune(obj, schema) == expected
    assert obj == after


def test_prune_without_schema_keeps_everything() -> None:
    obj = {'spec': {'a': 1}, 'status': {'kopf': {}}}
    assert schemas.prune(obj, None) == []
    assert obj == {'spec': {'a': 1}, 'status': {'kopf': {}}}


def test_prune_not_as_root_prunes_apiversion_kind_metadata() -> None:
    obj = {'apiVersion': 'v1', 'kind': 'X', 'metadata': {}, 'a': 'b'}
    pruned = schemas.prune(obj, {'type': 'object', 'properties': {'a': STRING}}, embedded_root=False)
    assert pruned == [('apiVersion',), ('kind',), ('metadata',)]
    assert obj == {'a': 'b'}


def test_prune_does_not_mutate_the_schema() -> None:
    schema = root(spec=OBJ)
    before = copy.deepcopy(schema)
    schemas.prune({'spec': {'a': 1}}, schema)
    assert schema == before


def test_prune_array_paths_are_indices() -> None:
    obj = {'list': [{'junk': 1}]}
    [path] = schemas.prune(obj, root(list={'type': 'array', 'items': {'type': 'object'}}))
    assert isinstance(path[1], Index)
    assert path == ('list', '0', 'junk')


def test_prune_cyclic_schema() -> None:
    node: dict[str, Any] = {'type': 'object', 'properties': {'name': STRING}}
    node['properties']['children'] = {'type': 'array', 'items': node}
    obj = {'name': 'a', 'x': 1, 'children': [{'name': 'b', 'children': [{'name': 'c', 'y': 2}]}]}
    assert schemas.prune(obj, node, embedded_root=False) == [('x',), ('children', '0', 'children', '0', 'y')]
    assert obj == {'name': 'a', 'children': [{'name': 'b', 'children': [{'name': 'c'}]}]}


@pytest.mark.parametrize('path, text', [
    ((), ''),
    (('status', 'kopf'), 'status.kopf'),
    (('spec', 'containers', Index(0), 'junk'), 'spec.containers[0].junk'),
    (('list', Index(1), Index(2)), 'list[1][2]'),
    (('data', '0'), 'data.0'),  # a map key that looks like a number stays a key
])
def test_format_path(path: tuple[str, ...], text: str) -> None:
    assert schemas.format_path(path) == text


def test_normalise_metadata() -> None:
    obj = {'metadata': {'name': 'x', 'labels': {'a': 'b'}, 'junk': 1, 'finalizers': ['f'], 'other': {}}}
    assert schemas.normalise_metadata(obj) == [('metadata', 'junk'), ('metadata', 'other')]
    assert obj == {'metadata': {'name': 'x', 'labels': {'a': 'b'}, 'finalizers': ['f']}}


def test_normalise_metadata_deeply() -> None:
    obj = {'metadata': {'name': 'x',
                        'ownerReferences': [{'uid': 'u', 'kind': 'K', 'name': 'n', 'controller': True, 'junk': 1}],
                        'managedFields': [{'manager': 'm', 'fieldsV1': {'f:spec': {'f:x': {}}}, 'extra': 2}]}}
    expected = [('metadata', 'ownerReferences', '0', 'junk'), ('metadata', 'managedFields', '0', 'extra')]
    assert schemas.unknown_metadata_fields(obj) == expected
    assert 'junk' in obj['metadata']['ownerReferences'][0]
    paths = schemas.normalise_metadata(obj)
    assert paths == expected
    assert obj == {'metadata': {'name': 'x',
                                'ownerReferences': [{'uid': 'u', 'kind': 'K', 'name': 'n', 'controller': True}],
                                'managedFields': [{'manager': 'm', 'fieldsV1': {'f:spec': {'f:x': {}}}}]}}
    assert [schemas.format_path(p) for p in paths] == ['metadata.ownerReferences[0].junk',
                                                       'metadata.managedFields[0].extra']


def test_embedded_resource_metadata_is_normalised_by_prune() -> None:
    schema = root(template={'type': 'object', 'x-kubernetes-embedded-resource': True,
                            'x-kubernetes-preserve-unknown-fields': True})
    obj = {'template': {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'p', 'labels': {'a': 'b'}, 'junk': 1},
                        'spec': {'anything': 1}}}
    assert schemas.prune(obj, schema) == [('template', 'metadata', 'junk')]
    assert obj == {'template': {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'p', 'labels': {'a': 'b'}},
                                'spec': {'anything': 1}}}


def test_normalise_metadata_without_metadata() -> None:
    obj: dict[str, Any] = {'spec': {}}
    assert schemas.normalise_metadata(obj) == []


# (schema, path, survives)
SURVIVAL = [
    (STRICT, ('status', 'kopf', 'progress', 'create_fn'), False),
    (STRICT, ('status', 'kopf'), False),
    (STRICT, ('status', 'phase'), True),
    (STRICT, ('status',), True),
    (STRICT, ('spec', 'size'), True),
    (STRICT, ('spec', 'junk'), False),
    (STRICT, ('junk',), False),
    (STRICT, ('metadata', 'annotations', 'kopf.zalando.org/create_fn'), True),
    (STRICT, ('metadata', 'labels', 'x'), True),
    (STRICT, ('metadata', 'finalizers'), True),
    (STRICT, ('metadata', 'junk'), False),
    (STRICT, ('metadata', 'ownerReferences', '0', 'uid'), True),
    (STRICT, ('metadata', 'ownerReferences', '0', 'junk'), False),
    (STRICT, ('metadata',), True),
    (STRICT, ('kind',), True),
    (KOPF_EXAMPLE, ('status', 'kopf', 'progress', 'create_fn'), True),
    (KOPF_EXAMPLE, ('status', 'create_fn'), True),
    (KOPF_EXAMPLE, ('spec', 'anything', 'deep'), True),
    (PEERING, ('status', 'peer-id'), True),
    (PEERING, ('spec', 'x'), False),
    (root(status=OBJ), ('status', 'kopf'), False),
    (root(status={'type': 'object', 'x-kubernetes-preserve-unknown-fields': True, 'properties': {'kopf': OBJ}}),
     ('status', 'kopf', 'progress'), False),
    (root(status={'type': 'object', 'x-kubernetes-preserve-unknown-fields': True, 'properties': {'kopf': OBJ}}),
     ('status', 'other', 'progress'), True),
    (root(status={'type': 'object', 'properties': {'kopf': PRESERVE}}), ('status', 'kopf', 'progress', 'fn'), True),
    (root(data={'type': 'object', 'additionalProperties': STRING}), ('data', 'any-key'), True),
    (root(data={'type': 'object', 'additionalProperties': OBJ}), ('data', 'any-key', 'sub'), False),
    (root(list={'type': 'array', 'items': {'type': 'object', 'properties': {'n': STRING}}}), ('list', '3', 'n'), True),
    (root(list={'type': 'array', 'items': {'type': 'object', 'properties': {'n': STRING}}}), ('list', '3', 'm'), False),
    (root(list={'type': 'array', 'items': PRESERVE}), ('list', '0', 'any'), True),
    (root(t={'type': 'object', 'x-kubernetes-embedded-resource': True}), ('t', 'metadata', 'name'), True),
    (root(t={'type': 'object', 'x-kubernetes-embedded-resource': True}), ('t', 'metadata', 'junk'), False),
    (root(t={'type': 'object', 'x-kubernetes-embedded-resource': True}), ('t', 'metadata', 'labels', 'x'), True),
    (root(t={'type': 'object', 'x-kubernetes-embedded-resource': True}), ('t', 'spec'), False),
    (None, ('status', 'kopf', 'anything'), True),
]


@pytest.mark.parametrize('schema, path, expected', SURVIVAL, ids=[f'{i}' for i in range(len(SURVIVAL))])
def test_survives(schema: Any, path: tuple[str, ...], expected: bool) -> None:
    assert schemas.survives(schema, path) is expected


@pytest.mark.parametrize('schema, path, value, expected', [
    (root(status={'type': 'object', 'properties': {'kopf': OBJ}}), ('status', 'kopf'), {'progress': {}}, False),
    (root(status={'type': 'object', 'properties': {'kopf': OBJ}}), ('status', 'kopf'), {}, True),
    (root(status={'type': 'object', 'properties': {'kopf': PRESERVE}}), ('status', 'kopf'), {'progress': {}}, True),
    (STRICT, ('status', 'phase'), 'ok', True),
    (STRICT, ('status', 'phase'), {'a': 1}, False),
    (root(data={'type': 'object', 'additionalProperties': OBJ}), ('data', 'k'), {'sub': 1}, False),
    (KOPF_EXAMPLE, ('status', 'kopf'), {'progress': {'fn': {'retries': 1}}}, True),
    (STRICT, ('status', 'kopf'), {}, False),
])
def test_survives_with_value(schema: Any, path: tuple[str, ...], value: Any, expected: bool) -> None:
    assert schemas.survives(schema, path, value=value) is expected


def test_survives_agrees_with_prune_on_every_case() -> None:
    """Whatever `survives` promises for a path, `prune` keeps in practice (on the same objects)."""
    for _id, schema, before, after, _ in CASES:
        for path in _leaf_paths(before):
            kept = _has_path(after, path)
            assert schemas.survives(schema, path, value=_get(before, path)) is kept, (_id, path)


def _leaf_paths(value: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if isinstance(value, dict) and value:
        return [p for k, v in value.items() for p in _leaf_paths(v, path + (k,))]
    if isinstance(value, list) and value:
        return [p for i, v in enumerate(value) for p in _leaf_paths(v, path + (str(i),))]
    return [path] if path else []


def _get(value: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        value = value[int(key)] if isinstance(value, list) else value[key]
    return value


def _has_path(value: Any, path: tuple[str, ...]) -> bool:
    for key in path:
        if isinstance(value, list):
            if int(key) >= len(value):
                return False
            value = value[int(key)]
        elif isinstance(value, dict) and key in value:
            value = value[key]
        else:
            return False
    return True
