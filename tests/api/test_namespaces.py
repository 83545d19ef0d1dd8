import pytest

from kopf._api import namespaces


@pytest.mark.parametrize('pattern, name, expected', [
    ('default', 'default', True),
    ('default', 'other', False),
    ('team-*', 'team-a', True),
    ('team-*', 'teams', False),
    ('!kube-*', 'kube-system', False),
    ('!kube-*', 'default', True),  # a leading negation implies `*`
    ('team-*,!team-x', 'team-a', True),
    ('team-*,!team-x', 'team-x', False),
    ('team-*,!team-x', 'other', False),
    ('!team-*,team-x', 'team-x', True),  # the last matching glob decides
    ('!team-*,team-x', 'team-y', False),
    ('!team-*,team-x', 'default', True),
    (' a , b ', 'b', True),
    ('', 'anything', False),
    ('ns-?', 'ns-1', True),
    ('ns-?', 'ns-12', False),
])
def test_match_namespace(pattern: str, name: str, expected: bool) -> None:
    assert namespaces.match_namespace(name, pattern) is expected


def test_match_any() -> None:
    assert namespaces.match_any('b', ['a', 'b'])
    assert not namespaces.match_any('c', ['a', 'b'])
    assert not namespaces.match_any('c', [])


def test_exact_names() -> None:
    assert namespaces.exact_names(['a', 'b,c']) == frozenset({'a', 'b', 'c'})
    assert namespaces.exact_names(['a', 'team-*']) is None
    assert namespaces.exact_names(['!kube-system']) is None


@pytest.mark.parametrize('patterns, names', [
    (['team-*', 'default'], {'default'}),
    (['a,b', 'c*'], {'a', 'b'}),
    (['a,!a'], set()),
    (['!x'], set()),
    (['*'], set()),
])
def test_plain_names(patterns: list[str], names: set[str]) -> None:
    assert namespaces.plain_names(patterns) == names
