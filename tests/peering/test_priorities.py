"""Peering as values: parsing the status entries, who pauses whom, keep-alives, identities. No loop, `now` given."""
import datetime
from typing import Any

import pytest

from kopf._peering import priorities
from kopf._peering.priorities import Peer

NOW = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)


def ago(seconds: float) -> datetime.datetime:
    return NOW - datetime.timedelta(seconds=seconds)


def peer(identity: str, priority: int = 0, lifetime: float = 60, seen: float = 0) -> Peer:
    return Peer(identity=identity, priority=priority, lifetime=lifetime, lastseen=ago(seen))


# -- parsing ------------------------------------------------------------------------------------------

@pytest.mark.parametrize('entry, expected', [
    ({'priority': 5, 'lifetime': 60, 'lastseen': '2026-01-02T03:04:05.000000+00:00'}, peer('x', 5)),
    ({'priority': 5, 'lifetime': 60, 'lastseen': '2026-01-02T03:04:05Z'}, peer('x', 5)),
    ({'priority': 5, 'lifetime': 60, 'lastseen': '2026-01-02T03:04:05'}, peer('x', 5)),  # naive: UTC (old operators)
    ({'priority': 5, 'lifetime': 60, 'lastseen': '2026-01-02T04:04:05+01:00'}, peer('x', 5)),
    ({'lifetime': 60.5, 'lastseen': '2026-01-02T03:04:05+00:00'}, peer('x', 0, 60.5)),  # no priority: 0
    ({'priority': 5, 'lifetime': 0, 'lastseen': '2026-01-02T03:04:05+00:00'}, peer('x', 5, 0)),
])
def test_a_valid_entry_is_a_peer(entry: Any, expected: Peer) -> None:
    assert priorities.parse({'x': entry}) == ([expected], [])


@pytest.mark.parametrize('entry, problem', [
    ('a string', 'not a mapping'),
    ([1, 2], 'not a mapping'),
    ({'priority': 5, 'lifetime': 60, 'lastseen': 'yesterday'}, 'lastseen is not an ISO-8601 time'),
    ({'priority': 5, 'lifetime': 60, 'lastseen': 12345}, 'lastseen is not an ISO-8601 time'),
    ({'priority': 5, 'lifetime': 60}, 'lastseen is not an ISO-8601 time'),
    ({'priority': 5, 'lifetime': -1, 'lastseen': '2026-01-02T03:04:05+00:00'}, 'lifetime is not a non-negative'),
    ({'priority': 5, 'lifetime': '60', 'lastseen': '2026-01-02T03:04:05+00:00'}, 'lifetime is not a non-negative'),
    ({'priority': 5, 'lastseen': '2026-01-02T03:04:05+00:00'}, 'lifetime is not a non-negative'),
    ({'priority': 'high', 'lifetime': 60, 'lastseen': '2026-01-02T03:04:05+00:00'}, 'priority is not an integer'),
    ({'priority': True, 'lifetime': 60, 'lastseen': '2026-01-02T03:04:05+00:00'}, 'priority is not an integer'),
])
def test_a_malformed_entry_is_dropped_and_named(entry: Any, problem: str) -> None:
    good = {'priority': 1, 'lifetime': 60, 'lastseen': '2026-01-02T03:04:05+00:00'}
    found, problems = priorities.parse({'bad': entry, 'good': good})
    assert found == [peer('good', 1)]
    assert len(problems) == 1
    assert "'bad'" in problems[0] and problem in problems[0]


@pytest.mark.parametrize('status, found, problems', [
    (None, [], 0), ({}, [], 0), ({'x': None}, [], 0), ('text', [], 1), ([1], [], 1),
])
def test_odd_statuses(status: Any, found: list[Peer], problems: int) -> None:
    result = priorities.parse(status)
    assert result[0] == found and len(result[1]) == problems


# -- deciding ----------------------------------------------------------------------------------------

@pytest.mark.parametrize('others, priority, sharded, paused, blockers, same, dead', [
    ([], 0, False, False, [], [], []),
    ([peer('a', 100)], 0, False, True, ['a'], [], []),                    # a higher one pauses us
    ([peer('a', 0)], 100, False, False, [], [], []),                      # a lower one does not
    ([peer('a', 0)], 0, False, True, [], ['a'], []),                      # the same: both pause
    ([peer('a', 0)], 0, True, False, [], ['a'], []),                      # ... unless sharded
    ([peer('a', 100)], 0, True, True, ['a'], [], []),                     # a higher one pauses even if sharded
    ([peer('a', 100, lifetime=10, seen=10)], 0, False, False, [], [], ['a']),   # expired exactly: dead
    ([peer('a', 100, lifetime=10, seen=9.9)], 0, False, True, ['a'], [], []),   # not yet
    ([peer('a', 100, lifetime=0)], 0, False, False, [], [], ['a']),       # a resumed freezer
    ([peer('a', 100, seen=100), peer('b', -5)], 0, False, False, [], [], ['a']),
    ([peer('b', 5), peer('a', 7), peer('c', 1)], 3, False, True, ['b', 'a'], [], []),
])
def test_who_pauses_whom(others: list[Peer], priority: int, sharded: bool, paused: bool,
                         blockers: list[str], same: list[str], dead: list[str]) -> None:
    verdict = priorities.decide([*others, peer('me', priority)], identity='me', priority=priority, now=NOW,
                                sharded=sharded)
    assert verdict.paused is paused
    assert [p.identity for p in verdict.blockers] == blockers
    assert [p.identity for p in verdict.same] == same
    assert list(verdict.dead) == dead


def test_our_own_entry_never_pauses_us_nor_is_cleaned() -> None:
    verdict = priorities.decide([peer('me', 100, lifetime=1, seen=5)], identity='me', priority=0, now=NOW)
    assert verdict == priorities.Verdict(paused=False)


def test_the_recheck_is_at_the_earliest_expiry_of_the_blockers() -> None:
    others = [peer('a', 100, lifetime=60, seen=50), peer('b', 100, lifetime=60, seen=10), peer('c', -1, lifetime=1)]
    verdict = priorities.decide(others, identity='me', priority=0, now=NOW)
    assert verdict.recheck_at == NOW + datetime.timedelta(seconds=10)
    assert priorities.decide([], identity='me', priority=0, now=NOW).recheck_at is None
    assert priorities.decide([peer('a', 0)], identity='me', priority=0, now=NOW, sharded=True).recheck_at is None


# -- keep-alives, identities, patches -----------------------------------------------------------------

@pytest.mark.parametrize('lifetime, jitter, delay', [(60, 5, 55), (60, 10, 50), (8, 7.5, 1), (3, 5, 1), (0, 5, 1)])
def test_keepalive_delay(lifetime: float, jitter: float, delay: float) -> None:
    assert priorities.keepalive_delay(lifetime, jitter) == delay


def test_the_patches_in_upstreams_format() -> None:
    assert priorities.touch_patch('me', priority=100, lifetime=60, now=NOW) == {
        'status': {'me': {'priority': 100, 'lifetime': 60, 'lastseen': '2026-01-02T03:04:05.000000+00:00'}}}
    assert priorities.clean_patch(['a', 'b']) == {'status': {'a': None, 'b': None}}


def test_a_touched_entry_parses_back() -> None:
    patch = priorities.touch_patch('me', priority=7, lifetime=30, now=NOW)
    assert priorities.parse(patch['status']) == ([peer('me', 7, 30)], [])


def test_peers_are_shown_as_upstream_shows_them() -> None:
    expected = "<Peer a: priority=100, lifetime=30, lastseen='2026-01-02T03:04:05.000000+00:00'>"
    assert repr(peer('a', 100, 30)) == expected


# -- kopf.dev and the legacy zalando.org objects together -------------------------------------------

def test_merge_keeps_every_identity_once_with_its_longest_living_entry() -> None:
    kopf_dev = [peer('both', 5, seen=30), peer('new-only', 1)]
    legacy = [peer('both', 5, seen=10), peer('old-only', 9)]
    merged = priorities.merge(kopf_dev, legacy)
    assert sorted(merged, key=lambda p: p.identity) == [peer('both', 5, seen=10), peer('new-only', 1),
                                                        peer('old-only', 9)]
    assert priorities.merge() == [] and priorities.merge(legacy) == legacy


def test_a_peer_only_in_the_legacy_object_pauses_us_in_the_merged_view() -> None:
    verdict = priorities.decide(priorities.merge([peer('me', 5)], [peer('old', 9)]), identity='me', priority=5, now=NOW)
    assert verdict.paused and [p.identity for p in verdict.blockers] == ['old']
