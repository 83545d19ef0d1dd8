"""Frozen dataclasses made as fast as plain ones: `@values.frozen` and `values.replace()`.

The pure layer passes frozen values (signals, effects, plans, causes, states, outcomes), dozens per
cycle. A frozen dataclass's generated `__init__` sets each field through `object.__setattr__`
(~0.1 µs a field: ~1 µs for ten fields, twice a plain dataclass's); `dataclasses.replace()` re-runs
it. `@frozen(...)` is `@dataclasses.dataclass(frozen=True, ...)` with the same fields, defaults,
factories, `kw_only`, inheritance, `__post_init__`, repr, eq and hash, and an `__init__` that fills
the instance's `__dict__` directly (the instance is as frozen afterwards). `replace()` copies the
`__dict__` and applies the changes, without re-running `__init__` (or `__post_init__`).

Classes with `InitVar` fields or an `__init__` of their own keep that one. Not for fields that are data
descriptors or slots of a base class (the `__dict__` is filled past them). `replace()` is for the
framework's own values: it does not check the names (an unknown one lands in `__dict__`), lets `init=False`
fields be overwritten, and copies cached properties as they are.
"""
import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

T = TypeVar('T')

_FACTORY = object()  # the default of a field with a default_factory: the factory is called instead


@overload
def frozen(cls: type[T], /) -> type[T]: ...


@overload
def frozen(*, kw_only: bool = False, eq: bool = True, repr: bool = True) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True, kw_only_default=False)
def frozen(cls: type[T] | None = None, /, *, kw_only: bool = False, eq: bool = True,
           repr: bool = True) -> type[T] | Callable[[type[T]], type[T]]:
    """`@dataclasses.dataclass(frozen=True)` with an `__init__` as fast as an unfrozen dataclass's."""
    def wrap(cls: type[T]) -> type[T]:
        own_init = '__init__' in cls.__dict__  # written by hand: dataclasses keep it, so do we
        made = dataclasses.dataclass(frozen=True, kw_only=kw_only, eq=eq, repr=repr)(cls)
        if not own_init:
            made.__init__ = _fast_init(made)  # type: ignore[method-assign]
        return made
    return wrap if cls is None else wrap(cls)


# The generated code's own names: dunder names that no field's parameter shadows by accident.
_SELF, _STATE, _FACTORY_NAME = '__values_self__', '__values_state__', '__values_factory__'


def _fast_init(cls: type[Any]) -> Callable[..., None]:
    fields = dataclasses.fields(cls)
    code = cls.__init__.__code__
    standard = code.co_varnames[1:code.co_argcount + code.co_kwonlyargcount]
    if sorted(standard) != sorted(f.name for f in fields if f.init):  # e.g. InitVar pseudo-fields
        return cls.__init__  # type: ignore[no-any-return]  # rare: keep the standard one
    scope: dict[str, Any] = {_FACTORY_NAME: _FACTORY}
    positional: list[str] = []
    keywords: list[str] = []
    body = [f'{_STATE} = {_SELF}.__dict__']
    for f in fields:
        name, default, factory = f.name, f'__values_default_{f.name}__', f'__values_factory_{f.name}__'
        has_default = f.default is not dataclasses.MISSING
        has_factory = f.default_factory is not dataclasses.MISSING
        scope[default], scope[factory] = f.default, f.default_factory
        if not f.init:
            if has_default or has_factory:  # else: left unset, as the standard __init__ does
                body.append(f'{_STATE}[{name!r}] = {default if has_default else factory + "()"}')
            continue
        param = f'{name}={default}' if has_default else f'{name}={_FACTORY_NAME}' if has_factory else name
        (keywords if f.kw_only else positional).append(param)
        value = f'{factory}() if {name} is {_FACTORY_NAME} else {name}' if has_factory else name
        body.append(f'{_STATE}[{name!r}] = {value}')
    if hasattr(cls, '__post_init__'):
        body.append(f'{_SELF}.__post_init__()')
    params = ', '.join([_SELF, *positional, *(['*', *keywords] if keywords else [])])
    source = f'def __init__({params}):\n' + ''.join(f'    {line}\n' for line in body)
    exec(source, scope)  # the same technique as dataclasses' own: a function made for these fields
    init: Callable[..., None] = scope['__init__']
    init.__qualname__ = f'{cls.__qualname__}.__init__'
    init.__module__ = cls.__module__
    return init


def replace(obj: T, **changes: Any) -> T:
    """`dataclasses.replace()` for `@frozen` values, without re-running `__init__` (nor `__post_init__`)."""
    new = object.__new__(type(obj))
    state = new.__dict__
    state.update(obj.__dict__)
    state.update(changes)
    return new
