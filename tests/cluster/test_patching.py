"""Patch media types: merge-patch, JSON-patch, strategic merge (pure functions over dicts)."""
from typing import Any

import pytest

from kopf._cluster import errors, patching


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


@pytest.mark.parametrize('target, patch, expected', [
    # finalizers are a set: strategic patches add to them
    ({'metadata': {'finalizers': ['a']}}, {'metadata': {'finalizers': ['b', 'a']}},
     {'metadata': {'finalizers': ['a', 'b']}}),
    # containers merge by name; env by name
    ({'spec': {'containers': [{'name': 'x', 'image': 'i1', 'env': [{'name': 'A', 'value': '1'}]}]}},
     {'spec': {'containers': [{'name': 'x', 'env': [{'name': 'B', 'value': '2'}]}, {'name': 'y', 'image': 'i2'}]}},
     {'spec': {'containers': [{'name': 'x', 'image': 'i1', 'env': [{'name': 'A', 'value': '1'},
                                                                   {'name': 'B', 'value': '2'}]},
                              {'name': 'y', 'image': 'i2'}]}}),
    # $patch: delete of a keyed item
    ({'spec': {'containers': [{'name': 'x'}, {'name': 'y'}]}},
     {'spec': {'containers': [{'name': 'x', '$patch': 'delete'}]}}, {'spec': {'containers': [{'name': 'y'}]}}),
    # service ports by port; container ports by containerPort
    ({'spec': {'ports': [{'port': 80, 'name': 'a'}]}}, {'spec': {'ports': [{'port': 80, 'name': 'b'}]}},
     {'spec': {'ports': [{'port': 80, 'name': 'b'}]}}),
    # ownerReferences by uid
    ({'metadata': {'ownerReferences': [{'uid': '1', 'name': 'a'}]}},
     {'metadata': {'ownerReferences': [{'uid': '2', 'name': 'b'}]}},
     {'metadata': {'ownerReferences': [{'uid': '1', 'name': 'a'}, {'uid': '2', 'name': 'b'}]}}),
    # other lists replace; null deletes; $patch: replace on a map
    ({'data': {'l': [1]}, 'x': 1}, {'data': {'l': [2]}, 'x': None}, {'data': {'l': [2]}}),
    ({'spec': {'a': 1, 'b': 2}}, {'spec': {'$patch': 'replace', 'c': 3}}, {'spec': {'c': 3}}),
    ({'metadata': {'finalizers': ['a', 'b']}}, {'metadata': {'$deleteFromPrimitiveList/finalizers': ['a']}},
     {'metadata': {'finalizers': ['b']}}),
])
def test_strategic_merge(target: Any, patch: Any, expected: Any) -> None:
    assert patching.strategic_merge(target, patch) == expected


def test_strategic_unknown_directive() -> None:
    with pytest.raises(errors.ApiError) as exc:
        patching.strategic_merge({}, {'$nonsense': 1})
    assert exc.value.code == 400
