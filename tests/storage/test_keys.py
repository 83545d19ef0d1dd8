from typing import Any

import pytest

from kopf._storage import keys

LONG_ID = 'create_fn/a-rather-long-sub-handler-identifier-exceeding-sixty-three-characters'
RS_OF_DEPLOYMENT = {'kind': 'ReplicaSet', 'metadata': {'ownerReferences': [{'kind': 'Deployment', 'name': 'd'}]}}


@pytest.mark.parametrize('name, expected', [
    ('create_fn', 'create_fn'),
    ('create_fn/item1', 'create_fn.item1'),
    ('update_fn/spec.field', 'update_fn.spec.field'),
    ('outer.<locals>.inner', 'outer._locals_.inner'),
])
def test_safe_name(name: str, expected: str) -> None:
    assert keys.safe_name(name) == expected


def test_hash_suffix_is_blake2b_4_base64_altchars_stripped() -> None:
    assert keys.hash_suffix(LONG_ID) == '-yXT3wA'  # as upstream 1.45.2 writes it
    assert keys.hash_suffix(keys.safe_name(LONG_ID)) == '-nngFgw'


@pytest.mark.parametrize('prefix, name, v1, body, expected', [
    ('kopf.zalando.org', 'create_fn', True, None, ['kopf.zalando.org/create_fn']),
    ('kopf.zalando.org', 'create_fn/item1', True, None, ['kopf.zalando.org/create_fn.item1']),
    ('my-op.example.com', LONG_ID, True, None, [
        'my-op.example.com/create_fn.a-rather-long-sub-handler-identifier-exceeding-yXT3wA',
        'my-op.example.com/create_fn.a-rather-long-sub-handler-id-nngFgw',
    ]),
    ('my-op.example.com', LONG_ID, False, None, [
        'my-op.example.com/create_fn.a-rather-long-sub-handler-identifier-exceeding-yXT3wA',
    ]),
    ('kopf.zalando.org', 'create_fn', True, RS_OF_DEPLOYMENT, ['kopf.zalando.org/create_fn-ofDRS']),
    ('kopf.zalando.org', 'create_fn', True, {'kind': 'ReplicaSet', 'metadata': {}}, ['kopf.zalando.org/create_fn']),
    ('kopf.zalando.org', 'create_fn', True, {'kind': 'Pod', 'metadata': {'ownerReferences': [{'kind': 'Deployment'}]}},
     ['kopf.zalando.org/create_fn']),
])
def test_make_keys(prefix: str, name: str, v1: bool, body: dict | None, expected: list[str]) -> None:
    result = keys.make_keys(prefix, name, v1=v1, body=body)
    assert result == expected
    assert all(len(key.split('/', 1)[1]) <= 63 for key in result)


def test_v1_key_fits_63_with_the_prefix() -> None:
    key = keys.make_v1_key('my-op.example.com', LONG_ID)
    assert len(key) == 63


@pytest.mark.parametrize('prefix, marker', [
    ('kopf.zalando.org', None),
    ('kopf.example.com', None),
    ('my-op.example.com', 'my-op.example.com/kopf-managed'),
])
def test_marker_key(prefix: str, marker: str | None) -> None:
    assert keys.marker_key(prefix) == marker


def test_prefix_validation() -> None:
    with pytest.raises(ValueError):
        keys.validate_prefix('')
    with pytest.warns(UserWarning):
        keys.validate_prefix('p' * 190)
    assert keys.validate_prefix('p' * 189) == 'p' * 189


@pytest.mark.parametrize('body, patch, expected', [
    ({}, {}, {}),  # nothing in the body, nothing pending: the patch is not walked
    ({}, {'status': {'x': 1}}, {'status': {'x': 1}}),
    ({}, {'metadata': {'annotations': {'p/k': 'v', 'p/o': 'w'}}}, {'metadata': {'annotations': {'p/o': 'w'}}}),
    ({}, {'metadata': {'annotations': {'p/k': 'v'}}}, {}),  # the parents it leaves empty go too
    ({}, {'metadata': {}}, {'metadata': {}}),
    ({'metadata': {'annotations': {'p/k': 'v'}}}, {}, {'metadata': {'annotations': {'p/k': None}}}),
])
def test_remove_nulls_what_the_body_has_and_drops_what_is_pending(body: Any, patch: Any, expected: Any) -> None:
    keys.remove(body, patch, ['p/k'])
    assert patch == expected
