"""The reactor's fast paths over the storages give what the storages' own methods give."""
import copy
from typing import Any

import pytest

import kopf
from kopf._model.patches import merge
from kopf._storage import progress as progress_storages
from tests.storage.test_progress_storages import BODY, IDS, RECORD, STORAGES


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
def test_fetch_records_is_fetch_of_each_key(name: str) -> None:
    storage = ALL[name]()
    found = 0
    for body in bodies(storage):
        expected = {key: storage.fetch(key=key, body=body) for key in IDS}
        expected = {key: record for key, record in expected.items() if record is not None}
        fetched = progress_storages.fetch_records(storage, body, IDS)
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
def test_clear_essence_is_clear(name: str, essence: dict[str, Any]) -> None:
    storage = ALL[name]()
    given = copy.deepcopy(essence)
    assert progress_storages.clear_essence(storage, given) == storage.clear(essence=copy.deepcopy(essence))
    assert given == essence  # not modified
