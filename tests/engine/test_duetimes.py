"""The pure heap of due times: earliest wins, replace, cancel, pop_due order, lazy deletion."""
from typing import Any

import pytest

from kopf._engine.duetimes import Schedule


def make(*entries: tuple[Any, ...]) -> Schedule:
    """A schedule with (key, when[, payload[, replace]]) entries set in this order."""
    schedule = Schedule()
    for key, when, *rest in entries:
        payload = rest[0] if rest else None
        replace = rest[1] if len(rest) > 1 else False
        schedule.at(key, when, payload, replace=replace)
    return schedule


def test_empty() -> None:
    schedule = Schedule()
    assert len(schedule) == 0
    assert 'a' not in schedule
    assert schedule.when('a') is None
    assert schedule.next_at is None
    assert schedule.pop_due(1e9) == []


# (the calls in order: key, when, replace) → (the returns of `at`, when(key), the kept payload)
AT_CASES: dict[str, dict[str, Any]] = {
    'first time': {'calls': [('a', 10.0, 'p1', False)], 'returns': [True], 'when': 10.0, 'payload': 'p1'},
    'earlier wins': {'calls': [('a', 10.0, 'p1', False), ('a', 5.0, 'p2', False)],
                     'returns': [True, True], 'when': 5.0, 'payload': 'p2'},
    'later ignored': {'calls': [('a', 10.0, 'p1', False), ('a', 15.0, 'p2', False)],
                      'returns': [True, False], 'when': 10.0, 'payload': 'p1'},
    'same time, newest payload': {'calls': [('a', 10.0, 'p1', False), ('a', 10.0, 'p2', False)],
                                  'returns': [True, False], 'when': 10.0, 'payload': 'p2'},
    'replace later': {'calls': [('a', 10.0, 'p1', False), ('a', 15.0, 'p2', True)],
                      'returns': [True, True], 'when': 15.0, 'payload': 'p2'},
    'replace earlier': {'calls': [('a', 10.0, 'p1', False), ('a', 5.0, 'p2', True)],
                        'returns': [True, True], 'when': 5.0, 'payload': 'p2'},
    'replace same time': {'calls': [('a', 10.0, 'p1', False), ('a', 10.0, 'p2', True)],
                          'returns': [True, False], 'when': 10.0, 'payload': 'p2'},
    'replace first time': {'calls': [('a', 10.0, 'p1', True)], 'returns': [True], 'when': 10.0, 'payload': 'p1'},
}


@pytest.mark.parametrize('name', list(AT_CASES))
def test_at(name: str) -> None:
    case = AT_CASES[name]
    schedule = Schedule()
    returns = [schedule.at(key, when, payload, replace=replace) for key, when, payload, replace in case['calls']]
    assert returns == case['returns']
    assert schedule.when('a') == case['when']
    assert schedule.next_at == case['when']
    assert len(schedule) == 1
    assert 'a' in schedule
    assert schedule.pop_due(case['when'] - 0.001) == []
    assert schedule.pop_due(case['when']) == [('a', case['payload'])]
    assert len(schedule) == 0
    assert schedule.next_at is None
    assert schedule.pop_due(1e9) == []  # superseded entries are never returned


def test_replaced_later_is_not_popped_at_the_old_time() -> None:
    schedule = make(('a', 10.0, 'old'), ('a', 20.0, 'new', True))
    assert schedule.pop_due(10.0) == []
    assert schedule.next_at == 20.0
    assert schedule.pop_due(20.0) == [('a', 'new')]


# entries set in order → pop_due(now) → the keys popped, in order, and what remains
POP_CASES: dict[str, dict[str, Any]] = {
    'earliest first': {'entries': [('c', 30.0), ('a', 10.0), ('b', 20.0)], 'now': 100.0,
                       'popped': ['a', 'b', 'c'], 'left': []},
    'only the due ones': {'entries': [('c', 30.0), ('a', 10.0), ('b', 20.0)], 'now': 20.0,
                          'popped': ['a', 'b'], 'left': ['c']},
    'due exactly now': {'entries': [('a', 10.0)], 'now': 10.0, 'popped': ['a'], 'left': []},
    'none due': {'entries': [('a', 10.0)], 'now': 9.999, 'popped': [], 'left': ['a']},
    'ties in the order set': {'entries': [('b', 10.0), ('a', 10.0), ('c', 10.0)], 'now': 10.0,
                              'popped': ['b', 'a', 'c'], 'left': []},
    'ties and others': {'entries': [('z', 5.0), ('b', 10.0), ('y', 1.0), ('a', 10.0)], 'now': 10.0,
                        'popped': ['y', 'z', 'b', 'a'], 'left': []},
    'a moved earlier goes by its new time': {'entries': [('a', 10.0), ('b', 5.0), ('a', 1.0)], 'now': 10.0,
                                             'popped': ['a', 'b'], 'left': []},
    'a re-set tie goes after the tie': {'entries': [('a', 10.0), ('b', 10.0), ('a', 11.0, None, True),
                                                    ('a', 10.0, None, True)], 'now': 10.0,
                                        'popped': ['b', 'a'], 'left': []},
    'replaced later is left': {'entries': [('a', 10.0), ('b', 20.0), ('a', 30.0, None, True)], 'now': 25.0,
                               'popped': ['b'], 'left': ['a']},
}


@pytest.mark.parametrize('name', list(POP_CASES))
def test_pop_due(name: str) -> None:
    case = POP_CASES[name]
    schedule = make(*case['entries'])
    popped = schedule.pop_due(case['now'])
    assert [key for key, _ in popped] == case['popped']
    assert len(schedule) == len(case['left'])
    assert sorted(k for k in 'abcyz' if k in schedule) == sorted(case['left'])
    for key in case['popped']:
        assert key not in schedule
        assert schedule.when(key) is None
    assert schedule.pop_due(case['now']) == []  # popped once only


def test_pop_due_returns_the_payloads() -> None:
    schedule = make(('a', 1.0, 'pa'), ('b', 2.0, {'x': 1}), ('c', 3.0))
    assert schedule.pop_due(5.0) == [('a', 'pa'), ('b', {'x': 1}), ('c', None)]


def test_keys_can_be_any_hashable() -> None:
    schedule = make((('uid', 1), 2.0, 'tuple'), (42, 1.0, 'int'))
    assert ('uid', 1) in schedule
    assert schedule.when(42) == 1.0
    assert schedule.pop_due(3.0) == [(42, 'int'), (('uid', 1), 'tuple')]


# entries set, then cancelled keys → next_at, len, what pop_due gives
CANCEL_CASES: dict[str, dict[str, Any]] = {
    'cancel the earliest': {'entries': [('a', 10.0), ('b', 20.0)], 'cancel': ['a'], 'next_at': 20.0, 'popped': ['b']},
    'cancel the latest': {'entries': [('a', 10.0), ('b', 20.0)], 'cancel': ['b'], 'next_at': 10.0, 'popped': ['a']},
    'cancel all': {'entries': [('a', 10.0), ('b', 20.0)], 'cancel': ['a', 'b'], 'next_at': None, 'popped': []},
    'cancel twice': {'entries': [('a', 10.0), ('b', 20.0)], 'cancel': ['a', 'a'], 'next_at': 20.0, 'popped': ['b']},
    'cancel unknown': {'entries': [('a', 10.0)], 'cancel': ['zz'], 'next_at': 10.0, 'popped': ['a']},
    'cancel a moved key': {'entries': [('a', 10.0), ('a', 5.0), ('b', 7.0)], 'cancel': ['a'],
                           'next_at': 7.0, 'popped': ['b']},
    'cancel the top two': {'entries': [('a', 1.0), ('b', 2.0), ('c', 3.0)], 'cancel': ['a', 'b'],
                           'next_at': 3.0, 'popped': ['c']},
}


@pytest.mark.parametrize('name', list(CANCEL_CASES))
def test_cancel(name: str) -> None:
    case = CANCEL_CASES[name]
    schedule = make(*case['entries'])
    for key in case['cancel']:
        schedule.cancel(key)
    for key in case['cancel']:
        assert key not in schedule
        assert schedule.when(key) is None
    assert schedule.next_at == case['next_at']
    assert schedule.next_at == case['next_at']  # idempotent: stale entries were dropped
    assert len(schedule) == len(case['popped'])
    assert [key for key, _ in schedule.pop_due(1e9)] == case['popped']
    assert schedule.next_at is None


def test_cancel_then_set_again() -> None:
    schedule = make(('a', 10.0, 'old'))
    schedule.cancel('a')
    assert schedule.at('a', 20.0, 'new') is True  # no earlier time is kept after a cancel
    assert schedule.when('a') == 20.0
    assert schedule.pop_due(10.0) == []
    assert schedule.next_at == 20.0
    assert schedule.pop_due(20.0) == [('a', 'new')]


def test_cancel_then_set_again_at_the_same_time() -> None:
    schedule = make(('a', 10.0, 'old'))
    schedule.cancel('a')
    assert schedule.at('a', 10.0, 'new') is True
    assert schedule.pop_due(10.0) == [('a', 'new')]
    assert schedule.pop_due(10.0) == []


def test_lazy_deletion_keeps_stale_entries_until_the_top() -> None:
    schedule = make(('a', 1.0), ('b', 2.0), ('c', 3.0))
    schedule.cancel('b')
    schedule.at('c', 0.5)  # moved earlier: its old entry is stale
    assert len(schedule._heap) == 4  # nothing is removed eagerly
    assert len(schedule) == 2
    assert schedule.next_at == 0.5
    assert schedule.pop_due(1.0) == [('c', None), ('a', None)]
    assert schedule.next_at is None
    assert schedule._heap == []  # the stale ones are dropped when they come to the top


def test_when_and_contains_follow_the_valid_entry() -> None:
    schedule = make(('a', 10.0), ('b', 20.0))
    assert schedule.when('a') == 10.0 and schedule.when('b') == 20.0
    assert 'a' in schedule and 'b' in schedule and 'c' not in schedule
    assert len(schedule) == 2
    schedule.at('b', 5.0)
    assert schedule.when('b') == 5.0
    assert schedule.next_at == 5.0
    assert len(schedule) == 2
    assert schedule.pop_due(5.0) == [('b', None)]
    assert 'b' not in schedule and len(schedule) == 1
    assert schedule.next_at == 10.0


def test_stale_entries_are_compacted_away() -> None:
    from kopf._engine.duetimes import Schedule
    schedule = Schedule()
    for i in range(10_000):
        schedule.at('key', 1000.0 - i * 0.01)  # each earlier: the previous entry is superseded
        schedule.at(('other', i), 5000.0)
        schedule.cancel(('other', i))
    assert len(schedule) == 1
    assert len(schedule._heap) <= 2 * len(schedule) + 64 + 1
    assert schedule.pop_due(1000.0) == [('key', None)]
