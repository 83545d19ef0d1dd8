"""Matching handlers to a resource and a cause; deduplication of stacked functions."""
import logging
from collections.abc import Callable
from typing import Any

import pytest

import kopf
from kopf._core import handlers, kwargs
from kopf._core.bodies import Body
from kopf._core.causes import Activity, Reason
from kopf._core.diffs import diff as make_diff
from kopf._core.patches import Patch
from kopf._core.resources import Resource

KEX = Resource('kopf.dev', 'v1', 'kopfexamples', kind='KopfExample', singular='kopfexample', shortcuts={'kex'})
PODS = Resource('', 'v1', 'pods', kind='Pod')
LOGGER = logging.getLogger('test')
BODY = {'metadata': {'name': 'n1', 'namespace': 'ns', 'labels': {'l': 'v'}, 'annotations': {'a': 'v'}},
        'spec': {'x': 1, 'y': 'same'}}
OLD = {'spec': {'x': 0, 'y': 'same'}}
NEW = {'spec': {'x': 1, 'y': 'same'}}

Decorate = Callable[[kopf.OperatorRegistry], Any]


def fn(**_: Any) -> None:
    pass


def other(**_: Any) -> None:
    pass


def changing(reason: Reason, *, initial: bool = False, old: Any = OLD, new: Any = NEW, body: Any = BODY,
             resource: Resource = KEX) -> kwargs.ChangingCause:
    return kwargs.ChangingCause(logger=LOGGER, memo=kopf.Memo(), resource=resource, body=Body(body), patch=Patch(),
                                reason=reason, initial=initial, old=old, new=new, diff=make_diff(old, new))


def resource_cause(cls: type, body: Any = BODY, resource: Resource = KEX, **extra: Any) -> Any:
    return cls(logger=LOGGER, memo=kopf.Memo(), resource=resource, body=Body(body), patch=Patch(), **extra)


CREATE = changing(Reason.CREATE, old=None)
UPDATE = changing(Reason.UPDATE)
UPDATE_INITIAL = changing(Reason.UPDATE, initial=True)
DELETE = changing(Reason.DELETE, new=OLD)
DELETE_INITIAL = changing(Reason.DELETE, new=OLD, initial=True)
RESUME = changing(Reason.RESUME, old=NEW, initial=True)
CREATE_INITIAL = changing(Reason.CREATE, old=None, initial=True)
NOT_X = {'spec': {'y': 'same'}}


def is_one(value: Any, **_: Any) -> bool:
    return value == 1


@pytest.mark.parametrize('decorator, options, cause, expected', [
    # reasons
    (kopf.on.create, {}, CREATE, True),
    (kopf.on.create, {}, UPDATE, False),
    (kopf.on.create, {}, DELETE, False),
    (kopf.on.create, {}, RESUME, False),
    (kopf.on.update, {}, UPDATE, True),
    (kopf.on.update, {}, CREATE, False),
    (kopf.on.delete, {}, DELETE, True),
    (kopf.on.delete, {'optional': True}, DELETE, True),
    (kopf.on.delete, {}, UPDATE, False),
    # resume: initial listing only, mixed into updates, never into creations, deletions only with deleted=True
    (kopf.on.resume, {}, RESUME, True),
    (kopf.on.resume, {}, UPDATE_INITIAL, True),
    (kopf.on.resume, {}, UPDATE, False),
    (kopf.on.resume, {}, CREATE_INITIAL, False),
    (kopf.on.resume, {}, DELETE_INITIAL, False),
    (kopf.on.resume, {'deleted': True}, DELETE_INITIAL, True),
    (kopf.on.resume, {'deleted': True}, DELETE, False),
    # field handlers: any cause where the field changed (appearing on creation counts)
    (kopf.on.field, {'field': 'spec.x'}, CREATE, True),
    (kopf.on.field, {'field': 'spec.x'}, UPDATE, True),
    (kopf.on.field, {'field': 'spec.y'}, UPDATE, False),
    (kopf.on.field, {'field': 'spec.x'}, RESUME, False),
    (kopf.on.field, {'field': 'spec.x'}, changing(Reason.DELETE, old=OLD, new=NEW), True),
    (kopf.on.field, {'field': 'spec.x'}, changing(Reason.CREATE, old=None, new=NOT_X), False),
    (kopf.on.update, {'field': 'spec.x'}, UPDATE, True),
    (kopf.on.update, {'field': 'spec.y'}, UPDATE, False),
    (kopf.on.create, {'field': 'spec.x'}, CREATE, True),                 # field present
    (kopf.on.create, {'field': 'spec.z'}, CREATE, False),
    # value filters: new or old
    (kopf.on.update, {'field': 'spec.x', 'value': 1}, UPDATE, True),
    (kopf.on.update, {'field': 'spec.x', 'value': 0}, UPDATE, True),
    (kopf.on.update, {'field': 'spec.x', 'value': 5}, UPDATE, False),
    (kopf.on.update, {'field': 'spec.x', 'value': is_one}, UPDATE, True),
    (kopf.on.field, {'field': 'spec.x', 'value': kopf.ABSENT}, changing(Reason.UPDATE, old=NOT_X), True),
    # old/new filters
    (kopf.on.update, {'field': 'spec.x', 'old': 0, 'new': 1}, UPDATE, True),
    (kopf.on.update, {'field': 'spec.x', 'old': 1}, UPDATE, False),
    (kopf.on.update, {'field': 'spec.x', 'new': is_one}, UPDATE, True),
    (kopf.on.field, {'field': 'spec.x', 'old': kopf.ABSENT, 'new': kopf.PRESENT}, changing(Reason.UPDATE, old=NOT_X),
     True),
    (kopf.on.field, {'field': 'spec.x', 'old': kopf.PRESENT}, changing(Reason.UPDATE, old=NOT_X), False),
    # metadata filters and `when`
    (kopf.on.update, {'labels': {'l': 'v'}}, UPDATE, True),
    (kopf.on.update, {'labels': {'l': 'other'}}, UPDATE, False),
    (kopf.on.update, {'labels': {'l': kopf.PRESENT, 'm': kopf.ABSENT}}, UPDATE, True),
    (kopf.on.update, {'labels': {'m': kopf.PRESENT}}, UPDATE, False),
    (kopf.on.update, {'annotations': {'a': 'v'}}, UPDATE, True),
    (kopf.on.update, {'annotations': {'a': kopf.not_(lambda v, **_: v == 'v')}}, UPDATE, False),
    (kopf.on.update, {'when': lambda name, **_: name == 'n1'}, UPDATE, True),
    (kopf.on.update, {'when': lambda reason, **_: reason == 'create'}, UPDATE, False),
    (kopf.on.update, {'when': lambda spec, **_: spec['x'] == 1, 'labels': {'l': 'v'}}, UPDATE, True),
    # selectors
    (kopf.on.update, {'kind': 'KopfExample'}, UPDATE, True),
    (kopf.on.update, {'plural': 'pods'}, UPDATE, False),
])
def test_changing_handlers(decorator: Any, options: dict[str, Any], cause: kwargs.ChangingCause,
                           expected: bool) -> None:
    registry = kopf.OperatorRegistry()
    args = () if 'kind' in options or 'plural' in options else ('kex',)
    decorator(*args, registry=registry, **options)(fn)
    assert [h.fn for h in registry.iter_changing_handlers(cause)] == ([fn] if expected else [])


def test_filter_callbacks_get_whole_object_kwargs_without_attempt_values() -> None:
    seen: list[dict[str, Any]] = []

    def spy(**kw: Any) -> bool:
        seen.append(kw)
        return True

    registry = kopf.OperatorRegistry()
    kopf.on.field('kex', field='spec.x', when=spy, registry=registry)(fn)
    list(registry.iter_changing_handlers(UPDATE))
    assert seen and seen[0]['old'] == OLD and seen[0]['new'] == NEW and seen[0]['name'] == 'n1'
    assert not {'param', 'retry', 'started', 'runtime', 'stopped'} & set(seen[0])


def test_dedup_of_stacked_functions() -> None:
    registry = kopf.OperatorRegistry()
    kopf.on.update('kex', registry=registry)(fn)
    kopf.on.resume('kex', registry=registry)(fn)
    kopf.on.resume('kex', registry=registry, id='again')(fn)  # another id: another handler
    kopf.on.update('kex', registry=registry)(other)
    selected = list(registry.iter_changing_handlers(UPDATE_INITIAL))
    assert [(h.fn, h.id) for h in selected] == [(fn, 'fn'), (fn, 'again'), (other, 'other')]
    assert selected[0].reason == Reason.UPDATE  # the first registration wins


def test_subhandlers_match_by_filters_only() -> None:
    registry = kopf.OperatorRegistry()
    registry.register(handlers.ChangingHandler(fn=fn, id=kopf.HandlerId('p/fn'), selector=None))
    registry.register(handlers.ChangingHandler(fn=other, id=kopf.HandlerId('p/other'), selector=None,
                                               labels={'l': 'other'}))
    registry.register(handlers.ChangingHandler(fn=other, id=kopf.HandlerId('p/x'), selector=None, field=('spec', 'y'),
                                               field_needs_change=True))
    assert [h.id for h in registry.iter_subhandlers(RESUME)] == ['p/fn']
    assert [h.id for h in registry.iter_subhandlers(CREATE)] == ['p/fn', 'p/x']


@pytest.mark.parametrize('decorator, options, body, expected', [
    (kopf.on.event, {}, BODY, True),
    (kopf.on.event, {'labels': {'l': 'v'}}, BODY, True),
    (kopf.on.event, {'labels': {'l': 'x'}}, BODY, False),
    (kopf.on.event, {'field': 'spec.x', 'value': 1}, BODY, True),
    (kopf.on.event, {'field': 'spec.x', 'value': 2}, BODY, False),
    (kopf.on.event, {'field': 'spec.z'}, BODY, False),
    (kopf.on.event, {'when': lambda body, type, **_: body['spec']['x'] == 1 and type == 'ADDED'}, BODY, True),
])
def test_watching_handlers(decorator: Any, options: dict[str, Any], body: Any, expected: bool) -> None:
    registry = kopf.OperatorRegistry()
    decorator('kex', registry=registry, **options)(fn)
    cause = resource_cause(kwargs.WatchingCause, body=body, type='ADDED', event={'type': 'ADDED', 'object': body})
    assert [h.fn for h in registry.iter_watching_handlers(cause)] == ([fn] if expected else [])


@pytest.mark.parametrize('options, expected', [
    ({}, True),
    ({'annotations': {'a': kopf.ABSENT}}, False),
    ({'field': 'spec.y', 'value': 'same'}, True),
])
def test_indexing_and_spawning_handlers(options: dict[str, Any], expected: bool) -> None:
    registry = kopf.OperatorRegistry()
    kopf.index('kex', registry=registry, **options)(fn)
    kopf.daemon('kex', registry=registry, **options)(fn)
    kopf.timer('kex', registry=registry, **options)(other)
    assert len(list(registry.iter_indexing_handlers(resource_cause(kwargs.IndexingCause)))) == int(expected)
    assert [h.fn for h in registry.iter_spawning_handlers(resource_cause(kwargs.SpawningCause))] == (
        [fn, other] if expected else [])
    assert registry.requires_finalizer(resource_cause(kwargs.SpawningCause)) is expected


@pytest.mark.parametrize('decorate, expected', [
    (lambda r: kopf.on.delete('kex', registry=r)(fn), True),
    (lambda r: kopf.on.delete('kex', registry=r, optional=True)(fn), False),
    (lambda r: kopf.on.delete('kex', registry=r, labels={'l': 'x'})(fn), False),
    (lambda r: kopf.on.delete('pods', registry=r)(fn), False),
    (lambda r: kopf.on.create('kex', registry=r)(fn), False),
    (lambda r: kopf.daemon('kex', registry=r)(fn), True),
    (lambda r: kopf.timer('kex', registry=r, when=lambda **_: False)(fn), False),
    (lambda r: kopf.on.event('kex', registry=r)(fn), False),
])
def test_requires_finalizer(decorate: Decorate, expected: bool) -> None:
    registry = kopf.OperatorRegistry()
    decorate(registry)
    assert registry.requires_finalizer(UPDATE) is expected


@pytest.mark.parametrize('decorate, expected', [
    (lambda r: kopf.on.create('kex', registry=r)(fn), True),           # the reason does not matter
    (lambda r: kopf.on.update('kex', registry=r, field='spec.x', old=5)(fn), True),  # nor do old/new
    (lambda r: kopf.on.create('kex', registry=r, labels={'l': 'x'})(fn), False),
    (lambda r: kopf.on.create('kex', registry=r, when=lambda **_: False)(fn), False),
    (lambda r: kopf.on.create('pods', registry=r)(fn), False),
    (lambda r: kopf.on.event('kex', registry=r)(fn), False),           # only change handlers count
])
def test_prematch_for_stealth_mode(decorate: Decorate, expected: bool) -> None:
    registry = kopf.OperatorRegistry()
    decorate(registry)
    assert registry.prematch(UPDATE) is expected


def test_activities_and_listings() -> None:
    registry = kopf.OperatorRegistry()
    kopf.on.startup(registry=registry)(fn)
    kopf.on.startup(registry=registry)(fn)         # stacked twice: once
    kopf.on.startup(registry=registry, id='x')(fn)
    kopf.on.cleanup(registry=registry)(other)
    kopf.on.probe(registry=registry)(other)
    kopf.on.login(registry=registry)(other)
    assert [h.id for h in registry.iter_activity_handlers(Activity.STARTUP)] == ['fn', 'x']
    assert [h.id for h in registry.iter_activity_handlers(Activity.AUTHENTICATION)] == ['other']
    assert len(registry.activities) == 6 and not registry.changing
    assert 'OperatorRegistry' in repr(registry)
    with pytest.raises(TypeError):
        registry.register(fn)  # type: ignore[type-var]


def test_listings_by_kind_and_resources() -> None:
    registry = kopf.OperatorRegistry()
    kopf.on.create('kex', registry=registry, field='spec.a')(fn)
    kopf.on.event('kex', registry=registry, field='spec.b')(fn)
    kopf.daemon('kex', registry=registry, field='status.c')(fn)
    kopf.timer('pods', registry=registry, field='spec.d')(fn)
    kopf.index('kex', registry=registry, field='spec.e')(fn)
    kopf.on.validate('kex', registry=registry)(fn)
    kopf.on.mutate('kex', registry=registry)(fn)
    assert (len(registry.changing), len(registry.watching), len(registry.spawning), len(registry.daemons),
            len(registry.timers), len(registry.indexing), len(registry.webhooks)) == (1, 1, 2, 1, 1, 1, 2)
    assert registry.get_extra_fields(KEX) == {('spec', 'a'), ('spec', 'b'), ('status', 'c')}
    assert {str(s) for s in registry.selectors} == {'kex', 'pods'}
    assert registry.has_handlers(KEX) and registry.has_handlers(PODS, handlers.TimerHandler)
    assert not registry.has_handlers(PODS, handlers.DaemonHandler)
    assert registry.kinds(PODS) == {handlers.ResourceHandler, handlers.SpawningHandler, handlers.TimerHandler}
    assert registry.kinds(KEX) >= {handlers.ChangingHandler, handlers.WatchingHandler, handlers.DaemonHandler,
                                   handlers.SpawningHandler, handlers.IndexingHandler}
    assert handlers.TimerHandler not in registry.kinds(KEX)


def test_kinds_follow_registrations() -> None:
    registry = kopf.OperatorRegistry()
    kopf.on.create('kex', registry=registry)(fn)
    assert handlers.WatchingHandler not in registry.kinds(KEX)
    kopf.on.event('kex', registry=registry)(fn)  # the cache is dropped: the new kind is seen
    assert handlers.WatchingHandler in registry.kinds(KEX) and registry.has_handlers(KEX, handlers.WatchingHandler)


@pytest.mark.parametrize('options, review, query, expected', [
    ({}, {'operation': 'CREATE'}, {}, True),
    ({}, {'operation': 'CREATE'}, {'id': 'fn'}, True),
    ({}, {'operation': 'CREATE'}, {'id': 'other'}, False),
    ({}, {'operation': 'CREATE'}, {'type': handlers.WebhookType.MUTATING}, False),
    ({'operations': ['UPDATE']}, {'operation': 'CREATE'}, {}, False),
    ({'operations': ['UPDATE']}, {'operation': 'UPDATE'}, {}, True),
    ({}, {'operation': 'CREATE', 'subresource': 'status'}, {}, False),
    ({'subresource': 'status'}, {'operation': 'CREATE', 'subresource': 'status'}, {}, True),
    ({'subresource': 'status'}, {'operation': 'CREATE'}, {}, False),
    ({'subresource': '*'}, {'operation': 'CREATE', 'subresource': 'scale'}, {}, True),
    ({'subresource': '*'}, {'operation': 'CREATE'}, {}, True),
    ({'labels': {'l': 'x'}}, {'operation': 'CREATE'}, {}, False),
])
def test_validating_webhooks(options: dict[str, Any], review: dict[str, Any], query: dict[str, Any],
                             expected: bool) -> None:
    registry = kopf.OperatorRegistry()
    kopf.on.validate('kex', registry=registry, **options)(fn)
    cause = resource_cause(kwargs.WebhookCause, **review)
    assert len(list(registry.iter_webhook_handlers(cause, **query))) == int(expected)


@pytest.mark.parametrize('operations, operation, expected', [
    (None, 'DELETE', False),             # mutating handlers skip deletions...
    (['CREATE', 'DELETE'], 'DELETE', False),
    (['DELETE'], 'DELETE', True),        # ...unless only for deletions
    (None, 'CREATE', True),
])
def test_mutating_webhooks_and_deletions(operations: Any, operation: str, expected: bool) -> None:
    registry = kopf.OperatorRegistry()
    kopf.on.mutate('kex', registry=registry, operations=operations)(fn)
    cause = resource_cause(kwargs.WebhookCause, operation=operation)
    assert len(list(registry.iter_webhook_handlers(cause))) == int(expected)


def test_requires_finalizer_excluding_finished_spawns() -> None:
    registry = kopf.OperatorRegistry()
    kopf.daemon('kex', registry=registry, id='d1')(fn)
    assert registry.requires_finalizer(UPDATE) and registry.requires_finalizer(UPDATE, excluding={'other'})
    assert not registry.requires_finalizer(UPDATE, excluding={'d1'})  # done for good: it holds nothing
    kopf.timer('kex', registry=registry, id='t1')(other)  # the cached answer is dropped
    assert registry.requires_finalizer(UPDATE, excluding={'d1'})
    assert not registry.requires_finalizer(UPDATE, excluding={'d1', 't1'})


def test_answers_follow_registrations_at_runtime() -> None:
    registry = kopf.OperatorRegistry()
    kopf.on.create('kopf.dev', 'v1', 'kopfexamples', registry=registry)(fn)
    cause = changing(Reason.CREATE)
    assert [h.fn for h in registry.iter_changing_handlers(cause)] == [fn]
    assert not registry.requires_finalizer(cause)
    assert registry.get_extra_fields(KEX) == frozenset()
    assert registry.is_unfiltered(KEX)
    kopf.on.create('kopf.dev', 'v1', 'kopfexamples', registry=registry, field='spec.x')(other)
    kopf.on.delete('kopf.dev', 'v1', 'kopfexamples', registry=registry)(other)
    assert [h.fn for h in registry.iter_changing_handlers(cause)] == [fn, other]
    assert registry.requires_finalizer(cause)
    assert registry.get_extra_fields(KEX) == frozenset({('spec', 'x')})
    assert not registry.is_unfiltered(KEX)
    assert registry.get_changing_ids(KEX) == tuple(h.id for h in registry.changing)


def test_answers_by_resource_identity() -> None:
    """Resources equal by (group, version, plural) but different in what selectors look at."""
    registry = kopf.OperatorRegistry()
    kopf.on.create('kex', registry=registry)(fn)
    shortcut = Resource('kopf.dev', 'v1', 'kopfexamples', shortcuts={'kex'})
    plain = Resource('kopf.dev', 'v1', 'kopfexamples')
    assert shortcut == plain
    assert registry.has_handlers(shortcut)
    assert not registry.has_handlers(plain)
    assert [h.fn for h in registry.iter_changing_handlers(changing(Reason.CREATE, resource=shortcut))] == [fn]
    assert list(registry.iter_changing_handlers(changing(Reason.CREATE, resource=plain))) == []
