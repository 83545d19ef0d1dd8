"""The pure rules of daemons and timers: which to start or stop (`reconcile`), and when a timer is due."""
from typing import Any

import pytest

from kopf._core.handlers import DaemonHandler, SpawningHandler, TimerHandler
from kopf._daemons.decisions import Changes, first_due, idled, is_live, next_due, on_change, reconcile
from kopf._daemons.reasons import DaemonStoppingReason

DELETED = DaemonStoppingReason.RESOURCE_DELETED
MISMATCH = DaemonStoppingReason.FILTERS_MISMATCH


def daemon(id: str, **kwargs: Any) -> DaemonHandler:
    return DaemonHandler(fn=lambda **_: None, id=id, selector=None, **kwargs)


def timer(id: str = 't', **kwargs: Any) -> TimerHandler:
    return TimerHandler(fn=lambda **_: None, id=id, selector=None, **kwargs)


def spawning(id: str) -> SpawningHandler:
    """Ids starting with 't' are timers, others daemons: `reconcile` treats both alike."""
    return timer(id, interval=1.0) if id.startswith('t') else daemon(id)


def test_changes_default_to_nothing() -> None:
    assert Changes() == Changes(start=(), stop=())


def test_spawning_handlers_require_the_finalizer() -> None:
    assert daemon('d').requires_finalizer is True
    assert timer('t').requires_finalizer is True


# The handlers matching the body now (ids, in the registry's order), the running and finished ids,
# the object's state → the ids started (in order) and the (id, reason) stopped.
RECONCILE_CASES: dict[str, dict[str, Any]] = {
    'nothing at all': {
        'matching': [], 'running': [], 'finished': [], 'has_finalizer': True, 'deleting': False,
        'start': [], 'stop': [],
    },
    'new matching ones start in their order': {
        'matching': ['d2', 't1', 'd1'], 'running': [], 'finished': [], 'has_finalizer': True, 'deleting': False,
        'start': ['d2', 't1', 'd1'], 'stop': [],
    },
    'running ones are not started twice': {
        'matching': ['d1', 'd2', 't1'], 'running': ['d1', 't1'], 'finished': [],
        'has_finalizer': True, 'deleting': False,
        'start': ['d2'], 'stop': [],
    },
    'all running and matching: no changes': {
        'matching': ['d1', 't1'], 'running': ['t1', 'd1'], 'finished': [], 'has_finalizer': True, 'deleting': False,
        'start': [], 'stop': [],
    },
    'finished ids never start': {
        'matching': ['d1', 'd2', 't1'], 'running': [], 'finished': ['d1', 't1'],
        'has_finalizer': True, 'deleting': False,
        'start': ['d2'], 'stop': [],
    },
    'finished and unmatched ids are ignored': {
        'matching': [], 'running': [], 'finished': ['d1'], 'has_finalizer': True, 'deleting': False,
        'start': [], 'stop': [],
    },
    'filter mismatch stops only the non-matching running ones, sorted': {
        'matching': ['d2'], 'running': ['t9', 'd2', 'd1'], 'finished': [], 'has_finalizer': True, 'deleting': False,
        'start': [], 'stop': [('d1', MISMATCH), ('t9', MISMATCH)],
    },
    'mismatches stop while new matching ones start': {
        'matching': ['d2', 'd3'], 'running': ['d1', 'd2'], 'finished': [], 'has_finalizer': True, 'deleting': False,
        'start': ['d3'], 'stop': [('d1', MISMATCH)],
    },
    'a mismatched one is started again when it matches again': {
        'matching': ['d1'], 'running': [], 'finished': [], 'has_finalizer': True, 'deleting': False,
        'start': ['d1'], 'stop': [],
    },
    'without our finalizer nothing starts': {
        'matching': ['d1', 't1'], 'running': [], 'finished': [], 'has_finalizer': False, 'deleting': False,
        'start': [], 'stop': [],
    },
    'without our finalizer mismatches still stop': {
        'matching': ['d1', 'd3'], 'running': ['d2', 'd1', 'd0'], 'finished': [],
        'has_finalizer': False, 'deleting': False,
        'start': [], 'stop': [('d0', MISMATCH), ('d2', MISMATCH)],
    },
    'deleting stops all running, sorted': {
        'matching': ['d1', 't1'], 'running': ['t1', 'd2', 'd1'], 'finished': [],
        'has_finalizer': True, 'deleting': True,
        'start': [], 'stop': [('d1', DELETED), ('d2', DELETED), ('t1', DELETED)],
    },
    'deleting starts nothing': {
        'matching': ['d1', 't1'], 'running': [], 'finished': [], 'has_finalizer': True, 'deleting': True,
        'start': [], 'stop': [],
    },
    'deleting without our finalizer stops all running': {
        'matching': [], 'running': ['d1'], 'finished': ['d2'], 'has_finalizer': False, 'deleting': True,
        'start': [], 'stop': [('d1', DELETED)],
    },
}


@pytest.mark.parametrize('case', RECONCILE_CASES.values(), ids=RECONCILE_CASES.keys())
def test_reconcile(case: dict[str, Any]) -> None:
    handlers = {key: spawning(key) for key in case['matching']}
    changes = reconcile(
        handlers.values(), frozenset(case['running']), frozenset(case['finished']),
        has_finalizer=case['has_finalizer'], deleting=case['deleting'],
    )
    assert [h.id for h in changes.start] == case['start']
    assert all(h is handlers[h.id] for h in changes.start)  # the very handlers, not copies
    assert changes.stop == tuple(case['stop'])
    assert isinstance(changes.start, tuple)


def test_reconcile_accepts_a_one_pass_iterable() -> None:
    handlers = [daemon('d1'), daemon('d2')]
    changes = reconcile(iter(handlers), ['d3'], [], has_finalizer=True, deleting=False)
    assert changes == Changes(start=tuple(handlers), stop=(('d3', MISMATCH),))


# Timer options, now, initial_delay, last_change → the first call's due time.
FIRST_DUE_CASES: dict[str, dict[str, Any]] = {
    'no delay: at once': {'options': {}, 'now': 100.0, 'initial_delay': None, 'last_change': 0.0, 'due': 100.0},
    'zero delay: at once': {'options': {}, 'now': 100.0, 'initial_delay': 0.0, 'last_change': 0.0, 'due': 100.0},
    'with a delay': {'options': {}, 'now': 100.0, 'initial_delay': 5.0, 'last_change': 0.0, 'due': 105.0},
    'negative delay: at once': {'options': {}, 'now': 100.0, 'initial_delay': -5.0, 'last_change': 0.0,
                                'due': 100.0},
    'interval does not matter': {'options': {'interval': 10.0, 'sharp': True}, 'now': 100.0, 'initial_delay': 3.0,
                                 'last_change': 0.0, 'due': 103.0},
    'idle postpones to last change + idle': {'options': {'idle': 30.0}, 'now': 100.0, 'initial_delay': None,
                                             'last_change': 90.0, 'due': 120.0},
    'idle postpones a delayed call': {'options': {'idle': 30.0}, 'now': 100.0, 'initial_delay': 5.0,
                                      'last_change': 90.0, 'due': 120.0},
    'idle long past: the delay wins': {'options': {'idle': 30.0}, 'now': 100.0, 'initial_delay': 5.0,
                                       'last_change': 10.0, 'due': 105.0},
    'idle exactly at the delay': {'options': {'interval': 1.0, 'idle': 10.0}, 'now': 100.0, 'initial_delay': 5.0,
                                  'last_change': 95.0, 'due': 105.0},
}


@pytest.mark.parametrize('case', FIRST_DUE_CASES.values(), ids=FIRST_DUE_CASES.keys())
def test_first_due(case: dict[str, Any]) -> None:
    handler = timer(**case['options'])
    due = first_due(handler, now=case['now'], initial_delay=case['initial_delay'], last_change=case['last_change'])
    assert due == case['due']


# Timer options, the call's start & end, its outcome, the retry delay, the last change,
# whether a change came since the call's start → the next due time (None: never again).
NEXT_DUE_CASES: dict[str, dict[str, Any]] = {
    # Failures: retried after the delay, whatever the interval.
    'failure: finished + delay': {
        'options': {'interval': 10.0}, 'started': 100.0, 'finished': 103.0, 'success': False, 'delay': 7.0,
        'last_change': 0.0, 'due': 110.0,
    },
    'failure without a delay: at once': {
        'options': {'interval': 10.0}, 'started': 100.0, 'finished': 103.0, 'success': False, 'delay': None,
        'last_change': 0.0, 'due': 103.0,
    },
    'failure with a negative delay: at once': {
        'options': {'interval': 10.0}, 'started': 100.0, 'finished': 103.0, 'success': False, 'delay': -7.0,
        'last_change': 0.0, 'due': 103.0,
    },
    'failure of a one-shot timer is still retried': {
        'options': {}, 'started': 100.0, 'finished': 103.0, 'success': False, 'delay': 2.0,
        'last_change': 0.0, 'due': 105.0,
    },
    'failure of a sharp timer ignores the grid': {
        'options': {'interval': 10.0, 'sharp': True}, 'started': 100.0, 'finished': 103.0, 'success': False,
        'delay': 1.0, 'last_change': 0.0, 'due': 104.0,
    },
    'failure, idled': {
        'options': {'idle': 30.0}, 'started': 100.0, 'finished': 103.0, 'success': False, 'delay': 1.0,
        'last_change': 95.0, 'due': 125.0,
    },
    'failure, idle long past': {
        'options': {'idle': 30.0}, 'started': 100.0, 'finished': 103.0, 'success': False, 'delay': 1.0,
        'last_change': 10.0, 'due': 104.0,
    },
    # Successes with an interval.
    'success: finished + interval': {
        'options': {'interval': 10.0}, 'started': 100.0, 'finished': 103.0, 'success': True, 'delay': None,
        'last_change': 0.0, 'due': 113.0,
    },
    'success: sharp=False is not sharp': {
        'options': {'interval': 10.0, 'sharp': False}, 'started': 100.0, 'finished': 103.0, 'success': True,
        'delay': None, 'last_change': 0.0, 'due': 113.0,
    },
    'success: the retry delay is ignored': {
        'options': {'interval': 10.0}, 'started': 100.0, 'finished': 103.0, 'success': True, 'delay': 99.0,
        'last_change': 0.0, 'due': 113.0,
    },
    'success: slow call, non-sharp': {
        'options': {'interval': 10.0}, 'started': 100.0, 'finished': 125.0, 'success': True, 'delay': None,
        'last_change': 0.0, 'due': 135.0,
    },
    'sharp: on the grid of the start': {
        'options': {'interval': 10.0, 'sharp': True}, 'started': 100.0, 'finished': 103.0, 'success': True,
        'delay': None, 'last_change': 0.0, 'due': 110.0,
    },
    'sharp: slow call, missed slots skipped': {
        'options': {'interval': 10.0, 'sharp': True}, 'started': 100.0, 'finished': 125.0, 'success': True,
        'delay': None, 'last_change': 0.0, 'due': 130.0,
    },
    'sharp: finished exactly on a grid point': {
        'options': {'interval': 10.0, 'sharp': True}, 'started': 100.0, 'finished': 110.0, 'success': True,
        'delay': None, 'last_change': 0.0, 'due': 120.0,
    },
    'sharp: instant call': {
        'options': {'interval': 10.0, 'sharp': True}, 'started': 100.0, 'finished': 100.0, 'success': True,
        'delay': None, 'last_change': 0.0, 'due': 110.0,
    },
    'sharp: clock went back (finished before started)': {
        'options': {'interval': 10.0, 'sharp': True}, 'started': 100.0, 'finished': 98.0, 'success': True,
        'delay': None, 'last_change': 0.0, 'due': 108.0,
    },
    # Successes without an interval.
    'one-shot: never again': {
        'options': {}, 'started': 100.0, 'finished': 103.0, 'success': True, 'delay': None,
        'last_change': 0.0, 'due': None,
    },
    'one-shot: a change since does not matter': {
        'options': {}, 'started': 100.0, 'finished': 103.0, 'success': True, 'delay': None,
        'last_change': 101.0, 'changed_since': True, 'due': None,
    },
    'one-shot sharp without interval: never again': {
        'options': {'sharp': True}, 'started': 100.0, 'finished': 103.0, 'success': True, 'delay': None,
        'last_change': 0.0, 'due': None,
    },
    'idle-only, no change since: waits for the next change': {
        'options': {'idle': 30.0}, 'started': 100.0, 'finished': 103.0, 'success': True, 'delay': None,
        'last_change': 50.0, 'changed_since': False, 'due': None,
    },
    'idle-only, a change since: last change + idle': {
        'options': {'idle': 30.0}, 'started': 100.0, 'finished': 103.0, 'success': True, 'delay': None,
        'last_change': 101.0, 'changed_since': True, 'due': 131.0,
    },
    'idle-only, a change since, finished later': {
        'options': {'idle': 2.0}, 'started': 100.0, 'finished': 110.0, 'success': True, 'delay': None,
        'last_change': 101.0, 'changed_since': True, 'due': 110.0,
    },
    # Successes with an interval and idle.
    'interval + idle: the grid wins': {
        'options': {'interval': 10.0, 'idle': 5.0}, 'started': 100.0, 'finished': 103.0, 'success': True,
        'delay': None, 'last_change': 50.0, 'due': 113.0,
    },
    'interval + idle: idle wins': {
        'options': {'interval': 10.0, 'idle': 30.0}, 'started': 100.0, 'finished': 103.0, 'success': True,
        'delay': None, 'last_change': 101.0, 'due': 131.0,
    },
    'interval + idle: no change since does not stop it': {
        'options': {'interval': 10.0, 'idle': 5.0}, 'started': 100.0, 'finished': 103.0, 'success': True,
        'delay': None, 'last_change': 50.0, 'changed_since': False, 'due': 113.0,
    },
    'sharp interval + idle: max(grid, last change + idle)': {
        'options': {'interval': 10.0, 'sharp': True, 'idle': 20.0}, 'started': 100.0, 'finished': 103.0,
        'success': True, 'delay': None, 'last_change': 95.0, 'due': 115.0,
    },
    'sharp interval + idle: the grid wins': {
        'options': {'interval': 10.0, 'sharp': True, 'idle': 5.0}, 'started': 100.0, 'finished': 125.0,
        'success': True, 'delay': None, 'last_change': 110.0, 'due': 130.0,
    },
}


@pytest.mark.parametrize('case', NEXT_DUE_CASES.values(), ids=NEXT_DUE_CASES.keys())
def test_next_due(case: dict[str, Any]) -> None:
    handler = timer(**case['options'])
    kwargs = {'changed_since': case['changed_since']} if 'changed_since' in case else {}
    due = next_due(handler, started=case['started'], finished=case['finished'], success=case['success'],
                   delay=case['delay'], last_change=case['last_change'], **kwargs)
    assert due == case['due']


def test_next_due_changed_since_defaults_to_false() -> None:
    handler = timer(idle=30.0)
    assert next_due(handler, started=100.0, finished=103.0, success=True, delay=None, last_change=101.0) is None


# Timer options, due time, last change → the due time postponed by idle.
IDLED_CASES: dict[str, dict[str, Any]] = {
    'no idle: unchanged': {'options': {'interval': 10.0}, 'due': 100.0, 'last_change': 99.0, 'result': 100.0},
    'idle: postponed': {'options': {'idle': 10.0}, 'due': 100.0, 'last_change': 95.0, 'result': 105.0},
    'idle: already idle long enough': {'options': {'idle': 10.0}, 'due': 100.0, 'last_change': 80.0,
                                       'result': 100.0},
    'idle: exactly idle long enough': {'options': {'idle': 10.0}, 'due': 100.0, 'last_change': 90.0,
                                       'result': 100.0},
    'zero idle: unchanged unless the change is later': {'options': {'idle': 0.0}, 'due': 100.0,
                                                        'last_change': 101.0, 'result': 101.0},
}


@pytest.mark.parametrize('case', IDLED_CASES.values(), ids=IDLED_CASES.keys())
def test_idled(case: dict[str, Any]) -> None:
    assert idled(timer(**case['options']), case['due'], last_change=case['last_change']) == case['result']


# Timer options, its due time, now (the change), whether it waits for a change → the new due time.
ON_CHANGE_CASES: dict[str, dict[str, Any]] = {
    'no idle: unchanged': {'options': {'interval': 10.0}, 'due': 105.0, 'now': 100.0, 'waiting': False,
                           'result': 105.0},
    'no idle, no due: unchanged': {'options': {}, 'due': None, 'now': 100.0, 'waiting': True, 'result': None},
    'idle: postponed to now + idle': {'options': {'interval': 10.0, 'idle': 30.0}, 'due': 105.0, 'now': 100.0,
                                      'waiting': False, 'result': 130.0},
    'idle: a later due is kept': {'options': {'interval': 60.0, 'idle': 30.0}, 'due': 150.0, 'now': 100.0,
                                  'waiting': False, 'result': 150.0},
    'idle-only with a due: postponed': {'options': {'idle': 30.0}, 'due': 105.0, 'now': 100.0, 'waiting': True,
                                        'result': 130.0},
    'idle-only waiting: now + idle': {'options': {'idle': 30.0}, 'due': None, 'now': 100.0, 'waiting': True,
                                      'result': 130.0},
    'idle-only not waiting (calling now): None': {'options': {'idle': 30.0}, 'due': None, 'now': 100.0,
                                                  'waiting': False, 'result': None},
    'interval + idle, no due, waiting: None': {'options': {'interval': 10.0, 'idle': 30.0}, 'due': None,
                                               'now': 100.0, 'waiting': True, 'result': None},
    'interval + idle, no due, not waiting: None': {'options': {'interval': 10.0, 'idle': 30.0}, 'due': None,
                                                   'now': 100.0, 'waiting': False, 'result': None},
}


@pytest.mark.parametrize('case', ON_CHANGE_CASES.values(), ids=ON_CHANGE_CASES.keys())
def test_on_change(case: dict[str, Any]) -> None:
    handler = timer(**case['options'])
    assert on_change(handler, case['due'], now=case['now'], waiting=case['waiting']) == case['result']


def rv(value: str | None) -> dict[str, Any]:
    return {'metadata': {} if value is None else {'resourceVersion': value}}


# (the new body's resourceVersion, the live one's, whether the new one is our patch's answer) → replaces it
LIVE_CASES = [
    ('5', '4', False, True),    # a newer event
    ('5', '4', True, True),     # a newer answer
    ('4', '5', False, False),   # an older event (e.g. the cycle's own body, after a newer event arrived)
    ('4', '5', True, False),
    ('5', '5', False, True),    # the echo of our patch after its answer: the watch's own body is kept
    ('5', '5', True, False),    # the answer after its echo: the echo stays
    ('10', '9', False, True),   # compared as numbers, not strings
    ('abc', '5', False, True),  # opaque: the newest one wins
    ('5', 'abc', True, True),
    (None, '5', False, True),
]


@pytest.mark.parametrize('new, seen, answer, expected', LIVE_CASES)
def test_the_live_body_is_the_newest_and_prefers_the_echo_to_the_answer(
        new: str | None, seen: str | None, answer: bool, expected: bool) -> None:
    assert is_live(rv(new), rv(seen), answer=answer) is expected
