"""Our finalizer as values: when to add/remove it, and the patch callables with their own JSON-patch ops."""
import copy
from typing import Any

import jsonpatch
import pytest

from kopf._core import finalizers, patches
from kopf._core.finalizers import AppendFinalizer, Edit, RemoveFinalizer

F = 'kopf.zalando.org/KopfFinalizerMarker'
O = 'other.example.com/finalizer'  # noqa: E741
P = 'third.example.com/finalizer'


# -- edit(): the full truth table -------------------------------------------------------------------

@pytest.mark.parametrize('has, requires, deleting, expected', [
    (False, False, False, Edit.KEEP),
    (False, True, False, Edit.ADD),
    (True, False, False, Edit.REMOVE),
    (True, True, False, Edit.KEEP),
    (False, False, True, Edit.KEEP),
    (False, True, True, Edit.KEEP),
    (True, False, True, Edit.KEEP),
    (True, True, True, Edit.KEEP),
])
def test_edit(has: bool, requires: bool, deleting: bool, expected: Edit) -> None:
    assert finalizers.edit(has=has, requires=requires, deleting=deleting) is expected


# -- present() and deleting() -----------------------------------------------------------------------

@pytest.mark.parametrize('body, expected', [
    ({}, False),
    ({'metadata': None}, False),
    ({'metadata': {}}, False),
    ({'metadata': {'finalizers': None}}, False),
    ({'metadata': {'finalizers': []}}, False),
    ({'metadata': {'finalizers': [O]}}, False),
    ({'metadata': {'finalizers': [F]}}, True),
    ({'metadata': {'finalizers': [O, F]}}, True),
    ({'metadata': {'finalizers': [F, O]}}, True),
    ({'metadata': {'finalizers': [F, F]}}, True),
    ({'metadata': {'finalizers': [F + '-not-quite']}}, False),
])
def test_present(body: dict[str, Any], expected: bool) -> None:
    assert finalizers.present(body, F) is expected


@pytest.mark.parametrize('body, expected', [
    ({}, False),
    ({'metadata': None}, False),
    ({'metadata': {}}, False),
    ({'metadata': {'deletionTimestamp': None}}, False),
    ({'metadata': {'deletionTimestamp': ''}}, False),
    ({'metadata': {'deletionTimestamp': '2026-01-01T00:00:00Z'}}, True),
    ({'metadata': {'deletionTimestamp': '2026-01-01T00:00:00Z', 'finalizers': [F]}}, True),
])
def test_deleting(body: dict[str, Any], expected: bool) -> None:
    assert finalizers.deleting(body) is expected


@pytest.mark.parametrize('body', [
    {}, {'metadata': None}, {'metadata': {}}, {'metadata': {'finalizers': None, 'deletionTimestamp': None}},
    {'metadata': {'finalizers': [O]}}, {'metadata': {'finalizers': [F]}},
    {'metadata': {'finalizers': [O], 'deletionTimestamp': '2026-01-01T00:00:00Z'}},
    {'metadata': {'finalizers': [F, O], 'deletionTimestamp': '2026-01-01T00:00:00Z'}},
    {'metadata': {'deletionTimestamp': '2026-01-01T00:00:00Z'}}, {'metadata': {'deletionTimestamp': ''}},
])
def test_state_and_let_go_as_present_and_deleting(body: dict[str, Any]) -> None:
    assert finalizers.state(body, F) == (finalizers.present(body, F), finalizers.deleting(body))
    assert finalizers.let_go(body, F) is (finalizers.deleting(body) and not finalizers.present(body, F))


# -- the patch callables ------------------------------------------------------------------------------

# name → (the body before, after appending ours, the exact ops or None for the generic diff)
APPEND: dict[str, tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]] | None]] = {
    'no metadata': ({}, {'metadata': {'finalizers': [F]}}, None),
    'no finalizers key': ({'metadata': {}}, {'metadata': {'finalizers': [F]}},
                          [{'op': 'add', 'path': '/metadata/finalizers', 'value': [F]}]),
    'empty list': ({'metadata': {'finalizers': []}}, {'metadata': {'finalizers': [F]}},
                   [{'op': 'add', 'path': '/metadata/finalizers/0', 'value': F}]),
    'other only': ({'metadata': {'finalizers': [O]}}, {'metadata': {'finalizers': [O, F]}},
                   [{'op': 'add', 'path': '/metadata/finalizers/1', 'value': F}]),
    'two others': ({'metadata': {'finalizers': [O, P]}}, {'metadata': {'finalizers': [O, P, F]}},
                   [{'op': 'add', 'path': '/metadata/finalizers/2', 'value': F}]),
    'ours only': ({'metadata': {'finalizers': [F]}}, {'metadata': {'finalizers': [F]}}, []),
    'ours + other': ({'metadata': {'finalizers': [F, O]}}, {'metadata': {'finalizers': [F, O]}}, []),
    'other + ours': ({'metadata': {'finalizers': [O, F]}}, {'metadata': {'finalizers': [O, F]}}, []),
    'ours twice': ({'metadata': {'finalizers': [F, F]}}, {'metadata': {'finalizers': [F, F]}}, []),
    'null value': ({'metadata': {'finalizers': None}}, {'metadata': {'finalizers': [F]}}, None),
    'other fields kept': ({'metadata': {'name': 'n', 'labels': {'a': 'b'}}, 'spec': {'x': 1}},
                          {'metadata': {'name': 'n', 'labels': {'a': 'b'}, 'finalizers': [F]}, 'spec': {'x': 1}},
                          [{'op': 'add', 'path': '/metadata/finalizers', 'value': [F]}]),
}

# name → (the body before, after removing ours, the exact ops or None for the generic diff)
REMOVE: dict[str, tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]] | None]] = {
    'no metadata': ({}, {}, None),
    'no finalizers key': ({'metadata': {}}, {'metadata': {}}, None),
    'empty list': ({'metadata': {'finalizers': []}}, {'metadata': {}}, None),
    'other only': ({'metadata': {'finalizers': [O]}}, {'metadata': {'finalizers': [O]}}, None),
    # the last finalizer: the list goes, as upstream 1.45.2 sends it (seen on the wire)
    'ours only': ({'metadata': {'finalizers': [F]}}, {'metadata': {}},
                  [{'op': 'remove', 'path': '/metadata/finalizers'}]),
    'ours + other': ({'metadata': {'finalizers': [F, O]}}, {'metadata': {'finalizers': [O]}},
                     [{'op': 'remove', 'path': '/metadata/finalizers/0'}]),
    'other + ours': ({'metadata': {'finalizers': [O, F]}}, {'metadata': {'finalizers': [O]}},
                     [{'op': 'remove', 'path': '/metadata/finalizers/1'}]),
    'two others + ours': ({'metadata': {'finalizers': [O, P, F]}}, {'metadata': {'finalizers': [O, P]}},
                          [{'op': 'remove', 'path': '/metadata/finalizers/2'}]),
    'ours in the middle': ({'metadata': {'finalizers': [O, F, P]}}, {'metadata': {'finalizers': [O, P]}}, None),
    'ours first of three': ({'metadata': {'finalizers': [F, O, P]}}, {'metadata': {'finalizers': [O, P]}}, None),
    'ours twice': ({'metadata': {'finalizers': [F, F]}}, {'metadata': {}}, None),
    'ours twice + other': ({'metadata': {'finalizers': [F, O, F]}}, {'metadata': {'finalizers': [O]}}, None),
    'null value': ({'metadata': {'finalizers': None}}, {'metadata': {}}, None),
}


@pytest.mark.parametrize('name', list(APPEND))
def test_append_call(name: str) -> None:
    before, after, _ = APPEND[name]
    body = copy.deepcopy(before)
    AppendFinalizer(F)(body)
    assert body == after


@pytest.mark.parametrize('name', list(REMOVE))
def test_remove_call(name: str) -> None:
    before, after, _ = REMOVE[name]
    body = copy.deepcopy(before)
    RemoveFinalizer(F)(body)
    assert body == after


@pytest.mark.parametrize('name', list(APPEND))
def test_append_json_ops(name: str) -> None:
    before, _, ops = APPEND[name]
    snapshot = copy.deepcopy(before)
    assert AppendFinalizer(F).json_ops(before) == ops
    assert before == snapshot  # the body is only read


@pytest.mark.parametrize('name', list(REMOVE))
def test_remove_json_ops(name: str) -> None:
    before, _, ops = REMOVE[name]
    snapshot = copy.deepcopy(before)
    assert RemoveFinalizer(F).json_ops(before) == ops
    assert before == snapshot  # the body is only read


@pytest.mark.parametrize('table, name', [('append', n) for n, (_, _, ops) in APPEND.items() if ops is not None] +
                                        [('remove', n) for n, (_, _, ops) in REMOVE.items() if ops is not None])
def test_json_ops_applied_equal_the_call(table: str, name: str) -> None:
    before, _, _ = (APPEND if table == 'append' else REMOVE)[name]
    fn = AppendFinalizer(F) if table == 'append' else RemoveFinalizer(F)
    ops = fn.json_ops(before)
    assert ops is not None
    expected = copy.deepcopy(before)
    fn(expected)
    assert jsonpatch.apply_patch(before, ops) == expected


@pytest.mark.parametrize('table, name', [('append', n) for n in APPEND] + [('remove', n) for n in REMOVE])
def test_patch_as_json_patch_turns_the_body_into_the_call_result(table: str, name: str) -> None:
    before, after, ops = (APPEND if table == 'append' else REMOVE)[name]
    fn = AppendFinalizer(F) if table == 'append' else RemoveFinalizer(F)
    patch = patches.Patch(body=before, fns=[fn])
    json_patch = patch.as_json_patch()
    if ops is not None:
        assert json_patch == ops  # the known ops, no generic diff
    assert jsonpatch.apply_patch(before, json_patch) == after


@pytest.mark.parametrize('value', ['a-string', {'a': 'b'}, 123])
def test_non_list_values_fall_back_to_the_generic_diff(value: Any) -> None:
    body = {'metadata': {'finalizers': value}}
    assert AppendFinalizer(F).json_ops(body) is None
    assert RemoveFinalizer(F).json_ops(body) is None


@pytest.mark.parametrize('body', [{'metadata': None}, {'metadata': 'x'}, {'metadata': []}])
def test_non_mapping_metadata_falls_back_to_the_generic_diff(body: dict[str, Any]) -> None:
    assert AppendFinalizer(F).json_ops(body) is None
    assert RemoveFinalizer(F).json_ops(body) is None


def test_other_finalizer_names_are_respected() -> None:
    body = {'metadata': {'finalizers': [F, O]}}
    assert AppendFinalizer(O).json_ops(body) == []
    assert RemoveFinalizer(O).json_ops(body) == [{'op': 'remove', 'path': '/metadata/finalizers/1'}]
    removed = copy.deepcopy(body)
    RemoveFinalizer(O)(removed)
    assert removed == {'metadata': {'finalizers': [F]}}


@pytest.mark.parametrize('cls', [AppendFinalizer, RemoveFinalizer])
def test_equality_hash_repr(cls: type[AppendFinalizer] | type[RemoveFinalizer]) -> None:
    assert cls(F) == cls(F)
    assert hash(cls(F)) == hash(cls(F))
    assert cls(F) != cls(O)
    assert cls(F) != F
    assert repr(cls(F)) == f'{cls.__name__}({F!r})'
    assert len({cls(F), cls(F), cls(O)}) == 2


def test_append_and_remove_differ() -> None:
    assert AppendFinalizer(F) != RemoveFinalizer(F)
    assert RemoveFinalizer(F) != AppendFinalizer(F)
    assert hash(AppendFinalizer(F)) != hash(RemoveFinalizer(F))


def test_append_then_remove_roundtrip() -> None:
    body: dict[str, Any] = {'metadata': {'finalizers': [O]}}
    AppendFinalizer(F)(body)
    AppendFinalizer(F)(body)  # idempotent
    assert body == {'metadata': {'finalizers': [O, F]}}
    RemoveFinalizer(F)(body)
    RemoveFinalizer(F)(body)  # idempotent
    assert body == {'metadata': {'finalizers': [O]}}
