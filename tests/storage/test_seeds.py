"""The persistence seed's configurations, set through `config: kopf.OperatorConfig` as the seed writes them.

Each runs a pure two-cycle scenario: two create handlers, the second raising TemporaryError once;
the exact patches of both cycles are checked, then that the next cycle sees no change (noop).
The driver below does what the reactor does with the pure parts (diff-base → cause → progress).
"""
import datetime
import json
from collections.abc import Callable
from typing import Any

import pytest

import kopf
from kopf._core import attempts, causes, errors, progress
from kopf._core.outcomes import Outcome, OutcomeKind
from kopf._core.patches import merge

T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
T0S = '2026-01-01T00:00:00.000000+00:00'
T1 = T0 + datetime.timedelta(seconds=10)
T1S = '2026-01-01T00:00:10.000000+00:00'
FINALIZER = 'kopf.zalando.org/KopfFinalizerMarker'


class Handler:
    def __init__(self, id: str) -> None:
        self.id, self.timeout, self.retries, self.backoff, self.errors = id, None, None, None, None


HANDLERS = [Handler('create_fn_1'), Handler('create_fn_2')]
BODY: dict[str, Any] = {
    'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
    'metadata': {'name': 'kopf-example-1', 'namespace': 'default', 'uid': 'u1',
                 'labels': {'somelabel': 'somevalue'}, 'annotations': {'someannotation': 'somevalue'}},
    'spec': {'duration': '1m', 'field': 'value', 'items': ['item1', 'item2']},
}
ESSENCE = {'spec': {'duration': '1m', 'field': 'value', 'items': ['item1', 'item2']},
           'metadata': {'labels': {'somelabel': 'somevalue'}, 'annotations': {'someannotation': 'somevalue'}}}
ESSENCE_JSON = json.dumps(ESSENCE, separators=(',', ':'))


def make_fns() -> dict[str, Callable[[int], Outcome]]:
    def create_fn_1(retry: int) -> Outcome:
        return Outcome(kind=OutcomeKind.SUCCESS)

    def create_fn_2(retry: int) -> Outcome:
        if retry == 0:
            return Outcome(kind=OutcomeKind.RETRY, exception=errors.TemporaryError('Not yet.', delay=10), delay=10)
        return Outcome(kind=OutcomeKind.SUCCESS)

    return {'create_fn_1': create_fn_1, 'create_fn_2': create_fn_2}


def cycle(config: kopf.OperatorConfig, body: dict[str, Any], now: datetime.datetime,
          lifecycle: progress.Lifecycle = progress.all_at_once) -> tuple[causes.Reason, kopf.Patch]:
    storage = config.persistence.progress_storage
    diffbase = config.persistence.diffbase_storage
    essence = storage.clear(essence=diffbase.build(body=kopf.Body(body)))
    change = causes.detect(event_type='MODIFIED', body=body, finalizer=FINALIZER,
                           old=diffbase.fetch(body=kopf.Body(body)), new=essence)
    patch = kopf.Patch()
    if change.reason is not causes.Reason.CREATE:
        return change.reason, patch
    state = progress.State.from_records(storage.fetch_all(keys=[h.id for h in HANDLERS], body=kopf.Body(body)))
    state = state.with_purpose(change.reason, HANDLERS, now=now).with_handlers(HANDLERS, now=now)
    fns = make_fns()
    outcomes = {}
    for handler in state.select(HANDLERS, lifecycle=lifecycle, now=now):
        outcomes[handler.id] = state.precheck(handler, now=now) or fns[handler.id](state[handler.id].retry)
    state = state.with_outcomes(outcomes, HANDLERS, now=now, default_backoff=config.execution.default_backoff)
    if state.done:
        attempts.purge(state, HANDLERS, body=kopf.Body(body), patch=patch, storage=storage)
        diffbase.store(body=kopf.Body(body), patch=patch, essence=essence)
    else:
        state.store(body=kopf.Body(body), patch=patch, storage=storage)
    return change.reason, patch


# The seed's startup handlers, exactly in the seed's style: configuring through `config`.
def progress_in_annotations(config: kopf.OperatorConfig, **_: Any) -> None:
    config.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix='my-op.example.com')


def progress_in_status(config: kopf.OperatorConfig, **_: Any) -> None:
    config.persistence.progress_storage = kopf.StatusProgressStorage(field='status.my-op')


def progress_smart(config: kopf.OperatorConfig, **_: Any) -> None:
    config.persistence.progress_storage = kopf.SmartProgressStorage(prefix='my-op.example.com', field='status.my-op')


def diffbase_in_annotations(config: kopf.OperatorConfig, **_: Any) -> None:
    config.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(prefix='my-op.example.com')


def diffbase_in_status(config: kopf.OperatorConfig, **_: Any) -> None:
    config.persistence.diffbase_storage = kopf.StatusDiffBaseStorage(field='status.my-op-base')


def _json(**record: Any) -> str:
    return json.dumps(record, separators=(',', ':'))


DONE_1 = dict(started=T0S, stopped=T0S, purpose='create', retries=1, success=True, failure=False)
DELAYED_2 = dict(started=T0S, delayed=T1S, purpose='create', retries=1, success=False, failure=False,
                 message='Not yet.')
ANNOTATED_CYCLE_1 = {'metadata': {'annotations': {
    'my-op.example.com/create_fn_1': _json(**DONE_1),
    'my-op.example.com/create_fn_2': _json(**DELAYED_2),
    'my-op.example.com/kopf-managed': 'yes',
}}}
FULL = dict(started=None, stopped=None, delayed=None, purpose=None, retries=None, success=None, failure=None,
            message=None, subrefs=None)
STATUS_CYCLE_1 = {'status': {'my-op': {
    'create_fn_1': {**FULL, **DONE_1},
    'create_fn_2': {**FULL, **DELAYED_2},
}}}
DEFAULT_DIFFBASE = {'metadata': {'annotations': {'kopf.zalando.org/last-handled-configuration': ESSENCE_JSON + '\n'}}}


@pytest.mark.parametrize('configure, cycle_1, cycle_2', [
    (progress_in_annotations, ANNOTATED_CYCLE_1, {'metadata': {'annotations': {
        'my-op.example.com/create_fn_1': None,
        'my-op.example.com/create_fn_2': None,
        'kopf.zalando.org/last-handled-configuration': ESSENCE_JSON + '\n',
    }}}),
    (progress_in_status, STATUS_CYCLE_1, {
        'status': {'my-op': {'create_fn_1': None, 'create_fn_2': None}},
        **DEFAULT_DIFFBASE,
    }),
    (progress_smart, ANNOTATED_CYCLE_1, {'metadata': {'annotations': {
        'my-op.example.com/create_fn_1': None,
        'my-op.example.com/create_fn_2': None,
        'kopf.zalando.org/last-handled-configuration': ESSENCE_JSON + '\n',
    }}}),
    (diffbase_in_annotations, {'metadata': {'annotations': {
        'kopf.zalando.org/create_fn_1': _json(**DONE_1),
        'kopf.zalando.org/create_fn_2': _json(**DELAYED_2),
    }}}, {'metadata': {'annotations': {
        'kopf.zalando.org/create_fn_1': None,
        'kopf.zalando.org/create_fn_2': None,
        'my-op.example.com/last-handled-configuration': ESSENCE_JSON + '\n',
        'my-op.example.com/kopf-managed': 'yes',
    }}}),
    (diffbase_in_status, {'metadata': {'annotations': {
        'kopf.zalando.org/create_fn_1': _json(**DONE_1),
        'kopf.zalando.org/create_fn_2': _json(**DELAYED_2),
    }}}, {
        'metadata': {'annotations': {'kopf.zalando.org/create_fn_1': None, 'kopf.zalando.org/create_fn_2': None}},
        'status': {'my-op-base': ESSENCE_JSON},
    }),
])
def test_seed_configuration_two_cycles(configure: Any, cycle_1: Any, cycle_2: Any) -> None:
    config = kopf.OperatorConfig()
    configure(config=config, settings=config, logger=None, memo=None)

    reason, patch = cycle(config, BODY, T0)
    assert reason == 'create'
    assert patch == cycle_1
    body = merge(BODY, patch)

    # Not due before the delay: nothing runs, nothing is written.
    reason, early = cycle(config, body, T0 + datetime.timedelta(seconds=5))
    assert reason == 'create' and early == {}

    reason, patch = cycle(config, body, T1)
    assert reason == 'create'
    assert patch == cycle_2
    body = merge(body, patch)

    # Everything of the progress is purged; the next cycle sees no change.
    assert not any(k.endswith(('create_fn_1', 'create_fn_2')) for k in body['metadata']['annotations'])
    assert not body.get('status', {}).get('my-op')
    reason, patch = cycle(config, body, T1)
    assert reason == 'noop' and patch == {}


def test_asap_runs_one_handler_per_cycle() -> None:
    config = kopf.OperatorConfig()
    progress_in_annotations(config)
    body, reasons, patches = BODY, [], []
    for now in [T0, T0, T1 + datetime.timedelta(seconds=1), T1]:
        reason, patch = cycle(config, body, now, lifecycle=progress.asap)
        reasons.append(reason)
        patches.append(patch)
        body = merge(body, patch)
    assert reasons == ['create', 'create', 'create', 'noop']
    ann = [p.get('metadata', {}).get('annotations', {}) for p in patches]
    assert json.loads(ann[0]['my-op.example.com/create_fn_1'])['success'] is True
    assert json.loads(ann[0]['my-op.example.com/create_fn_2']) == {
        'started': T0S, 'purpose': 'create', 'retries': 0, 'success': False, 'failure': False}
    assert json.loads(ann[1]['my-op.example.com/create_fn_2'])['message'] == 'Not yet.'
    assert 'my-op.example.com/create_fn_1' not in ann[1]  # unchanged: not re-written
    assert ann[2]['my-op.example.com/create_fn_2'] is None
    assert ann[2]['kopf.zalando.org/last-handled-configuration'] == ESSENCE_JSON + '\n'


def test_done_in_one_cycle_writes_no_progress() -> None:
    config = kopf.OperatorConfig()
    progress_in_annotations(config)
    storage = config.persistence.progress_storage
    state = progress.State().with_purpose('create', HANDLERS, now=T0).with_handlers(HANDLERS, now=T0)
    state = state.with_outcomes({h.id: Outcome(kind=OutcomeKind.SUCCESS) for h in HANDLERS}, HANDLERS, now=T0)
    assert state.done
    patch = kopf.Patch()
    attempts.purge(state, HANDLERS, body=kopf.Body(BODY), patch=patch, storage=storage)
    assert patch == {}
