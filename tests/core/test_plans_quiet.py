"""The quiet first sight (`plans.quiet_at_first_sight`): taken only where `decide()` + `settle()` would come to
"handled" and nothing else — no handler, no patch, no log line, no wake-up. The two ways side by side, over a
matrix of registries and bodies; no event loop, no I/O."""
import copy
import logging
from typing import Any

import pytest

import kopf
from kopf._core import essences, plans, progress, records
from tests.core.test_plans import NOW, F, make_body, make_rctx, with_diffbase, with_progress

LOGGER = logging.Logger('test-quiet', logging.DEBUG)  # debug lines would show in the logs compared
CREATE, UPDATE, DELETE = {'on': 'create', 'id': 'c'}, {'on': 'update', 'id': 'u'}, {'on': 'delete', 'id': 'd'}

REGISTRIES: dict[str, list[dict[str, Any]]] = {
    'create-update-delete': [CREATE, UPDATE, DELETE],
    'create-update': [CREATE, UPDATE],
    'optional delete': [CREATE, {'on': 'delete', 'id': 'd', 'optional': True}],
    'resume': [CREATE, {'on': 'resume', 'id': 'r'}, DELETE],
    'field handler': [CREATE, {'on': 'field', 'id': 'f', 'field': 'spec.x'}],
    'on.event': [CREATE, {'on': 'event', 'id': 'e'}],
    'labelled': [CREATE, {'on': 'update', 'id': 'u', 'labels': {'app': 'mine'}}],
    'daemon': [CREATE, {'on': 'daemon', 'id': 'dm'}],
    'timer': [CREATE, {'on': 'timer', 'id': 't', 'interval': 60}],
    'only on.event': [{'on': 'event', 'id': 'e'}],
}


def bodies(rctx: Any) -> dict[str, dict[str, Any]]:
    plain = make_body(finalizers=[F])
    running = progress.HandlerState.from_scratch(now=NOW, purpose='create')
    return {
        'handled, unchanged, finalizer': with_diffbase(rctx, plain),
        'handled, unchanged, no finalizer': with_diffbase(rctx, make_body()),
        'handled, changed since': with_diffbase(rctx, plain, of=make_body(spec={'x': 1}, finalizers=[F])),
        'never handled': plain,
        'in progress': with_progress(rctx, with_diffbase(rctx, plain), c=running),
        'being deleted': with_diffbase(rctx, make_body(finalizers=[F], deleting=True)),
        'labelled, unchanged': with_diffbase(rctx, make_body(finalizers=[F], labels={'app': 'mine'})),
    }


def cycle(rctx: Any, body: dict[str, Any], *, initial: bool, event_type: str | None) -> tuple[bool, Any, Any]:
    record = records.ObjectRecord(uid='u1', memo=kopf.Memo(), initial=initial)
    event = {'type': event_type, 'object': copy.deepcopy(body)}
    quiet = plans.quiet_at_first_sight(rctx, record, event)
    plan = plans.decide(rctx, record, event, now=NOW, fresh=True, logger=LOGGER, event_logger=lambda: LOGGER)
    return quiet, plan, plans.settle(plan, plans.Outcomes(), now=NOW)


class _OwnBuild(kopf.AnnotationsDiffBaseStorage):  # a user's storage: its essence is built and compared
    def build(self, *, body: Any, extra_fields: Any = None) -> dict[str, Any]:
        essence = super().build(body=body, extra_fields=extra_fields)
        essence.pop('status', None)
        return essence


STORAGES: dict[str, Any] = {  # the progress storage, the diff-base storage
    'default': None,
    'status': (kopf.StatusProgressStorage(), kopf.StatusDiffBaseStorage()),
    'custom prefix': (kopf.AnnotationsProgressStorage(prefix='my-op.example.com'),
                      kopf.AnnotationsDiffBaseStorage(prefix='my-op.example.com')),
    "a user's": (kopf.SmartProgressStorage(), _OwnBuild()),
}


def make_storaged_rctx(specs: list[dict[str, Any]], storages: str) -> Any:
    rctx = make_rctx(specs)
    if STORAGES[storages] is not None:
        rctx.progress_storage, rctx.diffbase_storage = STORAGES[storages]
    return rctx


@pytest.mark.parametrize('storages', list(STORAGES))
@pytest.mark.parametrize('event_type', [None, 'MODIFIED', 'DELETED'])
@pytest.mark.parametrize('initial', [True, False])
@pytest.mark.parametrize('registry', list(REGISTRIES))
def test_quiet_only_where_the_cycle_comes_to_handled_and_nothing_else(registry: str, initial: bool,
                                                                     event_type: str | None, storages: str) -> None:
    rctx = make_storaged_rctx(REGISTRIES[registry], storages)
    for name, body in bodies(rctx).items():
        quiet, plan, settlement = cycle(rctx, body, initial=initial, event_type=event_type)
        if quiet:
            invoked = plan.watching or plan.unguarded or (plan.handling is not None and plan.handling.selected)
            assert not invoked, name
            assert not settlement.patch and not plan.logs and not settlement.logs, name
            assert settlement.wakeup is None and settlement.handled and not settlement.deletion_handled, name


QUIET = [('create-update-delete', 'handled, unchanged, finalizer'),
         ('create-update', 'handled, unchanged, no finalizer'),
         ('optional delete', 'handled, unchanged, no finalizer')]


@pytest.mark.parametrize('storages', list(STORAGES))
@pytest.mark.parametrize('registry, body', QUIET)
def test_the_usual_restart_is_quiet(registry: str, body: str, storages: str) -> None:
    rctx = make_storaged_rctx(REGISTRIES[registry], storages)
    quiet, _, _ = cycle(rctx, bodies(rctx)[body], initial=True, event_type=None)
    assert quiet


@pytest.mark.parametrize('storages, built', [('default', False), ('status', False), ('custom prefix', False),
                                             ("a user's", True)])
def test_the_framework_storages_tell_it_without_the_essence_built(storages: str, built: bool,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    rctx = make_storaged_rctx(REGISTRIES['create-update-delete'], storages)
    body = bodies(rctx)['handled, unchanged, finalizer']
    calls: list[Any] = []
    original = essences.build
    monkeypatch.setattr(essences, 'build', lambda *args, **kwargs: calls.append(args) or original(*args, **kwargs))
    record = records.ObjectRecord(uid='u1', memo=kopf.Memo(), initial=True)
    assert plans.quiet_at_first_sight(rctx, record, {'type': None, 'object': body})
    assert bool(calls) is built



@pytest.mark.parametrize('registry', ['resume', 'field handler', 'on.event', 'labelled', 'daemon', 'timer',
                                      'only on.event'])
def test_not_quiet_where_something_else_may_be_due(registry: str) -> None:
    rctx = make_rctx(REGISTRIES[registry])
    for body in bodies(rctx).values():
        quiet, _, _ = cycle(rctx, body, initial=True, event_type=None)
        assert not quiet


@pytest.mark.parametrize('body', ['handled, unchanged, no finalizer', 'handled, changed since', 'never handled',
                                  'in progress', 'being deleted'])
def test_not_quiet_where_the_object_needs_something(body: str) -> None:
    rctx = make_rctx(REGISTRIES['create-update-delete'])  # requires our finalizer
    quiet, _, _ = cycle(rctx, bodies(rctx)[body], initial=True, event_type=None)
    assert not quiet


def test_not_quiet_after_the_first_sight() -> None:
    rctx = make_rctx(REGISTRIES['create-update-delete'])
    quiet, _, _ = cycle(rctx, bodies(rctx)['handled, unchanged, finalizer'], initial=False, event_type='MODIFIED')
    assert not quiet  # a NOOP: decided as usual (its debug lines)


def test_a_handler_registered_later_is_seen() -> None:
    rctx = make_rctx(REGISTRIES['create-update-delete'])
    body = bodies(rctx)['handled, unchanged, finalizer']
    assert cycle(rctx, body, initial=True, event_type=None)[0]
    kopf.on.resume('kopf.dev', 'v1', 'kopfexamples', registry=rctx.registry)(lambda **_: None)
    assert not cycle(rctx, body, initial=True, event_type=None)[0]
