from typing import Any

import pytest

import kopf
from kopf._core import filters
from kopf._shared import fields

MISSING = fields.MISSING


def is_a(value: Any, **_: Any) -> bool:
    return value == 'a'


def has_kw(value: Any, *, flag: bool = False, **_: Any) -> bool:
    return flag


@pytest.mark.parametrize('flt, value, kwargs, expected', [
    ('a', 'a', {}, True),
    ('a', 'b', {}, False),
    ('a', MISSING, {}, False),
    ('', '', {}, True),
    (kopf.PRESENT, 'a', {}, True),
    (kopf.PRESENT, '', {}, True),        # an empty string counts as present
    (kopf.PRESENT, None, {}, True),      # so does None: missing is distinct from None
    (kopf.PRESENT, MISSING, {}, False),
    (kopf.ABSENT, MISSING, {}, True),
    (kopf.ABSENT, 'a', {}, False),
    (kopf.ABSENT, None, {}, False),
    (is_a, 'a', {}, True),
    (is_a, 'b', {}, False),
    (is_a, MISSING, {}, False),          # callables get None for missing values
    (lambda v, **_: v is None, MISSING, {}, True),
    (has_kw, 'x', {'flag': True}, True),  # callables get the kwargs
    (has_kw, 'x', {'flag': False}, False),
    (123, 123, {}, True),
    ({'a': 1}, {'a': 1}, {}, True),
])
def test_match_value(flt: Any, value: Any, kwargs: dict, expected: bool) -> None:
    assert filters.match_value(flt, value, kwargs) is expected


@pytest.mark.parametrize('flt, actual, expected', [
    (None, {'a': 'b'}, True),
    ({}, {'a': 'b'}, True),
    ({'a': 'b'}, {'a': 'b'}, True),
    ({'a': 'b'}, {'a': 'c'}, False),
    ({'a': 'b'}, {}, False),
    ({'a': 'b'}, None, False),
    ({'a': 'b', 'c': 'd'}, {'a': 'b', 'c': 'd', 'e': 'f'}, True),
    ({'a': 'b', 'c': 'd'}, {'a': 'b'}, False),                   # AND-ed
    ({'a': kopf.PRESENT}, {'a': ''}, True),
    ({'a': kopf.ABSENT}, {'b': 'x'}, True),
    ({'a': kopf.ABSENT, 'b': kopf.PRESENT}, {'b': 'x'}, True),
    ({'a': is_a}, {'a': 'a'}, True),
    ({'a': is_a}, {'a': 'z'}, False),
])
def test_match_metadata(flt: Any, actual: Any, expected: bool) -> None:
    assert filters.match_metadata(flt, actual, {}) is expected


@pytest.mark.parametrize('name, flt, error', [
    ('labels', {'a': None}, ValueError),
    ('annotations', {'a': 'b', 'c': None}, ValueError),
    ('labels', ['a'], TypeError),
    ('labels', 'a=b', TypeError),
])
def test_check_metadata_filter_errors(name: str, flt: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        filters.check_metadata_filter(name, flt)


def test_check_metadata_filter_passes() -> None:
    assert filters.check_metadata_filter('labels', None) is None
    assert filters.check_metadata_filter('labels', {'a': kopf.PRESENT}) == {'a': kopf.PRESENT}


@pytest.mark.parametrize('when, kwargs, expected', [
    (None, {}, True),
    (lambda **kw: kw['x'] == 1, {'x': 1}, True),
    (lambda **kw: kw['x'] == 1, {'x': 2}, False),
    (lambda **_: 0, {}, False),
])
def test_match_when(when: Any, kwargs: dict, expected: bool) -> None:
    assert filters.match_when(when, kwargs) is expected


@pytest.mark.parametrize('field, value, objs, expected', [
    (None, None, [{}], True),
    (('spec', 'x'), None, [{'spec': {'x': 1}}], True),               # field without value: present
    (('spec', 'x'), None, [{'spec': {}}], False),
    (('spec', 'x'), None, [{'spec': {'x': None}}], True),            # None is present
    (('spec', 'x'), 1, [{'spec': {'x': 1}}], True),
    (('spec', 'x'), 1, [{'spec': {'x': 2}}], False),
    (('spec', 'x'), 1, [{'spec': {'x': 2}}, {'spec': {'x': 1}}], True),   # new or old
    (('spec', 'x'), kopf.ABSENT, [{'spec': {}}], True),
    (('spec', 'x'), kopf.ABSENT, [{'spec': {'x': 1}}, {}], True),    # absent in old: passes
    (('spec', 'x'), is_a, [{'spec': {'x': 'a'}}], True),
])
def test_match_field_value(field: Any, value: Any, objs: list, expected: bool) -> None:
    assert filters.match_field_value(field, value, objs, {}) is expected


@pytest.mark.parametrize('old_flt, new_flt, old, new, expected', [
    (None, None, {}, {}, True),
    ('a', None, {'x': 'a'}, {'x': 'b'}, True),
    ('a', None, {'x': 'z'}, {'x': 'b'}, False),
    (None, 'b', {'x': 'a'}, {'x': 'b'}, True),
    (None, 'b', {'x': 'a'}, {'x': 'z'}, False),
    ('a', 'b', {'x': 'a'}, {'x': 'b'}, True),
    ('a', 'b', {'x': 'a'}, {'x': 'a'}, False),
    (kopf.ABSENT, kopf.PRESENT, {}, {'x': 1}, True),
    (kopf.ABSENT, kopf.PRESENT, None, {'x': 1}, True),
    (kopf.PRESENT, kopf.ABSENT, {'x': 1}, {}, True),
    (is_a, filters.not_(is_a), {'x': 'a'}, {'x': 'b'}, True),
])
def test_match_old_new(old_flt: Any, new_flt: Any, old: Any, new: Any, expected: bool) -> None:
    assert filters.match_old_new(('x',), old_flt, new_flt, old, new, {}) is expected


@pytest.mark.parametrize('old, new, expected', [
    ({'x': 1}, {'x': 1}, False),
    ({'x': 1}, {'x': 2}, True),
    ({}, {'x': None}, True),            # appearing counts, even as None
    ({'x': None}, {}, True),
    (None, {'x': 1}, True),
    (None, None, False),
])
def test_field_changed(old: Any, new: Any, expected: bool) -> None:
    assert filters.field_changed(('x',), old, new) is expected


def true(*_: Any, **__: Any) -> bool:
    return True


def false(*_: Any, **__: Any) -> bool:
    return False


@pytest.mark.parametrize('combined, expected', [
    (kopf.not_(true), False),
    (kopf.not_(false), True),
    (kopf.all_([true, true]), True),
    (kopf.all_([true, false]), False),
    (kopf.all_([]), True),
    (kopf.any_([false, true]), True),
    (kopf.any_([false, false]), False),
    (kopf.any_([]), False),
    (kopf.none_([false, false]), True),
    (kopf.none_([false, true]), False),
    (kopf.none_([]), True),
    (kopf.all_(iter([true, kopf.not_(false)])), True),     # any iterable, consumed once
    (kopf.not_(kopf.any_([false, kopf.all_([true, false])])), True),
])
def test_combinators(combined: Any, expected: bool) -> None:
    assert combined('value', x=1) is expected   # the metadata/value form: (value, **kwargs)
    assert combined(x=1) is expected            # the `when` form: (**kwargs)


def test_combinators_pass_the_arguments_through() -> None:
    seen = []

    def spy(*args: Any, **kwargs: Any) -> bool:
        seen.append((args, kwargs))
        return True

    kopf.all_([spy])('v', a=1)
    kopf.not_(spy)(b=2)
    assert seen == [(('v',), {'a': 1}), ((), {'b': 2})]


def test_tokens() -> None:
    assert kopf.PRESENT is not kopf.ABSENT
    assert repr(kopf.PRESENT) == 'kopf.PRESENT'
    assert repr(kopf.ABSENT) == 'kopf.ABSENT'
