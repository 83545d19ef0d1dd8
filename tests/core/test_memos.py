import copy
import pickle
from typing import Any

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


# -- seeds: an object's memo copied when needed, as of its first sight -------------------------------------------

class Holder:
    """What holds an object's memo (a record's slot): `Seeds.spare()` is called on it as `seeds.spare(h.memo)`."""
    __slots__ = ('memo',)

    def __init__(self, memo: object) -> None:
        self.memo = memo


def test_objects_first_seen_while_the_operator_memo_is_unchanged_share_one_seed() -> None:
    operator_memo = kopf.Memo(flag='early', shared=[])
    seeds = memos.Seeds()
    first, second = seeds.seed(operator_memo), seeds.seed(operator_memo)
    assert isinstance(first, memos.Seed) and second is first
    operator_memo.flag = 'late'
    third = seeds.seed(operator_memo)
    assert third is not first
    assert first.grown() == {'flag': 'early', 'shared': []}  # as of the first sight, however late it is grown
    assert third.grown() == {'flag': 'late', 'shared': []}


def test_a_grown_memo_is_a_shallow_copy_of_its_own() -> None:
    operator_memo = kopf.Memo(counter=0, shared=[])
    seed = memos.Seeds().seed(operator_memo)
    grown = seed.grown()
    assert type(grown) is kopf.Memo and grown is not seed.grown()
    grown.counter = 5
    grown.shared.append('x')
    assert operator_memo == {'counter': 0, 'shared': ['x']}  # mutable values are shared, as with a copy
    assert seed.grown() == {'counter': 0, 'shared': ['x']}


@pytest.mark.parametrize('cls', ['subclass', 'shared'])
def test_other_memo_classes_are_copied_at_first_sight(cls: str) -> None:
    class Tagged(kopf.Memo):
        def __copy__(self) -> 'Tagged':
            return self if cls == 'shared' else Tagged(self)

    operator_memo = Tagged(a=1)
    seeds = memos.Seeds()
    memo = seeds.seed(operator_memo)
    assert type(memo) is Tagged and (memo is operator_memo) == (cls == 'shared')
    assert seeds.spare(Holder(memo).memo) is None


def test_a_memo_nobody_holds_nor_changed_goes_back_to_its_seed() -> None:
    seeds = memos.Seeds()
    seed = seeds.seed(kopf.Memo(a=1))
    holder = Holder(seed.grown())
    spared = seeds.spare(holder.memo)  # not inside `assert`: pytest's rewriting holds the argument meanwhile
    assert spared is seed
    holder.memo.a = 1  # the same value again: the same memo for everybody
    spared = seeds.spare(holder.memo)
    assert spared is seed


@pytest.mark.parametrize('touch', [
    lambda memo: memo.__setattr__('b', 2),
    lambda memo: memo.__setitem__('a', 1.5),
    lambda memo: memo.__delattr__('a'),
])
def test_a_changed_memo_is_kept(touch: Any) -> None:
    seeds = memos.Seeds()
    holder = Holder(seeds.seed(kopf.Memo(a=1)).grown())
    touch(holder.memo)
    assert seeds.spare(holder.memo) is None


def test_a_memo_held_elsewhere_is_kept() -> None:
    seeds = memos.Seeds()
    holder = Holder(seeds.seed(kopf.Memo()).grown())
    kept = [holder.memo]  # e.g. a daemon's kwargs, or a handler that keeps it
    assert seeds.spare(holder.memo) is None
    kept.clear()
    spared = seeds.spare(holder.memo)
    assert spared is not None


def test_a_memo_is_kept_if_the_operator_memo_changed_since() -> None:
    operator_memo = kopf.Memo(flag='early')
    seeds = memos.Seeds()
    holder = Holder(seeds.seed(operator_memo).grown())
    operator_memo.flag = 'late'
    seeds.seed(operator_memo)  # another object's first sight: the latest seed is another one
    assert seeds.spare(holder.memo) is None
