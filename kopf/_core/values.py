"""The pure layer's values: `@values.frozen` and `values.replace()`.

The pure layer passes values (signals, effects, plans, causes, states, outcomes), dozens per cycle,
and reads their fields hundreds of times. `@frozen` makes them frozen for the type checker
(`mypy --strict` refuses an assignment to a field: `dataclass_transform(frozen_default=True)`; not a
`del` or a `setattr()`) and, at run time, plain dataclasses with a hash (`unsafe_hash`, unless the class
has a `__hash__` of its own): same fields, defaults, factories, `kw_only`, inheritance, `__post_init__`,
repr, eq and hash as `@dataclasses.dataclass(frozen=True)`. A subclass of a standard frozen dataclass is
frozen at run time too (dataclasses refuse a non-frozen one); the other way round, a standard frozen
dataclass cannot subclass a `@frozen` one (these are the framework's own values: none does).

Why not frozen at run time as well: a frozen dataclass's `__init__` sets each field through
`object.__setattr__`, and the ways around that (filling the instance's `__dict__`) turn off CPython's
inline attribute values, so that every later read of a field goes through a dict. Either costs more
instructions per lifecycle than the check is worth (the figures: docs/design/decisions.md #15).

The test suite turns the run-time freezing on (`KOPF_STRICT_VALUES=1`, set by tests/conftest.py before
kopf is imported): there, `@frozen` is `@dataclasses.dataclass(frozen=True)` itself, so that a value
changed in place where the type checker cannot see it (through `Any`, `setattr()`) fails a test.

`replace(obj, **changes)` is `dataclasses.replace()` made for these classes: a new instance with each
field copied and the changes set, by a function made for the class (no per-field `getattr()` loop, no
`__init__`: `__post_init__` does not run again, and `init=False` fields may be replaced too); an unknown
name is a TypeError.
"""
import dataclasses
import os
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

T = TypeVar('T')

STRICT = os.environ.get('KOPF_STRICT_VALUES', '') not in ('', '0')  # read once, when kopf is imported


@overload
def frozen(cls: type[T], /) -> type[T]: ...


@overload
def frozen(*, kw_only: bool = False, eq: bool = True, repr: bool = True) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True, kw_only_default=False)
def frozen(cls: type[T] | None = None, /, *, kw_only: bool = False, eq: bool = True,
           repr: bool = True) -> type[T] | Callable[[type[T]], type[T]]:
    """A dataclass frozen for the type checker (and at run time too where `STRICT`): see the module's docstring."""
    def wrap(cls: type[T]) -> type[T]:
        if STRICT or _frozen_base(cls):  # dataclasses refuse a non-frozen child of a frozen one
            return dataclasses.dataclass(frozen=True, kw_only=kw_only, eq=eq, repr=repr)(cls)
        hashed = eq and '__hash__' not in cls.__dict__  # a `__hash__` of its own is kept, as frozen dataclasses do
        return dataclasses.dataclass(kw_only=kw_only, eq=eq, repr=repr, unsafe_hash=hashed)(cls)
    return wrap if cls is None else wrap(cls)


def _frozen_base(cls: type[Any]) -> bool:
    """Whether a base is a dataclass frozen at run time (a standard one, or a `@frozen` one made STRICT)."""
    return any(getattr(getattr(base, '__dataclass_params__', None), 'frozen', False) for base in cls.__mro__[1:])


_REPLACERS: dict[type, Callable[[Any, dict[str, Any]], Any]] = {}


def replace(obj: T, /, **changes: Any) -> T:
    """`dataclasses.replace()` for `@frozen` values, without its per-field loop, `__init__` or `__post_init__`."""
    cls = type(obj)
    try:
        replacer = _REPLACERS[cls]
    except KeyError:
        replacer = _REPLACERS[cls] = _make_replacer(cls)
    new: T = replacer(obj, changes)
    return new


def _make_replacer(cls: type[Any]) -> Callable[[Any, dict[str, Any]], Any]:
    """A function made for the class's fields: a new instance, each field copied, then the changes set."""
    fields = dataclasses.fields(cls)
    names = frozenset(f.name for f in fields)
    frozen: bool = cls.__dataclass_params__.frozen  # at run time (STRICT): as its `__init__` does
    setter = '__setattr__' if frozen else 'setattr'
    lines = ['def __replace__(__obj__, __changes__):',
             '    if not __names__.issuperset(__changes__):',
             '        __unknown__(__changes__)',
             '    __new__ = __make__(__cls__)']
    for f in fields:
        name = f.name
        copy = f'__setattr__(__new__, {name!r}, __obj__.{name})' if frozen else f'__new__.{name} = __obj__.{name}'
        unset = not f.init and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        lines.append(f'    if hasattr(__obj__, {name!r}): {copy}' if unset else f'    {copy}')  # unset until set
    lines += ['    for __name, __value in __changes__.items():',
              f'        {setter}(__new__, __name, __value)',
              '    return __new__']
    scope: dict[str, Any] = {'__cls__': cls, '__names__': names, '__make__': object.__new__,
                             '__setattr__': object.__setattr__, '__unknown__': _unknown(cls, names)}
    exec('\n'.join(lines) + '\n', scope)  # the same technique as dataclasses' own: a function made for its fields
    made: Callable[[Any, dict[str, Any]], Any] = scope['__replace__']
    return made


def _unknown(cls: type[Any], names: frozenset[str]) -> Callable[[dict[str, Any]], None]:
    def unknown(changes: dict[str, Any]) -> None:
        raise TypeError(f'{cls.__qualname__} has no field to replace: {", ".join(sorted(set(changes) - names))}')
    return unknown
