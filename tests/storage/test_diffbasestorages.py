"""Every diff-base storage round-trips: build → store → patch → merge into the body → fetch == essence."""
from collections.abc import Callable
from typing import Any

import pytest

import kopf
from kopf._core.patches import merge

BODY: dict[str, Any] = {
    'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
    'metadata': {
        'name': 'kopf-example-1', 'namespace': 'default', 'uid': 'u1',
        'labels': {'somelabel': 'somevalue'},
        'annotations': {'someannotation': 'somevalue', 'kopf.zalando.org/create_fn': '{}'},
    },
    'spec': {'duration': '1m', 'field': 'value', 'items': ['item1', 'item2']},
    'status': {'create_fn': {'message': 'hello world'}},
}
ESSENCE = {
    'spec': {'duration': '1m', 'field': 'value', 'items': ['item1', 'item2']},
    'metadata': {'labels': {'somelabel': 'somevalue'}, 'annotations': {'someannotation': 'somevalue'}},
}

STORAGES: dict[str, Callable[[], kopf.DiffBaseStorage]] = {
    'annotations': lambda: kopf.AnnotationsDiffBaseStorage(),
    'annotations-prefix': lambda: kopf.AnnotationsDiffBaseStorage(prefix='my-op.example.com'),
    'annotations-long-key': lambda: kopf.AnnotationsDiffBaseStorage(key='last-handled-' + 'x' * 70),
    'annotations-v2': lambda: kopf.AnnotationsDiffBaseStorage(v1=False),
    'status': lambda: kopf.StatusDiffBaseStorage(),
    'status-field': lambda: kopf.StatusDiffBaseStorage(field='status.my-op-base'),
    'multi': lambda: kopf.MultiDiffBaseStorage([
        kopf.AnnotationsDiffBaseStorage(prefix='my-op.example.com'), kopf.StatusDiffBaseStorage()]),
}


@pytest.mark.parametrize('name', sorted(STORAGES))
def test_round_trip(name: str) -> None:
    storage = STORAGES[name]()
    assert storage.fetch(body=kopf.Body(BODY)) is None
    essence = storage.build(body=kopf.Body(BODY))
    assert essence == ESSENCE
    patch = kopf.Patch()
    storage.store(body=kopf.Body(BODY), patch=patch, essence=essence)
    body = merge(BODY, patch)
    assert storage.fetch(body=kopf.Body(body)) == ESSENCE
    # Its own data is not part of the next essence: no change is seen after storing.
    assert storage.build(body=kopf.Body(body)) == ESSENCE


def test_annotations_format_compact_json_with_a_newline() -> None:
    patch = kopf.Patch()
    kopf.AnnotationsDiffBaseStorage().store(body=kopf.Body(BODY), patch=patch, essence=ESSENCE)
    assert patch == {'metadata': {'annotations': {'kopf.zalando.org/last-handled-configuration':
        '{"spec":{"duration":"1m","field":"value","items":["item1","item2"]},'
        '"metadata":{"labels":{"somelabel":"somevalue"},"annotations":{"someannotation":"somevalue"}}}\n'}}}


def test_status_format_is_a_json_string_without_a_newline() -> None:
    patch = kopf.Patch()
    kopf.StatusDiffBaseStorage(field='status.my-op-base').store(body=kopf.Body(BODY), patch=patch, essence={'a': 1})
    assert patch == {'status': {'my-op-base': '{"a":1}'}}


def test_ignored_fields() -> None:
    storage = kopf.AnnotationsDiffBaseStorage(ignored_fields=['spec.duration', ('metadata', 'labels')])
    assert storage.build(body=kopf.Body(BODY)) == {
        'spec': {'field': 'value', 'items': ['item1', 'item2']},
        'metadata': {'annotations': {'someannotation': 'somevalue'}},
    }


def test_extra_fields_re_add_status() -> None:
    essence = kopf.AnnotationsDiffBaseStorage().build(body=kopf.Body(BODY), extra_fields=['status.create_fn'])
    assert essence['status'] == {'create_fn': {'message': 'hello world'}}


def test_multi_fetches_from_the_first_that_has_one() -> None:
    first = kopf.AnnotationsDiffBaseStorage(prefix='my-op.example.com')
    second = kopf.StatusDiffBaseStorage()
    multi = kopf.MultiDiffBaseStorage(storages=[first, second])
    patch = kopf.Patch()
    second.store(body=kopf.Body(BODY), patch=patch, essence={'old': 1})
    body = merge(BODY, patch)
    assert multi.fetch(body=kopf.Body(body)) == {'old': 1}
    patch = kopf.Patch()
    first.store(body=kopf.Body(body), patch=patch, essence={'new': 1})
    assert multi.fetch(body=kopf.Body(merge(body, patch))) == {'new': 1}


class DictDiffBaseStorage(kopf.DiffBaseStorage):
    def __init__(self, ignored_fields: Any = None) -> None:
        super().__init__(ignored_fields=ignored_fields)
        self.data: dict[str, Any] = {}

    def build(self, *, body: kopf.Body, extra_fields: Any = None) -> Any:
        essence = super().build(body=body, extra_fields=extra_fields)
        essence.pop('metadata', None)
        return essence

    def fetch(self, *, body: kopf.Body) -> Any:
        return self.data.get(body.meta.uid or '')

    def store(self, *, body: kopf.Body, patch: kopf.Patch, essence: Any) -> None:
        self.data[body.meta.uid or ''] = essence


def test_a_user_subclass() -> None:
    storage = DictDiffBaseStorage(['spec.items'])
    essence = storage.build(body=kopf.Body(BODY))
    assert essence == {'spec': {'duration': '1m', 'field': 'value'}}
    patch = kopf.Patch()
    storage.store(body=kopf.Body(BODY), patch=patch, essence=essence)
    assert not patch
    assert storage.fetch(body=kopf.Body(BODY)) == essence


@pytest.mark.parametrize('name', sorted(STORAGES))
def test_unchanged_is_the_essence_compared_or_not_told(name: str) -> None:
    """`unchanged()` (the quiet first sight's question): the framework's own storages tell it without `build()`."""
    storage = STORAGES[name]()
    patch = kopf.Patch()
    storage.store(body=kopf.Body(BODY), patch=patch, essence=ESSENCE)
    stored = merge(BODY, patch)
    changed = merge(stored, {'spec': {'field': 'other'}})
    relabelled = merge(stored, {'metadata': {'labels': {'somelabel': 'other'}}})
    for body, expected in [(stored, True), (changed, False), (relabelled, False), (BODY, False)]:
        answer = storage.unchanged(body=body, cleared=('kopf.zalando.org/',))
        assert answer is (None if name == 'multi' else expected)


class _OwnBuild(kopf.AnnotationsDiffBaseStorage):
    def build(self, *, body: Any, extra_fields: Any = None) -> dict[str, Any]:
        return {'mine': True}


@pytest.mark.parametrize('storage', [
    _OwnBuild(), kopf.AnnotationsDiffBaseStorage(ignored_fields=['spec.field']),
    kopf.StatusDiffBaseStorage(field='spec.base'), kopf.MultiDiffBaseStorage([kopf.AnnotationsDiffBaseStorage()]),
], ids=['subclass', 'ignored-fields', 'status-outside-status', 'multi'])
def test_unchanged_is_not_told_where_the_essence_may_be_another(storage: kopf.DiffBaseStorage) -> None:
    patch = kopf.Patch()
    storage.store(body=kopf.Body(BODY), patch=patch, essence=ESSENCE)
    assert storage.unchanged(body=merge(BODY, patch), cleared=()) is None
