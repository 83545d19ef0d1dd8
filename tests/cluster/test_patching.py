"""Patch media types: merge-patch, JSON-patch, strategic merge (pure functions over dicts)."""
from typing import Any

import pytest

from kopf._cluster import builtins, errors, patching, strategic


@pytest.mark.parametrize('target, patch, expected', [
    ({'a': 1}, {'a': None}, {}),
    ({'a': {'b': 1, 'c': 2}}, {'a': {'b': None, 'd': 3}}, {'a': {'c': 2, 'd': 3}}),
    ({'l': [1, 2]}, {'l': [3]}, {'l': [3]}),
    ({'a': 1}, {'b': {'c': None}}, {'a': 1, 'b': {}}),
])
def test_merge_patch(target: Any, patch: Any, expected: Any) -> None:
    before = repr(target)
    assert patching.merge_patch(target, patch) == expected
    assert repr(target) == before   # inputs are never mutated


def test_json_patch_ok_and_failures() -> None:
    assert patching.json_patch({'a': 1}, [{'op': 'replace', 'path': '/a', 'value': 2}]) == {'a': 2}
    for ops in ([{'op': 'test', 'path': '/a', 'value': 9}], [{'op': 'remove', 'path': '/zz'}],
                [{'op': 'add', 'path': '/l/9', 'value': 1}]):
        with pytest.raises(errors.ApiError) as exc:
            patching.json_patch({'a': 1, 'l': []}, ops)
        assert exc.value.code == 422 and exc.value.message == errors.JSON_PATCH_FAILED
    with pytest.raises(errors.ApiError) as exc:
        patching.json_patch({}, {'op': 'add'})
    assert exc.value.code == 400


POD = builtins.schema_for('', 'v1', 'Pod')
SERVICE = builtins.schema_for('', 'v1', 'Service')
DEPLOYMENT = builtins.schema_for('apps', 'v1', 'Deployment')


@pytest.mark.parametrize('schema, target, patch, expected', [
    # finalizers are a set: strategic patches add to them, in the patch's order; new items come first
    (POD, {'metadata': {'finalizers': ['a']}}, {'metadata': {'finalizers': ['b', 'a']}},
     {'metadata': {'finalizers': ['b', 'a']}}),
    (POD, {'metadata': {'finalizers': ['a', 'b']}}, {'metadata': {'finalizers': ['c']}},
     {'metadata': {'finalizers': ['c', 'a', 'b']}}),
    # containers merge by name, env by name (the schema's merge keys)
    (POD, {'spec': {'containers': [{'name': 'x', 'image': 'i1', 'env': [{'name': 'A', 'value': '1'}]}]}},
     {'spec': {'containers': [{'name': 'x', 'env': [{'name': 'B', 'value': '2'}]}, {'name': 'y', 'image': 'i2'}]}},
     {'spec': {'containers': [{'name': 'x', 'image': 'i1', 'env': [{'name': 'B', 'value': '2'},
                                                                   {'name': 'A', 'value': '1'}]},
                              {'name': 'y', 'image': 'i2'}]}}),
    # $patch: delete of a keyed item; $patch: replace of a whole merged list
    (POD, {'spec': {'containers': [{'name': 'x'}, {'name': 'y'}]}},
     {'spec': {'containers': [{'name': 'x', '$patch': 'delete'}]}}, {'spec': {'containers': [{'name': 'y'}]}}),
    (POD, {'spec': {'containers': [{'name': 'x', 'image': 'a'}, {'name': 'y'}]}},
     {'spec': {'containers': [{'name': 'z'}, {'$patch': 'replace'}]}}, {'spec': {'containers': [{'name': 'z'}]}}),
    # container ports by containerPort; service ports by port
    (POD, {'spec': {'containers': [{'name': 'x', 'ports': [{'containerPort': 80, 'name': 'a'}]}]}},
     {'spec': {'containers': [{'name': 'x', 'ports': [{'containerPort': 80, 'name': 'b'}]}]}},
     {'spec': {'containers': [{'name': 'x', 'ports': [{'containerPort': 80, 'name': 'b'}]}]}}),
    (SERVICE, {'spec': {'ports': [{'port': 80, 'name': 'a'}]}}, {'spec': {'ports': [{'port': 80, 'name': 'b'}]}},
     {'spec': {'ports': [{'port': 80, 'name': 'b'}]}}),
    # ownerReferences by uid
    (POD, {'metadata': {'ownerReferences': [{'uid': '1', 'name': 'a'}]}},
     {'metadata': {'ownerReferences': [{'uid': '2', 'name': 'b'}]}},
     {'metadata': {'ownerReferences': [{'uid': '2', 'name': 'b'}, {'uid': '1', 'name': 'a'}]}}),
    # lists without a merge strategy replace (args); so does every list of a kind without a schema
    (POD, {'spec': {'containers': [{'name': 'x', 'args': ['1', '2']}]}},
     {'spec': {'containers': [{'name': 'x', 'args': ['3']}]}},
     {'spec': {'containers': [{'name': 'x', 'args': ['3']}]}}),
    (None, {'spec': {'containers': [{'name': 'x'}]}}, {'spec': {'containers': [{'name': 'y'}]}},
     {'spec': {'containers': [{'name': 'y'}]}}),
    # null deletes; $patch: replace and delete on a map
    (None, {'data': {'l': [1]}, 'x': 1}, {'data': {'l': [2]}, 'x': None}, {'data': {'l': [2]}}),
    (None, {'spec': {'a': 1, 'b': 2}}, {'spec': {'$patch': 'replace', 'c': 3}}, {'spec': {'c': 3}}),
    (None, {'spec': {'a': 1, 'b': 2}}, {'spec': {'$patch': 'delete'}}, {'spec': {}}),
    # $deleteFromPrimitiveList
    (POD, {'metadata': {'finalizers': ['a', 'b']}}, {'metadata': {'$deleteFromPrimitiveList/finalizers': ['a']}},
     {'metadata': {'finalizers': ['b']}}),
    # $setElementOrder: the listed order wins; server-only items interleave by their old places
    (POD, {'spec': {'containers': [{'name': 'a'}, {'name': 'b'}, {'name': 'c'}]}},
     {'spec': {'$setElementOrder/containers': [{'name': 'c'}, {'name': 'a'}],
               'containers': [{'name': 'a', 'image': 'i'}]}},
     {'spec': {'containers': [{'name': 'b'}, {'name': 'c'}, {'name': 'a', 'image': 'i'}]}}),
    (POD, {'metadata': {'finalizers': ['a', 'b']}},
     {'metadata': {'$setElementOrder/finalizers': ['b', 'c', 'a'], 'finalizers': ['c']}},
     {'metadata': {'finalizers': ['b', 'c', 'a']}}),
    (POD, {'metadata': {}}, {'metadata': {'$setElementOrder/finalizers': ['a']}}, {'metadata': {}}),
    # $retainKeys: keys not listed go (the deployment strategy's retainKeys union)
    (DEPLOYMENT, {'spec': {'strategy': {'type': 'RollingUpdate', 'rollingUpdate': {'maxSurge': 1}}}},
     {'spec': {'strategy': {'$retainKeys': ['type'], 'type': 'Recreate'}}},
     {'spec': {'strategy': {'type': 'Recreate'}}}),
])
def test_strategic_merge(schema: Any, target: Any, patch: Any, expected: Any) -> None:
    assert strategic.merge(target, patch, schema) == expected


@pytest.mark.parametrize('patch', [
    {'$nonsense': 1},
    {'spec': {'$patch': 'merge'}},
    {'spec': {'$patch': 'bogus'}},
    {'spec': {'containers': [{'name': 'x', '$patch': 'bogus'}]}},
    {'spec': {'containers': [{'image': 'no-name'}]}},
    {'spec': {'strategy': {'$retainKeys': ['type'], 'rollingUpdate': {}}}},
    {'metadata': {'$setElementOrder/finalizers': 'not-a-list'}},
])
def test_strategic_bad_directives_are_400(patch: Any) -> None:
    target = {'spec': {'containers': [{'name': 'x'}], 'strategy': {}}, 'metadata': {}}
    with pytest.raises(errors.ApiError) as exc:
        strategic.merge(target, patch, DEPLOYMENT if 'strategy' in str(patch) else POD)
    assert exc.value.code == 400 and exc.value.reason == 'BadRequest'


def test_strategic_merge_never_mutates_its_inputs() -> None:
    target = {'metadata': {'finalizers': ['a']}, 'spec': {'containers': [{'name': 'x', 'env': []}]}}
    patch = {'metadata': {'finalizers': ['b']}, 'spec': {'containers': [{'name': 'x', 'env': [{'name': 'E'}]}]}}
    before = (repr(target), repr(patch))
    strategic.merge(target, patch, POD)
    assert (repr(target), repr(patch)) == before
