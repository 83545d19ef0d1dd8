"""The kwargs of each handler kind: exactly those the kind gets, and indices overriding them."""
import datetime
import logging
from typing import Any

import pytest

import kopf
from kopf._core import handlers, kwargs, progress
from kopf._core.bodies import Body
from kopf._core.causes import Activity, Reason
from kopf._core.diffs import Diff
from kopf._core.diffs import diff as make_diff
from kopf._core.patches import Patch
from kopf._core.resources import Resource

LOGGER = logging.getLogger('test')
MEMO = kopf.Memo(x=1)
SETTINGS = object()
KEX = Resource('kopf.dev', 'v1', 'kopfexamples')
RAW = {'metadata': {'name': 'n1', 'namespace': 'ns', 'uid': 'u1', 'labels': {'l': 'v'}, 'annotations': {'a': 'v'}},
       'spec': {'x': {'y': 1}}, 'status': {'s': 1}}
BODY = Body(RAW)
PATCH = Patch()
OLD = {'spec': {'x': {'y': 0}}}
NEW = {'spec': {'x': {'y': 1}}}
STARTED = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
RUNTIME = datetime.timedelta(seconds=5)
ATTEMPT = {'state': progress.HandlerState(started=STARTED, retries=2), 'now': STARTED + RUNTIME}


def fn(**_: Any) -> None:
    pass


def handler_of(decorator: Any, *args: Any, **options: Any) -> handlers.BaseHandler:
    registry = kopf.OperatorRegistry()
    decorator(*args, registry=registry, param='p', **options)(fn)
    return registry.handlers[0]


RESOURCE_KW = {'resource', 'body', 'spec', 'meta', 'status', 'uid', 'name', 'namespace', 'labels', 'annotations',
               'patch'}
COMMON_KW = {'logger', 'memo'}
ATTEMPT_KW = {'param', 'retry', 'started', 'runtime'}

RESOURCE_ARGS = dict(logger=LOGGER, memo=MEMO, resource=KEX, body=BODY, patch=PATCH)
ACTIVITY = kwargs.ActivityCause(logger=LOGGER, memo=MEMO, activity=Activity.STARTUP, settings=SETTINGS)
CHANGING = kwargs.ChangingCause(**RESOURCE_ARGS, reason=Reason.UPDATE, old=OLD, new=NEW, diff=make_diff(OLD, NEW))
WATCHING = kwargs.WatchingCause(**RESOURCE_ARGS, type='MODIFIED', event={'type': 'MODIFIED', 'object': RAW})
INDEXING = kwargs.IndexingCause(**RESOURCE_ARGS)
SPAWNING = kwargs.SpawningCause(**RESOURCE_ARGS)
WEBHOOK = kwargs.WebhookCause(**RESOURCE_ARGS, dryrun=True, operation='CREATE', old=None, new=RAW)
WEBHOOK_KW = {'dryrun', 'warnings', 'userinfo', 'headers', 'sslpeer', 'subresource', 'operation', 'old', 'new', 'diff'}


@pytest.mark.parametrize('handler, cause, expected', [
    (handler_of(kopf.on.startup), ACTIVITY, COMMON_KW | ATTEMPT_KW | {'settings', 'config', 'activity'}),
    (handler_of(kopf.on.create, 'kex'), CHANGING,
     COMMON_KW | ATTEMPT_KW | RESOURCE_KW | {'reason', 'old', 'new', 'diff'}),
    (handler_of(kopf.on.field, 'kex', field='spec.x'), CHANGING,
     COMMON_KW | ATTEMPT_KW | RESOURCE_KW | {'reason', 'old', 'new', 'diff'}),
    (handler_of(kopf.on.event, 'kex'), WATCHING, COMMON_KW | ATTEMPT_KW | RESOURCE_KW | {'type', 'event'}),
    (handler_of(kopf.index, 'kex'), INDEXING, COMMON_KW | ATTEMPT_KW | RESOURCE_KW),
    (handler_of(kopf.daemon, 'kex'), SPAWNING, COMMON_KW | ATTEMPT_KW | RESOURCE_KW | {'stopped'}),
    (handler_of(kopf.timer, 'kex'), SPAWNING, COMMON_KW | ATTEMPT_KW | RESOURCE_KW | {'stopped'}),
    (handler_of(kopf.on.validate, 'kex'), WEBHOOK, COMMON_KW | ATTEMPT_KW | RESOURCE_KW | WEBHOOK_KW),
    (handler_of(kopf.on.mutate, 'kex'), WEBHOOK, COMMON_KW | ATTEMPT_KW | RESOURCE_KW | WEBHOOK_KW),
])
def test_kwargs_per_kind(handler: handlers.BaseHandler, cause: kwargs.BaseCause, expected: set[str]) -> None:
    result = kwargs.handler_kwargs(handler, cause, **ATTEMPT, stopped='flag')
    assert set(result) == expected
    assert (result['param'], result['retry'], result['started'], result['runtime']) == ('p', 2, STARTED, RUNTIME)
    assert result['logger'] is LOGGER and result['memo'] is MEMO
    assert set(kwargs.filter_kwargs(cause)) == expected - ATTEMPT_KW - {'stopped'}


def test_resource_kwargs_values() -> None:
    result = kwargs.handler_kwargs(handler_of(kopf.on.create, 'kex'), CHANGING)
    assert result['body'] is BODY and result['patch'] is PATCH and result['resource'] is KEX
    assert (result['uid'], result['name'], result['namespace']) == ('u1', 'n1', 'ns')
    assert result['spec'] == {'x': {'y': 1}} and result['status'] == {'s': 1}
    assert result['labels'] == {'l': 'v'} and result['annotations'] == {'a': 'v'}
    assert result['meta']['name'] == 'n1'
    assert result['reason'] == 'update' and result['old'] == OLD and result['new'] == NEW
    assert list(result['diff']) == [('change', ('spec', 'x', 'y'), 0, 1)]
    assert (result['retry'], result['started'], result['runtime']) == (0, None, None)


@pytest.mark.parametrize('attempt, expected', [
    ({'state': progress.HandlerState(started=STARTED, retries=3), 'now': STARTED + RUNTIME}, (3, STARTED, RUNTIME)),
    ({'state': progress.HandlerState(started=None, retries=1), 'now': STARTED}, (1, None, datetime.timedelta(0))),
    ({'now': STARTED}, (0, STARTED, datetime.timedelta(0))),   # a first attempt, started now
    ({}, (0, None, None)),                                      # untimed: admission reviews
])
def test_the_attempt_values_from_the_state(attempt: dict[str, Any], expected: tuple[Any, ...]) -> None:
    result = kwargs.handler_kwargs(handler_of(kopf.on.create, 'kex'), CHANGING, **attempt)
    assert (result['retry'], result['started'], result['runtime']) == expected


def test_missing_metadata_gives_nones_and_empty_views() -> None:
    cause = kwargs.SpawningCause(logger=LOGGER, memo=MEMO, resource=KEX, body=Body({}), patch=PATCH)
    result = kwargs.handler_kwargs(handler_of(kopf.daemon, 'kex'), cause)
    assert (result['uid'], result['name'], result['namespace']) == (None, None, None)
    assert dict(result['labels']) == {} and dict(result['spec']) == {} and dict(result['status']) == {}


def test_field_handlers_get_narrowed_old_new_diff() -> None:
    result = kwargs.handler_kwargs(handler_of(kopf.on.field, 'kex', field='spec.x'), CHANGING)
    assert result['old'] == {'y': 0} and result['new'] == {'y': 1}
    assert list(result['diff']) == [('change', ('y',), 0, 1)]
    assert isinstance(result['diff'], Diff)
    assert kwargs.filter_kwargs(CHANGING)['old'] == OLD  # filters see whole objects


def test_field_handlers_on_creation() -> None:
    cause = kwargs.ChangingCause(**RESOURCE_ARGS, reason=Reason.CREATE, old=None, new=NEW, diff=make_diff(None, NEW))
    result = kwargs.handler_kwargs(handler_of(kopf.on.field, 'kex', field='spec.x.y'), cause)
    assert (result['old'], result['new']) == (None, 1)
    assert list(result['diff']) == [('add', (), None, 1)]


def test_activities_get_settings_and_config() -> None:
    result = kwargs.handler_kwargs(handler_of(kopf.on.startup), ACTIVITY)
    assert result['settings'] is SETTINGS and result['config'] is SETTINGS
    assert result['activity'] == 'startup'


def test_indices_override_builtin_kwargs() -> None:
    cause = kwargs.WatchingCause(**RESOURCE_ARGS, type=None, event={}, indices={'name': 'idx1', 'by_ns': {'a': 1}})
    result = kwargs.handler_kwargs(handler_of(kopf.on.event, 'kex'), cause)
    assert result['name'] == 'idx1' and result['by_ns'] == {'a': 1}
    assert kwargs.filter_kwargs(cause)['name'] == 'idx1'


def test_webhook_kwargs_values() -> None:
    result = kwargs.handler_kwargs(handler_of(kopf.on.mutate, 'kex'), WEBHOOK)
    assert result['dryrun'] is True and result['operation'] == 'CREATE'
    assert result['warnings'] == [] and result['userinfo'] == {} and result['headers'] == {}
    assert result['sslpeer'] == {} and result['subresource'] is None
    assert result['old'] is None and result['new'] == RAW
