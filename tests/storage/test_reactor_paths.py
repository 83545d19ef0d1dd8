"""The storages' fast paths for the reactor (`fetch_all`, `clear_fresh`) give what their per-key methods give."""
import copy
from typing import Any

import pytest

import kopf
from kopf._core.patches import merge
from tests.storage.test_progressstorages import BODY, IDS, RECORD, STORAGES


class Custom(kopf.AnnotationsProgressStorage):
    """A user subclass: asked through its own methods."""

    def fetch(self, *, key: str, body: Any) -> Any:
        record = super().fetch(key=key, body=body)
        return None if record is None else {**record, 'message': 'custom'}

    def clear(self, *, essence: Any) -> Any:
        return {**super().clear(essence=essence), 'cleared': True}


ALL = {**STORAGES, 'custom': Custom, 'smart+custom': lambda: kopf.MultiProgressStorage(
    [Custom(prefix='my-op.example.com'), kopf.SmartProgressStorage()])}


def bodies(storage: kopf.ProgressStorage) -> list[dict[str, Any]]:
    """The body without records, with some records stored, with a ReplicaSet's keys, in other storages."""
    result = [copy.deepcopy(BODY)]
    for kind in ('KopfExample', 'ReplicaSet'):
        body = {**copy.deepcopy(BODY), 'kind': kind,
                'metadata': {**BODY['metadata'], 'ownerReferences': [{'kind': 'Deployment'}]}}
        patch = kopf.Patch()
        for key in IDS[::2]:
            storage.store(key=key, record={**RECORD, 'retries': len(key)}, body=body, patch=patch)
        result.append(merge(body, patch))
    other = kopf.Patch()
    kopf.SmartProgressStorage().store(key=IDS[1], record=RECORD, body=BODY, patch=other)
    kopf.StatusProgressStorage().store(key=IDS[2], record=RECORD, body=BODY, patch=other)
    result.append(merge(BODY, other))
    return result


@pytest.mark.parametrize('name', sorted(ALL))
def test_fetch_all_is_fetch_of_each_key(name: str) -> None:
    storage = ALL[name]()
    found = 0
    for body in bodies(storage):
        expected = {key: storage.fetch(key=key, body=body) for key in IDS}
        expected = {key: record for key, record in expected.items() if record is not None}
        fetched = storage.fetch_all(keys=IDS, body=body)
        assert fetched == expected
        assert list(fetched) == list(expected)
        found += len(fetched)
    assert found  # some records were there to be found


@pytest.mark.parametrize('name', sorted(ALL))
@pytest.mark.parametrize('essence', [
    {'spec': {'a': 1}},
    {'spec': {'a': 1}, 'metadata': {'annotations': {'kopf.zalando.org/x': '1', 'my-op.example.com/y': '2', 'z': '3'}}},
    {'spec': {'a': 1}, 'status': {'kopf': {'progress': {'a': {}}, 'other': 1}, 'my-op': {'a': {}}}},
])
def test_clear_fresh_is_clear(name: str, essence: dict[str, Any]) -> None:
    storage = ALL[name]()
    given = copy.deepcopy(essence)
    assert storage.clear_fresh(essence=given) == storage.clear(essence=copy.deepcopy(essence))
    assert given == essence  # not modified


class OverridingMulti(kopf.SmartProgressStorage):
    """A user subclass of a framework storage that overrides only `fetch()`."""

    def fetch(self, *, key: str, body: Any) -> Any:
        return {'started': 'mine', 'purpose': key}


class UserStorage(kopf.ProgressStorage):
    """A storage written from scratch: only the per-key methods exist."""

    def fetch(self, *, key: str, body: Any) -> Any:
        return {'retries': 7} if key == IDS[0] else None

    def store(self, *, key: str, record: Any, body: Any, patch: Any) -> None:
        pass

    def purge(self, *, key: str, body: Any, patch: Any) -> None:
        pass

    def touch(self, *, body: Any, patch: Any, value: Any) -> None:
        pass

    def clear(self, *, essence: Any) -> Any:
        return {**essence, 'cleared': True}


@pytest.mark.parametrize('cls', [Custom, OverridingMulti, UserStorage])
def test_an_overridden_fetch_is_honoured_by_fetch_all(cls: type[kopf.ProgressStorage]) -> None:
    storage = cls()
    expected = {key: storage.fetch(key=key, body=BODY) for key in IDS}
    assert storage.fetch_all(keys=IDS, body=BODY) == {k: v for k, v in expected.items() if v is not None}


def test_an_overridden_clear_is_honoured_by_clear_fresh() -> None:
    assert UserStorage().clear_fresh(essence={'spec': {}}) == {'spec': {}, 'cleared': True}
    assert Custom().clear_fresh(essence={'spec': {}}) == {'spec': {}, 'cleared': True}


@pytest.mark.parametrize('storage, own', [
    (kopf.SmartProgressStorage(), True), (kopf.AnnotationsProgressStorage(), True),
    (kopf.StatusProgressStorage(), True), (kopf.MultiProgressStorage([kopf.StatusProgressStorage()]), True),
    (Custom(), False), (OverridingMulti(), False), (UserStorage(), False),
    (kopf.MultiProgressStorage([Custom()]), False),
    (kopf.AnnotationsDiffBaseStorage(), True), (kopf.StatusDiffBaseStorage(), True),
    (kopf.MultiDiffBaseStorage([kopf.AnnotationsDiffBaseStorage()]), True),
    (type('MyDiffBase', (kopf.AnnotationsDiffBaseStorage,), {})(), False),
])
def test_only_the_framework_storages_write_only_their_own_fields(storage: Any, own: bool) -> None:
    assert storage.writes_only_own_fields() is own
