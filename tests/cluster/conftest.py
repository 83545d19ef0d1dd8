"""The local cluster's suite: every test also checks that no stored object is changed after it was stored.

The store's objects are shared (by the history's changes, the watch lines made of them, and by the writes
that build a new object from an old one while sharing its unchanged parts), so a change to a stored object
would change what watchers replay and what later writes see: each object stored during a test must still
serialise as it did when it was stored, at every later write and at the end of the test.
"""
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from kopf._cluster import jsoncodec
from kopf._cluster.store import objectstore


class Unchanged:
    """The objects stored so far with their JSON as stored; `check()` compares them with what they are now."""

    def __init__(self) -> None:
        self.stored: dict[int, tuple[Any, bytes]] = {}
        self.lock = threading.Lock()   # a LocalCluster `with` block serves from its own thread

    def remember(self, change: objectstore.Change) -> None:
        if change.type != 'DELETED':
            with self.lock:
                self.stored[id(change.obj)] = (change.obj, change.data)

    def check(self, obj: Any = None) -> None:
        with self.lock:
            found = [self.stored[id(obj)]] if obj is not None and id(obj) in self.stored else \
                list(self.stored.values()) if obj is None else []
        for stored, data in found:
            if stored is not None:
                assert jsoncodec.dumps(stored) == data, f'a stored object was changed: {data[:300]!r}'


@pytest.fixture(autouse=True)
def stored_objects_are_never_changed(monkeypatch: pytest.MonkeyPatch) -> Iterator[Unchanged]:
    unchanged = Unchanged()
    save, delete = objectstore.Store.save, objectstore.Store.delete

    def checked_save(self: objectstore.Store, key: objectstore.Key, obj: objectstore.Obj,
                     old: objectstore.Obj | None, arranged: bool = False) -> objectstore.Change:
        unchanged.check(old) if old is not None else None
        change = save(self, key, obj, old, arranged)
        unchanged.remember(change)
        return change

    def checked_delete(self: objectstore.Store, key: objectstore.Key, obj: objectstore.Obj) -> objectstore.Change:
        unchanged.check(obj)
        return delete(self, key, obj)

    monkeypatch.setattr(objectstore.Store, 'save', checked_save)
    monkeypatch.setattr(objectstore.Store, 'delete', checked_delete)
    yield unchanged
    unchanged.check()
