from typing import Any

import pytest

from kopf._core.diffs import Diff, DiffItem, DiffOperation, diff, narrow, reduce


@pytest.mark.parametrize('old, new, expected', [
    ({'a': 1}, {'a': 1}, ()),
    (None, None, ()),
    (None, {'spec': {'x': 1}}, (('add', (), None, {'spec': {'x': 1}}),)),
    ({'spec': {'x': 1}}, None, (('remove', (), {'spec': {'x': 1}}, None),)),
    ({'spec': {'field': 'value'}}, {'spec': {'field': 'changed'}},
     (('change', ('spec', 'field'), 'value', 'changed'),)),
    ({'spec': {}}, {'spec': {'new': 1}}, (('add', ('spec', 'new'), None, 1),)),
    ({'metadata': {'labels': {'a': 'b'}}}, {}, (('remove', ('metadata',), {'labels': {'a': 'b'}}, None),)),
    ({'spec': {'items': [1, 2]}}, {'spec': {'items': [2, 1]}}, (('change', ('spec', 'items'), [1, 2], [2, 1]),)),
    ({'spec': {'x': 'scalar'}}, {'spec': {'x': {'now': 'dict'}}},
     (('change', ('spec', 'x'), 'scalar', {'now': 'dict'}),)),
    ({'spec': {'x': None}}, {'spec': {}}, (('remove', ('spec', 'x'), None, None),)),
])
def test_diff(old: Any, new: Any, expected: tuple[Any, ...]) -> None:
    assert diff(old, new) == expected


def test_diff_order_is_added_removed_common() -> None:
    d = diff({'b': 1, 'c': 1, 'd': 1}, {'a': 1, 'c': 2, 'd': 1})
    assert [item.operation for item in d] == ['add', 'remove', 'change']


def test_items_are_named_tuples_equal_to_plain_tuples() -> None:
    item = diff({'a': 1}, {'a': 2})[0]
    assert isinstance(item, DiffItem)
    assert item == ('change', ('a',), 1, 2)
    assert item.op is item.operation is DiffOperation.CHANGE
    assert str(item.operation) == 'change' and f'{item.operation}' == 'change'
    assert item.field == ('a',) and item.old == 1 and item.new == 2


def test_diff_is_an_immutable_hashable_sequence() -> None:
    d = Diff([('add', ['spec', 'x'], None, 1)])
    assert d == [('add', ('spec', 'x'), None, 1)]
    assert d != [('add', ('spec', 'y'), None, 1)]
    assert len(d) == 1 and next(iter(d)).field == ('spec', 'x')
    assert isinstance(d[:1], Diff)
    assert hash(d) == hash(Diff(d))
    with pytest.raises(TypeError):
        d[0] = d[0]  # type: ignore[index]
    assert not Diff()


@pytest.mark.parametrize('items, field, expected', [
    # items under the field are re-rooted
    ((('change', ('spec', 'x', 'y'), 1, 2),), 'spec.x', (('change', ('y',), 1, 2),)),
    ((('change', ('spec', 'x'), 1, 2),), 'spec.x', (('change', (), 1, 2),)),
    # unrelated items are dropped
    ((('change', ('spec', 'z'), 1, 2),), 'spec.x', ()),
    # the parent was added wholesale: a fresh sub-diff
    ((('add', (), None, {'spec': {'x': 1}}),), 'spec.x', (('add', (), None, 1),)),
    ((('add', ('spec',), None, {'x': {'y': 1}}),), ['spec', 'x'], (('add', (), None, {'y': 1}),)),
    ((('add', ('spec',), None, {'other': 1}),), 'spec.x', ()),
    ((('remove', ('spec',), {'x': 1}, None),), 'spec.x', (('remove', (), 1, None),)),
    ((('change', ('spec',), 'scalar', {'x': {'a': 1}}),), 'spec.x', (('add', (), None, {'a': 1}),)),
    # no field: the same diff
    ((('change', ('spec',), 1, 2),), None, (('change', ('spec',), 1, 2),)),
])
def test_reduce(items: Any, field: Any, expected: Any) -> None:
    assert reduce(Diff(items), field) == expected


def test_narrow() -> None:
    assert narrow({'spec': {'x': 1}}, {'spec': {'x': 2}}, 'spec.x') == (1, 2)
    assert narrow(None, {'spec': {'x': 2}}, 'spec.x') == (None, 2)
    assert narrow({'spec': {}}, {'spec': {'x': 2}}, ('spec', 'x')) == (None, 2)


def test_diff_items_print_unpack_and_compare_as_upstream_tuples() -> None:
    d = diff({'spec': {'size': 3}}, {'spec': {'size': 5}})
    assert repr(d) == "(('change', ('spec', 'size'), 3, 5),)"
    assert repr(d[0]) == str(d[0]) == "('change', ('spec', 'size'), 3, 5)"
    assert f'{list(d)}' == "[('change', ('spec', 'size'), 3, 5)]"
    op, field, old, new = d[0]
    assert (op, field, old, new) == ('change', ('spec', 'size'), 3, 5)
    assert d[0] == ('change', ('spec', 'size'), 3, 5) and d == (('change', ('spec', 'size'), 3, 5),)
    assert (d[0].operation, d[0].op, d[0].field, d[0].old, d[0].new) == (DiffOperation.CHANGE, 'change',
                                                                           ('spec', 'size'), 3, 5)
