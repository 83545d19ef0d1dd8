import copy
import pickle

import pytest

import kopf
from kopf._core import memos


def test_attribute_and_item_are_one_entry() -> None:
    memo = kopf.Memo()
    memo.x = 100
    assert memo['x'] == 100
    memo['y'] = 200
    assert memo.y == 200
    assert dict(memo) == {'x': 100, 'y': 200}


@pytest.mark.parametrize('remove', [
    lambda memo: delattr(memo, 'x'),
    lambda memo: memo.__delitem__('x'),
    lambda memo: memo.pop('x'),
])
def test_both_deletions(remove) -> None:
    memo = kopf.Memo(x=1)
    remove(memo)
    assert 'x' not in memo
    assert not hasattr(memo, 'x')


@pytest.mark.parametrize('action, error', [
    (lambda memo: memo.missing, AttributeError),
    (lambda memo: memo['missing'], KeyError),
    (lambda memo: delattr(memo, 'missing'), AttributeError),
    (lambda memo: memo.__delitem__('missing'), KeyError),
])
def test_missing_entries(action, error: type[Exception]) -> None:
    with pytest.raises(error):
        action(kopf.Memo())


def test_getattr_default_and_hasattr() -> None:
    memo = kopf.Memo()
    assert getattr(memo, 'x', 'default') == 'default'
    assert not hasattr(memo, 'x')
    memo.x = None
    assert hasattr(memo, 'x')
    assert getattr(memo, 'x', 'default') is None


def test_dict_methods_win_over_keys() -> None:
    memo = kopf.Memo(keys=1)
    assert callable(memo.keys)
    assert memo['keys'] == 1


@pytest.mark.parametrize('args, kwargs', [
    ((), {}),
    (({'a': 1},), {}),
    (([('a', 1)],), {}),
    ((), {'a': 1}),
])
def test_construction_like_dict(args: tuple, kwargs: dict) -> None:
    memo = kopf.Memo(*args, **kwargs)
    assert isinstance(memo, dict)
    assert dict(memo) == dict(*args, **kwargs)


def test_per_object_copy_is_shallow() -> None:
    operator_memo = kopf.Memo(counter=0, shared=[])
    obj_memo = memos.copy_for_object(operator_memo)
    assert type(obj_memo) is kopf.Memo
    assert obj_memo is not operator_memo
    obj_memo.counter = 5               # own top-level keys
    obj_memo.shared.append('x')        # shared mutable values
    obj_memo.extra = 1
    assert operator_memo == {'counter': 0, 'shared': ['x']}
    operator_memo.later = 1            # later changes are not propagated
    assert 'later' not in obj_memo


def test_per_object_copy_of_custom_class_returning_self() -> None:
    class SharedMemo(kopf.Memo):
        __slots__ = ()

        def __copy__(self) -> 'SharedMemo':
            return self

    memo = SharedMemo()
    assert memos.copy_for_object(memo) is memo


def test_copy_deepcopy_pickle_and_repr() -> None:
    memo = kopf.Memo(a=[1])
    assert copy.copy(memo) == memo and type(copy.copy(memo)) is kopf.Memo
    assert copy.deepcopy(memo) == memo and copy.deepcopy(memo)['a'] is not memo['a']
    assert pickle.loads(pickle.dumps(memo)) == memo
    assert repr(memo) == "Memo({'a': [1]})"


def test_per_object_copy_of_a_subclass_is_made_by_copy_copy() -> None:
    class Tagged(kopf.Memo):
        pass

    memo = Tagged(a=1)
    copied = memos.copy_for_object(memo)
    assert type(copied) is Tagged and copied == memo and copied is not memo
