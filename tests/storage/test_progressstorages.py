"""Every progress storage round-trips: store → patch → merge into the body → fetch; and purges cleanly."""
import copy
from collections.abc import Callable
from typing import Any

import pytest

import kopf
from kopf._core.patches import merge
from kopf._storage import progressstorages

LONG_ID = 'create_fn/a-rather-long-sub-handler-identifier-exceeding-sixty-three-characters'
IDS = ['create_fn', LONG_ID, 'create_fn/item1', 'update_fn/spec.field', 'outer.<locals>.inner']
BODY: dict[str, Any] = {
    'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
    'metadata': {'name': 'kopf-example-1', 'namespace': 'default', 'annotations': {'someannotation': 'x'}},
    'spec': {'field': 'value'},
}
RECORD: kopf.ProgressRecord = {
    'started': '2026-01-01T00:00:00.000000+00:00', 'stopped': None, 'delayed': '2026-01-01T00:01:00.000000+00:00',
    'purpose': 'create', 'retries': 1, 'success': False, 'failure': False, 'message': 'Not yet.', 'subrefs': None,
}
RECORD_NON_NONE = {k: v for k, v in RECORD.items() if v is not None}

STORAGES: dict[str, Callable[[], kopf.ProgressStorage]] = {
    'annotations': lambda: kopf.AnnotationsProgressStorage(),
    'annotations-prefix': lambda: kopf.AnnotationsProgressStorage(prefix='my-op.example.com'),
    'annotations-v2': lambda: kopf.AnnotationsProgressStorage(v1=False),
    'annotations-verbose': lambda: kopf.AnnotationsProgressStorage(verbose=True),
    'status': lambda: kopf.StatusProgressStorage(),
    'status-field': lambda: kopf.StatusProgressStorage(field='status.my-op'),
    'status-name': lambda: kopf.StatusProgressStorage(name='other'),
    'smart': lambda: kopf.SmartProgressStorage(),
    'smart-custom': lambda: kopf.SmartProgressStorage(prefix='my-op.example.com', field='status.my-op'),
    'multi': lambda: kopf.MultiProgressStorage([
        kopf.AnnotationsProgressStorage(prefix='my-op.example.com'), kopf.StatusProgressStorage()]),
}


def _store(storage: kopf.ProgressStorage, body: dict[str, Any], key: str, record: Any) -> kopf.Patch:
    patch = kopf.Patch()
    storage.store(key=key, record=record, body=kopf.Body(body), patch=patch)
    storage.flush()
    return patch


@pytest.mark.parametrize('key', IDS)
@pytest.mark.parametrize('name', sorted(STORAGES))
def test_round_trip_and_purge(name: str, key: str) -> None:
    storage = STORAGES[name]()
    assert storage.fetch(key=key, body=kopf.Body(BODY)) is None

    patch = _store(storage, BODY, key, RECORD)
    assert patch
    body = merge(BODY, patch)
    fetched = storage.fetch(key=key, body=kopf.Body(body))
    assert fetched is not None
    assert {k: v for k, v in fetched.items() if v is not None} == RECORD_NON_NONE
    for other in IDS:
        if other != key:
            assert storage.fetch(key=other, body=kopf.Body(body)) is None

    purge = kopf.Patch()
    storage.purge(key=key, body=kopf.Body(body), patch=purge)
    after = merge(body, purge)
    assert storage.fetch(key=key, body=kopf.Body(after)) is None
    assert after['metadata']['annotations']['someannotation'] == 'x'
    assert after['spec'] == BODY['spec']


@pytest.mark.parametrize('name', sorted(STORAGES))
def test_purging_a_pending_record_leaves_no_trace_in_the_patch(name: str) -> None:
    storage = STORAGES[name]()
    patch = _store(storage, BODY, 'create_fn', RECORD)
    storage.purge(key='create_fn', body=kopf.Body(BODY), patch=patch)
    annotations = patch.get('metadata', {}).get('annotations', {})
    assert not {k for k in annotations if not k.endswith('/kopf-managed')}
    assert 'status' not in patch


@pytest.mark.parametrize('name', sorted(STORAGES))
def test_touch_and_untouch(name: str) -> None:
    storage = STORAGES[name]()
    touch = kopf.Patch()
    storage.touch(body=kopf.Body(BODY), patch=touch, value='2026-01-01T00:10:00.000000+00:00')
    body = merge(BODY, touch)
    if name.startswith('smart'):
        assert 'status' not in touch  # the legacy status location is never touched
    assert touch
    untouch = kopf.Patch()
    storage.touch(body=kopf.Body(body), patch=untouch, value=None)
    assert untouch
    after = merge(body, untouch)
    assert after.get('status', {}) == {} or 'dummy' not in str(after.get('status'))
    assert not any(k.endswith('touch-dummy') for k in after['metadata']['annotations'])


def test_annotations_format_compact_json_without_nones() -> None:
    patch = _store(kopf.AnnotationsProgressStorage(), BODY, 'create_fn', RECORD)
    assert patch == {'metadata': {'annotations': {
        'kopf.zalando.org/create_fn':
            '{"started":"2026-01-01T00:00:00.000000+00:00","delayed":"2026-01-01T00:01:00.000000+00:00",'
            '"purpose":"create","retries":1,"success":false,"failure":false,"message":"Not yet."}',
    }}}


def test_annotations_verbose_keeps_nones() -> None:
    patch = _store(kopf.AnnotationsProgressStorage(verbose=True), BODY, 'create_fn', RECORD)
    assert '"stopped":null' in patch['metadata']['annotations']['kopf.zalando.org/create_fn']


def test_annotations_custom_prefix_writes_the_marker_once() -> None:
    storage = kopf.AnnotationsProgressStorage(prefix='my-op.example.com')
    patch = _store(storage, BODY, 'create_fn', RECORD)
    assert patch['metadata']['annotations']['my-op.example.com/kopf-managed'] == 'yes'
    again = _store(storage, merge(BODY, patch), 'create_fn', RECORD)
    assert 'my-op.example.com/kopf-managed' not in again['metadata']['annotations']


def test_annotations_reads_v1_keys_when_no_v2_key() -> None:
    storage = kopf.AnnotationsProgressStorage(prefix='my-op.example.com')
    v1_only = copy.deepcopy(BODY)
    v1_only['metadata']['annotations']['my-op.example.com/create_fn.a-rather-long-sub-handler-id-nngFgw'] = \
        '{"started":"2026-01-01T00:00:00.000000+00:00","retries":2}'
    assert storage.fetch(key=LONG_ID, body=kopf.Body(v1_only)) == {
        'started': '2026-01-01T00:00:00.000000+00:00', 'retries': 2}


def test_status_format_is_the_raw_record_under_the_raw_id() -> None:
    patch = _store(kopf.StatusProgressStorage(field='status.my-op'), BODY, 'create_fn/item1', RECORD)
    assert patch == {'status': {'my-op': {'create_fn/item1': dict(RECORD)}}}


def test_status_field_properties_are_settable_and_formatted() -> None:
    storage = kopf.StatusProgressStorage(name='x')
    assert storage.field == ('status', 'x', 'progress')
    assert storage.touch_field == ('status', 'x', 'dummy')
    storage.field = 'status.{name}.other'
    assert storage.field == ('status', 'x', 'other')


LEGACY_BODY: dict[str, Any] = {
    **BODY,
    'status': {'kopf': {'progress': {'create_fn': {'started': '2026-01-01T00:00:00+00:00', 'retries': 1}}}},
}


def test_smart_reads_the_legacy_status_record_and_purges_it() -> None:
    storage = kopf.SmartProgressStorage()
    assert storage.fetch(key='create_fn', body=kopf.Body(LEGACY_BODY)) == {
        'started': '2026-01-01T00:00:00+00:00', 'retries': 1}

    patch = _store(storage, LEGACY_BODY, 'create_fn', RECORD)
    assert 'status' not in patch  # written to annotations only
    body = merge(LEGACY_BODY, patch)
    fetched = storage.fetch(key='create_fn', body=kopf.Body(body))
    assert fetched is not None and fetched['retries'] == 1 and fetched['message'] == 'Not yet.'  # annotations first

    purge = kopf.Patch()
    storage.purge(key='create_fn', body=kopf.Body(body), patch=purge)
    assert purge == {'metadata': {'annotations': {'kopf.zalando.org/create_fn': None}},
                     'status': {'kopf': {'progress': {'create_fn': None}}}}
    assert storage.fetch(key='create_fn', body=kopf.Body(merge(body, purge))) is None


def test_multi_fetches_from_the_first_that_has_a_record_and_stores_into_all() -> None:
    first = kopf.AnnotationsProgressStorage(prefix='first.example.com')
    second = kopf.StatusProgressStorage(field='status.second')
    multi = kopf.MultiProgressStorage(storages=[first, second])
    only_second = merge(BODY, _store(second, BODY, 'create_fn', {'retries': 5}))
    assert multi.fetch(key='create_fn', body=kopf.Body(only_second)) == {'retries': 5}

    both = merge(only_second, _store(first, only_second, 'create_fn', {'retries': 7}))
    assert multi.fetch(key='create_fn', body=kopf.Body(both)) == {'retries': 7}

    patch = _store(multi, BODY, 'create_fn', {'retries': 9})
    assert patch['metadata']['annotations']['first.example.com/create_fn'] == '{"retries":9}'
    assert patch['status']['second']['create_fn'] == {'retries': 9}


def test_clear_strips_the_storages_own_data_from_an_essence() -> None:
    essence = {
        'spec': {'x': 1},
        'metadata': {'annotations': {'kopf.zalando.org/create_fn': '{}', 'kopf.zalando.org/touch-dummy': 't',
                                     'my-op.example.com/create_fn': '{}', 'keep': 'me'}},
        'status': {'kopf': {'progress': {'create_fn': {}}}, 'other': 1},
    }
    given = copy.deepcopy(essence)
    smart = kopf.SmartProgressStorage()
    cleared = smart.clear(essence=given)
    assert given == essence  # not modified in place
    assert cleared == {
        'spec': {'x': 1},
        'metadata': {'annotations': {'my-op.example.com/create_fn': '{}', 'keep': 'me'}},
        'status': {'other': 1},
    }


class DictProgressStorage(kopf.ProgressStorage):
    """A user's storage that keeps the records in memory, keyed by the object's uid and handler id."""

    def __init__(self) -> None:
        self.data: dict[tuple[str, str], kopf.ProgressRecord] = {}
        self.flushes = 0

    def fetch(self, *, key: str, body: kopf.Body) -> kopf.ProgressRecord | None:
        return self.data.get((body.meta.uid or '', key))

    def store(self, *, key: str, record: kopf.ProgressRecord, body: kopf.Body, patch: kopf.Patch) -> None:
        self.data[(body.meta.uid or '', key)] = dict(record)  # type: ignore[assignment]

    def purge(self, *, key: str, body: kopf.Body, patch: kopf.Patch) -> None:
        self.data.pop((body.meta.uid or '', key), None)

    def touch(self, *, body: kopf.Body, patch: kopf.Patch, value: str | None) -> None:
        pass

    def clear(self, *, essence: Any) -> Any:
        return super().clear(essence=essence)

    def flush(self) -> None:
        self.flushes += 1


def test_a_user_subclass_storing_progress_in_a_dict() -> None:
    storage = DictProgressStorage()
    body = {**BODY, 'metadata': {**BODY['metadata'], 'uid': 'u1'}}
    patch = _store(storage, body, 'create_fn', RECORD)
    assert not patch  # nothing written to the object
    assert storage.fetch(key='create_fn', body=kopf.Body(body)) == RECORD
    assert storage.flushes == 1
    essence = {'spec': {'x': 1}}
    cleared = storage.clear(essence=essence)
    assert cleared == essence and cleared is not essence
    storage.purge(key='create_fn', body=kopf.Body(body), patch=patch)
    assert storage.fetch(key='create_fn', body=kopf.Body(body)) is None


def test_the_abstract_base_requires_the_methods() -> None:
    class Incomplete(kopf.ProgressStorage):
        def fetch(self, *, key: str, body: kopf.Body) -> kopf.ProgressRecord | None:
            return None

    with pytest.raises(TypeError):
        Incomplete()  # type: ignore[abstract]


class _OwnClear(kopf.AnnotationsProgressStorage):
    def clear(self, *, essence: Any) -> Any:
        return {}


@pytest.mark.parametrize('storage, expected', [
    (kopf.AnnotationsProgressStorage(), ('kopf.zalando.org/',)),
    (kopf.AnnotationsProgressStorage(prefix='my-op.example.com'), ('my-op.example.com/',)),
    (kopf.StatusProgressStorage(), ()),
    (kopf.StatusProgressStorage(field='spec.progress'), None),  # it would clear the spec of an essence
    (kopf.SmartProgressStorage(), ('kopf.zalando.org/',)),
    (kopf.MultiProgressStorage([kopf.AnnotationsProgressStorage(prefix='a.example.com'),
                                kopf.AnnotationsProgressStorage(prefix='b.example.com')]),
     ('a.example.com/', 'b.example.com/')),
    (kopf.MultiProgressStorage([kopf.AnnotationsProgressStorage(), _OwnClear()]), None),
    (_OwnClear(), None),
], ids=['annotations', 'prefix', 'status', 'status-in-spec', 'smart', 'multi', 'multi-of-own', 'own-clear'])
def test_cleared_prefixes_are_what_clear_fresh_strips_from_an_essence(storage: Any, expected: Any) -> None:
    assert storage.cleared_prefixes() == expected
    if expected is not None:
        essence = {'spec': {'x': 1}, 'metadata': {'annotations': {
            **{prefix + 'create_fn': '{}' for prefix in expected}, 'other.example.com/x': 'kept'}}}
        assert storage.clear_fresh(essence=essence) == {'spec': {'x': 1},
                                                         'metadata': {'annotations': {'other.example.com/x': 'kept'}}}


@pytest.mark.parametrize('body, patch, expected', [
    ({}, {}, {}),  # nothing in the body, nothing pending: the patch is not walked
    ({}, {'status': {'fn': {'t': 1}}}, {'status': {'fn': {'t': 1}}}),  # a handler's result stays
    ({}, {'status': {'kopf': {'progress': {'fn': {'retries': 1}}}, 'fn': 1}}, {'status': {'fn': 1}}),
    ({}, {'status': {'kopf': {'progress': {'fn': {}, 'other': {}}}}},
     {'status': {'kopf': {'progress': {'other': {}}}}}),
    ({'status': {'kopf': {'progress': {'fn': {'retries': 1}}}}}, {},
     {'status': {'kopf': {'progress': {'fn': None}}}}),
])
def test_a_status_purge_nulls_what_the_body_has_and_drops_what_is_pending(body: Any, patch: Any,
                                                                        expected: Any) -> None:
    kopf.StatusProgressStorage().purge(key='fn', body=body, patch=patch)
    assert patch == expected


@pytest.mark.parametrize('patch, expected', [({}, {}), ({'x': None}, {}), ({'x': 1, 'y': 2}, {'y': 2})])
def test_a_one_level_field_is_dropped_from_the_patch_whatever_its_value(patch: Any, expected: Any) -> None:
    progressstorages._unset({}, patch, ('x',))
    assert patch == expected
