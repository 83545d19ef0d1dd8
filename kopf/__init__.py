"""kopf: Kubernetes operators in plain Python.

The facade: every public name is re-exported here, and nothing else lives here.
Code written for upstream Kopf 1.x imports from this module unchanged.
Each area keeps its re-exports in its own block below.
"""
from kopf._version import __commit_id__, __version__, __version_tuple__

# --- block: model basics ---
from kopf._model.bodies import (
    Annotations,
    Body,
    BodyEssence,
    Labels,
    Meta,
    RawBody,
    RawEvent,
    Spec,
    Status,
)
from kopf._model.causes import Reason
from kopf._model.fields import FieldPath, FieldSpec
from kopf._model.patches import Patch, PatchFn

# --- block: handlers (decorators, filters, registry, errors, memo) ---
# --- end block: handlers ---

# --- block: persistence (settings, storages, diffs) ---
from kopf._model.diffs import Diff, DiffItem, DiffOperation
from kopf._model.settings import OperatorConfig, OperatorSettings
from kopf._storage.diffbase import (
    AnnotationsDiffBaseStorage,
    DiffBaseStorage,
    MultiDiffBaseStorage,
    StatusDiffBaseStorage,
)
from kopf._storage.progress import (
    AnnotationsProgressStorage,
    MultiProgressStorage,
    ProgressRecord,
    ProgressStorage,
    SmartProgressStorage,
    StatusProgressStorage,
)
# --- end block: persistence ---

# --- block: api client (credentials, errors, login) ---
# --- end block: api client ---

__all__ = [
    '__commit_id__',
    '__version__',
    '__version_tuple__',
    # model basics
    'Annotations',
    'Body',
    'BodyEssence',
    'FieldPath',
    'FieldSpec',
    'Labels',
    'Meta',
    'Patch',
    'PatchFn',
    'RawBody',
    'RawEvent',
    'Reason',
    'Spec',
    'Status',
    # --- all: handlers ---
    # --- end all: handlers ---
    # --- all: persistence ---
    'AnnotationsDiffBaseStorage',
    'AnnotationsProgressStorage',
    'Diff',
    'DiffBaseStorage',
    'DiffItem',
    'DiffOperation',
    'MultiDiffBaseStorage',
    'MultiProgressStorage',
    'OperatorConfig',
    'OperatorSettings',
    'ProgressRecord',
    'ProgressStorage',
    'SmartProgressStorage',
    'StatusDiffBaseStorage',
    'StatusProgressStorage',
    # --- end all: persistence ---
    # --- all: api client ---
    # --- end all: api client ---
]
