"""The per-object record's transitions: tables of (record before, signal) → (effects, record after). No loop."""
from typing import Any

import pytest

import kopf
from kopf._core import memos, records, resourceversions
from kopf._core.records import (
    Arrived,
    Done,
    Due,
    Enqueue,
    Forget,
    ObjectRecord,
    Phase,
    Quiet,
    Retry,
    Run,
    Schedule,
    Stopped,
    Taken,
    Work,
    is_consistent,
    step,
)

F = 'kopf.zalando.org/KopfFinalizerMarker'


def ev(rv: int | None, type_: str | None = 'MODIFIED', **meta: Any) -> dict[str, Any]:
    metadata = {'uid': 'u1', 'name': 'n', 'namespace': 'ns', **meta}
    if rv is not None:
        metadata['resourceVersion'] = str(rv)
    return {'type': type_, 'object': {'metadata': metadata}}


WORK = set(Work.__dataclass_fields__)


def rec(**fields: Any) -> ObjectRecord:
    """A record; the fields of its `work` given among its own (the work made if any is given)."""
    work = {key: fields.pop(key) for key in list(fields) if key in WORK}
    return ObjectRecord(uid='u1', memo=None, work=Work(**work) if work else None, **fields)


def w(record: ObjectRecord) -> Work:
    """Its work, or an empty one (an idle record drops it), or the one its echo's awaited rv stands for."""
    work = record.work
    if isinstance(work, int):
        rv, key = resourceversions.unpacked(work)
        return Work(applied_rv=rv, echo=key)
    return Work() if work is None else work


@pytest.mark.parametrize('rv, expected, result', [
    ('5', None, True), ('5', '5', True), ('6', '5', True), ('4', '5', False),
    ('abc', 'abc', True), ('abc', 'abd', False), (None, '5', False), (None, None, True),
])
def test_consistency(rv: str | None, expected: str | None, result: bool) -> None:
    assert is_consistent(rv, expected) is result


# -- Arrived ------------------------------------------------------------------------------------------

@pytest.mark.parametrize('phase, effects, after', [
    (Phase.IDLE, [Enqueue()], Phase.QUEUED),
    (Phase.WAITING, [Enqueue()], Phase.QUEUED),
    (Phase.QUEUED, [], Phase.QUEUED),     # queued already: the newer event replaces the pending one
    (Phase.RUNNING, [], Phase.RUNNING),   # looked at when the cycle ends
])
def test_an_event_is_kept_as_the_newest_and_queues_the_record(phase: Phase, effects: list[Any], after: Phase) -> None:
    record = rec(phase=phase, pending=ev(1))
    assert step(record, Arrived(ev(2))) == effects
    assert record.phase is after
    assert w(record).pending == ev(2)


@pytest.mark.parametrize('event, skipped', [
    (ev(4), True), (ev(5), True),           # not newer than our patch's answer (decided on already)
    (ev(6), False),                          # newer
    (ev(5, 'DELETED'), False),               # DELETED always goes through
    (ev(None), False),                       # no resourceVersion: cannot tell
])
def test_events_not_newer_than_our_answer_are_skipped(event: dict[str, Any], skipped: bool) -> None:
    record = rec(applied_rv='5')
    effects = step(record, Arrived(event))
    assert (effects == []) is skipped
    assert (w(record).pending is None) is skipped


# -- Quiet --------------------------------------------------------------------------------------------

@pytest.mark.parametrize('now, effects', [(10.0, [records.Converged(lag=0.0)]), (None, [])])
def test_a_quiet_new_record_is_handled_as_it_arrived_and_keeps_no_work(now: float | None, effects: list[Any]) -> None:
    record = rec()
    assert step(record, Quiet(ev(1, None), now=now)) == effects
    assert record.phase is Phase.IDLE and record.initial is False and record.work is None


@pytest.mark.parametrize('fields', [
    {'initial': False}, {'initial': True}, {'phase': Phase.QUEUED, 'pending': ev(0)},
    {'phase': Phase.RUNNING}, {'phase': Phase.WAITING, 'last': ev(0), 'wakeup_at': 20, 'due_at': 20},
    {'applied_rv': '0'},
])
def test_quiet_for_a_record_that_is_not_new_is_an_arrival(fields: dict[str, Any]) -> None:
    record, twin = rec(**fields), rec(**fields)
    assert step(record, Quiet(ev(1, None), now=10.0)) == step(twin, Arrived(ev(1, None), now=10.0))
    assert (record.phase, record.initial) == (twin.phase, twin.initial)
    assert [getattr(w(record), f) for f in sorted(WORK)] == [getattr(w(twin), f) for f in sorted(WORK)]


# -- Taken --------------------------------------------------------------------------------------------

def test_taken_with_nothing_to_do_idles_and_drops_its_work() -> None:
    record = rec(phase=Phase.QUEUED)
    assert step(record, Taken(now=10)) == []
    assert record.phase is Phase.IDLE and record.work is None


def test_taken_before_the_wake_up_waits_for_it() -> None:
    record = rec(phase=Phase.QUEUED, last=ev(1), wakeup_at=20)
    assert step(record, Taken(now=10)) == [Schedule(at=20)]
    assert record.phase is Phase.WAITING and w(record).due_at == 20


def test_a_due_wake_up_reruns_the_last_event_not_fresh() -> None:
    record = rec(phase=Phase.QUEUED, last=ev(1), wakeup_at=10, initial=False)
    assert step(record, Taken(now=10)) == [Run(event=ev(1), fresh=False)]
    assert record.phase is Phase.RUNNING and w(record).wakeup_at is None


def test_a_pending_event_runs_fresh_and_clears_the_waits() -> None:
    record = rec(phase=Phase.QUEUED, pending=ev(3), last=ev(1), wakeup_at=50, deadline=60, expected_rv='3')
    assert step(record, Taken(now=10)) == [Run(event=ev(3), fresh=True)]
    work = w(record)
    assert (work.pending, work.wakeup_at, work.deadline, work.expected_rv) == (None, None, None, None)


@pytest.mark.parametrize('first_type, initial', [(None, True), ('ADDED', False), ('MODIFIED', False)])
def test_initial_is_set_by_the_first_cycle_only(first_type: str | None, initial: bool) -> None:
    record = rec(phase=Phase.QUEUED, pending=ev(1, first_type))
    step(record, Taken(now=0))
    assert record.initial is initial
    record.phase = Phase.QUEUED
    assert record.work is not None
    record.work.pending = ev(2, None)
    step(record, Taken(now=0))
    assert record.initial is initial  # a later listing (a re-list) does not make it initial again


def test_the_error_throttling_is_waited_out_with_the_newest_event_kept() -> None:
    record = rec(phase=Phase.QUEUED, pending=ev(2), throttled_until=15)
    assert step(record, Taken(now=10)) == [Schedule(at=15)]
    assert w(record).pending == ev(2) and record.phase is Phase.WAITING
    record.phase = Phase.QUEUED
    assert step(record, Taken(now=15)) == [Run(event=ev(2), fresh=True)]
    assert w(record).throttled_until is None


@pytest.mark.parametrize('rv, runs', [(9, False), (10, True), (11, True)])
def test_a_body_older_than_our_own_write_waits_for_it(rv: int, runs: bool) -> None:
    record = rec(phase=Phase.QUEUED, pending=ev(rv), expected_rv='10')
    effects = step(record, Taken(now=100, consistency_timeout=5))
    assert effects == ([Run(event=ev(rv), fresh=True)] if runs else [Schedule(at=105)])


def test_the_wait_for_our_own_write_ends_at_its_deadline() -> None:
    record = rec(phase=Phase.QUEUED, pending=ev(9), expected_rv='10')
    assert step(record, Taken(now=100, consistency_timeout=5)) == [Schedule(at=105)]
    record.phase = Phase.QUEUED  # e.g. a spurious wake-up: the deadline is kept, not moved
    assert step(record, Taken(now=103, consistency_timeout=5)) == [Schedule(at=105)]
    record.phase = Phase.QUEUED
    assert step(record, Taken(now=105, consistency_timeout=5)) == [Run(event=ev(9), fresh=True)]
    assert w(record).expected_rv is None and w(record).deadline is None


# -- Due, Stopped -------------------------------------------------------------------------------------

@pytest.mark.parametrize('phase, effects', [
    (Phase.WAITING, [Enqueue()]), (Phase.QUEUED, []), (Phase.RUNNING, []), (Phase.IDLE, []), (Phase.GONE, []),
])
def test_a_wake_up_queues_only_a_waiting_record(phase: Phase, effects: list[Any]) -> None:
    assert step(rec(phase=phase), Due()) == effects


@pytest.mark.parametrize('phase', [Phase.WAITING, Phase.QUEUED, Phase.RUNNING])
def test_a_stopped_stream_idles_its_records_and_keeps_their_memory(phase: Phase) -> None:
    record = rec(phase=phase, initial=False, deletion_handled=True)
    assert step(record, Stopped()) == []
    assert record.phase is Phase.IDLE and record.work is None
    assert record.initial is False and record.deletion_handled  # the memory stays


# -- Done ---------------------------------------------------------------------------------------------

def test_a_deleted_object_is_forgotten_and_ignores_everything_after() -> None:
    record = rec(phase=Phase.RUNNING)
    assert step(record, Done(event=ev(5, 'DELETED'), now=0)) == [Forget()]
    assert record.phase is Phase.GONE
    assert step(record, Arrived(ev(6))) == [] and step(record, Due()) == []


def test_unexpected_errors_back_off_then_the_last_delay_forever_then_reset() -> None:
    error = RuntimeError('boom')
    record = rec(phase=Phase.RUNNING)
    delays = []
    for _ in range(4):
        record.phase = Phase.RUNNING
        effects = step(record, Done(event=ev(1), now=100, error=error, error_delays=(1, 5)))
        delays.append(effects[0].delay)  # type: ignore[union-attr]
        assert effects == [Retry(delay=delays[-1], error=error, event=ev(1)), Schedule(at=100 + delays[-1])]
        assert w(record).throttled_until == w(record).wakeup_at == 100 + delays[-1] and w(record).last == ev(1)
    assert delays == [1, 5, 5, 5]
    record.phase = Phase.RUNNING
    step(record, Done(event=ev(1), now=200))
    assert w(record).errors == 0


def test_an_error_with_a_newer_event_queues_it_to_wait_out_the_throttling() -> None:
    record = rec(phase=Phase.RUNNING, pending=ev(2))
    effects = step(record, Done(event=ev(1), now=0, error=RuntimeError(), error_delays=(3,)))
    assert effects[1:] == [Enqueue()] and w(record).throttled_until == 3


ANSWER = ev(5)['object']


# The echo of the patch (or a newer event) may come through the watch before the patch's answer is read:
# then nothing older comes after it, and nothing is awaited (`applied_rv`: None).
@pytest.mark.parametrize('pending, effects, pending_after, applied_rv', [
    (None, [Enqueue(first=True)], ev(5), '5'),     # decide on the server's answer now, not on its echo later
    (ev(4), [Enqueue(first=True)], ev(5), '5'),    # an older pending event: the answer is newer
    (ev(5), [Enqueue()], ev(5), None),              # the echo itself: kept (it is as new)
    (ev(6), [Enqueue()], ev(6), None),              # a newer one: kept, and decided on
])
def test_an_unsettled_answer_is_decided_on_next(
        pending: Any, effects: list[Any], pending_after: Any, applied_rv: str | None) -> None:
    record = rec(phase=Phase.RUNNING, pending=pending)
    assert step(record, Done(event=ev(1), now=0, answer=ANSWER, finalizer=F)) == effects
    assert w(record).pending == pending_after
    assert w(record).applied_rv == applied_rv and w(record).expected_rv is None


@pytest.mark.parametrize('pending, effects, pending_after, applied_rv', [
    (None, [], None, '5'), (ev(4), [], None, '5'),   # not newer than an answer needing nothing more
    (ev(5), [], None, None),                         # ... and its echo came already: nothing awaited
    (ev(6), [Enqueue()], ev(6), None),
])
def test_a_settled_answer_needs_no_cycle(
        pending: Any, effects: list[Any], pending_after: Any, applied_rv: str | None) -> None:
    record = rec(phase=Phase.RUNNING, pending=pending)
    assert step(record, Done(event=ev(1), now=0, answer=ANSWER, settled=True, finalizer=F)) == effects
    assert w(record).pending == pending_after and w(record).applied_rv == applied_rv


def test_with_on_event_handlers_the_answer_is_awaited_through_the_watch() -> None:
    record = rec(phase=Phase.RUNNING)
    assert step(record, Done(event=ev(1), now=0, answer=ANSWER, watched=True, finalizer=F)) == []
    assert w(record).expected_rv == '5' and w(record).applied_rv is None and record.phase is Phase.IDLE


def test_an_answer_without_a_resource_version_is_not_used() -> None:
    record = rec(phase=Phase.RUNNING)
    assert step(record, Done(event=ev(1), now=0, answer={'metadata': {}}, finalizer=F)) == []
    assert w(record).expected_rv is None and w(record).applied_rv is None


LET_GO = ev(5, deletionTimestamp='2026-01-01T00:00:00Z', finalizers=['other'])['object']
HELD = ev(5, deletionTimestamp='2026-01-01T00:00:00Z', finalizers=[F])['object']


@pytest.mark.parametrize('answer, watched, pending, pending_after', [
    (LET_GO, False, ev(4), None),                  # still shows our finalizer, released just now: dropped
    (LET_GO, False, ev(5), None),                  # releasing answers with the previous rv: "equal" is not newer
    (LET_GO, False, ev(6), ev(6)),                 # newer: decided on
    (LET_GO, False, ev(4, 'DELETED'), ev(4, 'DELETED')),  # the object's last event: always
    (LET_GO, True, ev(4), ev(4)),                  # on.event handlers see every event, stale or not
])
def test_a_patch_that_lets_the_object_go_drops_the_stale_pending_event(
        answer: Any, watched: bool, pending: Any, pending_after: Any) -> None:
    record = rec(phase=Phase.RUNNING, pending=pending)
    step(record, Done(event=ev(1), now=0, answer=answer, watched=watched, finalizer=F))
    assert w(record).pending == pending_after
    assert w(record).expected_rv == '5' and w(record).applied_rv is None  # its last events come through the watch


def test_a_deleted_object_held_by_our_finalizer_continues_on_the_answer() -> None:
    record = rec(phase=Phase.RUNNING)
    assert step(record, Done(event=ev(1), now=0, answer=HELD, finalizer=F)) == [Enqueue(first=True)]


def test_a_requested_delay_schedules_a_wake_up_of_the_event() -> None:
    record = rec(phase=Phase.RUNNING)
    assert step(record, Done(event=ev(1), now=100, wakeup=30, finalizer=F)) == [Schedule(at=130)]
    assert w(record).last == ev(1) and w(record).wakeup_at == 130 and record.phase is Phase.WAITING


def test_a_requested_delay_with_an_answer_to_decide_on_wakes_up_with_the_answer() -> None:
    record = rec(phase=Phase.RUNNING)
    assert step(record, Done(event=ev(1), now=100, wakeup=30, answer=ANSWER, finalizer=F)) == [Enqueue(first=True)]
    assert w(record).last == ev(5) and w(record).wakeup_at == 130  # the answer runs first; the wake-up re-runs it


def test_nothing_more_to_do_idles() -> None:
    record = rec(phase=Phase.RUNNING)
    assert step(record, Done(event=ev(1), now=0)) == []
    assert record.phase is Phase.IDLE and record.work is None


def test_an_idle_record_keeps_no_body_of_a_past_wake_up() -> None:
    record = rec(phase=Phase.QUEUED, last=ev(1), wakeup_at=10, initial=False)  # e.g. a daemon's nudge, a retry
    assert step(record, Taken(now=10)) == [Run(event=ev(1), fresh=False)]
    assert step(record, Done(event=ev(1), now=11)) == []
    assert record.phase is Phase.IDLE and w(record).last is None and w(record).wakeup_at is None


def test_rv_of_events() -> None:
    assert records.rv_of(ev(7)) == '7' and records.rv_of(ev(None)) is None and records.rv_of(None) is None


# -- Nudged -------------------------------------------------------------------------------------------

@pytest.mark.parametrize('phase', [Phase.IDLE, Phase.WAITING])
def test_a_nudge_reruns_the_newest_body_now(phase: Phase) -> None:
    record = rec(phase=phase, wakeup_at=500)
    assert step(record, records.Nudged(event=ev(7), now=100)) == [Enqueue()]
    assert w(record).last == ev(7) and w(record).wakeup_at == 100
    assert step(record, Taken(now=100)) == [Run(event=ev(7), fresh=False)]


@pytest.mark.parametrize('answer, expected_last', [(ANSWER, ev(5)), (None, ev(1))])
def test_a_nudge_during_a_cycle_reruns_its_answer_or_event_after_it(answer: Any, expected_last: Any) -> None:
    record = rec(phase=Phase.RUNNING)
    assert step(record, records.Nudged(event=ev(0), now=100)) == []  # not the (older) body it carries
    effects = step(record, Done(event=ev(1), now=110, answer=answer, settled=True, finalizer=F))
    assert effects == [Schedule(at=110)]
    assert w(record).last == expected_last and w(record).wakeup_at == 110 and not w(record).nudged


def test_a_nudge_during_a_cycle_awaiting_our_write_waits_for_the_watch() -> None:
    record = rec(phase=Phase.RUNNING)
    step(record, records.Nudged(event=ev(0), now=100))
    effects = step(record, Done(event=ev(1), now=110, answer=ANSWER, watched=True, finalizer=F))
    assert effects == [] and w(record).last is None  # the echo of our patch comes through the watch anyway


# -- pausing ------------------------------------------------------------------------------------------

@pytest.mark.parametrize('phase, after', [
    (Phase.IDLE, Phase.IDLE), (Phase.WAITING, Phase.IDLE), (Phase.QUEUED, Phase.QUEUED), (Phase.RUNNING, Phase.RUNNING),
])
def test_a_paused_scope_forgets_the_waits_and_our_answer_but_keeps_the_queue(phase: Phase, after: Phase) -> None:
    record = rec(phase=phase, pending=ev(3), wakeup_at=5.0, throttled_until=4.0, deadline=6.0, expected_rv='2',
                 applied_rv='2', due_at=4.0)
    assert step(record, records.Paused()) == []
    assert record.phase is after
    assert (w(record).wakeup_at, w(record).throttled_until, w(record).deadline) == (None, None, None)
    assert (w(record).expected_rv, w(record).applied_rv) == (None, None)
    assert w(record).pending == ev(3)  # a queued one runs: its paused cycle feeds the indices


def test_the_listing_after_a_pause_reruns_an_object_not_newer_than_our_answer() -> None:
    record = rec(applied_rv='7')
    assert step(record, Arrived(ev(7, type_=None))) == []  # skipped while not paused: decided on already
    step(record, records.Paused())
    assert step(record, Arrived(ev(7, type_=None))) == [Enqueue()]  # its daemons and timers start again


def test_a_cycle_that_ends_paused_neither_continues_on_its_answer_nor_schedules_its_delay() -> None:
    record = rec(phase=Phase.RUNNING)
    done = Done(event=ev(3), now=1.0, wakeup=10.0, answer=ev(4)['object'], paused=True)
    assert step(record, done) == []
    assert record.phase is Phase.IDLE
    assert record.work is None  # nothing pending, due or awaited


def test_a_cycle_that_ends_paused_with_a_newer_event_queues_it() -> None:
    record = rec(phase=Phase.RUNNING, pending=ev(5))
    assert step(record, Done(event=ev(3), now=1.0, paused=True)) == [Enqueue()]


# -- Converged (the convergence lag of the metrics) ---------------------------------------------------

def converged(effects: list[Any]) -> list[float]:
    return [effect.lag for effect in effects if isinstance(effect, records.Converged)]


def test_the_convergence_clock_starts_at_the_first_event_accepted_and_stops_when_nothing_is_left() -> None:
    record = rec()
    step(record, Arrived(ev(1), now=10.0))
    step(record, Arrived(ev(2), now=11.0))  # superseded: the clock keeps the first one's time
    assert w(record).arrived_at == 10.0
    assert step(record, Taken(now=12.0)) == [Run(event=ev(2), fresh=True)]
    assert converged(step(record, Done(event=ev(2), now=13.5))) == [3.5]
    assert record.phase is Phase.IDLE and w(record).arrived_at is None


def test_no_convergence_while_a_retry_or_a_delay_is_due_then_the_lag_counts_all_of_it() -> None:
    record = rec()
    step(record, Arrived(ev(1), now=10.0))
    step(record, Taken(now=10.0))
    assert converged(step(record, Done(event=ev(1), now=11.0, error=ValueError('boom'), error_delays=(2.0,)))) == []
    step(record, Due())
    step(record, Taken(now=13.0))
    assert converged(step(record, Done(event=ev(1), now=13.0, wakeup=5.0))) == []  # a handler's delay
    assert record.phase is Phase.WAITING
    step(record, Due())
    step(record, Taken(now=18.0))
    assert converged(step(record, Done(event=ev(1), now=18.5))) == [8.5]


def test_a_cycle_continuing_on_our_own_answer_converges_after_that_cycle() -> None:
    record = rec()
    step(record, Arrived(ev(1), now=1.0))
    step(record, Taken(now=1.0))
    answer = ev(2)['object']
    assert converged(step(record, Done(event=ev(1), now=2.0, answer=answer))) == []  # decided on at once
    step(record, Taken(now=2.0))
    assert converged(step(record, Done(event=ev(2), now=3.0, answer=ev(3)['object'], settled=True))) == [2.0]


def test_a_deleted_object_converges_when_gone_and_stale_or_clockless_events_start_no_clock() -> None:
    record = rec(applied_rv='5')
    assert step(record, Arrived(ev(5), now=1.0)) == [] and w(record).arrived_at is None  # skipped: stale
    step(record, Arrived(ev(6, 'DELETED'), now=2.0))
    step(record, Taken(now=2.0))
    assert step(record, Done(event=ev(6, 'DELETED'), now=2.25)) == [Forget(), records.Converged(lag=0.25)]
    clockless = rec()
    step(clockless, Arrived(ev(1)))  # no `now`: no clock, no Converged
    step(clockless, Taken(now=1.0))
    assert step(clockless, Done(event=ev(1), now=2.0)) == []


def test_a_stopped_stream_stops_the_clock() -> None:
    record = rec()
    step(record, Arrived(ev(1), now=1.0))
    step(record, Stopped())
    assert w(record).arrived_at is None


def test_a_takeover_reruns_the_newest_body_as_listed_with_a_new_memo() -> None:
    record = rec(phase=Phase.IDLE, initial=False, deletion_handled=True, errors=3, expected_rv='9')
    record.memo = {'old': 1}
    effects = step(record, records.TakenOver(memo={}, now=5.0, event=ev(7)))
    assert effects == [Enqueue()]
    assert record.phase is Phase.QUEUED
    assert w(record).pending == {'type': None, 'object': ev(7)['object']}  # as listed: resume handlers run
    assert (record.memo, record.initial, record.deletion_handled, w(record).errors) == \
        ({}, None, False, 0)
    assert w(record).expected_rv is None
    pending = w(record).pending
    assert pending is not None
    assert step(record, Taken(now=6.0)) == [Run(event=pending, fresh=True)]
    assert record.initial is True


@pytest.mark.parametrize('newest', [None, ev(7, 'DELETED')])
def test_a_takeover_without_a_body_queues_nothing(newest: dict[str, Any] | None) -> None:
    record = rec(phase=Phase.IDLE)
    assert step(record, records.TakenOver(memo={}, now=5.0, event=newest)) == []
    assert record.phase is Phase.IDLE


# -- what an idle record keeps ------------------------------------------------------------------------

def test_an_idle_record_keeps_no_work_once_nothing_is_awaited() -> None:
    record = rec()
    step(record, Arrived(ev(1)))
    assert record.work is not None  # queued: its pending event
    step(record, Taken(now=0))
    step(record, Done(event=ev(1), now=1))
    assert record.phase is Phase.IDLE and record.work is None


def test_an_idle_record_keeps_its_work_while_our_own_write_is_awaited() -> None:
    record = rec(phase=Phase.RUNNING)
    step(record, Done(event=ev(4), now=1, answer=ev(5)['object'], settled=True))
    assert record.phase is Phase.IDLE and w(record).applied_rv == '5'  # the echo of our patch is skipped
    assert step(record, Arrived(ev(5))) == []


def test_an_idle_record_keeps_no_work_when_the_echo_came_before_the_answer() -> None:
    """A real server may send the patch's watch event before the patch's answer is read (seen on envtest)."""
    record = rec(phase=Phase.RUNNING)
    assert step(record, Arrived(ev(5))) == []  # the echo, while the cycle still awaits the answer
    step(record, Done(event=ev(4), now=1, answer=ev(5)['object'], settled=True))
    assert record.phase is Phase.IDLE and record.work is None
    assert step(record, Arrived(ev(6))) == [Enqueue()]  # the next change is handled as usual


def test_a_cycle_that_handled_a_cause_remembers_it() -> None:
    record = rec(phase=Phase.RUNNING, initial=True)
    step(record, Done(event=ev(4), now=1, handled=True, deletion_handled=True))
    assert record.initial is False and record.deletion_handled is True
    record = rec(phase=Phase.RUNNING, initial=True)
    step(record, Done(event=ev(4), now=1, error=RuntimeError('boom')))
    assert record.initial is True and record.deletion_handled is False  # nothing is remembered of a failed cycle


def test_the_echo_of_our_write_ends_the_wait_for_it() -> None:
    record = rec(phase=Phase.RUNNING)
    step(record, Done(event=ev(4), now=1, answer=ev(5)['object'], settled=True))
    assert step(record, Arrived(ev(5))) == []  # the echo: skipped
    assert record.work is None  # nothing awaited any more: an idle record keeps no work
    assert step(record, Arrived(ev(6))) == [Enqueue()]


def test_the_memo_is_grown_from_its_seed_once_and_goes_back_to_it_unless_changed() -> None:
    seeds = memos.Seeds()
    seed = seeds.seed(kopf.Memo(flag='early'))
    record = ObjectRecord(uid='u1', memo=seed)
    memo = records.memo_of(record)
    assert type(memo) is kopf.Memo and memo == {'flag': 'early'}
    assert records.memo_of(record) is memo  # its handlers, daemons and timers share it
    del memo
    records.spare_memo(record, seeds)  # nobody else holds it, unchanged: an idle object keeps no memo
    assert record.memo is seed
    records.memo_of(record).mine = 'x'
    records.spare_memo(record, seeds)
    assert record.memo == {'flag': 'early', 'mine': 'x'}  # changed: kept for the object's life


def test_an_idle_record_that_awaits_only_our_echo_keeps_its_resourceversion_only() -> None:
    record = rec(phase=Phase.RUNNING)
    answer = {'metadata': {'uid': 'u1', 'resourceVersion': '7'}}
    effects = step(record, Done(event=ev(5), answer=answer, settled=True, now=2.0))
    assert record.phase is Phase.IDLE and record.work == 7 and effects == []
    assert step(record, Arrived(ev(6))) == []  # older than our answer: skipped, still awaited
    assert record.work == 7
    assert step(record, Arrived(ev(7))) == [] and record.work is None  # its echo: nothing awaited
    record.work = 7
    assert step(record, Arrived(ev(8))) == [Enqueue()] and w(record).pending == ev(8)  # newer: handled
    record.work, record.phase = 7, Phase.IDLE
    assert step(record, Arrived(ev(5, 'DELETED'))) == [Enqueue()]  # DELETED always goes through
    record.work, record.phase = 7, Phase.IDLE
    assert step(record, Arrived(ev(None))) == [Enqueue()]  # no resourceVersion: cannot tell


# The key of the answer's watch line (`Done.echo`) is kept with its resourceVersion: an idle record awaiting only
# that echo keeps both in one int; the dispatcher asks for it by the key of a line (`awaited_echo`).
KEY = 2 ** 64 - 3


def test_an_idle_record_keeps_its_echo_key_with_the_resource_version() -> None:
    record = rec(phase=Phase.RUNNING)
    assert step(record, Done(event=ev(1), now=0, answer=ANSWER, settled=True, finalizer=F, echo=KEY)) == []
    assert record.phase is Phase.IDLE and isinstance(record.work, int)
    assert w(record).applied_rv == '5' and w(record).echo == KEY
    assert records.awaited_echo(record) == ('5', KEY)
    assert step(record, Arrived(ev(5))) == []  # its echo: dropped, nothing is awaited any more
    assert record.work is None and records.awaited_echo(record) is None


def test_an_echo_key_goes_with_its_resource_version() -> None:
    record = rec(phase=Phase.RUNNING)
    step(record, Done(event=ev(1), now=0, answer=ANSWER, settled=True, finalizer=F, echo=KEY))
    assert step(record, Arrived(ev(6), now=1.0)) == [Enqueue()]  # newer: nothing older comes after it
    assert w(record).applied_rv is None and w(record).echo is None


@pytest.mark.parametrize('echo', [None, KEY])
def test_no_echo_is_awaited_without_its_key_or_while_the_record_has_work(echo: int | None) -> None:
    record = rec(phase=Phase.RUNNING)
    step(record, Done(event=ev(1), now=0, answer=ANSWER, settled=True, finalizer=F, echo=echo))
    assert record.work == (5 << 64 | KEY if echo is not None else 5)
    assert records.awaited_echo(record) == (('5', KEY) if echo is not None else None)
    record.phase = Phase.QUEUED
    assert records.awaited_echo(record) is None


def test_an_echo_already_come_leaves_no_key() -> None:
    record = rec(phase=Phase.RUNNING, pending=ev(5))
    step(record, Done(event=ev(1), now=0, answer=ANSWER, settled=True, finalizer=F, echo=KEY))
    assert record.work is None
