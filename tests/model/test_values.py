"""`@values.frozen` behaves as `@dataclasses.dataclass(frozen=True)`, with a faster `__init__`; `values.replace()`."""
import dataclasses
from typing import Any

import pytest

from kopf._model import values


def twins(body: dict[str, Any], *, bases: tuple[type, ...] = (), kw_only: bool = False) -> tuple[type, type]:
    """The same class body as a standard frozen dataclass and as a `@values.frozen` one."""
    def make(decorate: Any) -> type:
        namespace = {k: (dataclasses.field(**v) if isinstance(v, dict) else v) for k, v in body.items()
                     if k != '__annotations__'}
        namespace['__annotations__'] = dict(body['__annotations__'])
        made: type = decorate(type('Value', bases, namespace))
        return made
    return make(dataclasses.dataclass(frozen=True, kw_only=kw_only)), make(values.frozen(kw_only=kw_only))


SHAPES: list[tuple[str, dict[str, Any], dict[str, Any], list[tuple[tuple[Any, ...], dict[str, Any]]]]] = [
    ('required only', {'__annotations__': {'a': int, 'b': str}}, {}, [((1, 'x'), {}), ((), {'a': 1, 'b': 'x'})]),
    ('defaults', {'__annotations__': {'a': int, 'b': int, 'c': Any}, 'b': 2, 'c': None}, {},
     [((1,), {}), ((1, 5), {}), ((1,), {'c': 'z'}), ((), {'a': 0, 'b': 0, 'c': 0})]),
    ('a factory', {'__annotations__': {'a': int, 'items': dict}, 'items': {'default_factory': dict}}, {},
     [((1,), {}), ((1, {'k': 'v'}), {})]),
    ('kw_only', {'__annotations__': {'a': int, 'b': int}, 'b': 3}, {'kw_only': True},
     [((), {'a': 1}), ((), {'a': 1, 'b': 4})]),
    ('a field not in init', {'__annotations__': {'a': int, 'b': list},
                             'b': {'default_factory': list, 'init': False}}, {}, [((1,), {})]),
    ('names of the generated code', {'__annotations__': {'d': int, 'self': int, 'state': int}, 'state': 0}, {},
     [((1, 2), {}), ((1, 2, 3), {})]),
]


@pytest.mark.parametrize('title, body, options, calls', SHAPES, ids=[s[0] for s in SHAPES])
def test_the_same_values_as_a_frozen_dataclass(title: str, body: dict[str, Any], options: dict[str, Any],
                                               calls: list[tuple[tuple[Any, ...], dict[str, Any]]]) -> None:
    standard, fast = twins(body, **options)
    assert [f.name for f in dataclasses.fields(fast)] == [f.name for f in dataclasses.fields(standard)]
    for args, kwargs in calls:
        a, b = standard(*args, **kwargs), fast(*args, **kwargs)
        assert repr(a) == repr(b) and vars(a) == vars(b)
        assert b == fast(*args, **kwargs) and b != a  # equal within its class, as dataclasses compare
        with pytest.raises(dataclasses.FrozenInstanceError):
            b.x = 1
        name = next(iter(vars(b)))
        assert vars(values.replace(b, **{name: 'new'})) == vars(dataclasses.replace(a, **{name: 'new'}))
        assert vars(b)[name] != 'new'  # the original is untouched


def test_the_same_errors_for_wrong_arguments() -> None:
    standard, fast = twins({'__annotations__': {'a': int, 'b': int}, 'b': 0}, kw_only=True)
    for args, kwargs in [((1,), {}), ((), {}), ((), {'a': 1, 'c': 2})]:
        with pytest.raises(TypeError):
            standard(*args, **kwargs)
        with pytest.raises(TypeError):
            fast(*args, **kwargs)


def test_factories_give_each_instance_its_own() -> None:
    _, fast = twins({'__annotations__': {'items': list}, 'items': {'default_factory': list}})
    first, second = fast(), fast()
    assert first.items == [] and first.items is not second.items


def test_hashable_when_its_fields_are() -> None:
    standard, fast = twins({'__annotations__': {'a': int, 'b': str}})
    assert hash(fast(1, 'x')) == hash(fast(1, 'x')) == hash(standard(1, 'x'))
    assert {fast(1, 'x'), fast(1, 'x')} == {fast(1, 'x')}


def test_inherited_fields_and_kw_only_bases() -> None:
    @values.frozen(kw_only=True)
    class Base:
        a: int
        b: int = 1

    @values.frozen(kw_only=True)
    class Child(Base):
        c: str = 'c'

    child = Child(a=0, c='z')
    assert vars(child) == {'a': 0, 'b': 1, 'c': 'z'} and isinstance(child, Base)
    with pytest.raises(TypeError):
        Child(0)  # type: ignore[call-arg]


def test_post_init_runs() -> None:
    seen: list[Any] = []

    @values.frozen
    class Checked:
        a: int

        def __post_init__(self) -> None:
            seen.append(self.a)
            if self.a < 0:
                raise ValueError('negative')

    assert Checked(1).a == 1 and seen == [1]
    with pytest.raises(ValueError):
        Checked(-1)


def test_init_vars_keep_the_standard_init() -> None:
    @values.frozen
    class WithInitVar:
        a: int
        b: dataclasses.InitVar[int] = 0

        def __post_init__(self, b: int) -> None:
            object.__setattr__(self, 'a', self.a + b)

    assert WithInitVar(1, 2).a == 3


def test_an_init_of_its_own_is_kept() -> None:
    @values.frozen
    class Scaled:
        x: int

        def __init__(self, x: int) -> None:
            object.__setattr__(self, 'x', x * 10)

    assert Scaled(1).x == 10
