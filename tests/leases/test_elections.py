"""The Lease decisions (kopf._leases.elections): tables of observed Leases and monotonic times."""
import datetime

import pytest

from kopf._leases import elections
from kopf._leases.elections import Action

D = elections.Durations(lease_duration=15, renew_deadline=10, retry_period=2)
ME = 'me'


def lease(holder: str | None = 'other', duration: object = 15, renew: object = '2026-01-01T00:00:00.000000Z',
          transitions: object = 3, rv: str | None = '7') -> dict[str, object]:
    spec = {'holderIdentity': holder, 'leaseDurationSeconds': duration, 'renewTime': renew,
            'leaseTransitions': transitions}
    return {'metadata': {'name': 'l', 'resourceVersion': rv}, 'spec': {k: v for k, v in spec.items() if v is not None}}


@pytest.mark.parametrize('body, now, observed_at, renewed_at, action, leading, next_at', [
    (None, 100, 0, None, Action.ACQUIRE, False, 102),                         # no Lease: create it
    (lease(holder=''), 100, 99, None, Action.ACQUIRE, False, 102),            # released: take it at once
    (lease(holder=None), 100, 99, None, Action.ACQUIRE, False, 102),          # no holder at all: free
    (lease(), 100, 90, None, Action.WAIT, False, 102),                        # someone else's, valid
    (lease(), 100, 86.5, None, Action.WAIT, False, 101.5),                    # ... look again when it expires
    (lease(), 105, 90, None, Action.ACQUIRE, False, 107),                     # ... expired by our clock
    (lease(duration=5), 100, 90, None, Action.ACQUIRE, False, 102),           # their own (shorter) duration
    (lease(renew=None), 100, 90, None, Action.WAIT, False, 102),              # malformed: our duration
    (lease(duration=None), 106, 90, None, Action.ACQUIRE, False, 108),        # malformed, expired
    (lease(duration='x'), 100, 90, None, Action.WAIT, False, 102),
    (lease(holder=ME), 100, 99, 99, Action.RENEW, True, 102),                 # ours: renew every retry period
    (lease(holder=ME), 100, 91, 91.5, Action.RENEW, True, 101.5),             # ... acting until the renew deadline
    (lease(holder=ME), 100, 90, 90, Action.RENEW, False, 102),                # ... deadline passed: pause
    (lease(holder=ME), 100, 90, None, Action.ACQUIRE, False, 102),            # ours by name, not by our write
])
def test_decide(body, now, observed_at, renewed_at, action, leading, next_at):
    decision = elections.decide(elections.parse(body), identity=ME, now=now, observed_at=observed_at,
                             renewed_at=renewed_at, durations=D)
    assert (decision.action, decision.leading, decision.next_at) == (action, leading, next_at)


def test_we_pause_before_anyone_may_acquire():
    # Ours was renewed at 0: we act until 10; anyone who saw that renewal at 0 or later may acquire at 15.
    ours = elections.decide(elections.parse(lease(holder=ME)), identity=ME, now=10, observed_at=0, renewed_at=0,
                         durations=D)
    theirs = elections.decide(elections.parse(lease(holder=ME)), identity='other', now=14.9, observed_at=0,
                           renewed_at=None, durations=D)
    assert not ours.leading and ours.expires_at == 15
    assert theirs.action is Action.WAIT and theirs.expires_at == 15


EMPTY = ('it has no holder but is not released as client-go releases it (edited by hand?); '
         'it is treated as free')


@pytest.mark.parametrize('body, expected', [
    (None, None),
    (lease(), None),
    (lease(holder='', duration=1), None),  # released (as client-go and we release it): silent
    (lease(holder=''), EMPTY),
    (lease(holder=None, duration=None, renew=None), EMPTY),
    (lease(holder=ME, renew=None), None),
    (lease(renew=None), "it is held by 'other' without renewTime; it is treated as held until it expires by our clock"),
    (lease(renew=None, duration=None), "it is held by 'other' without renewTime and leaseDurationSeconds; "
                                       "it is treated as held until it expires by our clock"),
    (lease(duration=-1), "it is held by 'other' without leaseDurationSeconds; "
                         "it is treated as held until it expires by our clock"),
])
def test_problem(body, expected):
    assert elections.problem(elections.parse(body), ME) == expected


def test_parse_garbage():
    assert elections.parse({'spec': 'nonsense'}) == elections.Observed('', None, None, 0, None)
    assert elections.parse(lease(transitions=True)).transitions == 0


WALL = datetime.datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=datetime.UTC)


def test_spec_of_a_takeover_counts_the_transitions():
    spec = elections.spec(elections.parse(lease()), identity=ME, durations=D, wall=WALL, acquire_time=None)
    assert spec == {'holderIdentity': ME, 'leaseDurationSeconds': 15, 'acquireTime': '2026-01-02T03:04:05.678901Z',
                    'renewTime': '2026-01-02T03:04:05.678901Z', 'leaseTransitions': 4}


def test_spec_of_a_renewal_keeps_the_acquire_time():
    spec = elections.spec(elections.parse(lease(holder=ME)), identity=ME, durations=D, wall=WALL, acquire_time='then')
    assert (spec['acquireTime'], spec['leaseTransitions']) == ('then', 3)


def test_spec_of_a_new_lease():
    assert elections.spec(None, identity=ME, durations=D, wall=WALL, acquire_time=None)['leaseTransitions'] == 0


def test_released_and_body():
    spec = elections.released(elections.parse(lease(holder=ME)), wall=WALL)
    assert spec['holderIdentity'] == '' and spec['leaseDurationSeconds'] == 1 and spec['leaseTransitions'] == 3
    assert elections.body('l', 'ns', spec, '7')['metadata'] == {'name': 'l', 'namespace': 'ns', 'resourceVersion': '7'}
    assert 'resourceVersion' not in elections.body('l', 'ns', spec, None)['metadata']


@pytest.mark.parametrize('durations, ok', [
    (D, True),
    (elections.Durations(3, 2, 0.5), True),
    (elections.Durations(10, 10, 2), False),
    (elections.Durations(15, 10, 10), False),
    (elections.Durations(15, 10, 0), False),
])
def test_check(durations, ok):
    assert (elections.check(durations) is None) == ok


def test_split_name():
    assert elections.split_name('ns/name') == ('ns', 'name')
    assert elections.split_name('name') == (None, 'name')
