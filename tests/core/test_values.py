"""`@values.frozen` behaves as `@dataclasses.dataclass(frozen=True)` but for the run-time freezing; `values.replace()`.

Every test runs in both modes: `STRICT` (the test suite's: frozen at run time too) and not (production's).
"""
import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from kopf._core import values


@pytest.fixture(autouse=True, params=[True, False], ids=['strict', 'production'])
def strict(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[bool]:
    monkeypatch.setattr(values, 'STRICT', request.param)  # read when a class is decorated
    yield request.param


def test_the_suite_runs_strict() -> None:
    import os
    assert os.environ.get('KOPF_STRICT_VALUES') == '1', 'tests/conftest.py sets it, unless the environment has it'
    from kopf._core import plans
    with pytest.raises(dataclasses.FrozenInstanceError):
        plans.Outcomes().watching = {}  # type: ignore[misc]  # kopf's own values: decorated at import


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
                                               calls: list[tuple[tuple[Any, ...], dict[str, Any]]],
                                               strict: bool) -> None:
    standard, fast = twins(body, **options)
    assert [f.name for f in dataclasses.fields(fast)] == [f.name for f in dataclasses.fields(standard)]
    for args, kwargs in calls:
        a, b = standard(*args, **kwargs), fast(*args, **kwargs)
        assert repr(a) == repr(b) and vars(a) == vars(b)
        assert b == fast(*args, **kwargs) and b != a  # equal within its class, as dataclasses compare
        if strict:
            with pytest.raises(dataclasses.FrozenInstanceError):
                b.x = 1
        name = next(f.name for f in dataclasses.fields(b) if f.init)
        assert vars(values.replace(b, **{name: 'new'})) == vars(dataclasses.replace(a, **{name: 'new'}))
        assert vars(b)[name] != 'new'  # the original is untouched
        assert values.replace(b) == b and values.replace(b) is not b


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


def test_replace_refuses_unknown_names() -> None:
    _, fast = twins({'__annotations__': {'a': int, 'b': int}, 'b': 0})
    with pytest.raises(TypeError, match=r'Value has no field to replace: c, d'):
        values.replace(fast(1), b=2, c=3, d=4)


def test_replace_does_not_run_init_or_post_init() -> None:
    seen: list[int] = []

    @values.frozen
    class Checked:
        a: int
        b: list[int] = dataclasses.field(default_factory=list)

        def __post_init__(self) -> None:
            seen.append(self.a)

    first = Checked(1)
    second = values.replace(first, a=2)
    assert second == Checked(2) and second.b is first.b and seen == [1, 2]  # the second `2`: Checked(2) above


def test_replace_keeps_the_kw_only_and_positional_fields() -> None:
    @values.frozen
    class Mixed:
        a: int
        b: int = dataclasses.field(default=0, kw_only=True)

    assert values.replace(Mixed(1, b=2), a=3) == Mixed(3, b=2)
    assert values.replace(Mixed(1, b=2), b=5) == Mixed(1, b=5)


def test_replace_copies_a_field_not_in_init_only_if_set() -> None:
    @values.frozen
    class Late:
        a: int
        b: int = dataclasses.field(init=False)

    unset = values.replace(Late(1), a=2)
    assert unset.a == 2 and not hasattr(unset, 'b')
    late = Late(1)
    object.__setattr__(late, 'b', 5)
    assert values.replace(late, a=3).b == 5


def test_an_own_hash_is_kept() -> None:
    @values.frozen
    class Hashed:
        a: int

        def __hash__(self) -> int:
            return 7

    assert hash(Hashed(1)) == 7


def test_a_child_of_a_standard_frozen_dataclass_is_frozen() -> None:
    @dataclasses.dataclass(frozen=True)
    class Base:
        a: int

    @values.frozen
    class Child(Base):
        b: int = 0

    child = Child(1, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        child.b = 3  # type: ignore[misc]
    assert values.replace(child, b=5) == Child(1, 5)


PRODUCTION = """
import importlib, pkgutil
import kopf
from kopf._core import records, values
assert not values.STRICT
names = [m.name for m in pkgutil.walk_packages(kopf.__path__, 'kopf.')]
for name in names:
    importlib.import_module(name)
done = records.Done(event={}, now=1.0)
assert not done.__dataclass_params__.frozen and values.replace(done, now=2.0).now == 2.0
print(len(names))
"""


def test_kopf_imports_and_makes_its_values_in_production_mode() -> None:
    """The suite runs STRICT; operators do not: every module imports, every `@frozen` class is made."""
    import os
    import subprocess
    import sys
    env = {**os.environ, 'KOPF_STRICT_VALUES': '0'}
    proc = subprocess.run([sys.executable, '-c', PRODUCTION], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) > 100
