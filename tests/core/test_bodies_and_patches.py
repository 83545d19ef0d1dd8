import datetime
import sys
from typing import Any

import iso8601
import pytest

from kopf._core.bodies import Body, parse_timestamp
from kopf._core.patches import Patch, merge


def test_body_views_are_live_and_read_only() -> None:
    raw: dict[str, Any] = {'metadata': {'name': 'n', 'namespace': 'ns', 'labels': {'a': 'b'},
                                        'creationTimestamp': '2026-01-01T00:00:00Z'}}
    body = Body(raw)
    assert body.meta.name == 'n'
    assert body.metadata.namespace == 'ns'
    assert body.meta.labels == {'a': 'b'}
    assert body.spec == {}
    assert body.meta.creation_timestamp is not None and body.meta.creation_timestamp.year == 2026
    assert body.meta.deletion_timestamp is None
    raw['spec'] = {'x': 1}
    assert body.spec['x'] == 1
    with pytest.raises(TypeError):
        body['spec'] = {}  # type: ignore[index]


def test_patch_views_create_dicts_on_write() -> None:
    patch = Patch()
    assert not patch
    patch.meta.annotations['a/b'] = 'c'
    patch.status['create_fn'] = {'x': 1}
    patch.spec['y'] = None
    assert patch == {'metadata': {'annotations': {'a/b': 'c'}}, 'status': {'create_fn': {'x': 1}}, 'spec': {'y': None}}
    assert patch


def test_patch_fns_make_it_truthy_and_a_json_patch() -> None:
    body = {'metadata': {'finalizers': ['a']}}
    patch = Patch(fns=[lambda b: b['metadata']['finalizers'].append('b')])
    assert patch and dict(patch) == {}
    assert patch.as_json_patch(body) == [{'op': 'add', 'path': '/metadata/finalizers/1', 'value': 'b'}]


def test_merge_patch_semantics() -> None:
    body = {'a': {'b': 1, 'c': 2}, 'l': [1, 2]}
    assert merge(body, {'a': {'b': None, 'd': 3}, 'l': [3]}) == {'a': {'c': 2, 'd': 3}, 'l': [3]}
    assert body == {'a': {'b': 1, 'c': 2}, 'l': [1, 2]}


UTC = datetime.UTC
PLUS2 = datetime.timezone(datetime.timedelta(hours=2))


@pytest.mark.parametrize('value, expected', [
    # What Kubernetes, we and upstream Kopf write: parsed by datetime.fromisoformat.
    ('2024-05-01T12:00:00Z', datetime.datetime(2024, 5, 1, 12, tzinfo=UTC)),
    ('2024-05-01T12:00:00.123456Z', datetime.datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)),
    ('2026-01-01T00:00:05.123456+00:00', datetime.datetime(2026, 1, 1, 0, 0, 5, 123456, tzinfo=UTC)),
    ('2030-01-01T02:00:00+02:00', datetime.datetime(2030, 1, 1, 2, tzinfo=PLUS2)),
    ('2024-05-01T12:00:00.123456789Z', datetime.datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)),  # truncated
    ('2020-01-01T00:00:00', datetime.datetime(2020, 1, 1, tzinfo=UTC)),  # naive: UTC
    ('2020-01-01', datetime.datetime(2020, 1, 1, tzinfo=UTC)),
    # Refused by fromisoformat, still parsed (by iso8601) as before.
    ('2024-5-1T12:00:00Z', datetime.datetime(2024, 5, 1, 12, tzinfo=UTC)),
    ('2024-05', datetime.datetime(2024, 5, 1, tzinfo=UTC)),
    ('2024', datetime.datetime(2024, 1, 1, tzinfo=UTC)),
])
def test_timestamps_parse_as_with_iso8601(value: str, expected: datetime.datetime) -> None:
    parsed = parse_timestamp(value)
    assert parsed == expected and parsed.utcoffset() == expected.utcoffset()
    assert parsed == iso8601.parse_date(value, default_timezone=UTC)


@pytest.mark.parametrize('value', ['', 'garbage', '2024-05-01T12:00:00z', '2024-13-01T00:00:00Z'])
def test_non_timestamps_raise_value_errors(value: str) -> None:
    with pytest.raises(ValueError):
        parse_timestamp(value)


def test_usual_timestamps_need_no_iso8601(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, 'iso8601', None)  # any import of it fails
    body = Body({'metadata': {'creationTimestamp': '2024-05-01T12:00:00Z',
                              'deletionTimestamp': '2024-05-01T12:00:01.5+00:00'}})
    assert body.meta.creation_timestamp == datetime.datetime(2024, 5, 1, 12, tzinfo=UTC)
    assert body.meta.deletion_timestamp == datetime.datetime(2024, 5, 1, 12, 0, 1, 500000, tzinfo=UTC)
    with pytest.raises(ImportError):
        parse_timestamp('2024-05')  # the fallback is really iso8601


def test_patch_fns_with_known_ops_need_no_generic_diff(monkeypatch: pytest.MonkeyPatch) -> None:
    class AddB:
        def __call__(self, body: dict[str, Any]) -> None:
            body['metadata']['finalizers'].append('b')

        def json_ops(self, body: Any) -> list[dict[str, Any]]:
            return [{'op': 'add', 'path': '/metadata/finalizers/1', 'value': 'b'}]

    monkeypatch.setitem(sys.modules, 'jsonpatch', None)  # any import of it fails
    body = {'metadata': {'finalizers': ['a']}}
    assert Patch(fns=[AddB()]).as_json_patch(body) == [{'op': 'add', 'path': '/metadata/finalizers/1', 'value': 'b'}]
    with pytest.raises(ImportError):
        Patch(fns=[AddB(), AddB()]).as_json_patch(body)  # several fns: the generic diff (jsonpatch)


def test_patch_as_one_json_patch_with_its_merged_fields_and_fns() -> None:
    """An admission answer: the merge-patch's fields and the fns in one JSON-patch; the body is untouched."""
    body = {'metadata': {'labels': {'a': '1'}, 'finalizers': ['x']}, 'spec': {'old': 1}}
    patch = Patch({'spec': {'old': None, 'new': 2}, 'metadata': {'labels': {'b': '2'}}},
                  fns=[lambda b: b['metadata']['finalizers'].append('y')])
    ops = patch.as_json_patch(body, merged=True)
    assert sorted(ops, key=lambda op: op['path']) == [
        {'op': 'add', 'path': '/metadata/finalizers/1', 'value': 'y'},
        {'op': 'add', 'path': '/metadata/labels/b', 'value': '2'},
        {'op': 'add', 'path': '/spec/new', 'value': 2},
        {'op': 'remove', 'path': '/spec/old'},
    ]
    assert body == {'metadata': {'labels': {'a': '1'}, 'finalizers': ['x']}, 'spec': {'old': 1}}
    assert Patch({'spec': {'new': 2}}).as_json_patch(body) == []  # without `merged`: only the fns
