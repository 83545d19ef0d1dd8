"""Every decorator with every option (SPEC 1.2-1.3): accepted ones are stored, others are rejected."""
import warnings
from collections.abc import Callable
from typing import Any

import pytest

import kopf
from kopf._core import handlers
from kopf._core.causes import Activity, Reason
from kopf._core.selectors import Selector


def fn(**_: Any) -> None:
    pass


def when_fn(**_: Any) -> bool:
    return True


def delay_fn(**_: Any) -> float:
    return 1.0


IDENTITY = {'id', 'param'}
BEHAVIOUR = IDENTITY | {'errors', 'timeout', 'retries', 'backoff', 'cooldown'}
SELECTING = {'group', 'version', 'kind', 'plural', 'singular', 'shortcut', 'category', 'registry'}
FILTERS = {'labels', 'annotations', 'when', 'field', 'value'}
OLD_NEW = {'old', 'new'}
WEBHOOK = {'operation', 'operations', 'subresource', 'persistent', 'side_effects', 'ignore_failures'}

# decorator name → (decorator, positional selector args, accepted options, handler class, fixed attributes)
DECORATORS: dict[str, tuple[Callable[..., Any], tuple[Any, ...], set[str], type, dict[str, Any]]] = {
    'startup': (kopf.on.startup, (), BEHAVIOUR | {'registry'}, handlers.ActivityHandler,
                dict(activity=Activity.STARTUP, errors=kopf.ErrorsMode.TEMPORARY)),
    'cleanup': (kopf.on.cleanup, (), BEHAVIOUR | {'registry'}, handlers.ActivityHandler,
                dict(activity=Activity.CLEANUP, errors=kopf.ErrorsMode.TEMPORARY)),
    'login': (kopf.on.login, (), BEHAVIOUR | {'registry'}, handlers.ActivityHandler,
              dict(activity=Activity.AUTHENTICATION, errors=kopf.ErrorsMode.TEMPORARY)),
    'probe': (kopf.on.probe, (), BEHAVIOUR | {'registry'}, handlers.ActivityHandler,
              dict(activity=Activity.PROBE, errors=kopf.ErrorsMode.TEMPORARY)),
    'resume': (kopf.on.resume, ('kex',), BEHAVIOUR | SELECTING | FILTERS | {'deleted'}, handlers.ChangingHandler,
               dict(reason=None, initial=True, deleted=None, field_needs_change=None, requires_finalizer=False,
                    errors=kopf.ErrorsMode.TEMPORARY)),
    'create': (kopf.on.create, ('kex',), BEHAVIOUR | SELECTING | FILTERS, handlers.ChangingHandler,
               dict(reason=Reason.CREATE, initial=None, field_needs_change=None, requires_finalizer=False,
                    errors=kopf.ErrorsMode.TEMPORARY)),
    'update': (kopf.on.update, ('kex',), BEHAVIOUR | SELECTING | FILTERS | OLD_NEW, handlers.ChangingHandler,
               dict(reason=Reason.UPDATE, initial=None, field_needs_change=True, requires_finalizer=False,
                    errors=kopf.ErrorsMode.TEMPORARY)),
    'delete': (kopf.on.delete, ('kex',), BEHAVIOUR | SELECTING | FILTERS | {'optional'}, handlers.ChangingHandler,
               dict(reason=Reason.DELETE, initial=None, requires_finalizer=True, errors=kopf.ErrorsMode.TEMPORARY)),
    'field': (kopf.on.field, ('kex',), BEHAVIOUR | SELECTING | FILTERS | OLD_NEW, handlers.ChangingHandler,
              dict(reason=None, initial=None, field_needs_change=True, requires_finalizer=False,
                   errors=kopf.ErrorsMode.TEMPORARY)),
    'event': (kopf.on.event, ('kex',), IDENTITY | SELECTING | FILTERS, handlers.WatchingHandler,
              dict(errors=kopf.ErrorsMode.IGNORED, timeout=None, retries=None, backoff=None)),
    'index': (kopf.on.index, ('kex',), BEHAVIOUR | SELECTING | FILTERS, handlers.IndexingHandler,
              dict(errors=kopf.ErrorsMode.IGNORED)),
    'daemon': (kopf.on.daemon, ('kex',), BEHAVIOUR | SELECTING | FILTERS |
               {'initial_delay', 'cancellation_backoff', 'cancellation_timeout', 'cancellation_polling'},
               handlers.DaemonHandler, dict(requires_finalizer=True, errors=kopf.ErrorsMode.TEMPORARY,
                                            initial_delay=None, cancellation_backoff=None,
                                            cancellation_timeout=None, cancellation_polling=None)),
    'timer': (kopf.on.timer, ('kex',), BEHAVIOUR | SELECTING | FILTERS | {'interval', 'initial_delay', 'sharp', 'idle'},
              handlers.TimerHandler, dict(requires_finalizer=True, errors=kopf.ErrorsMode.TEMPORARY,
                                          interval=None, initial_delay=None, sharp=None, idle=None)),
    'validate': (kopf.on.validate, ('kex',), IDENTITY | SELECTING | FILTERS | WEBHOOK, handlers.WebhookHandler,
                 dict(type=handlers.WebhookType.VALIDATING, errors=kopf.ErrorsMode.PERMANENT, operations=None,
                      subresource=None, persistent=None, side_effects=None, ignore_failures=None)),
    'mutate': (kopf.on.mutate, ('kex',), IDENTITY | SELECTING | FILTERS | WEBHOOK, handlers.WebhookHandler,
               dict(type=handlers.WebhookType.MUTATING, errors=kopf.ErrorsMode.PERMANENT, operations=None)),
}

ALL_OPTIONS = sorted(set().union(*(spec[2] for spec in DECORATORS.values())))

# option → (kwargs to pass, expected handler attributes); `field` is added where a filter needs it.
SAMPLES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    'id': ({'id': 'abc'}, {'id': 'abc'}),
    'param': ({'param': {'p': 1}}, {'param': {'p': 1}}),
    'errors': ({'errors': kopf.ErrorsMode.IGNORED}, {'errors': kopf.ErrorsMode.IGNORED}),
    'timeout': ({'timeout': 1.5}, {'timeout': 1.5}),
    'retries': ({'retries': 3}, {'retries': 3}),
    'backoff': ({'backoff': 2.5}, {'backoff': 2.5}),
    'cooldown': ({'cooldown': 4}, {'backoff': 4}),
    'group': ({'group': 'kopf.dev'}, {'selector': Selector(group='kopf.dev', any_name='kex')}),
    'version': ({'version': 'v1'}, {'selector': Selector(version='v1', any_name='kex')}),
    'kind': ({'kind': 'KopfExample'}, None),        # with a positional name: ambiguous → tested separately
    'plural': ({'plural': 'kopfexamples'}, None),
    'singular': ({'singular': 'kopfexample'}, None),
    'shortcut': ({'shortcut': 'kex'}, None),
    'category': ({'category': 'all'}, None),
    'registry': ({}, {}),                           # always passed; see the helper below
    'labels': ({'labels': {'a': kopf.PRESENT}}, {'labels': {'a': kopf.PRESENT}}),
    'annotations': ({'annotations': {'b': 'c'}}, {'annotations': {'b': 'c'}}),
    'when': ({'when': when_fn}, {'when': when_fn}),
    'field': ({'field': 'spec.x'}, {'field': ('spec', 'x')}),
    'value': ({'field': 'spec.x', 'value': 'v'}, {'value': 'v', 'field': ('spec', 'x')}),
    'old': ({'field': ['spec', 'x'], 'old': 'o'}, {'old': 'o', 'new': None}),
    'new': ({'field': ('spec', 'x'), 'new': kopf.ABSENT}, {'new': kopf.ABSENT, 'old': None}),
    'deleted': ({'deleted': True}, {'deleted': True}),
    'optional': ({'optional': True}, {'requires_finalizer': False}),
    'initial_delay': ({'initial_delay': delay_fn}, {'initial_delay': delay_fn}),
    'cancellation_backoff': ({'cancellation_backoff': 1}, {'cancellation_backoff': 1}),
    'cancellation_timeout': ({'cancellation_timeout': 2}, {'cancellation_timeout': 2}),
    'cancellation_polling': ({'cancellation_polling': 3}, {'cancellation_polling': 3}),
    'interval': ({'interval': 10}, {'interval': 10}),
    'sharp': ({'sharp': True}, {'sharp': True}),
    'idle': ({'idle': 5}, {'idle': 5}),
    'operation': ({'operation': 'CREATE'}, {'operations': frozenset({'CREATE'})}),
    'operations': ({'operations': ['CREATE', 'UPDATE']}, {'operations': frozenset({'CREATE', 'UPDATE'})}),
    'subresource': ({'subresource': 'status'}, {'subresource': 'status'}),
    'persistent': ({'persistent': True}, {'persistent': True}),
    'side_effects': ({'side_effects': True}, {'side_effects': True}),
    'ignore_failures': ({'ignore_failures': True}, {'ignore_failures': True}),
}
DEPRECATED = {'cooldown', 'operation'}


def decorate(name: str, args: tuple[Any, ...] | None = None, **kwargs: Any) -> handlers.BaseHandler:
    decorator, default_args, _, _, _ = DECORATORS[name]
    registry = kopf.OperatorRegistry()
    if name == 'field':
        kwargs.setdefault('field', 'spec.f')
    result = decorator(*(default_args if args is None else args), registry=registry, **kwargs)(fn)
    assert result is fn
    assert len(registry.handlers) == 1
    return registry.handlers[0]


@pytest.mark.parametrize('name', DECORATORS)
def test_defaults(name: str) -> None:
    _, _, _, cls, fixed = DECORATORS[name]
    handler = decorate(name)
    assert type(handler) is cls
    assert handler.fn is fn
    assert handler.id == ('fn/spec.f' if name == 'field' else 'fn')
    assert handler.param is None
    for attr, value in dict(dict(timeout=None, retries=None, backoff=None), **fixed).items():
        assert getattr(handler, attr) == value, attr
    if isinstance(handler, handlers.ResourceHandler):
        assert handler.selector == Selector(any_name='kex')
        assert (handler.labels, handler.annotations, handler.when, handler.value) == (None, None, None, None)


@pytest.mark.parametrize('option', ALL_OPTIONS)
@pytest.mark.parametrize('name', DECORATORS)
def test_every_decorator_with_every_option(name: str, option: str) -> None:
    accepted = DECORATORS[name][2]
    kwargs, expected = SAMPLES[option]
    if option not in accepted:
        with pytest.raises(TypeError, match=option):
            decorate(name, **kwargs)
        return
    if expected is None:  # a selector keyword as the only name
        handler = decorate(name, args=(), **kwargs)
        assert isinstance(handler, handlers.ResourceHandler)
        assert handler.selector == Selector(**kwargs)
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        handler = decorate(name, **kwargs)
    assert any(issubclass(w.category, DeprecationWarning) for w in caught) == (option in DEPRECATED)
    for attr, value in expected.items():
        if attr == 'id' and name == 'field':
            value = 'abc/spec.f'
        assert getattr(handler, attr) == value, attr


@pytest.mark.parametrize('name, kwargs, expected_id', [
    ('create', {'field': 'spec.x'}, 'fn/spec.x'),
    ('create', {'id': 'abc', 'field': 'spec.x'}, 'abc/spec.x'),
    ('field', {'field': 'spec.x'}, 'fn/spec.x'),
    ('field', {'id': 'abc', 'field': ['spec', 'x']}, 'abc/spec.x'),
    ('daemon', {'field': 'spec.x'}, 'fn/spec.x'),
    ('event', {'field': 'spec.x'}, 'fn/spec.x'),
    ('index', {'field': 'spec.x'}, 'fn'),          # indices: no field suffix
    ('index', {'id': 'idx', 'field': 'spec.x'}, 'idx'),
])
def test_ids_with_fields(name: str, kwargs: dict[str, Any], expected_id: str) -> None:
    assert decorate(name, **kwargs).id == expected_id


@pytest.mark.parametrize('name, args, kwargs, error', [
    ('create', ('kex',), {'value': 1}, TypeError),                        # value= without field=
    ('update', ('kex',), {'old': 1}, TypeError),                          # old= without field=
    ('update', ('kex',), {'new': 1}, TypeError),
    ('update', ('kex',), {'field': 'x', 'value': 1, 'old': 2}, TypeError),  # value= with old=
    ('field', ('kex',), {'field': 'x', 'value': 1, 'new': 2}, TypeError),
    ('field', ('kex',), {'field': ''}, TypeError),                        # field= is mandatory
    ('create', ('kex',), {'labels': {'a': None}}, ValueError),
    ('create', ('kex',), {'annotations': {'a': None}}, ValueError),
    ('create', ('kex',), {'when': 'not callable'}, TypeError),
    ('create', ('kex',), {'errors': 'TEMPORARY'}, TypeError),
    ('create', ('kex',), {'timeout': -1}, TypeError),
    ('create', ('kex',), {'retries': 'many'}, TypeError),
    ('create', ('kex',), {'backoff': 1, 'cooldown': 2}, TypeError),
    ('create', ('kex',), {'id': ''}, TypeError),
    ('create', (), {}, TypeError),                                        # no selector
    ('create', ('kex',), {'kind': 'KopfExample'}, TypeError),             # two names
    ('create', ('',), {}, TypeError),                                     # empty name
    ('create', ('a', 'b', 'c'), {'version': 'v1'}, TypeError),            # version twice
    ('create', ('kex',), {'unknown': 1}, TypeError),
    ('validate', ('kex',), {'operations': []}, ValueError),
    ('validate', ('kex',), {'operations': ['BOOM']}, ValueError),
    ('validate', ('kex',), {'operations': 'CREATE'}, TypeError),
    ('mutate', ('kex',), {'operation': 'CREATE', 'operations': ['CREATE']}, TypeError),
])
def test_decoration_time_errors(name: str, args: tuple, kwargs: dict[str, Any], error: type[Exception]) -> None:
    decorator = DECORATORS[name][0]
    if name == 'field' and 'field' not in kwargs:
        kwargs['field'] = 'spec.x'
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        with pytest.raises(error):
            decorator(*args, registry=kopf.OperatorRegistry(), **kwargs)


def test_field_without_field_keyword_fails() -> None:
    with pytest.raises(TypeError):
        kopf.on.field('kex')(fn)  # type: ignore[call-arg]


def test_decorating_a_non_callable_fails() -> None:
    with pytest.raises(TypeError):
        kopf.on.create('kex', registry=kopf.OperatorRegistry())('not a function')


@pytest.mark.parametrize('alias, original', [
    (kopf.daemon, kopf.on.daemon),
    (kopf.timer, kopf.on.timer),
    (kopf.index, kopf.on.index),
])
def test_top_level_aliases(alias: Any, original: Any) -> None:
    assert alias is original


def test_stacking_returns_the_function_and_registers_each() -> None:
    registry = kopf.OperatorRegistry()

    @kopf.on.create('kex', registry=registry)
    @kopf.on.resume('kex', registry=registry)
    @kopf.on.update('kex', registry=registry, param=1)
    @kopf.on.update('kex', registry=registry, param=2, id='fn2')
    def stacked(**_: Any) -> str:
        return 'direct call'

    assert stacked() == 'direct call'
    own_id = stacked.__qualname__
    assert [h.id for h in registry.changing] == ['fn2', own_id, own_id, own_id]
    assert [h.param for h in registry.changing] == [2, 1, None, None]


def test_default_registry_is_used_and_replaceable() -> None:
    old = kopf.get_default_registry()
    new = kopf.OperatorRegistry()
    kopf.set_default_registry(new)
    try:
        kopf.on.startup()(fn)
        kopf.on.create('kex')(fn)
        assert kopf.get_default_registry() is new
        assert len(new.handlers) == 2
        assert not any(h.fn is fn for h in old.handlers)
    finally:
        kopf.set_default_registry(old)


@pytest.mark.parametrize('args, selector', [
    (('kopfexamples',), Selector(any_name='kopfexamples')),
    (('kopf.dev', 'v1', 'kopfexamples'), Selector(group='kopf.dev', version='v1', any_name='kopfexamples')),
    (('v1', 'pods'), Selector(group='', version='v1', any_name='pods')),
    ((kopf.EVERYTHING,), Selector(any_name=kopf.EVERYTHING)),
])
def test_positional_selectors(args: tuple, selector: Selector) -> None:
    handler = decorate('event', args=args)
    assert isinstance(handler, handlers.WatchingHandler)
    assert handler.selector == selector


def test_handler_titles() -> None:
    assert str(decorate('create', id='x')) == "Handler 'x'"
    assert str(decorate('startup', id='x')) == "Activity 'x'"
    assert str(decorate('daemon', id='x')) == "Daemon 'x'"
    assert str(decorate('timer', id='x')) == "Timer 'x'"
    assert str(decorate('index', id='x')) == "Indexer 'x'"
    assert str(decorate('validate', id='x')) == "Webhook 'x'"


def test_webhook_operation_property_is_deprecated() -> None:
    handler = decorate('validate', operations=['CREATE'])
    assert isinstance(handler, handlers.WebhookHandler)
    with pytest.warns(DeprecationWarning):
        assert handler.operation == 'CREATE'
