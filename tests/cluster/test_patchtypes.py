"""Patch media types: merge-patch, JSON-patch, strategic merge (pure functions over dicts)."""
import copy
from typing import Any

import pytest

from kopf._cluster import statuses
from kopf._cluster.openapi import kindschemas
from kopf._cluster.patchtypes import jsonpatches, strategic


@pytest.mark.parametrize('target, patch, expected', [
    ({'a': 1}, {'a': None}, {}),
    ({'a': {'b': 1, 'c': 2}}, {'a': {'b': None, 'd': 3}}, {'a': {'c': 2, 'd': 3}}),
    ({'l': [1, 2]}, {'l': [3]}, {'l': [3]}),
    ({'a': 1}, {'b': {'c': None}}, {'a': 1, 'b': {}}),
])
def test_merge_patch(target: Any, patch: Any, expected: Any) -> None:
    before = repr(target)
    assert jsonpatches.merge_patch(target, patch) == expected
    assert repr(target) == before   # inputs are never mutated


def test_json_patch_ok_and_failures() -> None:
    assert jsonpatches.json_patch({'a': 1}, [{'op': 'replace', 'path': '/a', 'value': 2}]) == {'a': 2}
    for ops in ([{'op': 'test', 'path': '/a', 'value': 9}], [{'op': 'remove', 'path': '/zz'}],
                [{'op': 'add', 'path': '/l/9', 'value': 1}]):
        with pytest.raises(statuses.ApiError) as exc:
            jsonpatches.json_patch({'a': 1, 'l': []}, ops)
        assert exc.value.code == 422 and exc.value.message == statuses.JSON_PATCH_FAILED
    with pytest.raises(statuses.ApiError) as exc:
        jsonpatches.json_patch({}, {'op': 'add'})
    assert exc.value.code == 400


POD = kindschemas.schema_for('', 'v1', 'Pod')
SERVICE = kindschemas.schema_for('', 'v1', 'Service')
DEPLOYMENT = kindschemas.schema_for('apps', 'v1', 'Deployment')


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
    with pytest.raises(statuses.ApiError) as exc:
        strategic.merge(target, patch, DEPLOYMENT if 'strategy' in str(patch) else POD)
    assert exc.value.code == 400 and exc.value.reason == 'BadRequest'


def test_strategic_merge_never_mutates_its_inputs() -> None:
    target = {'metadata': {'finalizers': ['a']}, 'spec': {'containers': [{'name': 'x', 'env': []}]}}
    patch = {'metadata': {'finalizers': ['b']}, 'spec': {'containers': [{'name': 'x', 'env': [{'name': 'E'}]}]}}
    before = (repr(target), repr(patch))
    strategic.merge(target, patch, POD)
    assert (repr(target), repr(patch)) == before


def _reference_json_patch(target: Any, ops: Any) -> tuple[str, Any]:
    """What the `jsonpatch` library makes of the ops (the emulator's reference), as ('ok', doc) or ('fail', code)."""
    import copy

    import jsonpatch
    try:
        return 'ok', jsonpatch.JsonPatch(ops).apply(copy.deepcopy(target))
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, KeyError, IndexError, TypeError):
        return 'fail', 422


def _ours(target: Any, ops: Any) -> tuple[str, Any]:
    try:
        return 'ok', jsonpatches.json_patch(target, ops)
    except statuses.ApiError as exc:
        return 'fail', exc.code


def test_json_patch_fast_path_agrees_with_jsonpatch_on_random_ops() -> None:
    """The emulator's own code for the usual ops (test/add/remove/replace in objects) and the library agree."""
    import random
    rng = random.Random(42)
    keys = ['a', 'b', 'metadata', 'finalizers', 'resourceVersion', 'status', '0', 'a~1b', 'x/y']
    values: list[Any] = [None, 0, 1, 1.0, True, False, '', 'v', [], ['kopf/x'], {}, {'k': 'v'}, {'a': {'b': 1}}]

    def doc(depth: int = 0) -> Any:
        if depth > 2 or rng.random() < 0.3:
            return copy.deepcopy(rng.choice(values))
        if rng.random() < 0.2:
            return [doc(depth + 1) for _ in range(rng.randint(0, 2))]
        return {rng.choice(keys): doc(depth + 1) for _ in range(rng.randint(0, 3))}

    def path() -> str:
        tokens = [rng.choice(keys + ['-', '1', 'zz']) for _ in range(rng.randint(0, 3))]
        return ''.join('/' + token.replace('~', '~0').replace('/', '~1') if rng.random() < 0.9 else '/' + token
                       for token in tokens)

    def random_op() -> Any:
        kind = rng.choice(['test', 'add', 'remove', 'replace', 'test', 'add', 'move', 'copy', 'bogus'])
        made: dict[str, Any] = {'op': kind, 'path': path()}
        if kind in ('test', 'add', 'replace') and rng.random() < 0.95:
            made['value'] = doc(1)
        if kind in ('move', 'copy'):
            made['from'] = path()
        if rng.random() < 0.03:
            del made['path']
        return made if rng.random() < 0.98 else rng.choice([None, 'x', ['op']])

    def simple_op(target: Any) -> Any:   # mostly what the emulator handles itself: its successes too
        kind = rng.choice(['test', 'add', 'remove', 'replace'])
        tokens: list[str] = []
        node = target
        while isinstance(node, dict) and node and rng.random() < 0.7:   # down existing objects
            tokens.append(rng.choice([key for key in node if '~' not in key and '/' not in key] or ['new']))
            node = node.get(tokens[-1])
        if not tokens or rng.random() < 0.3:
            tokens.append(rng.choice(['new', 'a', 'resourceVersion']))
        made: dict[str, Any] = {'op': kind, 'path': '/' + '/'.join(tokens)}
        if kind != 'remove':
            made['value'] = rng.choice(['5', 'v', '', node if isinstance(node, str) else 'x']) \
                if kind == 'test' else doc(1)
        return made

    checked = 0
    for _ in range(20000):
        extra = doc()
        target = {'metadata': {'resourceVersion': '5', 'finalizers': ['kopf/x']},
                  **(extra if isinstance(extra, dict) else {'spec': extra})}
        simple = rng.random() < 0.5
        ops = [simple_op(target) if simple else random_op() for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.5:   # the operator's shape: a test of the resourceVersion first
            ops.insert(0, {'op': 'test', 'path': '/metadata/resourceVersion', 'value': rng.choice(['5', '6', 5])})
        before = repr(target)
        assert _ours(target, copy.deepcopy(ops)) == _reference_json_patch(target, copy.deepcopy(ops)), ops
        assert repr(target) == before   # the target is never mutated
        checked += 1
    assert checked == 20000


def test_json_patch_result_shares_nothing_with_the_target() -> None:
    target = {'metadata': {'labels': {'a': 'b'}}, 'spec': {'l': [1]}}
    result = jsonpatches.json_patch(target, [{'op': 'add', 'path': '/metadata/finalizers', 'value': ['x']}])
    result['metadata']['labels']['c'] = 'd'
    result['spec']['l'].append(2)
    assert target == {'metadata': {'labels': {'a': 'b'}}, 'spec': {'l': [1]}}


def test_json_patch_values_are_inserted_as_copies() -> None:
    value: dict[str, Any] = {'k': 'v'}
    ops = [{'op': 'add', 'path': '/a', 'value': value}, {'op': 'add', 'path': '/b', 'value': value},
           {'op': 'add', 'path': '/a/x', 'value': 1}]
    assert jsonpatches.json_patch({}, ops) == {'a': {'k': 'v', 'x': 1}, 'b': {'k': 'v'}}
    assert value == {'k': 'v'}


@pytest.mark.parametrize('ops, handled', [
    ([{'op': 'test', 'path': '/metadata/resourceVersion', 'value': '5'},
      {'op': 'add', 'path': '/metadata/finalizers', 'value': ['kopf/x']}], True),
    ([{'op': 'test', 'path': '/metadata/resourceVersion', 'value': '5'},
      {'op': 'remove', 'path': '/metadata/finalizers'}], True),
    ([{'op': 'replace', 'path': '/status/a', 'value': {'b': 1}}], True),
    ([{'op': 'add', 'path': '/metadata/finalizers/-', 'value': 'kopf/y'}], False),   # into an array
    ([{'op': 'add', 'path': '/metadata/annotations/a~1b', 'value': 'x'}], False),   # an escape
    ([{'op': 'test', 'path': '/metadata/generation', 'value': 1}], False),   # a non-string test
    ([{'op': 'move', 'from': '/status/a', 'path': '/status/b'}], False),
])
def test_json_patch_fast_path_takes_the_usual_ops(ops: Any, handled: bool) -> None:
    doc = {'metadata': {'resourceVersion': '5', 'finalizers': ['kopf/x'], 'generation': 1,
                        'annotations': {}}, 'status': {'a': 1}}
    assert jsonpatches._apply_simply(copy.deepcopy(doc), ops) is handled
    assert _ours(doc, ops) == _reference_json_patch(doc, ops)
