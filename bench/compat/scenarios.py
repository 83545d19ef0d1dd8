"""Framework-neutral scenarios of the persistence storages, written against the public `kopf` API only.

Every scenario is a function `scenario(kopf) -> JSON-able data`: it receives an imported `kopf` module
(upstream Kopf 1.45.2 in a throw-away virtualenv, or ours), drives the public storage classes with
dict literals, and returns what they produced: patches, fetched records, essences, and the exact
annotation/status string values.  The same functions run on both frameworks:
`bench/compat/fixtures.py` records upstream's outputs under `tests/storage/fixtures/`,
and `tests/storage/test_upstream_compat.py` compares ours with them.

Only names documented in SPEC.md §0/§4 are used: the storage classes, `kopf.Body`, `kopf.Patch`
and the storages' keyword-only methods.  This module must not import `kopf` itself, nor anything
outside the standard library, so that it runs unchanged in any interpreter.

Conventions of the returned data:
- patches are plain dicts (key order kept); a patch's `.fns`, if any, are counted as `patch_fns`;
- essences come with `..._json`: the compact JSON of the dict in its own key order, because the key
  order decides the bytes of the stored diff-base;
- an expected exception is recorded as `{"raises": "<class name>"}`.
"""
import copy
import json
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

__all__ = ['SCENARIOS', 'Scenario', 'run_all', 'run_one', 'to_json']

# ----------------------------------------------------------------------------------------------
# Data: timestamps, records, handler ids, bodies.
# ----------------------------------------------------------------------------------------------

TS0 = '2026-01-01T00:00:00.000000+00:00'
TS1 = '2026-01-01T00:00:05.123456+00:00'
TS2 = '2026-01-01T00:01:00.000000+00:00'
TS_TOUCH = '2026-01-01T00:10:00.000000+00:00'

# ProgressRecord dicts as SPEC §4.1 describes them (all nine fields, None where unset).
RECORDS: dict[str, dict[str, Any]] = {
    'pending': {
        'started': TS0, 'stopped': None, 'delayed': None, 'purpose': 'create', 'retries': 0,
        'success': False, 'failure': False, 'message': None, 'subrefs': None,
    },
    'done': {
        'started': TS0, 'stopped': TS1, 'delayed': None, 'purpose': 'create', 'retries': 1,
        'success': True, 'failure': False, 'message': None, 'subrefs': None,
    },
    'delayed': {
        'started': TS0, 'stopped': None, 'delayed': TS2, 'purpose': 'update', 'retries': 1,
        'success': False, 'failure': False, 'message': 'Temporary "error":\n\tline 2 — é ✓ <&>',
        'subrefs': None,
    },
    'failed': {
        'started': TS0, 'stopped': TS1, 'delayed': None, 'purpose': 'delete', 'retries': 3,
        'success': False, 'failure': True, 'message': 'Permanent failure.', 'subrefs': None,
    },
    'parent': {
        'started': TS0, 'stopped': None, 'delayed': None, 'purpose': 'create', 'retries': 0,
        'success': False, 'failure': False, 'message': None,
        'subrefs': ['create_fn/item1', 'create_fn/item2', 'create_fn/item2/deeper'],
    },
    # A record missing most keys (ProgressRecord is a partial dict): what is written as-is?
    'sparse': {'started': TS0, 'purpose': 'resume'},
    # Keys in a non-canonical order: is the written JSON in the given order or a fixed one?
    'reordered': {
        'subrefs': ['b/2', 'a/1'], 'message': 'oops', 'failure': False, 'success': False,
        'retries': 2, 'purpose': 'resume', 'delayed': TS2, 'stopped': None, 'started': TS0,
    },
}

LONG_ID = 'create_fn/a-rather-long-sub-handler-identifier-exceeding-sixty-three-characters'
HANDLER_IDS: dict[str, str] = {
    'short': 'create_fn',
    'sub': 'create_fn/item1',
    'field': 'update_fn/spec.field',
    'angles': 'module.make_handlers.<locals>.<lambda>',
    'angles-sub': 'create_fn/<lambda>/item<1>',
    'len50': 'handler_with_a_fifty_characters_long_identifier_xy',  # V1 > 63 with the default prefix, V2 fits
    'len63': 'h' * 63,
    'len64': 'h' * 64,
    'long': LONG_ID,
    'long-angles': 'module.make_handlers.<locals>.<lambda>/and-a-long-tail-to-exceed-the-limit',
}
assert len(HANDLER_IDS['len50']) == 50
assert len(LONG_ID) > 63

BODY: dict[str, Any] = {
    'apiVersion': 'kopf.dev/v1',
    'kind': 'KopfExample',
    'metadata': {
        'name': 'kopf-example-1',
        'namespace': 'default',
        'uid': '6a1f7c52-0c0e-4f3e-9d43-2f8d1c1d2a01',
        'resourceVersion': '12345',
        'generation': 2,
        'creationTimestamp': '2026-01-01T00:00:00Z',
        'labels': {'somelabel': 'somevalue'},
        'annotations': {'someannotation': 'somevalue'},
    },
    'spec': {'duration': '1m', 'field': 'value', 'items': ['item1', 'item2']},
}

DEPLOYMENT_OWNER = {
    'apiVersion': 'apps/v1', 'kind': 'Deployment', 'name': 'web', 'uid': 'd0d0d0d0-0000-4000-8000-000000000001',
    'controller': True, 'blockOwnerDeletion': True,
}
RS_BODY: dict[str, Any] = {
    'apiVersion': 'apps/v1',
    'kind': 'ReplicaSet',
    'metadata': {
        'name': 'web-5d4f8c7b9', 'namespace': 'default', 'uid': 'r5r5r5r5-0000-4000-8000-000000000002',
        'ownerReferences': [DEPLOYMENT_OWNER],
        'annotations': {'deployment.kubernetes.io/revision': '1'},
    },
    'spec': {'replicas': 1},
}
RS_UNOWNED_BODY: dict[str, Any] = {**RS_BODY, 'metadata': {**RS_BODY['metadata'], 'ownerReferences': []}}
RS_OTHER_OWNER_BODY: dict[str, Any] = {
    **RS_BODY,
    'metadata': {**RS_BODY['metadata'], 'ownerReferences': [
        {'apiVersion': 'example.com/v1', 'kind': 'Rollout', 'name': 'web', 'uid': 'x', 'controller': True},
    ]},
}
POD_OWNED_BY_DEPLOYMENT_BODY: dict[str, Any] = {
    'apiVersion': 'v1', 'kind': 'Pod',
    'metadata': {'name': 'web-pod', 'namespace': 'default', 'ownerReferences': [DEPLOYMENT_OWNER]},
    'spec': {'containers': []},
}

LAST_APPLIED = json.dumps({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'spec': {'field': 'value'}})

# A realistic object as an operator sees it: its own and other operators' annotations, kubectl's, status.
REALISTIC_BODY: dict[str, Any] = {
    'apiVersion': 'kopf.dev/v1',
    'kind': 'KopfExample',
    'metadata': {
        'name': 'kopf-example-1',
        'namespace': 'default',
        'uid': '6a1f7c52-0c0e-4f3e-9d43-2f8d1c1d2a01',
        'resourceVersion': '12345',
        'generation': 3,
        'creationTimestamp': '2026-01-01T00:00:00Z',
        'finalizers': ['kopf.zalando.org/KopfFinalizerMarker'],
        'managedFields': [{'manager': 'kubectl', 'operation': 'Update'}],
        'labels': {'somelabel': 'somevalue', 'app.kubernetes.io/name': 'example'},
        'annotations': {
            'someannotation': 'somevalue',
            'kopf.zalando.org/last-handled-configuration': '{"spec":{"field":"old"}}\n',
            'kopf.zalando.org/create_fn': '{"started":"2026-01-01T00:00:00.000000+00:00"}',
            'kopf.zalando.org/touch-dummy': TS_TOUCH,
            'sub.kopf.zalando.org/create_fn': '{"started":"2026-01-01T00:00:00.000000+00:00"}',
            'other-op.example.com/kopf-managed': 'yes',
            'other-op.example.com/last-handled-configuration': '{"spec":{}}\n',
            'other-op.example.com/create_fn': '{"started":"2026-01-01T00:00:00.000000+00:00"}',
            'my-op.example.com/kopf-managed': 'yes',
            'my-op.example.com/last-handled-configuration': '{"spec":{}}\n',
            'my-op.example.com/create_fn': '{"started":"2026-01-01T00:00:00.000000+00:00"}',
            'my-op.example.com/my-last-state': '{"spec":{}}\n',
            'not-managed.example.com/create_fn': 'kept: no kopf-managed marker here',
            'kopf.zalando.org.evil.com/note': 'kept? a look-alike prefix',
            'kubectl.kubernetes.io/last-applied-configuration': LAST_APPLIED,
            'unrelated.example.com/note': 'keep me',
        },
    },
    'spec': {'duration': '1m', 'field': 'value', 'items': ['item1', 'item2'], 'nested': {'z': 1, 'a': 2}},
    'status': {
        'create_fn': {'message': 'hello world', 'children': ['uid-1']},
        'kopf': {
            'progress': {'create_fn': {'started': TS0, 'purpose': 'create', 'retries': 0}},
            'dummy': TS_TOUCH,
            'last-handled-configuration': '{"spec":{"field":"old"}}',
        },
        'my-op': {'create_fn': {'started': TS0}},
        'my-op-base': '{"spec":{}}',
    },
}

# Metadata last in the raw body, other top-level fields first: does the essence keep them first?
CONFIGMAP_BODY: dict[str, Any] = {
    'data': {'key2': 'value2', 'key1': 'value1'},
    'binaryData': {'blob': 'AAEC'},
    'immutable': False,
    'apiVersion': 'v1',
    'kind': 'ConfigMap',
    'metadata': {
        'name': 'cm', 'namespace': 'default',
        'annotations': {'kopf.zalando.org/last-handled-configuration': '{}\n'},
        'labels': {},
    },
}

# The same content as REALISTIC_BODY in another key order (status before spec, annotations before labels).
REORDERED_BODY: dict[str, Any] = {
    'status': REALISTIC_BODY['status'],
    'spec': {'nested': {'a': 2, 'z': 1}, 'items': ['item1', 'item2'], 'field': 'value', 'duration': '1m'},
    'metadata': {
        'annotations': dict(reversed(list(REALISTIC_BODY['metadata']['annotations'].items()))),
        'labels': dict(reversed(list(REALISTIC_BODY['metadata']['labels'].items()))),
        'name': 'kopf-example-1',
        'namespace': 'default',
    },
    'kind': 'KopfExample',
    'apiVersion': 'kopf.dev/v1',
}

MINIMAL_BODY: dict[str, Any] = {
    'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
    'metadata': {'name': 'bare', 'namespace': 'default'},
    'spec': {'field': 'value'},
}

# An essence (as a diff-base storage builds it) that contains the progress storages' own data.
ESSENCE_WITH_PROGRESS: dict[str, Any] = {
    'spec': {'field': 'value'},
    'metadata': {
        'labels': {'somelabel': 'somevalue'},
        'annotations': {
            'someannotation': 'somevalue',
            'kopf.zalando.org/create_fn': '{"started":"2026-01-01T00:00:00.000000+00:00"}',
            'kopf.zalando.org/create_fn.item1': '{"started":"2026-01-01T00:00:00.000000+00:00"}',
            'kopf.zalando.org/touch-dummy': TS_TOUCH,
            'kopf.zalando.org/kopf-managed': 'yes',
            'kopf.zalando.org/last-handled-configuration': '{}\n',
            'my-op.example.com/create_fn': '{"started":"2026-01-01T00:00:00.000000+00:00"}',
            'my-op.example.com/touch-dummy': TS_TOUCH,
            'my-op.example.com/kopf-managed': 'yes',
            'kopf.zalando.orgx/lookalike': 'kept?',
            'unrelated.example.com/note': 'keep me',
        },
    },
    'status': {
        'kopf': {'progress': {'create_fn': {'started': TS0}}, 'dummy': TS_TOUCH},
        'my-op': {'create_fn': {'started': TS0}},
        'other': {'x': 1},
    },
}
ESSENCE_ONLY_PROGRESS: dict[str, Any] = {
    'spec': {'field': 'value'},
    'metadata': {'annotations': {'kopf.zalando.org/create_fn': '{}', 'my-op.example.com/create_fn': '{}'}},
    'status': {'kopf': {'progress': {'create_fn': {}}}, 'my-op': {'create_fn': {}}},
}

# ----------------------------------------------------------------------------------------------
# Neutral helpers: JSON normalisation and merge-patch application (RFC 7386), no kopf involved.
# ----------------------------------------------------------------------------------------------


def to_json(value: Any) -> Any:
    """Plain JSON data of `value`: mappings → dicts (in their own key order), sequences → lists."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    raise TypeError(f'Not JSON-able: {type(value).__name__}: {value!r}')


def compact(value: Any) -> str:
    """The compact JSON of a value in its own key order (to capture the order of an essence)."""
    return json.dumps(to_json(value), separators=(',', ':'), ensure_ascii=False)


def merge_patch(body: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """Apply a JSON merge-patch (RFC 7386) the way the API server does: None deletes a key."""
    result: dict[str, Any] = {k: copy.deepcopy(v) for k, v in body.items()}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, Mapping):
            base = result.get(key)
            result[key] = merge_patch(base if isinstance(base, Mapping) else {}, value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def patch_out(patch: Any) -> dict[str, Any]:
    """The observable content of a `kopf.Patch`: the merge-patch dict and the count of its `.fns`."""
    out: dict[str, Any] = {'patch': to_json(dict(patch))}
    fns = getattr(patch, 'fns', None) or ()
    if len(fns):
        out['patch_fns'] = len(fns)
    return out


def attempt(fn: Callable[[], Any]) -> Any:
    """Call `fn`; an exception is recorded by its class name (an upstream fact to match)."""
    try:
        return fn()
    except Exception as e:
        return {'raises': type(e).__name__}


def annotations_of(raw: Mapping[str, Any]) -> dict[str, Any]:
    return dict(raw.get('metadata', {}).get('annotations', {}) or {})


# ----------------------------------------------------------------------------------------------
# Storage configurations (factories of storages from the given kopf module).
# ----------------------------------------------------------------------------------------------

Factory = Callable[[ModuleType], Any]


@dataclass(frozen=True)
class Config:
    name: str
    factory: Factory
    requires: tuple[str, ...]
    annotations_based: bool  # whether the storage writes annotations (then V1/V2 keys are observable)
    v2_factory: Factory | None = None  # the same storage with v1=False, to tell V1 keys from V2 keys


PROGRESS_CONFIGS: list[Config] = [
    Config('annotations-default', lambda k: k.AnnotationsProgressStorage(),
           ('AnnotationsProgressStorage',), True,
           lambda k: k.AnnotationsProgressStorage(v1=False)),
    Config('annotations-prefix', lambda k: k.AnnotationsProgressStorage(prefix='my-op.example.com'),
           ('AnnotationsProgressStorage',), True,
           lambda k: k.AnnotationsProgressStorage(prefix='my-op.example.com', v1=False)),
    Config('annotations-verbose', lambda k: k.AnnotationsProgressStorage(verbose=True),
           ('AnnotationsProgressStorage',), True,
           lambda k: k.AnnotationsProgressStorage(verbose=True, v1=False)),
    Config('annotations-v2only', lambda k: k.AnnotationsProgressStorage(v1=False),
           ('AnnotationsProgressStorage',), True),
    Config('annotations-touch-key', lambda k: k.AnnotationsProgressStorage(touch_key='my-touch'),
           ('AnnotationsProgressStorage',), True),
    Config('status-default', lambda k: k.StatusProgressStorage(),
           ('StatusProgressStorage',), False),
    Config('status-field', lambda k: k.StatusProgressStorage(field='status.my-op'),
           ('StatusProgressStorage',), False),
    Config('status-name', lambda k: k.StatusProgressStorage(name='other'),
           ('StatusProgressStorage',), False),
    Config('status-touch-field',
           lambda k: k.StatusProgressStorage(field='status.my-op', touch_field='status.my-op-touch'),
           ('StatusProgressStorage',), False),
    Config('smart-default', lambda k: k.SmartProgressStorage(),
           ('SmartProgressStorage',), True,
           lambda k: k.SmartProgressStorage(v1=False)),
    Config('smart-custom', lambda k: k.SmartProgressStorage(prefix='my-op.example.com', field='status.my-op'),
           ('SmartProgressStorage',), True,
           lambda k: k.SmartProgressStorage(prefix='my-op.example.com', field='status.my-op', v1=False)),
    Config('smart-verbose-name', lambda k: k.SmartProgressStorage(name='other', verbose=True),
           ('SmartProgressStorage',), True,
           lambda k: k.SmartProgressStorage(name='other', verbose=True, v1=False)),
    Config('multi-annotations-status',
           lambda k: k.MultiProgressStorage([k.AnnotationsProgressStorage(), k.StatusProgressStorage()]),
           ('MultiProgressStorage', 'AnnotationsProgressStorage', 'StatusProgressStorage'), True,
           lambda k: k.MultiProgressStorage([k.AnnotationsProgressStorage(v1=False), k.StatusProgressStorage()])),
    Config('multi-two-prefixes',
           lambda k: k.MultiProgressStorage(storages=[
               k.AnnotationsProgressStorage(prefix='my-op.example.com'),
               k.StatusProgressStorage(field='status.my-op'),
           ]),
           ('MultiProgressStorage', 'AnnotationsProgressStorage', 'StatusProgressStorage'), True,
           lambda k: k.MultiProgressStorage(storages=[
               k.AnnotationsProgressStorage(prefix='my-op.example.com', v1=False),
               k.StatusProgressStorage(field='status.my-op'),
           ])),
]

LONG_KEY = 'last-handled-configuration-of-a-rather-long-operator-name-beyond-the-limit'
DIFFBASE_CONFIGS: list[Config] = [
    Config('annotations-default', lambda k: k.AnnotationsDiffBaseStorage(),
           ('AnnotationsDiffBaseStorage',), True),
    Config('annotations-prefix', lambda k: k.AnnotationsDiffBaseStorage(prefix='my-op.example.com'),
           ('AnnotationsDiffBaseStorage',), True),
    Config('annotations-key', lambda k: k.AnnotationsDiffBaseStorage(prefix='my-op.example.com', key='my-last-state'),
           ('AnnotationsDiffBaseStorage',), True),
    Config('annotations-long-key', lambda k: k.AnnotationsDiffBaseStorage(key=LONG_KEY),
           ('AnnotationsDiffBaseStorage',), True),
    Config('annotations-long-key-v2only', lambda k: k.AnnotationsDiffBaseStorage(key=LONG_KEY, v1=False),
           ('AnnotationsDiffBaseStorage',), True),
    Config('annotations-v2only', lambda k: k.AnnotationsDiffBaseStorage(v1=False),
           ('AnnotationsDiffBaseStorage',), True),
    Config('annotations-ignored-fields',
           lambda k: k.AnnotationsDiffBaseStorage(ignored_fields=[
               'spec.items', ('metadata', 'labels', 'somelabel'), ['spec', 'nested', 'z'], 'spec.absent',
           ]),
           ('AnnotationsDiffBaseStorage',), True),
    Config('status-default', lambda k: k.StatusDiffBaseStorage(),
           ('StatusDiffBaseStorage',), False),
    Config('status-field', lambda k: k.StatusDiffBaseStorage(field='status.my-op-base'),
           ('StatusDiffBaseStorage',), False),
    Config('status-name', lambda k: k.StatusDiffBaseStorage(name='other'),
           ('StatusDiffBaseStorage',), False),
    Config('status-ignored-fields', lambda k: k.StatusDiffBaseStorage(ignored_fields=['spec.field']),
           ('StatusDiffBaseStorage',), False),
    Config('multi-annotations-status',
           lambda k: k.MultiDiffBaseStorage([k.AnnotationsDiffBaseStorage(), k.StatusDiffBaseStorage()]),
           ('MultiDiffBaseStorage', 'AnnotationsDiffBaseStorage', 'StatusDiffBaseStorage'), True),
    Config('multi-custom',
           lambda k: k.MultiDiffBaseStorage(storages=[
               k.AnnotationsDiffBaseStorage(prefix='my-op.example.com'),
               k.StatusDiffBaseStorage(field='status.my-op-base'),
           ]),
           ('MultiDiffBaseStorage', 'AnnotationsDiffBaseStorage', 'StatusDiffBaseStorage'), True),
]

BASICS = ('Body', 'Patch')

# ----------------------------------------------------------------------------------------------
# Progress storage scenarios.
# ----------------------------------------------------------------------------------------------


def _store(kopf: ModuleType, storage: Any, raw: Mapping[str, Any],
           items: Iterable[tuple[str, Mapping[str, Any]]], patch: Any = None) -> Any:
    patch = kopf.Patch() if patch is None else patch
    body = kopf.Body(copy.deepcopy(raw))
    for key, record in items:
        storage.store(key=key, record=copy.deepcopy(dict(record)), body=body, patch=patch)
    return patch


def _fetch(kopf: ModuleType, storage: Any, raw: Mapping[str, Any], key: str) -> Any:
    return to_json(storage.fetch(key=key, body=kopf.Body(copy.deepcopy(raw))))


def progress_store_id(config: Config, id_name: str, raw: Mapping[str, Any] = BODY) -> Callable[[ModuleType], Any]:
    key = HANDLER_IDS[id_name]

    def scenario(kopf: ModuleType) -> Any:
        storage = config.factory(kopf)
        patch = _store(kopf, storage, raw, [(key, RECORDS['pending'])])
        applied = merge_patch(raw, patch)
        return {**patch_out(patch), 'fetched': _fetch(kopf, storage, applied, key)}
    return scenario


def progress_store_record(config: Config, record_name: str) -> Callable[[ModuleType], Any]:
    def scenario(kopf: ModuleType) -> Any:
        storage = config.factory(kopf)
        patch = _store(kopf, storage, BODY, [('create_fn', RECORDS[record_name])])
        applied = merge_patch(BODY, patch)
        return {**patch_out(patch), 'fetched': _fetch(kopf, storage, applied, 'create_fn')}
    return scenario


def progress_store_sequence(config: Config) -> Callable[[ModuleType], Any]:
    """A parent with sub-handlers, all stored into one patch, then flushed, then fetched back."""
    items = [
        ('create_fn', RECORDS['parent']),
        ('create_fn/item1', RECORDS['done']),
        ('create_fn/item2', RECORDS['delayed']),
        ('create_fn/item2/deeper', RECORDS['failed']),
    ]

    def scenario(kopf: ModuleType) -> Any:
        storage = config.factory(kopf)
        patch = _store(kopf, storage, BODY, items)
        flushed = storage.flush()
        applied = merge_patch(BODY, patch)
        fetched = {key: _fetch(kopf, storage, applied, key) for key, _ in items}
        return {**patch_out(patch), 'flush': to_json(flushed), 'fetched': fetched}
    return scenario


def progress_restore_over(config: Config) -> Callable[[ModuleType], Any]:
    """Store over a body that already has an older record for the same id (a second cycle)."""
    def scenario(kopf: ModuleType) -> Any:
        storage = config.factory(kopf)
        first = _store(kopf, storage, BODY, [('create_fn', RECORDS['delayed']), (LONG_ID, RECORDS['pending'])])
        body1 = merge_patch(BODY, first)
        second = _store(kopf, storage, body1, [('create_fn', RECORDS['done']), (LONG_ID, RECORDS['done'])])
        body2 = merge_patch(body1, second)
        return {
            **patch_out(second),
            'fetched': {key: _fetch(kopf, storage, body2, key) for key in ('create_fn', LONG_ID)},
        }
    return scenario


def progress_owned(config: Config, raw: Mapping[str, Any]) -> Callable[[ModuleType], Any]:
    """Keys on objects with owners (ReplicaSets of Deployments get a suffix), short and long ids."""
    keys = [HANDLER_IDS['short'], HANDLER_IDS['sub'], HANDLER_IDS['len63'], HANDLER_IDS['long']]

    def scenario(kopf: ModuleType) -> Any:
        storage = config.factory(kopf)
        patch = _store(kopf, storage, raw, [(key, RECORDS['pending']) for key in keys])
        applied = merge_patch(raw, patch)
        touch = kopf.Patch()
        storage.touch(body=kopf.Body(copy.deepcopy(raw)), patch=touch, value=TS_TOUCH)
        purge = kopf.Patch()
        for key in keys:
            storage.purge(key=key, body=kopf.Body(copy.deepcopy(applied)), patch=purge)
        # The same annotations as seen on a body of another kind (e.g. copied from the Deployment).
        elsewhere = merge_patch(BODY, {'metadata': {'annotations': annotations_of(applied)}})
        return {
            **patch_out(patch),
            'fetched': {key: _fetch(kopf, storage, applied, key) for key in keys},
            'fetched_on_other_kind': {key: _fetch(kopf, storage, elsewhere, key) for key in keys},
            'touch': patch_out(touch)['patch'],
            'purge': patch_out(purge)['patch'],
        }
    return scenario


def progress_purge(config: Config, where: str) -> Callable[[ModuleType], Any]:
    keys = [HANDLER_IDS['short'], HANDLER_IDS['sub'], HANDLER_IDS['len50'], HANDLER_IDS['long']]

    def scenario(kopf: ModuleType) -> Any:
        storage = config.factory(kopf)
        stored = _store(kopf, storage, BODY, [(key, RECORDS['pending']) for key in keys])
        if where == 'existing':  # in the body, not in the patch
            raw, patch = merge_patch(BODY, stored), kopf.Patch()
        elif where == 'pending':  # only in the pending patch, not in the body
            raw, patch = BODY, stored
        elif where == 'both':  # in the body and again in the pending patch
            raw, patch = merge_patch(BODY, stored), _store(kopf, storage, merge_patch(BODY, stored),
                                                            [(key, RECORDS['done']) for key in keys])
        elif where == 'absent':  # nowhere
            raw, patch = BODY, kopf.Patch()
        else:
            raise ValueError(where)
        body = kopf.Body(copy.deepcopy(raw))
        for key in keys:
            storage.purge(key=key, body=body, patch=patch)
        flushed = storage.flush()
        applied = merge_patch(raw, patch)
        return {
            **patch_out(patch),
            'flush': to_json(flushed),
            'fetched_after': {key: _fetch(kopf, storage, applied, key) for key in keys},
        }
    return scenario


def progress_purge_legacy(config: Config) -> Callable[[ModuleType], Any]:
    """Purge when the record exists only in the legacy status location(s)."""
    def scenario(kopf: ModuleType) -> Any:
        storage = config.factory(kopf)
        raw = merge_patch(BODY, {'status': {
            'kopf': {'progress': {'create_fn': RECORDS['pending'], 'create_fn/item1': RECORDS['done']}},
            'my-op': {'create_fn': RECORDS['pending']},
            'other': {'progress': {'create_fn': RECORDS['pending']}},
        }})
        patch = kopf.Patch()
        for key in ('create_fn', 'create_fn/item1', 'absent_fn'):
            storage.purge(key=key, body=kopf.Body(copy.deepcopy(raw)), patch=patch)
        return patch_out(patch)
    return scenario


def progress_touch(config: Config, case: str) -> Callable[[ModuleType], Any]:
    def scenario(kopf: ModuleType) -> Any:
        storage = config.factory(kopf)
        touched = kopf.Patch()
        storage.touch(body=kopf.Body(copy.deepcopy(BODY)), patch=touched, value=TS_TOUCH)
        if case == 'value':
            return patch_out(touched)
        if case == 'none-absent':
            patch = kopf.Patch()
            storage.touch(body=kopf.Body(copy.deepcopy(BODY)), patch=patch, value=None)
            return patch_out(patch)
        if case == 'none-present':
            raw = merge_patch(BODY, touched)
            patch = kopf.Patch()
            storage.touch(body=kopf.Body(copy.deepcopy(raw)), patch=patch, value=None)
            return {**patch_out(patch), 'body_annotations_after': annotations_of(merge_patch(raw, patch)),
                    'body_status_after': to_json(merge_patch(raw, patch).get('status'))}
        if case == 'none-pending':
            storage.touch(body=kopf.Body(copy.deepcopy(BODY)), patch=touched, value=None)
            return patch_out(touched)
        if case == 'value-over-store':
            patch = _store(kopf, storage, BODY, [('create_fn', RECORDS['pending'])])
            storage.touch(body=kopf.Body(copy.deepcopy(BODY)), patch=patch, value=TS_TOUCH)
            return patch_out(patch)
        raise ValueError(case)
    return scenario


def progress_fetch_empty(config: Config) -> Callable[[ModuleType], Any]:
    def scenario(kopf: ModuleType) -> Any:
        storage = config.factory(kopf)
        return {
            name: _fetch(kopf, storage, raw, key)
            for name, raw in [('body', BODY), ('no-metadata', {'spec': {}}), ('empty', {})]
            for key in [HANDLER_IDS['short']]
        }
    return scenario


def progress_fetch_v1_only(config: Config) -> Callable[[ModuleType], Any]:
    """A body with only the V1 key(s) (written by an older operator): V1 keys are found by difference."""
    keys = [HANDLER_IDS['len50'], HANDLER_IDS['long'], HANDLER_IDS['long-angles']]

    def scenario(kopf: ModuleType) -> Any:
        assert config.v2_factory is not None
        storage = config.factory(kopf)
        both = annotations_of(merge_patch(BODY, _store(kopf, storage, BODY, [(k, RECORDS['done']) for k in keys])))
        v2 = annotations_of(merge_patch(BODY, _store(kopf, config.v2_factory(kopf), BODY,
                                                     [(k, RECORDS['done']) for k in keys])))
        v1_only = {k: v for k, v in both.items() if k not in v2 or k in BODY['metadata']['annotations']}
        raw = merge_patch({k: v for k, v in BODY.items() if k != 'metadata'},
                          {'metadata': {**BODY['metadata'], 'annotations': v1_only}})
        # Both keys present but different: which one wins?
        conflicting = {**both}
        for k in v1_only:
            if k not in BODY['metadata']['annotations']:
                conflicting[k] = json.dumps(RECORDS['failed'], separators=(',', ':'))
        raw2 = merge_patch(BODY, {'metadata': {'annotations': conflicting}})
        return {
            'v1_keys': sorted(k for k in v1_only if k not in BODY['metadata']['annotations']),
            'fetched_v1_only': {key: _fetch(kopf, storage, raw, key) for key in keys},
            'fetched_conflicting': {key: _fetch(kopf, storage, raw2, key) for key in keys},
        }
    return scenario


def progress_purge_v1_only(config: Config) -> Callable[[ModuleType], Any]:
    """Purge when the body has only the V1 key(s) (written by an older operator or a v1-only config)."""
    keys = [HANDLER_IDS['len50'], HANDLER_IDS['long']]

    def scenario(kopf: ModuleType) -> Any:
        assert config.v2_factory is not None
        storage = config.factory(kopf)
        both = annotations_of(merge_patch(BODY, _store(kopf, storage, BODY, [(k, RECORDS['done']) for k in keys])))
        v2 = annotations_of(merge_patch(BODY, _store(kopf, config.v2_factory(kopf), BODY,
                                                     [(k, RECORDS['done']) for k in keys])))
        v1_only = {k: v for k, v in both.items() if k not in v2 or k in BODY['metadata']['annotations']}
        raw = merge_patch({k: v for k, v in BODY.items() if k != 'metadata'},
                          {'metadata': {**BODY['metadata'], 'annotations': v1_only}})
        patch = kopf.Patch()
        for key in keys:
            storage.purge(key=key, body=kopf.Body(copy.deepcopy(raw)), patch=patch)
        return patch_out(patch)
    return scenario


def progress_fetch_legacy(config: Config) -> Callable[[ModuleType], Any]:
    """Records only in status (legacy `status.kopf.progress` and custom fields); and in both places."""
    legacy = {
        'kopf': {'progress': {'create_fn': RECORDS['pending'], 'create_fn/item1': RECORDS['done'],
                              LONG_ID: RECORDS['delayed']}},
        'my-op': {'create_fn': RECORDS['failed']},
        'other': {'progress': {'create_fn': RECORDS['parent']}},
    }
    keys = ['create_fn', 'create_fn/item1', LONG_ID, 'absent_fn']

    def scenario(kopf: ModuleType) -> Any:
        storage = config.factory(kopf)
        raw = merge_patch(BODY, {'status': legacy})
        # The annotations say "done" for create_fn; status says otherwise.
        annotated = merge_patch(raw, _store(kopf, kopf.AnnotationsProgressStorage(prefix='kopf.zalando.org'),
                                            BODY, [('create_fn', RECORDS['done'])]))
        annotated = merge_patch(annotated, _store(kopf, kopf.AnnotationsProgressStorage(prefix='my-op.example.com'),
                                                  BODY, [('create_fn', RECORDS['reordered'])]))
        return {
            'status_only': {key: _fetch(kopf, storage, raw, key) for key in keys},
            'annotations_and_status': {key: _fetch(kopf, storage, annotated, key) for key in keys},
        }
    return scenario


def progress_fetch_malformed(config: Config) -> Callable[[ModuleType], Any]:
    """Annotations that are not valid records (edited by hand): what does fetch return or raise?"""
    def scenario(kopf: ModuleType) -> Any:
        storage = config.factory(kopf)
        stored = annotations_of(merge_patch(BODY, _store(kopf, storage, BODY, [('create_fn', RECORDS['done'])])))
        keys = [k for k in stored if k not in BODY['metadata']['annotations'] and not k.endswith('/kopf-managed')]
        out: dict[str, Any] = {}
        for label, value in [('not-json', 'not a json {'), ('json-list', '[1,2]'), ('json-string', '"text"'),
                             ('empty-object', '{}'), ('empty-string', '')]:
            raw = merge_patch(BODY, {'metadata': {'annotations': {k: value for k in keys}}})
            out[label] = attempt(lambda raw=raw: _fetch(kopf, storage, raw, 'create_fn'))  # type: ignore[misc]
        return out
    return scenario


def progress_clear(config: Config, essence: Mapping[str, Any]) -> Callable[[ModuleType], Any]:
    def scenario(kopf: ModuleType) -> Any:
        storage = config.factory(kopf)
        given = copy.deepcopy(dict(essence))
        result = storage.clear(essence=given)
        return {
            'essence': to_json(result),
            'essence_json': compact(result),
            'input_unchanged': to_json(given) == to_json(essence),
            'same_object': result is given,
        }
    return scenario


# ----------------------------------------------------------------------------------------------
# Diff-base storage scenarios.
# ----------------------------------------------------------------------------------------------

EXTRA_FIELDS: list[Any] = [('status', 'create_fn', 'message'), ('metadata', 'name'), ('spec', 'absent')]


def _essence_out(essence: Any) -> dict[str, Any]:
    return {'essence': to_json(essence), 'essence_json': compact(essence)}


def diffbase_build(config: Config, raw: Mapping[str, Any], extra: Any) -> Callable[[ModuleType], Any]:
    def scenario(kopf: ModuleType) -> Any:
        storage = config.factory(kopf)
        given = copy.deepcopy(dict(raw))
        essence = storage.build(body=kopf.Body(given), extra_fields=extra)
        return {**_essence_out(essence), 'body_unchanged': given == raw}
    return scenario


def diffbase_store(config: Config, raw: Mapping[str, Any], extra: Any) -> Callable[[ModuleType], Any]:
    """build → store → patch; then fetch from the body with the patch applied; then store it again."""
    def scenario(kopf: ModuleType) -> Any:
        storage = config.factory(kopf)
        essence = storage.build(body=kopf.Body(copy.deepcopy(raw)), extra_fields=extra)
        patch = kopf.Patch()
        storage.store(body=kopf.Body(copy.deepcopy(raw)), patch=patch, essence=essence)
        applied = merge_patch(raw, patch)
        fetched = storage.fetch(body=kopf.Body(copy.deepcopy(applied)))
        rebuilt = storage.build(body=kopf.Body(copy.deepcopy(applied)), extra_fields=extra)
        again = kopf.Patch()
        storage.store(body=kopf.Body(copy.deepcopy(applied)), patch=again, essence=rebuilt)
        return {
            **patch_out(patch),
            'fetched': to_json(fetched),
            'fetched_json': compact(fetched),
            'fetched_equals_built': to_json(fetched) == to_json(essence),
            'rebuilt_equals_built': to_json(rebuilt) == to_json(essence),
            'store_again': patch_out(again),
        }
    return scenario


ODD_ESSENCE: dict[str, Any] = {
    'spec': {'b': 1, 'a': [1, 2.5, None, True], 'text': 'é ✓ "quoted" <&>\n', 'empty': {}},
    'data': {'z': 'last', 'a': 'first'},
    'metadata': {'annotations': {'x': 'y'}, 'labels': {'l': 'v'}},
}


def diffbase_store_essence(config: Config, essence: Mapping[str, Any]) -> Callable[[ModuleType], Any]:
    """Store a given essence as-is: how its key order, unicode and floats are serialised."""
    def scenario(kopf: ModuleType) -> Any:
        storage = config.factory(kopf)
        patch = kopf.Patch()
        storage.store(body=kopf.Body(copy.deepcopy(BODY)), patch=patch, essence=copy.deepcopy(dict(essence)))
        applied = merge_patch(BODY, patch)
        fetched = storage.fetch(body=kopf.Body(applied))
        return {**patch_out(patch), 'fetched': to_json(fetched), 'fetched_json': compact(fetched)}
    return scenario


def diffbase_fetch(config: Config) -> Callable[[ModuleType], Any]:
    """Fetch from bodies written by other storages/configurations (what each one recognises)."""
    def scenario(kopf: ModuleType) -> Any:
        storage = config.factory(kopf)
        out: dict[str, Any] = {}
        for name, raw in [('body', BODY), ('empty', {}), ('realistic', REALISTIC_BODY), ('configmap', CONFIGMAP_BODY)]:
            fetched = storage.fetch(body=kopf.Body(copy.deepcopy(raw)))
            out[name] = {'fetched': to_json(fetched), 'fetched_json': compact(fetched)}
        return out
    return scenario


def diffbase_v1_only(config: Config, v2_config: Config) -> Callable[[ModuleType], Any]:
    """A body with only the V1 key of a long diff-base key: fetched? and what does a store write?"""
    def scenario(kopf: ModuleType) -> Any:
        storage, v2_storage = config.factory(kopf), v2_config.factory(kopf)
        essence = {'spec': {'field': 'old'}}
        both, v2 = kopf.Patch(), kopf.Patch()
        storage.store(body=kopf.Body(copy.deepcopy(BODY)), patch=both, essence=essence)
        v2_storage.store(body=kopf.Body(copy.deepcopy(BODY)), patch=v2, essence=essence)
        v2_keys = set(annotations_of(merge_patch(BODY, v2)))
        v1_only = {k: v for k, v in annotations_of(merge_patch(BODY, both)).items()
                   if k not in v2_keys or k in BODY['metadata']['annotations']}
        raw = merge_patch({k: v for k, v in BODY.items() if k != 'metadata'},
                          {'metadata': {**BODY['metadata'], 'annotations': v1_only}})
        fetched = storage.fetch(body=kopf.Body(copy.deepcopy(raw)))
        fetched_v2 = v2_storage.fetch(body=kopf.Body(copy.deepcopy(raw)))
        patch = kopf.Patch()
        storage.store(body=kopf.Body(copy.deepcopy(raw)), patch=patch, essence={'spec': {'field': 'new'}})
        return {
            'v1_keys': sorted(k for k in v1_only if k not in BODY['metadata']['annotations']),
            'fetched': to_json(fetched),
            'fetched_by_v2only': to_json(fetched_v2),
            **patch_out(patch),
        }
    return scenario


def diffbase_with_progress(diffbase: Config, progress: Config) -> Callable[[ModuleType], Any]:
    """As the framework does: essence = progress.clear(essence=diffbase.build(...)), then stored."""
    def scenario(kopf: ModuleType) -> Any:
        d, p = diffbase.factory(kopf), progress.factory(kopf)
        essence = d.build(body=kopf.Body(copy.deepcopy(REALISTIC_BODY)), extra_fields=[('status', 'create_fn')])
        cleared = p.clear(essence=essence)
        patch = kopf.Patch()
        d.store(body=kopf.Body(copy.deepcopy(REALISTIC_BODY)), patch=patch, essence=cleared)
        return {**_essence_out(cleared), **patch_out(patch)}
    return scenario


# ----------------------------------------------------------------------------------------------
# Constructors: invalid and edge arguments.
# ----------------------------------------------------------------------------------------------


def constructor_prefix(cls_name: str, prefix: str) -> Callable[[ModuleType], Any]:
    def scenario(kopf: ModuleType) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            storage = attempt(lambda: getattr(kopf, cls_name)(prefix=prefix))
        out: dict[str, Any] = {'warnings': sorted({w.category.__name__ for w in caught})}
        if isinstance(storage, dict):
            out.update(storage)
            return out
        patch = kopf.Patch()
        if cls_name.endswith('ProgressStorage'):
            for key in ('create_fn', LONG_ID):
                storage.store(key=key, record=dict(RECORDS['pending']), body=kopf.Body(copy.deepcopy(BODY)),
                              patch=patch)
            storage.touch(body=kopf.Body(copy.deepcopy(BODY)), patch=patch, value=TS_TOUCH)
        else:
            storage.store(body=kopf.Body(copy.deepcopy(BODY)), patch=patch, essence={'spec': {}})
        out.update(patch_out(patch))
        return out
    return scenario


# ----------------------------------------------------------------------------------------------
# User subclasses of the abstract bases (the documented way to plug in custom storages).
# ----------------------------------------------------------------------------------------------


def subclass_progress(kopf: ModuleType) -> Any:
    """A dict-backed progress storage whose clear() delegates to the base class."""
    class DictProgressStorage(kopf.ProgressStorage):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.data: dict[str, Any] = {}

        def fetch(self, *, key: str, body: Any) -> Any:
            return self.data.get(key)

        def store(self, *, key: str, record: Any, body: Any, patch: Any) -> None:
            self.data[key] = dict(record)

        def purge(self, *, key: str, body: Any, patch: Any) -> None:
            self.data.pop(key, None)

        def touch(self, *, body: Any, patch: Any, value: Any) -> None:
            pass

        def clear(self, *, essence: Any) -> Any:
            return super().clear(essence=essence)

    class IncompleteProgressStorage(kopf.ProgressStorage):  # type: ignore[name-defined,misc]
        def fetch(self, *, key: str, body: Any) -> Any:
            return None

        def store(self, *, key: str, record: Any, body: Any, patch: Any) -> None:
            pass

        def purge(self, *, key: str, body: Any, patch: Any) -> None:
            pass

        def touch(self, *, body: Any, patch: Any, value: Any) -> None:
            pass

    storage = DictProgressStorage()
    patch = kopf.Patch()
    body = kopf.Body(copy.deepcopy(BODY))
    storage.store(key='create_fn', record=dict(RECORDS['done']), body=body, patch=patch)
    given = copy.deepcopy(ESSENCE_WITH_PROGRESS)
    cleared = storage.clear(essence=given)
    return {
        **patch_out(patch),
        'fetched': to_json(storage.fetch(key='create_fn', body=body)),
        'flush': to_json(storage.flush()),
        'cleared': to_json(cleared),
        'cleared_json': compact(cleared),
        'same_object': cleared is given,
        'is_instance': isinstance(storage, kopf.ProgressStorage),
        'incomplete': attempt(lambda: type(IncompleteProgressStorage()).__name__),
    }


def subclass_diffbase(kopf: ModuleType) -> Any:
    """A dict-backed diff-base storage using the base class's build() (ignored_fields positional)."""
    class DictDiffBaseStorage(kopf.DiffBaseStorage):  # type: ignore[name-defined,misc]
        def __init__(self, ignored_fields: Any = None) -> None:
            super().__init__(ignored_fields)
            self.data: Any = None

        def fetch(self, *, body: Any) -> Any:
            return self.data

        def store(self, *, body: Any, patch: Any, essence: Any) -> None:
            self.data = essence

    class IncompleteDiffBaseStorage(kopf.DiffBaseStorage):  # type: ignore[name-defined,misc]
        def store(self, *, body: Any, patch: Any, essence: Any) -> None:
            pass

    out: dict[str, Any] = {}
    for label, storage in [('plain', DictDiffBaseStorage()),
                           ('ignored', DictDiffBaseStorage(['spec.items', ('metadata', 'labels')]))]:
        body = kopf.Body(copy.deepcopy(REALISTIC_BODY))
        essence = storage.build(body=body, extra_fields=[('status', 'create_fn')])
        patch = kopf.Patch()
        storage.store(body=body, patch=patch, essence=essence)
        out[label] = {**_essence_out(essence), **patch_out(patch), 'fetched': to_json(storage.fetch(body=body))}
    out['incomplete'] = attempt(lambda: type(IncompleteDiffBaseStorage()).__name__)
    return out


# ----------------------------------------------------------------------------------------------
# The registry.
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    name: str
    fn: Callable[[ModuleType], Any]
    requires: tuple[str, ...]  # public kopf names the scenario needs (ours may not have them all yet)


def _build_registry() -> dict[str, Scenario]:
    registry: dict[str, Scenario] = {}

    def add(name: str, fn: Callable[[ModuleType], Any], requires: tuple[str, ...]) -> None:
        assert name not in registry, name
        registry[name] = Scenario(name, fn, tuple(dict.fromkeys(BASICS + requires)))

    for c in PROGRESS_CONFIGS:
        base = f'progress/{c.name}'
        for id_name in HANDLER_IDS:
            add(f'{base}/store-id/{id_name}', progress_store_id(c, id_name), c.requires)
        for record_name in RECORDS:
            add(f'{base}/store-record/{record_name}', progress_store_record(c, record_name), c.requires)
        add(f'{base}/store-sequence', progress_store_sequence(c), c.requires)
        add(f'{base}/store-over-existing', progress_restore_over(c), c.requires)
        add(f'{base}/owned/replicaset-of-deployment', progress_owned(c, RS_BODY), c.requires)
        add(f'{base}/owned/replicaset-unowned', progress_owned(c, RS_UNOWNED_BODY), c.requires)
        add(f'{base}/owned/replicaset-of-other', progress_owned(c, RS_OTHER_OWNER_BODY), c.requires)
        add(f'{base}/owned/pod-of-deployment', progress_owned(c, POD_OWNED_BY_DEPLOYMENT_BODY), c.requires)
        for where in ('existing', 'pending', 'both', 'absent'):
            add(f'{base}/purge/{where}', progress_purge(c, where), c.requires)
        add(f'{base}/purge/legacy-status', progress_purge_legacy(c), c.requires)
        for case in ('value', 'none-absent', 'none-present', 'none-pending', 'value-over-store'):
            add(f'{base}/touch/{case}', progress_touch(c, case), c.requires)
        add(f'{base}/fetch/empty', progress_fetch_empty(c), c.requires)
        add(f'{base}/fetch/legacy-status', progress_fetch_legacy(c),
            c.requires + ('AnnotationsProgressStorage',))
        if c.annotations_based and c.v2_factory is not None:
            add(f'{base}/fetch/v1-only', progress_fetch_v1_only(c), c.requires)
            add(f'{base}/purge/v1-only', progress_purge_v1_only(c), c.requires)
        if c.annotations_based:
            add(f'{base}/fetch/malformed', progress_fetch_malformed(c), c.requires)
        add(f'{base}/clear/with-progress', progress_clear(c, ESSENCE_WITH_PROGRESS), c.requires)
        add(f'{base}/clear/only-progress', progress_clear(c, ESSENCE_ONLY_PROGRESS), c.requires)
        add(f'{base}/clear/empty', progress_clear(c, {}), c.requires)

    for c in DIFFBASE_CONFIGS:
        base = f'diffbase/{c.name}'
        add(f'{base}/build/realistic', diffbase_build(c, REALISTIC_BODY, None), c.requires)
        add(f'{base}/build/realistic-extra-fields', diffbase_build(c, REALISTIC_BODY, EXTRA_FIELDS), c.requires)
        add(f'{base}/build/realistic-extra-fields-dotted',
            diffbase_build(c, REALISTIC_BODY, ['status.create_fn', 'status.kopf']), c.requires)
        add(f'{base}/build/configmap', diffbase_build(c, CONFIGMAP_BODY, None), c.requires)
        add(f'{base}/build/reordered', diffbase_build(c, REORDERED_BODY, EXTRA_FIELDS), c.requires)
        add(f'{base}/build/minimal', diffbase_build(c, MINIMAL_BODY, None), c.requires)
        add(f'{base}/build/minimal-extra-status', diffbase_build(c, MINIMAL_BODY, [('status', 'x')]), c.requires)
        add(f'{base}/store/realistic', diffbase_store(c, REALISTIC_BODY, None), c.requires)
        add(f'{base}/store/realistic-extra-fields', diffbase_store(c, REALISTIC_BODY, EXTRA_FIELDS), c.requires)
        add(f'{base}/store/configmap', diffbase_store(c, CONFIGMAP_BODY, None), c.requires)
        add(f'{base}/store/minimal', diffbase_store(c, MINIMAL_BODY, None), c.requires)
        add(f'{base}/store/reordered', diffbase_store(c, REORDERED_BODY, None), c.requires)
        add(f'{base}/store/replicaset-of-deployment', diffbase_store(c, RS_BODY, None), c.requires)
        add(f'{base}/store/replicaset-unowned', diffbase_store(c, RS_UNOWNED_BODY, None), c.requires)
        add(f'{base}/store/odd-essence', diffbase_store_essence(c, ODD_ESSENCE), c.requires)
        add(f'{base}/store/empty-essence', diffbase_store_essence(c, {}), c.requires)
        add(f'{base}/fetch/various', diffbase_fetch(c), c.requires)

    diffbases = {c.name: c for c in DIFFBASE_CONFIGS}
    progresses = {c.name: c for c in PROGRESS_CONFIGS}
    add('diffbase/annotations-long-key/fetch/v1-only',
        diffbase_v1_only(diffbases['annotations-long-key'], diffbases['annotations-long-key-v2only']),
        diffbases['annotations-long-key'].requires)
    pairs = [
        ('default', 'annotations-default', 'smart-default'),
        ('custom', 'annotations-prefix', 'smart-custom'),
        ('status', 'status-field', 'status-field'),
        ('multi', 'multi-annotations-status', 'multi-annotations-status'),
    ]
    for name, d_name, p_name in pairs:
        d, p = diffbases[d_name], progresses[p_name]
        add(f'diffbase+progress/{name}', diffbase_with_progress(d, p), d.requires + p.requires)

    for cls_name in ('AnnotationsProgressStorage', 'SmartProgressStorage', 'AnnotationsDiffBaseStorage'):
        for label, prefix in [('empty', ''), ('190-chars', 'p' * 178 + '.example.com'),
                              ('189-chars', 'p' * 177 + '.example.com'), ('kopf-dotted', 'kopf.example.com')]:
            add(f'constructor/{cls_name}/prefix-{label}', constructor_prefix(cls_name, prefix), (cls_name,))

    add('subclass/progress-storage', subclass_progress, ('ProgressStorage',))
    add('subclass/diffbase-storage', subclass_diffbase, ('DiffBaseStorage',))

    return dict(sorted(registry.items()))


SCENARIOS: dict[str, Scenario] = _build_registry()


def run_one(kopf: ModuleType, name: str) -> Any:
    return to_json(SCENARIOS[name].fn(kopf))


def run_all(kopf: ModuleType) -> dict[str, Any]:
    return {name: run_one(kopf, name) for name in SCENARIOS}
