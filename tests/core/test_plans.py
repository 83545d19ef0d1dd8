"""One cycle as values: `decide()` and `settle()` on bodies in memory; no event loop, no I/O, nothing invoked."""
import copy
import datetime
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

import pytest

import kopf
from kopf._core import attempts, errors, patches, plans, progress, records
from kopf._core.causes import Reason
from kopf._core.finalizers import AppendFinalizer, Edit, RemoveFinalizer
from kopf._core.outcomes import LogEntry, Outcome, OutcomeKind
from kopf._core.plans import Skip
from kopf._engine import contexts
from kopf._shared import mergepatch

RESOURCE = kopf.Resource('kopf.dev', 'v1', 'kopfexamples')
F = 'kopf.zalando.org/KopfFinalizerMarker'
DIFFBASE = 'kopf.zalando.org/last-handled-configuration'
NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
LOGGER = logging.Logger('test', logging.INFO)  # not registered globally: other tests' logging setup cannot change it
DEBUG_LOGGER = logging.Logger('test-debug', logging.DEBUG)  # not registered globally: no side effects


def ago(seconds: float) -> datetime.datetime:
    return NOW - datetime.timedelta(seconds=seconds)


def later(seconds: float) -> datetime.datetime:
    return NOW + datetime.timedelta(seconds=seconds)


# -- building the world in memory -------------------------------------------------------------------

def make_registry(specs: list[dict[str, Any]]) -> kopf.OperatorRegistry:
    """Handlers from dict literals: {'on': 'create', 'id': 'c', ...the decorator's options}."""
    registry = kopf.OperatorRegistry()
    for spec in specs:
        options = dict(spec)
        on = options.pop('on')

        def fn(**_: Any) -> None:
            pass

        getattr(kopf.on, on)('kopf.dev', 'v1', 'kopfexamples', registry=registry, **options)(fn)
    return registry


def make_rctx(specs: list[dict[str, Any]], lifecycle: progress.Lifecycle = kopf.lifecycles.asap,
              ) -> contexts.ResourceContext:
    settings = kopf.OperatorSettings()
    operator = contexts.OperatorContext(settings=settings, registry=make_registry(specs),
                                        client=None,  # type: ignore[arg-type]
                                        memo=kopf.Memo(), lifecycle=lifecycle)
    return contexts.ResourceContext(operator=operator, resource=RESOURCE,
                                    progress_storage=settings.persistence.progress_storage,
                                    diffbase_storage=settings.persistence.diffbase_storage)


def make_body(*, spec: Any = None, finalizers: list[str] | None = None, deleting: bool = False,
              labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {'name': 'n', 'namespace': 'ns', 'uid': 'u1', 'resourceVersion': '1'}
    if finalizers is not None:
        meta['finalizers'] = list(finalizers)
    if deleting:
        meta['deletionTimestamp'] = '2026-01-01T00:00:00Z'
    if labels is not None:
        meta['labels'] = dict(labels)
    return {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': meta,
            'spec': {'x': 0} if spec is None else spec}


def essence_of(rctx: contexts.ResourceContext, body: Mapping[str, Any]) -> dict[str, Any]:
    return rctx.progress_storage.clear_fresh(essence=rctx.diffbase_storage.build(body=body))


def with_diffbase(rctx: contexts.ResourceContext, body: dict[str, Any], *,
                  of: dict[str, Any] | None = None) -> dict[str, Any]:
    """The body with the diff-base of itself (a NOOP), or of another body (e.g. an older spec)."""
    patch = patches.Patch()
    rctx.diffbase_storage.store(body=body, patch=patch, essence=essence_of(rctx, of if of is not None else body))
    return mergepatch.merge(body, dict(patch))


def with_progress(rctx: contexts.ResourceContext, body: dict[str, Any],
                  **states: progress.HandlerState) -> dict[str, Any]:
    """The body with the progress records of these handler states, as the progress storage keeps them."""
    patch = patches.Patch()
    for key, state in states.items():
        rctx.progress_storage.store(key=key, record=state.as_record(), body=body, patch=patch)
    rctx.progress_storage.flush()
    return mergepatch.merge(body, dict(patch))


def decide(rctx: contexts.ResourceContext, body: dict[str, Any], event_type: str | None = 'MODIFIED', *,
           fresh: bool = True, initial: bool = False, deletion_handled: bool = False,
           logger: logging.Logger = LOGGER, event_logger: Callable[[], Any] | None = None) -> plans.Plan:
    record = records.ObjectRecord(uid='u1', memo=kopf.Memo(), initial=initial, deletion_handled=deletion_handled)
    event = {'type': event_type, 'object': copy.deepcopy(body)}
    return plans.decide(rctx, record, event, now=NOW, fresh=fresh, logger=logger, event_logger=event_logger)


def settle(plan: plans.Plan, watching: dict[str, Outcome] | None = None,
           changing: dict[str, Outcome] | None = None) -> plans.Settlement:
    """`settle()`, checking on the way that the plan's patch is never changed."""
    before, fns = copy.deepcopy(dict(plan.patch)), list(plan.patch.fns)
    settlement = plans.settle(plan, plans.Outcomes(watching=watching or {}, changing=changing or {}), now=NOW)
    assert dict(plan.patch) == before
    assert plan.patch.fns == fns
    assert settlement.patch is not plan.patch
    return settlement


def ids(handlers: Any) -> list[str]:
    return [h.id for h in handlers]


def messages(logs: tuple[LogEntry, ...], level: int | None = None) -> list[str]:
    return [log.message for log in logs if level is None or log.level == level]


def annotations(patch: Mapping[str, Any]) -> dict[str, Any]:
    return dict((patch.get('metadata') or {}).get('annotations') or {})


def progress_of(patch: Mapping[str, Any], key: str) -> dict[str, Any]:
    return json.loads(annotations(patch)[f'kopf.zalando.org/{key}'])


def success(result: Any = None) -> Outcome:
    return Outcome(kind=OutcomeKind.SUCCESS, result=result)


def retry(delay: float | None = None, exception: BaseException | None = None) -> Outcome:
    return Outcome(kind=OutcomeKind.RETRY, delay=delay, exception=exception)


def failure(exception: BaseException | None = None) -> Outcome:
    return Outcome(kind=OutcomeKind.FAILURE, exception=exception or kopf.PermanentError('nope'))


CREATE = {'on': 'create', 'id': 'c'}
UPDATE = {'on': 'update', 'id': 'u'}
RESUME = {'on': 'resume', 'id': 'r'}
DELETE = {'on': 'delete', 'id': 'd'}
OPTIONAL_DELETE = {'on': 'delete', 'id': 'd', 'optional': True}
EVENT = {'on': 'event', 'id': 'e'}
LABELLED_CREATE = {'on': 'create', 'id': 'c', 'labels': {'app': 'mine'}}
LABELLED_DELETE = {'on': 'delete', 'id': 'd', 'labels': {'app': 'mine'}}


# -- the skips: GONE, FREE, STEALTH, FINALIZER, NOOP -----------------------------------------------

SKIPS: dict[str, dict[str, Any]] = {
    'gone: the optional delete handlers, once': {
        'handlers': [CREATE, OPTIONAL_DELETE], 'body': {}, 'event': 'DELETED',
        'skip': Skip.GONE, 'edit': Edit.KEEP, 'unguarded': ['d'], 'deletion': True,
        'logs': ['Deleted, really deleted, and we are notified.']},
    'gone: the required delete handlers too': {
        'handlers': [CREATE, DELETE], 'body': {'finalizers': [F]}, 'event': 'DELETED',
        'skip': Skip.GONE, 'edit': Edit.KEEP, 'unguarded': ['d'], 'deletion': True,
        'logs': ['Deleted, really deleted, and we are notified.']},
    'gone: no delete handlers': {
        'handlers': [CREATE], 'body': {}, 'event': 'DELETED',
        'skip': Skip.GONE, 'edit': Edit.KEEP, 'unguarded': [], 'deletion': True,
        'logs': ['Deleted, really deleted, and we are notified.']},
    'gone: the deletion handled already': {
        'handlers': [CREATE, OPTIONAL_DELETE], 'body': {}, 'event': 'DELETED', 'handled_already': True,
        'skip': Skip.GONE, 'edit': Edit.KEEP, 'unguarded': [], 'deletion': False,
        'logs': ['Deleted, really deleted, and we are notified.']},
    'free: the optional delete handlers, once': {
        'handlers': [CREATE, OPTIONAL_DELETE], 'body': {'deleting': True},
        'skip': Skip.FREE, 'edit': Edit.KEEP, 'unguarded': ['d'], 'deletion': True, 'logs': []},
    'free: the deletion handled already': {
        'handlers': [CREATE, OPTIONAL_DELETE], 'body': {'deleting': True}, 'handled_already': True,
        'skip': Skip.FREE, 'edit': Edit.KEEP, 'unguarded': [], 'deletion': False, 'logs': []},
    'free: with others\' finalizers': {
        'handlers': [CREATE, OPTIONAL_DELETE], 'body': {'deleting': True, 'finalizers': ['other/one']},
        'skip': Skip.FREE, 'edit': Edit.KEEP, 'unguarded': ['d'], 'deletion': True, 'logs': []},
    'stealth: our finalizer not required: released': {
        'handlers': [LABELLED_CREATE, LABELLED_DELETE], 'body': {'finalizers': [F]},
        'skip': Skip.STEALTH, 'edit': Edit.REMOVE, 'fns': [RemoveFinalizer(F)], 'logs': []},
    'stealth: deleting, our finalizer not required: released': {
        'handlers': [LABELLED_CREATE, LABELLED_DELETE], 'body': {'finalizers': [F, 'other/one'], 'deleting': True},
        'skip': Skip.STEALTH, 'edit': Edit.REMOVE, 'fns': [RemoveFinalizer(F)], 'logs': []},
    'stealth: without our finalizer': {
        'handlers': [LABELLED_CREATE, LABELLED_DELETE], 'body': {},
        'skip': Skip.STEALTH, 'edit': Edit.KEEP, 'logs': []},
    'stealth: without our finalizer, deleting': {
        'handlers': [LABELLED_CREATE], 'body': {'deleting': True},
        'skip': Skip.STEALTH, 'edit': Edit.KEEP, 'logs': []},
    'stealth: only on.event handlers': {
        'handlers': [EVENT], 'body': {'finalizers': [F]}, 'watching': ['e'],
        'skip': Skip.STEALTH, 'edit': Edit.REMOVE, 'fns': [RemoveFinalizer(F)], 'logs': []},
    'finalizer: added first': {
        'handlers': [CREATE, DELETE], 'body': {},
        'skip': Skip.FINALIZER, 'edit': Edit.ADD, 'fns': [AppendFinalizer(F)],
        'logs': ['Adding the finalizer, thus preventing the actual deletion.']},
    'finalizer: added after others\'': {
        'handlers': [CREATE, DELETE], 'body': {'finalizers': ['other/one']},
        'skip': Skip.FINALIZER, 'edit': Edit.ADD, 'fns': [AppendFinalizer(F)],
        'logs': ['Adding the finalizer, thus preventing the actual deletion.']},
    'finalizer: added, even if nothing changed': {
        'handlers': [CREATE, DELETE], 'body': {}, 'diffbase': True,
        'skip': Skip.FINALIZER, 'edit': Edit.ADD, 'fns': [AppendFinalizer(F)],
        'logs': ['Adding the finalizer, thus preventing the actual deletion.']},
    'noop: nothing changed': {
        'handlers': [CREATE, UPDATE], 'body': {}, 'diffbase': True,
        'skip': Skip.NOOP, 'edit': Edit.KEEP, 'logs': [], 'settled': True},
    'noop: nothing changed, our finalizer kept': {
        'handlers': [CREATE, DELETE], 'body': {'finalizers': [F]}, 'diffbase': True,
        'skip': Skip.NOOP, 'edit': Edit.KEEP, 'logs': [], 'settled': True},
    'noop: nothing changed, our finalizer released': {
        'handlers': [CREATE], 'body': {'finalizers': [F]}, 'diffbase': True,
        'skip': Skip.NOOP, 'edit': Edit.REMOVE, 'fns': [RemoveFinalizer(F)],
        'logs': ['Removing the finalizer, as there are no handlers requiring it.']},
}


@pytest.mark.parametrize('name', list(SKIPS))
def test_skips(name: str) -> None:
    case = SKIPS[name]
    rctx = make_rctx(case['handlers'])
    body = make_body(**case['body'])
    if case.get('diffbase'):
        body = with_diffbase(rctx, body)
    plan = decide(rctx, body, case.get('event', 'MODIFIED'), deletion_handled=case.get('handled_already', False))
    assert plan.skip is case['skip']
    assert plan.edit is case['edit']
    assert ids(plan.unguarded) == case.get('unguarded', [])
    assert plan.deletion is case.get('deletion', False)
    assert messages(plan.logs) == case['logs']
    assert plan.handling is None
    assert ids(plan.watching) == case.get('watching', [])
    if plan.deletion:
        assert plan.cause is not None and plan.cause.reason == Reason.DELETE
    elif plan.skip in (Skip.GONE, Skip.FREE):
        assert plan.cause is None or plan.cause.reason == Reason.FREE

    # settling it: the only changes are the finalizer edits; nothing is stored or purged
    settlement = settle(plan, changing={'c': success({'ignored': True}), 'd': success({'ignored': True})})
    assert dict(settlement.patch) == {}
    assert settlement.patch.fns == case.get('fns', [])
    assert settlement.wakeup is None
    assert messages(settlement.logs) == (NOOP_LOGS if plan.skip is Skip.NOOP else [])
    assert settlement.handled is False
    assert settlement.deletion_handled is plan.deletion  # the one run is over, if it was this one
    if case.get('settled'):
        assert settlement.settled == plan.essence == essence_of(rctx, body)
    else:
        assert settlement.settled is None


def test_gone_is_decided_before_anything_else() -> None:
    rctx = make_rctx([LABELLED_CREATE, OPTIONAL_DELETE])  # no stealth, no finalizer edit for DELETED
    plan = decide(rctx, make_body(finalizers=[F], labels={'app': 'mine'}), 'DELETED')
    assert plan.skip is Skip.GONE
    assert plan.edit is Edit.KEEP
    assert plan.essence is None
    assert ids(plan.unguarded) == ['d']


def test_free_runs_only_the_matching_delete_handlers() -> None:
    rctx = make_rctx([CREATE, OPTIONAL_DELETE, {'on': 'delete', 'id': 'd2', 'optional': True,
                                                'labels': {'app': 'other'}}])
    plan = decide(rctx, make_body(deleting=True, labels={'app': 'mine'}))
    assert plan.skip is Skip.FREE
    assert ids(plan.unguarded) == ['d']


def test_finalizer_cycle_does_nothing_else() -> None:
    rctx = make_rctx([EVENT, CREATE, DELETE])
    plan = decide(rctx, make_body())
    assert plan.skip is Skip.FINALIZER
    assert plan.handling is None and plan.stale is None
    assert ids(plan.watching) == ['e']  # on.event handlers still see the event
    settlement = settle(plan, watching={'e': success({'seen': 1})}, changing={'c': success({'no': 1})})
    assert dict(settlement.patch) == {'status': {'e': {'seen': 1}}}  # no progress, no diff-base, no `c`
    assert settlement.patch.fns == [AppendFinalizer(F)]
    assert settlement.wakeup is None and settlement.logs == () and settlement.settled is None
    assert settlement.handled is False and settlement.deletion_handled is False


# -- REMOVE when not required: the cycle goes on ----------------------------------------------------

@pytest.mark.parametrize('outcome, done', [(success({'ok': 1}), True), (retry(5), False)])
def test_remove_unrequired_finalizer_and_go_on(outcome: Outcome, done: bool) -> None:
    rctx = make_rctx([CREATE])
    body = make_body(finalizers=['other/one', F])
    plan = decide(rctx, body)
    assert plan.skip is None
    assert plan.edit is Edit.REMOVE
    assert plan.cause is not None and plan.cause.reason == Reason.CREATE
    assert plan.handling is not None and ids(plan.handling.selected) == ['c']
    assert messages(plan.logs) == ['Removing the finalizer, as there are no handlers requiring it.']
    settlement = settle(plan, changing={'c': outcome})
    assert settlement.patch.fns == [RemoveFinalizer(F)]
    assert settlement.handled is done
    assert settlement.settled is None  # a JSON-patch is sent: the answer is re-checked
    if done:
        assert settlement.patch['status'] == {'c': {'ok': 1}}
        assert annotations(settlement.patch)[DIFFBASE] == json.dumps(plan.essence, separators=(',', ':')) + '\n'
        assert settlement.wakeup is None
    else:
        assert DIFFBASE not in annotations(settlement.patch)
        assert progress_of(settlement.patch, 'c')['retries'] == 1
        assert settlement.wakeup == 5


# -- NOOP: stale progress is purged ----------------------------------------------------------------

NOOP_LOGS = ['Something has changed, but we are not interested (the essence is the same).',  # as upstream
             'Handling cycle is finished, waiting for new changes.']
NOOPS: dict[str, dict[str, Any]] = {
    'no records': {'states': {}, 'stale': None, 'purged': [], 'logs': []},  # after NOOP_LOGS
    'a reverted update': {
        'states': {'u': progress.HandlerState(started=ago(60), delayed=later(60), purpose='update', retries=1)},
        'stale': ['u'], 'purged': ['u'], 'logs': ['Purging the progress of a cause that is gone: u.']},
    'a reverted update with sub-handlers': {
        'states': {'u': progress.HandlerState(started=ago(60), purpose='update', retries=1, subrefs=('u.sub',)),
                   'u.sub': progress.HandlerState(started=ago(60), delayed=later(60), purpose='update', retries=1)},
        'stale': ['u'], 'purged': ['u', 'u.sub'], 'logs': ['Purging the progress of a cause that is gone: u.']},
    'several records, sorted in the log': {
        'states': {'u': progress.HandlerState(started=ago(60), purpose='update', retries=1),
                   'c': progress.HandlerState(started=ago(60), purpose='create', retries=1)},
        'stale': ['c', 'u'], 'purged': ['c', 'u'], 'logs': ['Purging the progress of a cause that is gone: c, u.']},
    'records of unknown handlers are not read': {
        'states': {'gone-handler': progress.HandlerState(started=ago(60), purpose='update', retries=1)},
        'stale': None, 'purged': [], 'logs': []},
}


@pytest.mark.parametrize('name', list(NOOPS))
@pytest.mark.parametrize('finalized', [False, True])
def test_noop(name: str, finalized: bool) -> None:
    case = NOOPS[name]
    rctx = make_rctx([CREATE, UPDATE] + ([DELETE] if finalized else []))
    body = with_diffbase(rctx, make_body(finalizers=[F] if finalized else None))
    body = with_progress(rctx, body, **case['states'])
    plan = decide(rctx, body)
    assert plan.skip is Skip.NOOP
    assert plan.edit is Edit.KEEP
    assert plan.handling is None
    assert (None if plan.stale is None else sorted(plan.stale)) == case['stale']
    assert plan.essence == essence_of(rctx, body)
    settlement = settle(plan)
    assert annotations(settlement.patch) == {f'kopf.zalando.org/{key}': None for key in case['purged']}
    assert settlement.patch.fns == []
    assert messages(settlement.logs, logging.DEBUG) == NOOP_LOGS + case['logs']
    assert settlement.settled == plan.essence  # no fns: settled
    assert settlement.wakeup is None and settlement.handled is False


def test_noop_with_a_finalizer_edit_is_not_settled() -> None:
    rctx = make_rctx([CREATE, UPDATE])
    body = with_diffbase(rctx, make_body(finalizers=[F]))
    body = with_progress(rctx, body, u=progress.HandlerState(started=ago(60), purpose='update', retries=1))
    plan = decide(rctx, body)
    assert plan.skip is Skip.NOOP and plan.edit is Edit.REMOVE
    settlement = settle(plan)
    assert annotations(settlement.patch) == {'kopf.zalando.org/u': None}
    assert settlement.patch.fns == [RemoveFinalizer(F)]
    assert settlement.settled is None


# -- on.event handlers: only for fresh events; results to status -----------------------------------

WATCHING: dict[str, dict[str, Any]] = {
    'fresh, a mapping result': {'fresh': True, 'outcome': success({'a': 1}), 'status': {'e': {'a': 1}}},
    'fresh, a scalar result': {'fresh': True, 'outcome': success('done'), 'status': {'e': 'done'}},
    'fresh, a list result': {'fresh': True, 'outcome': success([1, 2]), 'status': {'e': [1, 2]}},
    'fresh, no result': {'fresh': True, 'outcome': success(None), 'status': None},
    'fresh, failed': {'fresh': True, 'outcome': failure(), 'status': None},
    'fresh, retry': {'fresh': True, 'outcome': retry(1), 'status': None},
    'fresh, no outcome': {'fresh': True, 'outcome': None, 'status': None},
    'not fresh': {'fresh': False, 'outcome': success({'a': 1}), 'status': None},
}


@pytest.mark.parametrize('name', list(WATCHING))
@pytest.mark.parametrize('event_type, diffbase', [('MODIFIED', True), ('ADDED', False), ('DELETED', False)])
def test_watching(name: str, event_type: str, diffbase: bool) -> None:
    case = WATCHING[name]
    rctx = make_rctx([EVENT, CREATE])
    body = make_body()
    if diffbase:
        body = with_diffbase(rctx, body)
    made: list[logging.Logger] = []

    def event_logger() -> logging.Logger:
        made.append(logging.Logger('event'))
        return made[-1]

    plan = decide(rctx, body, event_type, fresh=case['fresh'], event_logger=event_logger)
    if case['fresh']:
        assert ids(plan.watching) == ['e']
        assert plan.watching_cause is not None
        assert plan.watching_cause.type == event_type
        assert plan.watching_cause.logger is made[0]
        assert plan.watching_cause.patch is plan.patch
    else:
        assert plan.watching == () and plan.watching_cause is None
        assert made == []
    settlement = settle(plan, watching={} if case['outcome'] is None else {'e': case['outcome']})
    assert settlement.patch.get('status') == case['status']


def test_watching_logger_defaults_to_the_object_logger() -> None:
    rctx = make_rctx([EVENT])
    plan = decide(rctx, make_body())
    assert plan.watching_cause is not None and plan.watching_cause.logger is LOGGER


def test_no_event_logger_is_made_without_on_event_handlers() -> None:
    rctx = make_rctx([CREATE])
    made: list[int] = []
    plan = decide(rctx, make_body(), event_logger=lambda: made.append(1))  # type: ignore[func-returns-value]
    assert plan.watching == () and plan.watching_cause is None
    assert made == []


def test_watching_and_changing_results_both_go_to_status() -> None:
    rctx = make_rctx([EVENT, CREATE])
    plan = decide(rctx, make_body())
    settlement = settle(plan, watching={'e': success({'w': 1})}, changing={'c': success({'c': 2})})
    assert settlement.patch['status'] == {'e': {'w': 1}, 'c': {'c': 2}}


# -- change handlers: which are due and selected ----------------------------------------------------

TWO = [{'on': 'create', 'id': 'a'}, {'on': 'create', 'id': 'b'}]
SELECTION: dict[str, dict[str, Any]] = {
    'asap: one': {'lifecycle': kopf.lifecycles.asap, 'states': {}, 'selected': ['a']},
    'asap: the fewest retries': {
        'lifecycle': kopf.lifecycles.asap,
        'states': {'a': progress.HandlerState(started=ago(10), purpose='create', retries=1)},
        'selected': ['b']},
    'asap: ties by order': {
        'lifecycle': kopf.lifecycles.asap,
        'states': {'a': progress.HandlerState(started=ago(10), purpose='create', retries=1),
                   'b': progress.HandlerState(started=ago(10), purpose='create', retries=1)},
        'selected': ['a']},
    'all_at_once: all': {'lifecycle': kopf.lifecycles.all_at_once, 'states': {}, 'selected': ['a', 'b']},
    'one_by_one: the first': {'lifecycle': kopf.lifecycles.one_by_one, 'states': {}, 'selected': ['a']},
    'all_at_once: not the delayed': {
        'lifecycle': kopf.lifecycles.all_at_once,
        'states': {'a': progress.HandlerState(started=ago(10), delayed=later(30), purpose='create', retries=1)},
        'selected': ['b']},
    'all_at_once: the delayed when due': {
        'lifecycle': kopf.lifecycles.all_at_once,
        'states': {'a': progress.HandlerState(started=ago(60), delayed=NOW, purpose='create', retries=1)},
        'selected': ['a', 'b']},
    'all_at_once: not the finished': {
        'lifecycle': kopf.lifecycles.all_at_once,
        'states': {'a': progress.HandlerState(started=ago(10), stopped=ago(5), purpose='create', retries=1,
                                              success=True)},
        'selected': ['b']},
    'one_by_one: after the finished': {
        'lifecycle': kopf.lifecycles.one_by_one,
        'states': {'a': progress.HandlerState(started=ago(10), stopped=ago(5), purpose='create', retries=1,
                                              failure=True)},
        'selected': ['b']},
    'asap: none due': {
        'lifecycle': kopf.lifecycles.asap,
        'states': {'a': progress.HandlerState(started=ago(10), delayed=later(30), purpose='create', retries=1),
                   'b': progress.HandlerState(started=ago(10), delayed=later(20), purpose='create', retries=1)},
        'selected': [], 'wakeup': 20},
}


@pytest.mark.parametrize('name', list(SELECTION))
def test_selection_by_lifecycle(name: str) -> None:
    case = SELECTION[name]
    rctx = make_rctx(TWO, lifecycle=case['lifecycle'])
    body = with_progress(rctx, make_body(), **case['states'])
    plan = decide(rctx, body)
    assert plan.skip is None and plan.edit is Edit.KEEP
    assert plan.cause is not None and plan.cause.reason == Reason.CREATE
    assert plan.handling is not None
    assert ids(plan.handling.handlers) == ['a', 'b']
    assert sorted(plan.handling.state) == ['a', 'b']  # the pending siblings get their states too
    assert ids(plan.handling.selected) == case['selected']
    assert plan.handling.refused == {}
    if 'wakeup' in case:  # nothing attempted: the records are kept, the wake-up is the earliest delay
        settlement = settle(plan)
        assert settlement.wakeup == case['wakeup']
        assert settlement.handled is False


# -- refused: out of retries or time ------------------------------------------------------------------

REFUSALS: dict[str, dict[str, Any]] = {
    'out of retries': {
        'handler': {'on': 'create', 'id': 'c', 'retries': 1},
        'state': progress.HandlerState(started=ago(10), purpose='create', retries=1),
        'error': errors.HandlerRetriesError, 'message': "Handler 'c' has exceeded 1 retries."},
    'out of time': {
        'handler': {'on': 'create', 'id': 'c', 'timeout': 30},
        'state': progress.HandlerState(started=ago(30), purpose='create', retries=1),
        'error': errors.HandlerTimeoutError, 'message': "Handler 'c' has timed out after 30 seconds."},
    'out of both: retries first': {
        'handler': {'on': 'create', 'id': 'c', 'retries': 2, 'timeout': 30},
        'state': progress.HandlerState(started=ago(3600), purpose='create', retries=2),
        'error': errors.HandlerRetriesError, 'message': "Handler 'c' has exceeded 2 retries."},
}


@pytest.mark.parametrize('name', list(REFUSALS))
def test_refused(name: str) -> None:
    case = REFUSALS[name]
    rctx = make_rctx([case['handler']])
    body = with_progress(rctx, make_body(), c=case['state'])
    plan = decide(rctx, body)
    assert plan.handling is not None
    assert ids(plan.handling.selected) == ['c']
    refused = plan.handling.refused['c']
    assert refused.kind is OutcomeKind.FAILURE
    assert isinstance(refused.exception, case['error'])
    assert str(refused.exception) == case['message']

    # the reactor passes the refusal as the handler's outcome: a final failure, the cause done
    settlement = settle(plan, changing=dict(plan.handling.refused))
    assert messages(settlement.logs) == [f"Handler 'c' failed permanently: {case['message']}",
                                         'Creation is processed: 0 succeeded; 1 failed.']
    assert annotations(settlement.patch)['kopf.zalando.org/c'] is None  # purged
    assert DIFFBASE in annotations(settlement.patch)
    assert settlement.handled is True and settlement.wakeup is None
    assert 'status' not in settlement.patch


@pytest.mark.parametrize('handler, state', [
    ({'on': 'create', 'id': 'c', 'retries': 2}, progress.HandlerState(started=ago(10), purpose='create', retries=1)),
    ({'on': 'create', 'id': 'c', 'timeout': 30}, progress.HandlerState(started=ago(29), purpose='create', retries=1)),
    ({'on': 'create', 'id': 'c'}, progress.HandlerState(started=ago(99999), purpose='create', retries=99)),
])
def test_not_refused_within_the_limits(handler: dict[str, Any], state: progress.HandlerState) -> None:
    rctx = make_rctx([handler])
    plan = decide(rctx, with_progress(rctx, make_body(), c=state))
    assert plan.handling is not None
    assert ids(plan.handling.selected) == ['c']
    assert plan.handling.refused == {}


# -- outcomes: results to status, retries stored, the final judgement -------------------------------

@pytest.mark.parametrize('written, result, expected', [
    (None, {'y': 2}, {'c': {'y': 2}}),
    ({'c': {'x': 1}}, {'y': 2}, {'c': {'x': 1, 'y': 2}}),
    ({'c': {'x': 1, 'y': 1}}, {'y': 2}, {'c': {'x': 1, 'y': 2}}),
    ({'c': 'scalar'}, {'y': 2}, {'c': {'y': 2}}),
    ({'c': {'x': 1}}, 'scalar', {'c': 'scalar'}),
    ({'c': {'x': 1}}, [1], {'c': [1]}),
    ({'other': 1}, {'y': 2}, {'other': 1, 'c': {'y': 2}}),
    ({'c': {'x': 1}}, None, {'c': {'x': 1}}),
])
def test_success_result_merged_into_status(written: dict[str, Any] | None, result: Any,
                                           expected: dict[str, Any]) -> None:
    rctx = make_rctx([CREATE])
    plan = decide(rctx, make_body())
    if written is not None:  # as the handler wrote it into the plan's patch while it ran
        plan.patch['status'] = copy.deepcopy(written)
    settlement = settle(plan, changing={'c': success(result)})
    assert settlement.patch['status'] == expected
    if written is not None:
        assert plan.patch['status'] == written  # the plan's patch is untouched


@pytest.mark.parametrize('current, result, expected', [
    ({}, {'a': 1}, {'status': {'h': {'a': 1}}}),
    ({'status': {'h': {'a': 1, 'b': 1}}}, {'b': 2}, {'status': {'h': {'a': 1, 'b': 2}}}),
    ({'status': {'h': 5}}, {'b': 2}, {'status': {'h': {'b': 2}}}),
    ({'status': {'h': {'a': 1}}}, 7, {'status': {'h': 7}}),
    ({'status': {'h': {'a': 1}}}, None, {'status': {'h': None}}),
    ({'status': {'g': 1}}, 'x', {'status': {'g': 1, 'h': 'x'}}),
])
def test_deliver_result(current: dict[str, Any], result: Any, expected: dict[str, Any]) -> None:
    patch = patches.Patch(copy.deepcopy(current))
    attempts.deliver_result(patch, 'h', result)
    assert dict(patch) == expected


RETRIES: dict[str, dict[str, Any]] = {
    'a delay': {'handler': CREATE, 'outcome': retry(5), 'wakeup': 5, 'delayed': later(5), 'message': None},
    'at once': {'handler': CREATE, 'outcome': retry(None), 'wakeup': 0, 'delayed': None, 'message': None},
    'a temporary error\'s delay': {
        'handler': CREATE, 'outcome': retry(None, kopf.TemporaryError('later', delay=7)),
        'wakeup': 7, 'delayed': later(7), 'message': 'later'},
    'an arbitrary error: the default backoff': {
        'handler': CREATE, 'outcome': retry(None, ValueError('boom')),
        'wakeup': 60, 'delayed': later(60), 'message': 'boom'},
    'an arbitrary error: the handler\'s backoff': {
        'handler': {'on': 'create', 'id': 'c', 'backoff': 3}, 'outcome': retry(None, ValueError('boom')),
        'wakeup': 3, 'delayed': later(3), 'message': 'boom'},
    'not the last retry': {
        'handler': {'on': 'create', 'id': 'c', 'retries': 2}, 'outcome': retry(5),
        'wakeup': 5, 'delayed': later(5), 'message': None},
    'within the timeout': {
        'handler': {'on': 'create', 'id': 'c', 'timeout': 10}, 'outcome': retry(5),
        'wakeup': 5, 'delayed': later(5), 'message': None},
}


@pytest.mark.parametrize('name', list(RETRIES))
def test_retry_stores_the_progress_and_wakes_up(name: str) -> None:
    case = RETRIES[name]
    rctx = make_rctx([case['handler']])
    body = make_body()
    plan = decide(rctx, body)
    settlement = settle(plan, changing={'c': case['outcome']})
    assert settlement.wakeup == case['wakeup']
    assert settlement.handled is False and settlement.settled is None
    assert DIFFBASE not in annotations(settlement.patch)
    assert 'status' not in settlement.patch
    record = progress_of(settlement.patch, 'c')
    assert record['retries'] == 1
    assert record['purpose'] == 'create'
    assert progress.parse_time(record['started']) == NOW
    assert progress.parse_time(record.get('delayed')) == case['delayed']
    assert record.get('message') == case['message']
    assert not record.get('success') and not record.get('failure')
    assert settlement.logs[0].level == logging.ERROR
    sleeping = [f'Sleeping was skipped because of the patch, {float(case["wakeup"])} seconds left.'] \
        if case['wakeup'] else []  # the progress is stored: the patch's echo comes first, as upstream 1.45.2
    assert [entry.message for entry in settlement.logs[1:]] == sleeping

    # the next cycle, on the body with the stored record: the handler is due when the wake-up says
    stored = mergepatch.merge(body, dict(settlement.patch))
    next_plan = decide(rctx, stored)
    assert next_plan.handling is not None
    assert ids(next_plan.handling.selected) == ([] if case['wakeup'] else ['c'])
    assert next_plan.handling.state['c'].retries == 1
    if case['wakeup']:  # nothing to write: that cycle sleeps, as upstream 1.45.2 says it
        waiting = settle(next_plan, changing={})
        assert not waiting.patch
        assert messages(waiting.logs) == [f'Sleeping for {float(case["wakeup"])} seconds for the delayed handlers.']


JUDGEMENTS: dict[str, dict[str, Any]] = {
    'the last retry': {
        'handler': {'on': 'create', 'id': 'c', 'retries': 2},
        'state': progress.HandlerState(started=ago(10), purpose='create', retries=1),
        'outcome': retry(None, kopf.TemporaryError('boom', delay=5)),
        'logs': [(logging.ERROR, "Handler 'c' failed temporarily but will exceed 2 retries: boom"),
                 (logging.INFO, 'Creation is processed: 0 succeeded; 1 failed.')]},
    'the only retry': {
        'handler': {'on': 'create', 'id': 'c', 'retries': 1}, 'state': None,
        'outcome': retry(None, ValueError('boom')),
        'logs': [(logging.ERROR, "Handler 'c' failed with an exception and will stop now "
                                 "(it would exceed 1 retries on the next attempt): boom"),
                 (logging.INFO, 'Creation is processed: 0 succeeded; 1 failed.')]},
    'the next attempt past the timeout': {
        'handler': {'on': 'create', 'id': 'c', 'timeout': 10},
        'state': progress.HandlerState(started=ago(5), purpose='create', retries=1),
        'outcome': retry(5, ValueError('slow')),
        'logs': [(logging.ERROR, "Handler 'c' failed with an exception and will stop now "
                                 "(it would time out in 10 seconds on the next attempt): slow"),
                 (logging.INFO, 'Creation is processed: 0 succeeded; 1 failed.')]},
    'a permanent failure': {
        'handler': CREATE, 'state': None, 'outcome': failure(kopf.PermanentError('nope')),
        'logs': [(logging.ERROR, "Handler 'c' failed permanently: nope"),
                 (logging.INFO, 'Creation is processed: 0 succeeded; 1 failed.')]},
    'a success': {
        'handler': CREATE, 'state': None, 'outcome': success(),
        'logs': [(logging.INFO, "Handler 'c' succeeded."),
                 (logging.INFO, 'Creation is processed: 1 succeeded; 0 failed.')]},
    'a success after retries': {
        'handler': CREATE, 'state': progress.HandlerState(started=ago(10), purpose='create', retries=3),
        'outcome': success({'r': 1}),
        'logs': [(logging.INFO, "Handler 'c' succeeded."),
                 (logging.INFO, 'Creation is processed: 1 succeeded; 0 failed.')]},
}


@pytest.mark.parametrize('name', list(JUDGEMENTS))
def test_final_outcomes_finish_the_cause(name: str) -> None:
    case = JUDGEMENTS[name]
    rctx = make_rctx([case['handler']])
    body = make_body(spec={'x': 1})
    if case['state'] is not None:
        body = with_progress(rctx, body, c=case['state'])
    plan = decide(rctx, body)
    assert plan.handling is not None and plan.handling.refused == {}
    settlement = settle(plan, changing={'c': case['outcome']})
    assert [(log.level, log.message) for log in settlement.logs] == case['logs']
    for log in settlement.logs[:-1]:
        assert log.extra == {'kopf_handler_id': 'c'}
    assert settlement.wakeup is None
    assert settlement.handled is True and settlement.deletion_handled is False
    expected_annotations: dict[str, Any] = {DIFFBASE: '{"spec":{"x":1}}\n'}
    if case['state'] is not None:
        expected_annotations['kopf.zalando.org/c'] = None  # purged
    assert annotations(settlement.patch) == expected_annotations
    assert settlement.patch.fns == []
    assert settlement.settled == plan.essence == {'spec': {'x': 1}}


def test_done_purges_all_records_and_subrefs() -> None:
    rctx = make_rctx(TWO, lifecycle=kopf.lifecycles.asap)
    body = with_progress(rctx, make_body(), a=progress.HandlerState(started=ago(10), stopped=ago(5), purpose='create',
                                                                    retries=1, success=True, subrefs=('a.sub',)),
                         **{'a.sub': progress.HandlerState(started=ago(10), stopped=ago(5), purpose='create',
                                                           retries=1, success=True)})
    plan = decide(rctx, body)
    assert plan.handling is not None and ids(plan.handling.selected) == ['b']
    settlement = settle(plan, changing={'b': success()})
    assert annotations(settlement.patch) == {'kopf.zalando.org/a': None, 'kopf.zalando.org/a.sub': None,
                                             DIFFBASE: '{"spec":{"x":0}}\n'}
    assert messages(settlement.logs, logging.INFO)[-1] == 'Creation is processed: 2 succeeded; 0 failed.'


def test_unfinished_siblings_keep_the_cause_going() -> None:
    rctx = make_rctx(TWO, lifecycle=kopf.lifecycles.asap)
    plan = decide(rctx, make_body())
    settlement = settle(plan, changing={'a': success({'ok': 1})})
    assert settlement.wakeup == 0  # `b` is due at once
    assert settlement.handled is False and settlement.settled is None
    assert settlement.patch['status'] == {'a': {'ok': 1}}
    assert progress_of(settlement.patch, 'a')['success'] is True
    assert progress_of(settlement.patch, 'b')['retries'] == 0  # the pending sibling's record
    assert DIFFBASE not in annotations(settlement.patch)
    assert messages(settlement.logs) == ["Handler 'a' succeeded."]


def test_unchanged_records_are_not_stored_again() -> None:
    rctx = make_rctx(TWO, lifecycle=kopf.lifecycles.asap)
    body = with_progress(rctx, make_body(),
                         a=progress.HandlerState(started=ago(10), delayed=later(10), purpose='create', retries=1),
                         b=progress.HandlerState(started=ago(10), delayed=later(20), purpose='create', retries=1))
    plan = decide(rctx, body)
    settlement = settle(plan)
    assert dict(settlement.patch) == {}
    assert settlement.wakeup == 10


# -- the diff-base: stored unless the essence is unchanged -----------------------------------------

DIFFBASES: dict[str, dict[str, Any]] = {
    'creation: stored': {'handlers': [CREATE], 'old': None, 'initial': False, 'reason': Reason.CREATE,
                         'stored': True},
    'creation without handlers: stored': {'handlers': [UPDATE], 'old': None, 'initial': False,
                                          'reason': Reason.CREATE, 'stored': True},
    'update: stored': {'handlers': [UPDATE], 'old': {'x': 'old'}, 'initial': False, 'reason': Reason.UPDATE,
                       'stored': True},
    'resume: unchanged, not stored': {'handlers': [RESUME], 'old': 'same', 'initial': True,
                                      'reason': Reason.RESUME, 'stored': False},
    'resume on an update: stored': {'handlers': [RESUME, UPDATE], 'old': {'x': 'old'}, 'initial': True,
                                    'reason': Reason.UPDATE, 'stored': True, 'selected': ['r', 'u']},
}


@pytest.mark.parametrize('name', list(DIFFBASES))
def test_diffbase_stored_unless_unchanged(name: str) -> None:
    case = DIFFBASES[name]
    rctx = make_rctx(case['handlers'], lifecycle=kopf.lifecycles.all_at_once)
    body = make_body(spec={'x': 'new'})
    if case['old'] == 'same':
        body = with_diffbase(rctx, body)
    elif case['old'] is not None:
        body = with_diffbase(rctx, body, of=make_body(spec=case['old']))
    plan = decide(rctx, body, initial=case['initial'])
    assert plan.skip is None
    assert plan.cause is not None and plan.cause.reason == case['reason']
    assert plan.handling is not None
    assert ids(plan.handling.selected) == case.get('selected', ids(plan.handling.handlers))
    settlement = settle(plan, changing={h.id: success() for h in plan.handling.selected})
    assert settlement.handled is True
    stored = annotations(settlement.patch).get(DIFFBASE)
    if case['stored']:
        assert stored == '{"spec":{"x":"new"}}\n'
        patch = patches.Patch()  # exactly as the storage stores it
        rctx.diffbase_storage.store(body=body, patch=patch, essence=plan.essence)
        assert annotations(patch)[DIFFBASE] == stored
    else:
        assert stored is None
    assert settlement.settled == plan.essence == {'spec': {'x': 'new'}}


def test_creation_without_handlers_logs_nothing() -> None:
    rctx = make_rctx([UPDATE])
    plan = decide(rctx, make_body())
    assert plan.handling is not None and plan.handling.handlers == ()
    settlement = settle(plan)
    assert settlement.logs == ()
    assert settlement.handled is True


# -- deleting with our finalizer --------------------------------------------------------------------

DELETIONS: dict[str, dict[str, Any]] = {
    'a required delete handler: done': {
        'handlers': [CREATE, DELETE], 'outcome': success(), 'done': True,
        'logs': ["Handler 'd' succeeded.", 'Deletion is processed: 1 succeeded; 0 failed.',
                 'Removing the finalizer, thus allowing the actual deletion.']},
    'a required delete handler: failed': {
        'handlers': [CREATE, DELETE], 'outcome': failure(kopf.PermanentError('nope')), 'done': True,
        'logs': ["Handler 'd' failed permanently: nope", 'Deletion is processed: 0 succeeded; 1 failed.',
                 'Removing the finalizer, thus allowing the actual deletion.']},
    'a required delete handler: to retry': {
        'handlers': [CREATE, DELETE], 'outcome': retry(10), 'done': False,
        'logs': ["Handler 'd' failed with an exception and will try again in 10 seconds: None",
                 'Sleeping was skipped because of the patch, 10.0 seconds left.']},
    'an optional delete handler: done': {
        'handlers': [CREATE, OPTIONAL_DELETE], 'outcome': success(), 'done': True,
        'logs': ["Handler 'd' succeeded.", 'Deletion is processed: 1 succeeded; 0 failed.',
                 'Removing the finalizer, thus allowing the actual deletion.']},
    'no delete handlers: released at once': {
        'handlers': [CREATE], 'outcome': None, 'done': True,
        'logs': ['Removing the finalizer, thus allowing the actual deletion.']},
}


@pytest.mark.parametrize('name', list(DELETIONS))
def test_deleting_with_our_finalizer(name: str) -> None:
    case = DELETIONS[name]
    rctx = make_rctx(case['handlers'])
    body = with_diffbase(rctx, make_body(finalizers=[F, 'other/one'], deleting=True))
    plan = decide(rctx, body)
    assert plan.skip is None
    assert plan.edit is Edit.KEEP  # released only when the deletion is handled
    assert plan.has_finalizer and plan.deleting
    assert plan.cause is not None and plan.cause.reason == Reason.DELETE
    assert plan.handling is not None
    assert ids(plan.handling.selected) == (['d'] if case['outcome'] is not None else [])
    settlement = settle(plan, changing={} if case['outcome'] is None else {'d': case['outcome']})
    assert messages(settlement.logs) == case['logs']
    assert DIFFBASE not in annotations(settlement.patch)  # never for a deleted object
    assert settlement.settled is None
    if case['done']:
        assert settlement.patch.fns == [RemoveFinalizer(F)]
        assert settlement.handled is True and settlement.deletion_handled is True
        assert settlement.wakeup is None
        assert all(value is None for value in annotations(settlement.patch).values())  # only purges
    else:
        assert settlement.patch.fns == []
        assert settlement.handled is False and settlement.deletion_handled is False
        assert settlement.wakeup == 10
        assert progress_of(settlement.patch, 'd')['purpose'] == 'delete'


def test_deleting_purges_the_deletion_records() -> None:
    rctx = make_rctx([CREATE, DELETE])
    body = with_diffbase(rctx, make_body(finalizers=[F], deleting=True))
    body = with_progress(rctx, body, d=progress.HandlerState(started=ago(10), purpose='delete', retries=1))
    plan = decide(rctx, body)
    assert plan.handling is not None and plan.handling.state['d'].retries == 1
    settlement = settle(plan, changing={'d': success()})
    assert annotations(settlement.patch) == {'kopf.zalando.org/d': None}
    assert settlement.patch.fns == [RemoveFinalizer(F)]


# -- superseded causes --------------------------------------------------------------------------------

SUPERSEDED: dict[str, dict[str, Any]] = {
    'an unfinished creation by an update': {
        'handlers': [CREATE, UPDATE],
        'states': {'c': progress.HandlerState(started=ago(10), purpose='create', retries=1)},
        'logs': ['Creation is superseded by updating: 0 succeeded; 0 failed; 1 left to the moment.'],
        'purged': ['c'], 'selected': ['u']},
    'a partly finished creation by an update': {
        'handlers': [{'on': 'create', 'id': 'a'}, {'on': 'create', 'id': 'b'}, {'on': 'create', 'id': 'z'}, UPDATE],
        'states': {'a': progress.HandlerState(started=ago(10), stopped=ago(9), purpose='create', retries=1,
                                              success=True),
                   'b': progress.HandlerState(started=ago(10), stopped=ago(9), purpose='create', retries=1,
                                              failure=True),
                   'z': progress.HandlerState(started=ago(10), purpose='create', retries=1)},
        'logs': ['Creation is superseded by updating: 1 succeeded; 1 failed; 1 left to the moment.'],
        'purged': ['a', 'b', 'z'], 'selected': ['u']},
    'an unfinished update by another update': {
        'handlers': [CREATE, UPDATE],
        'states': {'u': progress.HandlerState(started=ago(10), purpose='update', retries=1)},
        'logs': [], 'purged': ['u'], 'selected': ['u']},
}


@pytest.mark.parametrize('name', list(SUPERSEDED))
def test_superseded(name: str) -> None:
    case = SUPERSEDED[name]
    rctx = make_rctx(case['handlers'])
    body = with_diffbase(rctx, make_body(spec={'x': 1}), of=make_body(spec={'x': 0}))
    body = with_progress(rctx, body, **case['states'])
    plan = decide(rctx, body)
    assert plan.cause is not None and plan.cause.reason == Reason.UPDATE
    assert messages(plan.logs, logging.INFO) == case['logs']
    assert plan.handling is not None and ids(plan.handling.selected) == case['selected']
    settlement = settle(plan, changing={'u': success()})
    assert messages(settlement.logs, logging.INFO) == ["Handler 'u' succeeded.",
                                                       'Updating is processed: 1 succeeded; 0 failed.']
    expected = {f'kopf.zalando.org/{key}': None for key in case['purged']}
    assert annotations(settlement.patch) == {**expected, DIFFBASE: '{"spec":{"x":1}}\n'}


def test_superseded_records_are_dropped_while_the_new_cause_goes_on() -> None:
    rctx = make_rctx([CREATE, UPDATE])
    body = with_diffbase(rctx, make_body(spec={'x': 1}), of=make_body(spec={'x': 0}))
    body = with_progress(rctx, body, c=progress.HandlerState(started=ago(10), purpose='create', retries=1))
    plan = decide(rctx, body)
    settlement = settle(plan, changing={'u': retry(5)})
    assert annotations(settlement.patch)['kopf.zalando.org/c'] is None
    assert progress_of(settlement.patch, 'u')['purpose'] == 'update'
    assert settlement.wakeup == 5


# -- the debug logs of a cause in progress (only if logged: the body's repr is costly) ---------------

@pytest.mark.parametrize('logger, expected', [
    (LOGGER, []),
    (DEBUG_LOGGER, ['in progress', 'diff']),
])
def test_progress_debug_logs(logger: logging.Logger, expected: list[str]) -> None:
    rctx = make_rctx([UPDATE])
    body = with_diffbase(rctx, make_body(spec={'x': 1}), of=make_body(spec={'x': 0}))
    plan = decide(rctx, body, logger=logger)
    debug = messages(plan.logs, logging.DEBUG)
    assert len(debug) == len(expected)
    if expected:
        assert debug[0] == f'Updating is in progress: {body!r}'
        assert plan.cause is not None
        assert [tuple(item) for item in plan.cause.diff] == [('change', ('spec', 'x'), 0, 1)]
        assert debug[1] == "Updating diff: (('change', ('spec', 'x'), 0, 1),)"  # as upstream prints it


def test_no_diff_log_without_a_diff() -> None:
    rctx = make_rctx([RESUME])
    body = with_diffbase(rctx, make_body())
    plan = decide(rctx, body, initial=True, logger=DEBUG_LOGGER)
    assert plan.cause is not None and plan.cause.reason == Reason.RESUME and not plan.cause.diff
    assert messages(plan.logs, logging.DEBUG) == [f'Resuming is in progress: {body!r}']


def test_no_progress_logs_without_handlers() -> None:
    rctx = make_rctx([UPDATE])
    plan = decide(rctx, make_body(), logger=DEBUG_LOGGER)
    assert plan.logs == ()


# -- settle() never changes the plan's patch ---------------------------------------------------------

IMMUTABILITY: dict[str, dict[str, Any]] = {
    'finalizer added': {'handlers': [CREATE, DELETE], 'body': {}, 'outcomes': {}},
    'finalizer removed, created': {'handlers': [CREATE], 'body': {'finalizers': [F]},
                                   'outcomes': {'c': success({'y': 2})}},
    'retry': {'handlers': [CREATE], 'body': {}, 'outcomes': {'c': retry(5)}},
    'failure': {'handlers': [CREATE], 'body': {}, 'outcomes': {'c': failure()}},
    'deletion': {'handlers': [CREATE, DELETE], 'body': {'finalizers': [F], 'deleting': True, 'diffbase': True},
                 'outcomes': {'d': success({'y': 2})}},
    'noop with stale records': {'handlers': [CREATE, UPDATE], 'body': {'diffbase': True, 'stale': True},
                                'outcomes': {}},
    'stealth': {'handlers': [LABELLED_CREATE], 'body': {'finalizers': [F]}, 'outcomes': {}},
    'gone': {'handlers': [OPTIONAL_DELETE], 'body': {}, 'event': 'DELETED', 'outcomes': {'d': success({'y': 2})}},
}


@pytest.mark.parametrize('name', list(IMMUTABILITY))
def test_settle_never_mutates_the_plan_patch(name: str) -> None:
    case = IMMUTABILITY[name]
    rctx = make_rctx([EVENT, *case['handlers']])
    options = dict(case['body'])
    diffbase, stale = options.pop('diffbase', False), options.pop('stale', False)
    body = make_body(**options)
    if diffbase:
        body = with_diffbase(rctx, body)
    if stale:
        body = with_progress(rctx, body, u=progress.HandlerState(started=ago(10), purpose='update', retries=1))
    plan = decide(rctx, body, case.get('event', 'MODIFIED'))
    # what handlers wrote while they ran, in the nested dicts that settle() also writes to:
    plan.patch['status'] = {'c': {'x': 1}, 'd': {'x': 1}, 'e': {'x': 1}}
    plan.patch['metadata'] = {'annotations': {'mine': 'yes'}, 'labels': {'l': 'v'}}
    plan.patch.fns.append(lambda b: None)
    before, fns = copy.deepcopy(dict(plan.patch)), list(plan.patch.fns)
    settlement = plans.settle(plan, plans.Outcomes(watching={'e': success({'w': 1})}, changing=case['outcomes']),
                              now=NOW)
    assert dict(plan.patch) == before
    assert plan.patch.fns == fns
    assert settlement.patch is not plan.patch
    assert settlement.patch.fns is not plan.patch.fns or settlement.patch.fns == fns
    assert settlement.patch['status']['e'] == {'x': 1, 'w': 1}
    assert settlement.patch['metadata']['annotations']['mine'] == 'yes'
    # settling twice gives the same: nothing of the first one leaked into the plan
    again = plans.settle(plan, plans.Outcomes(watching={'e': success({'w': 1})}, changing=case['outcomes']), now=NOW)
    assert dict(again.patch) == dict(settlement.patch)
    assert again.patch.fns == settlement.patch.fns


# -- sub-handlers' records at any depth --------------------------------------------------------------

NESTED = {  # each record lists only its direct children: the purge follows them down
    'u': progress.HandlerState(started=ago(10), purpose='update', retries=1, subrefs=('u.a',)),
    'u.a': progress.HandlerState(started=ago(10), purpose='update', retries=1, subrefs=('u.a.b',)),
    'u.a.b': progress.HandlerState(started=ago(10), delayed=later(60), purpose='update', retries=1),
}


def test_noop_purges_stale_sub_handlers_at_any_depth() -> None:
    rctx = make_rctx([UPDATE])
    body = with_progress(rctx, with_diffbase(rctx, make_body()), **NESTED)
    plan = decide(rctx, body)
    assert plan.skip is Skip.NOOP and plan.stale is not None and sorted(plan.stale) == ['u']
    settlement = settle(plan)
    assert annotations(settlement.patch) == {f'kopf.zalando.org/{key}': None for key in NESTED}


def test_done_purges_sub_handlers_at_any_depth() -> None:
    rctx = make_rctx([UPDATE])
    body = with_diffbase(rctx, make_body(spec={'x': 1}), of=make_body(spec={'x': 0}))
    body = with_progress(rctx, body, **NESTED)
    plan = decide(rctx, body)
    assert plan.handling is not None and ids(plan.handling.selected) == ['u']
    settlement = settle(plan, changing={'u': success()})
    assert annotations(settlement.patch) == {**{f'kopf.zalando.org/{key}': None for key in NESTED},
                                             DIFFBASE: '{"spec":{"x":1}}\n'}


# -- known bugs ---------------------------------------------------------------------------------------

def test_last_retry_of_a_parent_with_unfinished_subhandlers_does_not_promise_a_retry() -> None:
    rctx = make_rctx([{'on': 'create', 'id': 'c', 'retries': 1}])
    plan = decide(rctx, make_body())
    settlement = settle(plan, changing={'c': retry(None, errors.HandlerChildrenRetry('children', delay=5))})
    assert settlement.handled is True and settlement.wakeup is None  # judged final: no retry comes
    assert messages(settlement.logs) == ["Handler 'c' failed temporarily but will exceed 1 retries: children",
                                         'Creation is processed: 0 succeeded; 1 failed.']
    assert not any('Will retry' in message for message in messages(settlement.logs))
