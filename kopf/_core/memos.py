"""`kopf.Memo`: a dict with attribute access, for the operator's and each object's free-form state.

`memo.x` and `memo['x']` are the same entry; a missing attribute raises AttributeError (so `hasattr`
and `getattr(memo, 'x', default)` work); `del memo.x` and `del memo['x']` both delete.
Dict methods (`keys`, `get`, ...) win over same-named keys for attribute access.

An object's own memo is the operator's memo as of the object's first sight, copied (`copy_for_object`).
With the usual `kopf.Memo`, the copy is made only when the object's memo is needed (its handlers,
daemons, timers, filters, webhooks): until then the object keeps a `Seed`, the operator's memo as of
its first sight, one for all the objects first seen while the operator's memo is unchanged (`Seeds`).
After a cycle, a memo that nobody else holds (no daemon, timer or user's reference; `alone()`) and that
is as its seed goes back to a seed: nobody can tell an equal copy made later from it, and an idle
object costs no memo of its own (64 bytes each). A memo changed, or held, is kept for the object's life.
"""
import copy
import sys
import typing
from typing import Any, TypeVar

_T = TypeVar('_T')


class Memo(dict[Any, Any]):
    """A free-form mapping for handlers to keep in-memory state; never persisted."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f'{type(self).__name__}({dict.__repr__(self)})'

    def __getattr__(self, name: str) -> Any:
        if _is_dunder(name):  # never pretend to implement protocols (copy, pickle, ...)
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f'Memo has no attribute {name!r}.') from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value

    def __delattr__(self, name: str) -> None:
        try:
            del self[name]
        except KeyError:
            raise AttributeError(f'Memo has no attribute {name!r}.') from None


def _is_dunder(name: str) -> bool:
    return name.startswith('__') and name.endswith('__')


def copy_for_object(operator_memo: _T) -> _T:
    """The per-object memo, made at an object's first sight: a shallow copy of the operator's memo.

    Top-level keys are the object's own; mutable values are shared with the operator's memo.
    Custom memo classes may return `self` from `__copy__` to share one memo for all objects.
    """
    if type(operator_memo) is Memo:  # the usual one: what copy.copy() makes, 10x cheaper (no copyreg)
        original: Any = operator_memo
        return typing.cast(_T, Memo(original))
    return copy.copy(operator_memo)


class Seed:
    """The operator's memo as of some objects' first sight: what their own memo is copied from, when needed.

    Its `contents` are a shallow copy taken once and never handed out nor changed; `grown()` makes an object's
    own memo from it, as `copy_for_object()` would have made at the object's first sight.
    """

    __slots__ = ('contents',)

    def __init__(self, contents: Memo) -> None:
        self.contents = contents

    def __repr__(self) -> str:
        return f'{type(self).__name__}({dict.__repr__(self.contents)})'

    def grown(self) -> Memo:
        return Memo(self.contents)


class Seeds:
    """An operator's seeds: the latest one is shared by the objects first seen while its memo is as it was."""

    __slots__ = ('latest',)

    def __init__(self) -> None:
        self.latest: Seed | None = None

    def seed(self, operator_memo: Any) -> Any:
        """An object's memo at its first sight: a seed (`kopf.Memo`), or a copy made now (other memo classes)."""
        if type(operator_memo) is not Memo:
            return copy_for_object(operator_memo)
        latest = self.latest
        if latest is None or not same(latest.contents, operator_memo):
            latest = self.latest = Seed(Memo(operator_memo))
        return latest

    def spare(self, memo: Any) -> Seed | None:
        """The seed that may replace an object's grown memo after a cycle (None: the memo is kept).

        Only a plain `kopf.Memo` that nobody but its record holds (call it as `seeds.spare(record.memo)`), with
        the same entries (the same values, by identity) as the latest seed: a copy of that seed made later is
        the same memo for everybody who can ever see it.
        """
        latest = self.latest
        if latest is None or memo.__class__ is not Memo or sys.getrefcount(memo) > _ALONE:
            return None
        return latest if same(latest.contents, memo) else None


def same(a: dict[Any, Any], b: dict[Any, Any]) -> bool:
    """The same keys with the same values (by identity: a mutable value changed in place is still the same)."""
    if len(a) != len(b):
        return False
    for key, value in b.items():
        if dict.get(a, key, _ABSENT) is not value:
            return False
    return True


_ABSENT = object()


def _refs(memo: Any) -> int:
    return sys.getrefcount(memo)


# The references to a memo that only its record holds, as `Seeds.spare()` counts them: the record's slot, the
# argument, getrefcount's own. Measured in the same calling shape (a temporary memo: all but the holder).
_ALONE = _refs(Memo()) + 1
