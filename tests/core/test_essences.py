from typing import Any

import pytest

from kopf._core.essences import build, drop_annotations, kopf_prefixes, unchanged

BODY: dict[str, Any] = {
    'apiVersion': 'kopf.dev/v1',
    'kind': 'KopfExample',
    'metadata': {
        'name': 'kopf-example-1', 'namespace': 'default', 'uid': 'u1', 'resourceVersion': '1',
        'labels': {'somelabel': 'somevalue'},
        'annotations': {
            'someannotation': 'somevalue',
            'kopf.zalando.org/last-handled-configuration': '{}\n',
            'kopf.zalando.org/create_fn': '{}',
            'sub.kopf.zalando.org/create_fn': '{}',
            'other-op.example.com/kopf-managed': 'yes',
            'other-op.example.com/create_fn': '{}',
            'not-managed.example.com/create_fn': 'kept',
            'kubectl.kubernetes.io/last-applied-configuration': '{"spec":{}}',
        },
        'finalizers': ['kopf.zalando.org/KopfFinalizerMarker'],
    },
    'spec': {'duration': '1m', 'field': 'value', 'items': ['item1', 'item2']},
    'status': {'create_fn': {'message': 'hello world'}, 'x': 1},
}


def test_essence_of_a_realistic_body() -> None:
    essence = build(BODY)
    assert essence == {
        'spec': {'duration': '1m', 'field': 'value', 'items': ['item1', 'item2']},
        'metadata': {
            'labels': {'somelabel': 'somevalue'},
            'annotations': {'someannotation': 'somevalue', 'not-managed.example.com/create_fn': 'kept'},
        },
    }
    assert list(essence) == ['spec', 'metadata']  # spec first, metadata last


def test_essence_does_not_modify_the_body() -> None:
    before = repr(BODY)
    essence = build(BODY)
    essence['spec']['items'].append('x')
    assert repr(BODY) == before


@pytest.mark.parametrize('extra, expected_status', [
    (['status.x'], {'x': 1}),
    ([('status', 'create_fn', 'message')], {'create_fn': {'message': 'hello world'}}),
    (['status.absent'], None),
])
def test_extra_fields_are_re_added(extra: Any, expected_status: Any) -> None:
    essence = build(BODY, extra_fields=extra)
    assert essence.get('status') == expected_status


def test_ignored_fields_are_dropped_with_their_empty_parents() -> None:
    essence = build(BODY, ignored_fields=['spec.duration', 'metadata.labels.somelabel'])
    assert essence['spec'] == {'field': 'value', 'items': ['item1', 'item2']}
    assert 'labels' not in essence['metadata']


@pytest.mark.parametrize('body, expected', [
    ({'metadata': {'name': 'x'}, 'spec': {}}, {'spec': {}}),
    ({'metadata': {'labels': {}, 'annotations': {}}}, {}),
    ({'metadata': {'annotations': {'kopf.zalando.org/x': '1'}}, 'status': {}}, {}),
    ({'data': {'k': 'v'}, 'kind': 'ConfigMap', 'metadata': {'labels': {'a': 'b'}}},
     {'data': {'k': 'v'}, 'metadata': {'labels': {'a': 'b'}}}),
])
def test_empty_stanzas_are_dropped(body: Any, expected: Any) -> None:
    assert build(body) == expected


@pytest.mark.parametrize('annotations, expected', [
    ({}, set()),
    ({'a': 'b', 'x.com/y': 'z'}, set()),
    ({'kopf.zalando.org/x': ''}, {'kopf.zalando.org'}),
    ({'a.kopf.zalando.org/x': ''}, {'a.kopf.zalando.org'}),
    ({'kopf.zalando.org.evil.com/x': ''}, set()),
    ({'my-op.example.com/kopf-managed': 'yes', 'my-op.example.com/x': ''}, {'my-op.example.com'}),
])
def test_kopf_prefixes(annotations: dict[str, str], expected: set[str]) -> None:
    assert kopf_prefixes(annotations) == expected


# -- unchanged(): the essence compared without building it, side by side with `build()` + `==` -----------------

DROPPED = ('kopf.zalando.org/last-handled-configuration',)


def _reference(old: Any, body: Any, prefixes: tuple[str, ...]) -> bool:
    essence = build(body)
    annotations = essence.get('metadata', {}).get('annotations', {})
    drop_annotations(essence, [*DROPPED, *(key for key in annotations if key.startswith(prefixes))])
    return bool(old == essence)


UNCHANGED_BODIES: dict[str, dict[str, Any]] = {
    'realistic': BODY,
    'no metadata': {'spec': {'x': 1}},
    'metadata None': {'metadata': None, 'spec': {'x': 1}},
    'empty labels and annotations': {'metadata': {'labels': {}, 'annotations': {}}, 'spec': {}},
    'only kopf annotations': {'metadata': {'annotations': {'kopf.zalando.org/create_fn': '{}', DROPPED[0]: '{}'}}},
    'only labels': {'metadata': {'labels': {'a': 'b'}}, 'spec': {'x': [1, 2]}},
    'custom prefix': {'metadata': {'annotations': {'my.example.com/create_fn': '{}', 'x': 'y'}}, 'spec': {}},
    'no spec, other fields': {'apiVersion': 'v1', 'kind': 'ConfigMap', 'data': {'k': 'v'}, 'status': {'s': 1}},
    'nothing': {},
}


def _olds(body: dict[str, Any], prefixes: tuple[str, ...]) -> list[Any]:
    essence = build(body)
    annotations = essence.get('metadata', {}).get('annotations', {})
    drop_annotations(essence, [*DROPPED, *(key for key in annotations if key.startswith(prefixes))])
    olds: list[Any] = [essence, {}, None, [], 'x', {**essence, 'extra': 1}, {**essence, 'metadata': {}},
                       {**essence, 'metadata': {'labels': {'a': 'b'}, 'annotations': {'x': 'y'}}},
                       {key: value for key, value in essence.items() if key != 'metadata'},
                       {**essence, 'status': {'s': 1}}]
    for key in essence:
        olds.append({k: v for k, v in essence.items() if k != key})
        olds.append({**essence, key: {'changed': True}})
    return olds


@pytest.mark.parametrize('prefixes', [(), ('kopf.zalando.org/',), ('my.example.com/', 'other.example.com/')])
@pytest.mark.parametrize('name', list(UNCHANGED_BODIES))
def test_unchanged_tells_what_the_built_essence_tells(name: str, prefixes: tuple[str, ...]) -> None:
    body = UNCHANGED_BODIES[name]
    for old in _olds(body, prefixes):
        assert unchanged(old, body, dropped=DROPPED, prefixes=prefixes) is _reference(old, body, prefixes), old
    assert unchanged(_olds(body, prefixes)[0], body, dropped=DROPPED, prefixes=prefixes) is True


@pytest.mark.parametrize('metadata', [['x'], {'labels': ['x']}, {'annotations': 'x'}, {'labels': 0}])
def test_unchanged_leaves_a_malformed_metadata_to_build(metadata: Any) -> None:
    assert unchanged({}, {'metadata': metadata}, dropped=DROPPED, prefixes=()) is None
