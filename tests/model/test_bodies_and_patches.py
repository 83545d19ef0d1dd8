from typing import Any

import pytest

from kopf._model.bodies import Body
from kopf._model.patches import Patch, merge


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
