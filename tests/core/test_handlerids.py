import functools

import pytest

from kopf._core import handlerids


def plain(**_): pass


class Cls:
    def method(self, **_): pass

    @staticmethod
    def static(**_): pass

    def __call__(self, **_): pass


def outer():
    def inner(**_): pass
    return inner


@functools.wraps(plain)
def wrapper(**kwargs):
    return plain(**kwargs)


LAMBDA = lambda **_: None  # noqa: E731


@pytest.mark.parametrize('fn, expected', [
    (plain, 'plain'),
    (Cls.method, 'Cls.method'),
    (Cls().method, 'Cls.method'),
    (Cls.static, 'Cls.static'),
    (Cls(), 'Cls'),
    (outer(), 'outer.<locals>.inner'),
    (functools.partial(plain, x=1), 'plain'),
    (functools.partial(functools.partial(plain), x=1), 'plain'),
    (wrapper, 'plain'),
    (LAMBDA, f'lambda:{__file__}:{LAMBDA.__code__.co_firstlineno}'),
])
def test_callable_ids(fn, expected: str) -> None:
    assert handlerids.get_callable_id(fn) == expected


@pytest.mark.parametrize('kwargs, expected', [
    ({}, 'plain'),
    ({'id': 'explicit'}, 'explicit'),
    ({'field': ('spec', 'field')}, 'plain/spec.field'),
    ({'id': 'explicit', 'field': ('spec', 'x')}, 'explicit/spec.x'),
    ({'parent_id': 'parent'}, 'parent/plain'),
    ({'parent_id': 'parent', 'id': 'child', 'field': ('spec',)}, 'parent/child/spec'),
    ({'field': ()}, 'plain'),
])
def test_form_id(kwargs: dict, expected: str) -> None:
    assert handlerids.form_id(plain, **kwargs) == expected


@pytest.mark.parametrize('bad_id', ['', 123])
def test_bad_explicit_ids(bad_id) -> None:
    with pytest.raises(TypeError):
        handlerids.form_id(plain, id=bad_id)
