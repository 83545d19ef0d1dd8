"""`kopf.Memo`: a dict with attribute access, for the operator's and each object's free-form state.

`memo.x` and `memo['x']` are the same entry; a missing attribute raises AttributeError (so `hasattr`
and `getattr(memo, 'x', default)` work); `del memo.x` and `del memo['x']` both delete.
Dict methods (`keys`, `get`, ...) win over same-named keys for attribute access.
"""
import copy
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
