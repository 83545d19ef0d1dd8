from typing import Any

import pytest

import kopf
from kopf._storage import fitting

PRESERVED: dict[str, Any] = {
    'type': 'object',
    'properties': {
        'spec': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True},
        'status': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True},
    },
}
STRICT: dict[str, Any] = {
    'type': 'object',
    'properties': {
        'spec': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True},
        'status': {'type': 'object', 'properties': {'phase': {'type': 'string'}}},
    },
}
NO_STATUS: dict[str, Any] = {'type': 'object', 'properties': {'spec': {'type': 'object'}}}


@pytest.mark.parametrize('schema', [None, PRESERVED])
def test_status_storages_are_kept_where_status_survives(schema: Any) -> None:
    progress = kopf.StatusProgressStorage(field='status.my-op')
    diffbase = kopf.StatusDiffBaseStorage(field='status.my-op-base')
    result = fitting.fit(progress_storage=progress, diffbase_storage=diffbase, schema=schema, crd_name='x.example.com')
    assert result.progress_storage is progress
    assert result.diffbase_storage is diffbase
    assert result.warnings == ()


@pytest.mark.parametrize('schema', [STRICT, NO_STATUS])
def test_status_storages_are_replaced_by_annotations_with_one_warning_each(schema: Any) -> None:
    progress = kopf.StatusProgressStorage(field='status.my-op')
    diffbase = kopf.StatusDiffBaseStorage(field='status.my-op-base', ignored_fields=['spec.x'])
    result = fitting.fit(progress_storage=progress, diffbase_storage=diffbase, schema=schema,
                         crd_name='kopfexamples.kopf.dev')
    assert isinstance(result.progress_storage, kopf.AnnotationsProgressStorage)
    assert isinstance(result.diffbase_storage, kopf.AnnotationsDiffBaseStorage)
    assert result.diffbase_storage.ignored_fields == [('spec', 'x')]
    assert len(result.warnings) == 2
    assert 'kopfexamples.kopf.dev' in result.warnings[0] and 'field status.my-op:' in result.warnings[0]
    assert 'status.my-op-base' in result.warnings[1]


def test_annotations_smart_and_user_storages_are_never_replaced() -> None:
    smart = kopf.SmartProgressStorage()
    annotations = kopf.AnnotationsDiffBaseStorage()
    result = fitting.fit(progress_storage=smart, diffbase_storage=annotations, schema=STRICT, crd_name='x')
    assert result.progress_storage is smart and result.diffbase_storage is annotations
    assert result.warnings == ()


def test_multi_members_are_fitted_one_by_one() -> None:
    multi = kopf.MultiProgressStorage([kopf.AnnotationsProgressStorage(prefix='a.example.com'),
                                       kopf.StatusProgressStorage()])
    result = fitting.fit(progress_storage=multi, diffbase_storage=kopf.AnnotationsDiffBaseStorage(),
                         schema=STRICT, crd_name='x')
    assert isinstance(result.progress_storage, kopf.MultiProgressStorage)
    assert [type(s) for s in result.progress_storage.storages] == [kopf.AnnotationsProgressStorage] * 2
    assert len(result.warnings) == 1


def test_pruned_fields_of_a_declared_status_field() -> None:
    schema = {'type': 'object', 'properties': {'status': {'type': 'object', 'properties': {
        'my-op': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True},
    }}}}
    assert fitting.pruned_fields(kopf.StatusProgressStorage(field='status.my-op'), schema) == [
        ('status', 'kopf', 'dummy')]  # the touch field is not declared
    assert fitting.pruned_fields(kopf.StatusDiffBaseStorage(field='status.my-op'), schema) == []
