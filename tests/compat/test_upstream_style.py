"""The upstream-style handler module imports and registers unchanged, and covers every decorator and option."""
import ast
import asyncio
import importlib.util
import logging
import pathlib
import sys
import types
import warnings
from collections.abc import Iterator

import pytest

import kopf
from kopf._core import handlers, registries
from kopf._core.bodies import Body
from kopf._core.causes import Reason
from kopf._core.kwargs import ChangingCause
from kopf._core.outcomes import OutcomeKind
from kopf._core.patches import Patch
from kopf._core.resources import Resource
from kopf._engine import invoking

PATH = pathlib.Path(__file__).with_name('upstream_style_handlers.py')

DECORATORS = {
    'kopf.on.startup', 'kopf.on.cleanup', 'kopf.on.login', 'kopf.on.probe', 'kopf.on.resume', 'kopf.on.create',
    'kopf.on.update', 'kopf.on.delete', 'kopf.on.field', 'kopf.on.event', 'kopf.on.index', 'kopf.on.daemon',
    'kopf.on.timer', 'kopf.on.validate', 'kopf.on.mutate', 'kopf.daemon', 'kopf.timer', 'kopf.index',
    'kopf.subhandler', 'kopf.register', 'kopf.execute', 'kopf.on.this',
}
OPTIONS = {  # every decorator option of upstream, the selector keywords, `registry`, and the old `cooldown`
    'id', 'param', 'errors', 'timeout', 'retries', 'backoff', 'labels', 'annotations', 'when', 'field', 'value',
    'old', 'new', 'deleted', 'optional', 'initial_delay', 'cancellation_backoff', 'cancellation_timeout',
    'cancellation_polling', 'interval', 'sharp', 'idle', 'operations', 'operation', 'subresource', 'persistent',
    'side_effects', 'ignore_failures', 'group', 'version', 'kind', 'plural', 'singular', 'shortcut', 'category',
    'registry', 'cooldown', 'fns',
}
NAMES = {'kopf.PRESENT', 'kopf.ABSENT', 'kopf.not_', 'kopf.all_', 'kopf.any_', 'kopf.none_', 'kopf.EVERYTHING',
         'kopf.TemporaryError', 'kopf.PermanentError', 'kopf.AdmissionError', 'kopf.HandlerRetryError',
         'kopf.HandlerFatalError', 'kopf.ErrorsMode.PERMANENT', 'kopf.OperatorRegistry', 'kopf.Memo', 'kopf.Patch'}


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f'{base}.{node.attr}'
    return None


def _kopf_calls(tree: ast.AST) -> Iterator[tuple[str, ast.Call]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name is not None and name.startswith('kopf.'):
                yield name, node


def test_the_module_covers_every_decorator_and_option() -> None:
    tree = ast.parse(PATH.read_text())
    calls = list(_kopf_calls(tree))
    used_decorators = {name for name, _ in calls} & DECORATORS
    used_options = {kw.arg for name, call in calls if name in DECORATORS for kw in call.keywords}
    used_names = {_dotted(node) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert used_decorators == DECORATORS, DECORATORS - used_decorators
    assert OPTIONS <= used_options, OPTIONS - used_options
    assert NAMES <= used_names, NAMES - used_names


@pytest.fixture
def module() -> Iterator[types.ModuleType]:
    old_registry = kopf.get_default_registry()
    kopf.set_default_registry(kopf.OperatorRegistry())
    name = '__kopf_script_0__upstream_style_handlers'
    spec = importlib.util.spec_from_file_location(name, PATH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            spec.loader.exec_module(mod)
        mod.caught_warnings = caught  # type: ignore[attr-defined]
        yield mod
    finally:
        sys.modules.pop(name, None)
        kopf.set_default_registry(old_registry)


def test_the_module_registers_unchanged(module: types.ModuleType) -> None:
    registry = kopf.get_default_registry()
    kinds = {type(h).__name__ for h in registry.handlers}
    assert kinds == {'ActivityHandler', 'ChangingHandler', 'WatchingHandler', 'IndexingHandler', 'DaemonHandler',
                     'TimerHandler', 'WebhookHandler'}
    ids = [h.id for h in registry.handlers]
    assert 'configure' in ids and 'now' in ids and 'validate-spec' in ids and 'pod-phases' in ids
    assert 'update_field/spec.field' in ids and 'field_fn/spec.field' in ids and 'field_appeared/spec.items' in ids
    assert [h.id for h in module.custom_registry.handlers] == ['update_fn']
    deprecations = [str(w.message) for w in module.caught_warnings if issubclass(w.category, DeprecationWarning)]
    assert any('cooldown' in m for m in deprecations) and any('operation' in m for m in deprecations)
    login = next(h for h in registry.activities if h.id == 'login_fn')
    assert login.backoff == 5


KEX = Resource('kopf.dev', 'v1', 'kopfexamples', kind='KopfExample', singular='kopfexample', shortcuts={'kex'})
RAW = {'metadata': {'name': 'kopf-example-1', 'namespace': 'default', 'labels': {'somelabel': 'somevalue'},
                    'annotations': {'someannotation': 'somevalue'}},
       'spec': {'field': 'value', 'items': ['item1', 'item2']}}


@pytest.mark.filterwarnings('ignore:kopf.on.this:DeprecationWarning', 'ignore:cooldown=:DeprecationWarning')
async def test_the_create_handlers_run_with_subhandlers(module: types.ModuleType) -> None:
    registry = kopf.get_default_registry()
    memo = kopf.Memo(greeting='hello')
    cause = ChangingCause(logger=logging.getLogger('kopf.objects'), memo=memo, resource=KEX, body=Body(RAW),
                          patch=Patch(), reason=Reason.CREATE, new={'spec': RAW['spec']})
    selected = list(registry.iter_changing_handlers(cause))
    assert [h.id for h in selected] == ['create_fn', 'create_labelled', 'create_filtered', 'create_with_subhandlers',
                                        'executor', 'field_fn/spec.field', 'field_appeared/spec.items']
    results = {}
    for handler in selected:
        assert isinstance(handler, handlers.ChangingHandler)
        context = registries.SubhandlingContext(parent=handler, cause=cause)
        kwargs = kopf._core.kwargs.handler_kwargs(handler, cause)
        results[handler.id] = outcome = await invoking.invoke_handler(handler, kwargs=kwargs, subhandling=context)
        subresults = [await invoking.invoke_handler(h, kwargs=kopf._core.kwargs.handler_kwargs(h, cause))
                      for h in context.registry.iter_subhandlers(cause)]
        if handler.id == 'create_with_subhandlers':
            assert outcome.subrefs == ('create_with_subhandlers/item-item1/spec.items',
                                       'create_with_subhandlers/item-item2/spec.items',
                                       'create_with_subhandlers/old-style', 'create_with_subhandlers/registered')
            assert [r.kind for r in subresults] == [OutcomeKind.SUCCESS, OutcomeKind.SUCCESS, OutcomeKind.RETRY,
                                                    OutcomeKind.FAILURE]
            assert subresults[0].result == {'item': 'item1'}
        if handler.id == 'executor':
            assert outcome.subrefs == ('executor/first', 'executor/second')
    assert results['create_fn'].result == {'message': 'hello, kopf-example-1 in default: value'}
    assert results['create_filtered'].kind is OutcomeKind.RETRY and results['create_filtered'].delay == 1
    assert memo.counter == 1


async def test_the_timer_and_probe_run(module: types.ModuleType) -> None:
    registry = kopf.get_default_registry()
    probe = next(h for h in registry.activities if h.id == 'now')
    outcome = await invoking.invoke_handler(probe, kwargs={})
    assert isinstance(outcome.result, float)
    ping = next(h for h in registry.timers if h.id == 'ping')
    outcome = await asyncio.wait_for(invoking.invoke_handler(ping, kwargs={}), timeout=5)
    assert outcome.result == {'pinged': True}
