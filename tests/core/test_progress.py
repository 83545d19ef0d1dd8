"""The handler state machine over sequences of cycles, with `now` passed in."""
import dataclasses
import datetime
from typing import Any

import pytest

from kopf._core import attempts, errors, progress
from kopf._core.outcomes import Outcome, OutcomeKind
from kopf._core.progress import HandlerState, State

T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
T0S = '2026-01-01T00:00:00.000000+00:00'


def at(seconds: float) -> datetime.datetime:
    return T0 + datetime.timedelta(seconds=seconds)


@dataclasses.dataclass(frozen=True)
class Handler:
    """A stand-in with the attributes the state machine reads (as kopf._core.handlers has them)."""

    id: str
    timeout: float | None = None
    retries: int | None = None
    backoff: float | None = None
    errors: Any = None


SUCCESS = Outcome(kind=OutcomeKind.SUCCESS, result={'x': 1})
FAILURE = Outcome(kind=OutcomeKind.FAILURE, exception=errors.PermanentError('Broken.'))
TIMEOUT = Outcome(kind=OutcomeKind.TIMEOUT, exception=errors.HandlerTimeoutError('Cancelled after 5 s.'))


def temporary(delay: float | None = 60, message: str = 'Not yet.') -> Outcome:
    return Outcome(kind=OutcomeKind.RETRY, exception=errors.TemporaryError(message, delay=delay), delay=delay)


def arbitrary(message: str = 'Oops.') -> Outcome:
    return Outcome(kind=OutcomeKind.RETRY, exception=ValueError(message))


class DictStorage:
    """A minimal progress storage over a dict, to observe what the state machine stores and purges."""

    def __init__(self, records: dict[str, Any] | None = None) -> None:
        self.records: dict[str, Any] = dict(records or {})
        self.stored: list[str] = []
        self.purged: list[str] = []
        self.flushes = 0

    def fetch(self, *, key: str, body: Any) -> Any:
        return self.records.get(key)

    def fetch_all(self, *, keys: list[str], body: Any) -> dict[str, Any]:
        return {key: self.records[key] for key in keys if key in self.records}

    def store(self, *, key: str, record: Any, body: Any, patch: Any) -> None:
        self.records[key] = record
        self.stored.append(key)

    def purge(self, *, key: str, body: Any, patch: Any) -> None:
        self.records.pop(key, None)
        self.purged.append(key)

    def flush(self) -> None:
        self.flushes += 1


def run(handler: Handler, outcomes: list[tuple[float, Outcome]], *, default_backoff: float = 60) -> list[HandlerState]:
    """Feed the outcomes at the given times to one handler, going through the storage between cycles."""
    storage = DictStorage()
    states = []
    for seconds, outcome in outcomes:
        now = at(seconds)
        state = State.from_records(storage.fetch_all(keys=[handler.id], body={}))
        state = state.with_purpose('create', [handler], now=now).with_handlers([handler], now=now)
        assert state.select([handler], lifecycle=progress.all_at_once, now=now) == [handler], f'not due at {seconds}'
        pre = state.precheck(handler, now=now)
        state = state.with_outcomes({handler.id: pre or outcome}, [handler], now=now, default_backoff=default_backoff)
        state.store(body={}, patch={}, storage=storage)
        states.append(state[handler.id])
    return states


def test_success_at_first_attempt() -> None:
    [s] = run(Handler('fn'), [(0, SUCCESS)])
    assert s.as_record() == {'started': T0S, 'stopped': T0S, 'delayed': None, 'purpose': 'create', 'retries': 1,
                             'success': True, 'failure': False, 'message': None, 'subrefs': None}


def test_temporary_error_with_a_delay_then_success() -> None:
    handler = Handler('fn')
    s1, s2 = run(handler, [(0, temporary(delay=30)), (30, SUCCESS)])
    assert s1.as_record() == {'started': T0S, 'stopped': None, 'delayed': '2026-01-01T00:00:30.000000+00:00',
                              'purpose': 'create', 'retries': 1, 'success': False, 'failure': False,
                              'message': 'Not yet.', 'subrefs': None}
    state = State({'fn': s1})
    assert state.due([handler], now=at(29)) == []
    assert state.due([handler], now=at(30)) == [handler]
    assert state.delay(now=at(10)) == 20
    assert not state.done
    assert s2.success and s2.retries == 2 and s2.delayed is None and s2.message is None and s2.started == T0
    assert State({'fn': s2}).done and State({'fn': s2}).delay(now=at(30)) is None


def test_temporary_error_without_a_delay_is_due_at_once() -> None:
    [s] = run(Handler('fn'), [(0, temporary(delay=None))])
    assert s.delayed is None and not s.finished and State({'fn': s}).delay(now=T0) == 0


@pytest.mark.parametrize('backoff, default_backoff, expected', [
    (None, 60, 60),
    (None, 7, 7),
    (5, 60, 5),
])
def test_arbitrary_errors_use_the_backoff_or_the_default(backoff: Any, default_backoff: float, expected: float) -> None:
    [s] = run(Handler('fn', backoff=backoff), [(0, arbitrary())], default_backoff=default_backoff)
    assert s.delayed == at(expected) and s.message == 'Oops.'


def test_temporary_errors_ignore_the_backoff() -> None:
    [s] = run(Handler('fn', backoff=5), [(0, temporary(delay=60))])
    assert s.delayed == at(60)


def test_permanent_error_is_final() -> None:
    [s] = run(Handler('fn'), [(0, FAILURE)])
    assert s.failure and not s.success and s.stopped == T0 and s.message == 'Broken.' and s.retries == 1
    assert State({'fn': s}).done
    assert State({'fn': s}).due([Handler('fn')], now=at(1000)) == []


def test_enforced_timeout_is_final() -> None:
    [s] = run(Handler('fn', timeout=5), [(0, TIMEOUT)])
    assert s.failure and s.message == 'Cancelled after 5 s.'


def test_retries_exhausted_by_look_ahead() -> None:
    states = run(Handler('fn', retries=3), [(0, temporary(1)), (1, temporary(1)), (2, temporary(1))])
    assert [(s.retries, s.finished) for s in states] == [(1, False), (2, False), (3, True)]
    assert states[-1].failure and "failed temporarily but will exceed 3 retries: " in (states[-1].message or '')


def test_retries_one_means_no_retry() -> None:
    [s] = run(Handler('fn', retries=1), [(0, arbitrary())])
    assert s.failure and s.retries == 1


def test_timeout_by_look_ahead() -> None:
    states = run(Handler('fn', timeout=60, backoff=30), [(0, arbitrary()), (30, arbitrary())])
    assert not states[0].finished and states[0].delayed == at(30)
    assert states[1].failure and '(it would time out in 60 seconds on the next attempt)' in (states[1].message or '')


def test_timeout_by_the_pre_check_counts_from_started_across_restarts() -> None:
    handler = Handler('fn', timeout=60)
    record = {'started': T0S, 'delayed': '2026-01-01T00:00:50.000000+00:00', 'purpose': 'create', 'retries': 1,
              'success': False, 'failure': False, 'message': 'x'}
    state = State.from_records({'fn': record})
    assert state.precheck(handler, now=at(59)) is None
    assert state.remaining(handler, now=at(59)) == 1
    outcome = state.precheck(handler, now=at(60))
    assert outcome is not None and outcome.kind is OutcomeKind.FAILURE
    assert isinstance(outcome.exception, errors.HandlerTimeoutError)
    after = state.with_outcomes({'fn': outcome}, [handler], now=at(60))
    assert after['fn'].failure and after.done


def test_retries_by_the_pre_check() -> None:
    handler = Handler('fn', retries=2)
    state = State({'fn': HandlerState(started=T0, retries=2)})
    outcome = state.precheck(handler, now=T0)
    assert outcome is not None and isinstance(outcome.exception, errors.HandlerRetriesError)
    assert state.precheck(Handler('fn', retries=3), now=T0) is None


def test_naive_timestamps_are_utc() -> None:
    s = HandlerState.from_record({'started': '2020-01-01T00:00:00', 'retries': 0})
    assert s.started == datetime.datetime(2020, 1, 1, tzinfo=datetime.UTC)


def test_foreign_timestamp_formats_still_parse() -> None:
    s = HandlerState.from_record({'started': '2020-1-1T00:00:00Z', 'delayed': '2020-01-01T02:00:00+02:00'})
    assert s.started == datetime.datetime(2020, 1, 1, tzinfo=datetime.UTC)
    assert s.delayed == datetime.datetime(2020, 1, 1, tzinfo=datetime.UTC)


def test_only_changed_records_are_stored() -> None:
    a, b = Handler('a'), Handler('b')
    storage = DictStorage()
    state = State.from_records(storage.fetch_all(keys=['a', 'b'], body={}))
    state = state.with_purpose('create', [a, b], now=T0).with_handlers([a, b], now=T0)
    state = state.with_outcomes({'a': temporary(10)}, [a, b], now=T0)
    state.store(body={}, patch={}, storage=storage)
    assert storage.stored == ['a', 'b'] and storage.flushes == 1

    storage.stored.clear()
    state = State.from_records(storage.fetch_all(keys=['a', 'b'], body={}))
    state = state.with_purpose('create', [a, b], now=at(5)).with_handlers([a, b], now=at(5))
    assert state.select([a, b], lifecycle=progress.all_at_once, now=at(5)) == [b]
    state = state.with_outcomes({'b': SUCCESS}, [a, b], now=at(5))
    state.store(body={}, patch={}, storage=storage)
    assert storage.stored == ['b']  # a is unchanged: not re-written


def test_purge_when_done_covers_states_handlers_and_subrefs() -> None:
    parent = Handler('parent')
    storage = DictStorage()
    state = State().with_purpose('create', [parent], now=T0).with_handlers([parent], now=T0)
    state = state.with_outcomes({'parent': Outcome(kind=OutcomeKind.RETRY, subrefs=('parent/b', 'parent/a'))},
                                [parent], now=T0)
    assert state['parent'].as_record()['subrefs'] == ['parent/a', 'parent/b']
    state = state.with_outcomes({'parent': Outcome(kind=OutcomeKind.SUCCESS, subrefs=('parent/c',))}, [parent],
                                now=T0)
    assert state['parent'].subrefs == ('parent/a', 'parent/b', 'parent/c')
    assert state.done
    attempts.purge(state, [Handler('other')], body={}, patch={}, storage=storage)
    assert storage.purged == ['other', 'parent', 'parent/a', 'parent/b', 'parent/c']


def test_superseding_by_another_purpose() -> None:
    records = {
        'create_a': {'started': T0S, 'purpose': 'create', 'retries': 1, 'success': True, 'failure': False},
        'create_b': {'started': T0S, 'purpose': 'create', 'retries': 1, 'success': False, 'failure': False,
                     'subrefs': ['create_b/x']},
        'field_c': {'started': T0S, 'purpose': 'create', 'retries': 2, 'success': False, 'failure': False},
        'field_d': {'started': T0S, 'purpose': 'create', 'retries': 1, 'success': True, 'failure': False},
    }
    storage = DictStorage(records)
    c, d, e = Handler('field_c'), Handler('field_d'), Handler('update_e')
    state = State.from_records(storage.fetch_all(keys=[*records, 'update_e'], body={}))
    state = state.with_purpose('update', [c, d, e], now=at(100))
    assert state.superseded == progress.Counts(success=2, failure=0, running=2)
    assert state.superseded_purpose == 'create' and state.purpose == 'update'
    assert state['field_c'].purpose == 'update' and state['field_c'].retries == 2  # re-purposed, progress kept
    assert state['field_d'].purpose == 'update' and not state['field_d'].finished  # finished: restarted
    assert state['field_d'].started == at(100)
    assert state.dropped == {'create_a', 'create_b', 'create_b/x'}
    state = state.with_handlers([c, d, e], now=at(100))
    assert state['update_e'].purpose == 'update'
    state.store(body={}, patch={}, storage=storage)
    assert sorted(storage.purged) == ['create_a', 'create_b', 'create_b/x']


def test_same_purpose_is_not_superseded() -> None:
    state = State({'a': HandlerState(started=T0, purpose='update')}).with_purpose('update', [Handler('a')], now=T0)
    assert state.superseded is None and state['a'].purpose == 'update'


H1, H2, H3 = Handler('h1'), Handler('h2'), Handler('h3')


@pytest.mark.parametrize('lifecycle, retries, expected', [
    (progress.all_at_once, {}, [H1, H2, H3]),
    (progress.one_by_one, {'h1': 5}, [H1]),
    (progress.asap, {}, [H1]),
    (progress.asap, {'h1': 2, 'h2': 1, 'h3': 1}, [H2]),
    (progress.asap, {'h1': 1, 'h2': 1, 'h3': 0}, [H3]),
])
def test_lifecycles(lifecycle: Any, retries: dict[str, int], expected: list[Handler]) -> None:
    state = State({k: HandlerState(started=T0, retries=v) for k, v in retries.items()})
    assert state.select([H1, H2, H3], lifecycle=lifecycle, now=T0) == expected


def test_random_lifecycles() -> None:
    assert progress.randomized([H1, H2, H3])[0] in (H1, H2, H3)
    assert len(progress.randomized([H1, H2, H3])) == 1
    assert sorted(h.id for h in progress.shuffled([H1, H2, H3])) == ['h1', 'h2', 'h3']
    assert progress.randomized([]) == [] and progress.shuffled([]) == []


def test_a_user_lifecycle_sees_the_state() -> None:
    def last_first(handlers: Any, *, state: Any, **kwargs: Any) -> Any:
        assert all(isinstance(state[h.id].retries, int) for h in handlers if h.id in state)
        return list(reversed(handlers))

    state = State({'h1': HandlerState(started=T0)})
    assert state.select([H1, H2], lifecycle=last_first, now=T0) == [H2, H1]


def test_nothing_due_when_all_finished_or_delayed() -> None:
    state = State({'h1': HandlerState(started=T0, success=True), 'h2': HandlerState(started=T0, delayed=at(5))})
    assert state.select([H1, H2], lifecycle=progress.asap, now=T0) == []
    assert state.delay(now=T0) == 5
    assert state.counts == progress.Counts(success=1, failure=0, running=1)


def test_empty_state_is_done() -> None:
    assert State().done and State().delay(now=T0) is None


@pytest.mark.parametrize('record, changed', [
    ({'started': T0S, 'purpose': 'create', 'retries': 0, 'success': False, 'failure': False}, False),
    ({'started': '2026-01-01T00:00:00+00:00', 'purpose': 'create', 'retries': 0, 'success': False,
      'failure': False, 'subrefs': [], 'message': None}, False),
    ({'started': '2026-01-01T00:00:00', 'purpose': 'create', 'retries': 0, 'success': False, 'failure': False},
     False),
    ({'started': T0S, 'retries': 0, 'success': False, 'failure': False, 'subrefs': ['b', 'a']}, True),
])
def test_records_read_back_are_unchanged(record: dict[str, Any], changed: bool) -> None:
    state = HandlerState.from_record(record)
    assert state.changed is changed
    assert dataclasses.replace(state, retries=5).changed


def test_with_the_real_handler_classes() -> None:
    from kopf._core import handlerids, handlers

    def fn(**_: Any) -> None:
        pass

    handler = handlers.ActivityHandler(fn=fn, id=handlerids.HandlerId('startup_fn'), retries=1,
                                       activity=handlers.Activity.STARTUP)
    state = State().with_purpose(None, [handler], now=T0).with_handlers([handler], now=T0)
    assert state.select([handler], lifecycle=progress.all_at_once, now=T0) == [handler]
    state = state.with_outcomes({handler.id: arbitrary()}, [handler], now=T0)
    assert state[handler.id].failure
    assert state[handler.id].message == ("Activity 'startup_fn' failed with an exception and will stop now "
                                         "(it would exceed 1 retries on the next attempt): Oops.")  # as logged
