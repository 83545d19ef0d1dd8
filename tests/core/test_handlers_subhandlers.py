"""`kopf.subhandler`, `kopf.register`, `kopf.on.this`: collected into the running change handler's sub-registry."""
import contextlib
import logging
from collections.abc import Iterator
from typing import Any

import pytest

import kopf
from kopf._core import handlers, registries
from kopf._core.bodies import Body
from kopf._core.causes import Reason
from kopf._core.kwargs import ChangingCause
from kopf._core.patches import Patch
from kopf._core.resources import Resource


def fn(**_: Any) -> None:
    pass


def sub(**_: Any) -> None:
    pass


CAUSE = ChangingCause(logger=logging.getLogger('test'), memo=kopf.Memo(), resource=Resource('kopf.dev', 'v1', 'kex'),
                      body=Body({}), patch=Patch(), reason=Reason.UPDATE)


def parent_handler(name: str, **kwargs: Any) -> handlers.BaseHandler:
    registry = kopf.OperatorRegistry()
    decorator = getattr(kopf.on, name)
    if name == 'field':
        kwargs.setdefault('field', 'spec.f')
    args = () if name in {'startup', 'cleanup', 'login', 'probe'} else ('kex',)
    decorator(*args, registry=registry, id='parent', **kwargs)(fn)
    return registry.handlers[0]


@contextlib.contextmanager
def inside(parent: handlers.BaseHandler) -> Iterator[registries.SubhandlingContext | None]:
    context = None
    if isinstance(parent, handlers.ChangingHandler):
        context = registries.SubhandlingContext(parent=parent, cause=CAUSE)
    token = registries.execution.set(registries.Execution(handler=parent, subhandling=context))
    try:
        yield context
    finally:
        registries.execution.reset(token)


@pytest.mark.parametrize('call', [
    lambda: kopf.subhandler(),
    lambda: kopf.register(sub),
])
def test_outside_any_handler_is_a_lookup_error(call: Any) -> None:
    with pytest.raises(LookupError):
        call()


@pytest.mark.parametrize('kind', ['event', 'index', 'daemon', 'timer', 'validate', 'startup'])
@pytest.mark.parametrize('call', [
    lambda: kopf.subhandler(),
    lambda: kopf.register(sub),
])
def test_inside_non_change_handlers_is_a_type_error(kind: str, call: Any) -> None:
    with inside(parent_handler(kind)), pytest.raises(TypeError):
        call()


@pytest.mark.parametrize('kind, field_needs_change', [
    ('create', None), ('update', True), ('delete', None), ('resume', None), ('field', True),
])
def test_subhandler_registers_into_the_parent(kind: str, field_needs_change: bool | None) -> None:
    parent = parent_handler(kind)
    with inside(parent) as context:
        assert context is not None
        result = kopf.subhandler(id='child', param=1, errors=kopf.ErrorsMode.PERMANENT, timeout=1, retries=2,
                                 backoff=3, labels={'a': 'b'}, annotations={'c': kopf.PRESENT},
                                 when=lambda **_: True)(sub)
        kopf.subhandler()(sub)
        kopf.subhandler(field='spec.x', value=kopf.PRESENT)(sub)
    assert result is sub
    assert [h.id for h in context.registry.handlers] == [f'{parent.id}/child', f'{parent.id}/sub',
                                                         f'{parent.id}/sub/spec.x']
    first = context.registry.changing[0]
    assert (first.param, first.errors, first.timeout, first.retries, first.backoff) == (
        1, kopf.ErrorsMode.PERMANENT, 1, 2, 3)
    assert first.labels == {'a': 'b'} and first.annotations == {'c': kopf.PRESENT}
    assert all(h.selector is None and h.reason is None for h in context.registry.changing)
    assert all(h.field_needs_change == field_needs_change for h in context.registry.changing)


@pytest.mark.parametrize('kind, ok', [
    ('create', False), ('resume', False), ('delete', False), ('update', True), ('field', True),
])
@pytest.mark.parametrize('option', ['old', 'new'])
def test_old_new_only_under_update_or_field(kind: str, ok: bool, option: str) -> None:
    with inside(parent_handler(kind)) as context:
        assert context is not None
        if ok:
            kopf.subhandler(field='spec.x', **{option: 1})(sub)
            assert getattr(context.registry.changing[0], option) == 1
        else:
            with pytest.raises(TypeError):
                kopf.subhandler(field='spec.x', **{option: 1})(sub)


def test_register_is_a_thin_wrapper() -> None:
    with inside(parent_handler('create')) as context:
        assert context is not None
        assert kopf.register(sub, id='x', param=5, when=lambda **_: True, labels={'a': 'b'}, cooldown=None) is sub
        kopf.register(sub)
        with pytest.raises(TypeError):
            kopf.register(sub, field='spec.x')  # type: ignore[call-arg]
    assert [(h.id, h.param) for h in context.registry.changing] == [('parent/x', 5), ('parent/sub', None)]


def test_old_name_this_works_with_a_warning() -> None:
    with inside(parent_handler('create')) as context:
        assert context is not None
        with pytest.warns(DeprecationWarning):
            kopf.on.this(id='old')(sub)
    assert [h.id for h in context.registry.handlers] == ['parent/old']


def test_nested_subhandlers_get_nested_ids() -> None:
    parent = parent_handler('create')
    with inside(parent) as outer:
        assert outer is not None
        kopf.subhandler(id='child')(sub)
    child = outer.registry.changing[0]
    with inside(child) as inner:
        assert inner is not None
        kopf.subhandler(id='grandchild')(sub)
    assert inner.registry.changing[0].id == 'parent/child/grandchild'
