"""Schema-aware persistence (docs/design/decisions.md #8): keep progress and diff-base where they survive.

Given a CRD version's structural schema, predict whether the status fields that the configured
storages write would be pruned by the API server (`kopf._shared.schemas.survives`). If they would,
the writing storage is replaced by its annotations counterpart, and one warning names the CRD and
the field. Storages that only read status (the legacy part of `SmartProgressStorage`) and user
subclasses (whose fields we cannot know) are kept as they are.
"""
import dataclasses
from collections.abc import Mapping
from typing import Any

from kopf._shared import fields, schemas
from kopf._storage import diffbasestorages
from kopf._storage import progressstorages as progress

_SAMPLE_RECORD: progress.ProgressRecord = {
    'started': '2026-01-01T00:00:00.000000+00:00', 'stopped': '2026-01-01T00:00:00.000000+00:00',
    'delayed': '2026-01-01T00:00:00.000000+00:00', 'purpose': 'create', 'retries': 1,
    'success': False, 'failure': False, 'message': 'x', 'subrefs': ['x/y'],
}
_SAMPLE_ID = 'handler_id'


@dataclasses.dataclass(frozen=True)
class Fitting:
    """The storages to use for one CRD version, with the warnings about replaced ones."""
    progress_storage: progress.ProgressStorage
    diffbase_storage: diffbasestorages.DiffBaseStorage
    warnings: tuple[str, ...] = ()


def written_status_fields(storage: object) -> list[tuple[fields.FieldPath, Any]]:
    """The status paths a known storage writes to, each with a sample of what is written there."""
    if isinstance(storage, progress.MultiProgressStorage | diffbasestorages.MultiDiffBaseStorage):
        return [item for member in storage.storages for item in written_status_fields(member)]
    if isinstance(storage, progress._ReadPurgeOnlyStatusProgressStorage):
        return []
    if isinstance(storage, progress.StatusProgressStorage):
        return [(storage.field + (_SAMPLE_ID,), dict(_SAMPLE_RECORD)),
                (storage.touch_field, '2026-01-01T00:00:00.000000+00:00')]
    if isinstance(storage, diffbasestorages.StatusDiffBaseStorage):
        return [(storage.field, '{}')]
    return []


def pruned_fields(storage: object, schema: Mapping[str, Any] | None) -> list[fields.FieldPath]:
    """The status paths of the storage that the schema would prune."""
    return [path for path, value in written_status_fields(storage)
            if path and not schemas.survives(schema, path, value=value)]


def fit(
        *,
        progress_storage: progress.ProgressStorage,
        diffbase_storage: diffbasestorages.DiffBaseStorage,
        schema: Mapping[str, Any] | None,
        crd_name: str,
) -> Fitting:
    """The storages to use for a CRD with this schema, and a warning for each replaced one."""
    warnings: list[str] = []
    new_progress = _fit_progress(progress_storage, schema, crd_name, warnings)
    new_diffbase = _fit_diffbase(diffbase_storage, schema, crd_name, warnings)
    return Fitting(progress_storage=new_progress, diffbase_storage=new_diffbase, warnings=tuple(warnings))


def _warn(warnings: list[str], crd_name: str, path: fields.FieldPath, what: str) -> None:
    field = '.'.join(path[:-1] if path[-1:] == (_SAMPLE_ID,) else path)
    warnings.append(f'The schema of CRD {crd_name} would prune the field {field}: '
                    f'the {what} is kept in annotations instead. '
                    f'Declare the field with x-kubernetes-preserve-unknown-fields to keep it in status.')


def _fit_progress(storage: progress.ProgressStorage, schema: Mapping[str, Any] | None,
                  crd_name: str, warnings: list[str]) -> progress.ProgressStorage:
    if type(storage) is progress.MultiProgressStorage:
        return progress.MultiProgressStorage([_fit_progress(s, schema, crd_name, warnings) for s in storage.storages])
    if type(storage) is progress.StatusProgressStorage:
        pruned = pruned_fields(storage, schema)
        if pruned:
            _warn(warnings, crd_name, pruned[0], 'progress')
            return progress.AnnotationsProgressStorage()
    return storage


def _fit_diffbase(storage: diffbasestorages.DiffBaseStorage, schema: Mapping[str, Any] | None,
                  crd_name: str, warnings: list[str]) -> diffbasestorages.DiffBaseStorage:
    if type(storage) is diffbasestorages.MultiDiffBaseStorage:
        fitted = [_fit_diffbase(one, schema, crd_name, warnings) for one in storage.storages]
        return diffbasestorages.MultiDiffBaseStorage(fitted)
    if type(storage) is diffbasestorages.StatusDiffBaseStorage:
        pruned = pruned_fields(storage, schema)
        if pruned:
            _warn(warnings, crd_name, pruned[0], 'diff-base')
            return diffbasestorages.AnnotationsDiffBaseStorage(ignored_fields=storage.ignored_fields)
    return storage
