"""`kopf.Index` and `kopf.Store`: what `@kopf.index` handlers build and other handlers read.

An index is a read-only mapping of keys to stores; a store is a read-only collection of the values
that objects contributed under that key (one value per object per key). Empty stores are removed.
The framework's side is `replace()` (an indexing handler's result for one object) and `discard()`
(the object is deleted, mismatched, or failed): plain functions here, never methods users call.
"""
from collections.abc import Collection, Hashable, Iterator, Mapping
from typing import Any, Generic, TypeVar

_K = TypeVar('_K')
_V = TypeVar('_V')

ObjectKey = Hashable  # the framework uses (namespace, name, uid)


class Store(Collection[_V]):
    """A read-only collection of the values under one index key, one per contributing object."""

    __slots__ = ('_values',)

    def __init__(self) -> None:
        self._values: dict[ObjectKey, _V] = {}

    def __repr__(self) -> str:
        return f'{type(self).__name__}({list(self._values.values())!r})'

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> Iterator[_V]:
        return iter(self._values.values())

    def __contains__(self, value: object) -> bool:
        return any(v == value for v in self._values.values())


class Index(Mapping[_K, Store[_V]], Generic[_K, _V]):
    """A read-only mapping of index keys to stores of values; keys without values are absent."""

    __slots__ = ('_objects', '_stores')

    def __init__(self) -> None:
        self._stores: dict[_K, Store[_V]] = {}
        self._objects: dict[ObjectKey, set[_K]] = {}  # which keys each object contributes to

    def __repr__(self) -> str:
        return f'{type(self).__name__}({self._stores!r})'

    def __getitem__(self, key: _K) -> Store[_V]:
        return self._stores[key]

    def __len__(self) -> int:
        return len(self._stores)

    def __iter__(self) -> Iterator[_K]:
        return iter(self._stores)


def replace(index: Index[Any, Any], obj: ObjectKey, result: Any) -> None:
    """Put an indexing handler's result for one object, replacing what that object had before.

    A mapping result puts each value under its key; any other result goes under the key None;
    a None result leaves the index untouched (the object's previous values are kept).
    """
    if result is None:
        return
    items = dict(result) if isinstance(result, Mapping) else {None: result}
    discard(index, obj)
    for key, value in items.items():
        store = index._stores.get(key)
        if store is None:
            store = index._stores[key] = Store()
        store._values[obj] = value
    if items:
        index._objects[obj] = set(items)


def discard(index: Index[Any, Any], obj: ObjectKey) -> None:
    """Remove all values of one object; the stores left empty are removed with their keys."""
    for key in index._objects.pop(obj, ()):
        store = index._stores.get(key)
        if store is not None:
            store._values.pop(obj, None)
            if not store._values:
                del index._stores[key]
