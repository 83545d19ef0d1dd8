"""The shard of an object (`kopf._shards.assignment`) against the facts of Kubernetes' `shardSelector`.

The facts (k8s.io/apimachinery/pkg/sharding, KEP "sharded list and watch"): the hash is the 64-bit
FNV-1a of the uid string's bytes (Go's `hash/fnv.New64a`), written as 16 lowercase hex digits;
`shardRange(object.metadata.uid, start, end)` matches if `start <= hash < end`, the bounds being
`0x`-prefixed 16-digit hex strings, or `0x10000000000000000` (2⁶⁴) as the upper bound of the last.
"""
import pytest

from kopf._shards import assignment as shards


# FNV-1a 64 test vectors (the published ones of the FNV reference, also Go's hash/fnv tests).
@pytest.mark.parametrize('value, expected', [
    ('', 0xcbf29ce484222325),
    ('a', 0xaf63dc4c8601ec8c),
    ('foobar', 0x85944171f73967e8),
])
def test_fnv1a64_vectors(value: str, expected: int) -> None:
    assert shards.fnv1a64(value) == expected


UIDS = ['6a1e0c3e-1b8c-4e1f-9a4b-2a3f0d4c5b6e', '00000000-0000-0000-0000-000000000000',
        'ffffffff-ffff-ffff-ffff-ffffffffffff', '1f0c9b3a-55d2-4c3e-8e7f-0a9b8c7d6e5f',
        'c0ffee00-dead-beef-0000-123456789abc', 'e2e3a1b0-7777-4444-9999-abcdefabcdef']

# (start, end) as a server is sent them: the apiserver's documented halves, thirds and sixths by ⌊i·2⁶⁴/N⌋.
RANGES = {
    2: [('0x0000000000000000', '0x8000000000000000'), ('0x8000000000000000', '0x10000000000000000')],
    3: [('0x0000000000000000', '0x5555555555555555'), ('0x5555555555555555', '0xaaaaaaaaaaaaaaaa'),
        ('0xaaaaaaaaaaaaaaaa', '0x10000000000000000')],
    6: [('0x0000000000000000', '0x2aaaaaaaaaaaaaaa'), ('0x2aaaaaaaaaaaaaaa', '0x5555555555555555'),
        ('0x5555555555555555', '0x8000000000000000'), ('0x8000000000000000', '0xaaaaaaaaaaaaaaaa'),
        ('0xaaaaaaaaaaaaaaaa', '0xd555555555555555'), ('0xd555555555555555', '0x10000000000000000')],
}


@pytest.mark.parametrize('total', sorted(RANGES))
def test_bounds_are_the_ranges_sent(total: int) -> None:
    assert [tuple(map(shards.hex_bound, shards.bounds(i, total))) for i in range(total)] == RANGES[total]


@pytest.mark.parametrize('uid', UIDS)
@pytest.mark.parametrize('total', sorted(RANGES))
def test_shard_of_equals_the_servers_range_test(uid: str, total: int) -> None:
    matching = [i for i, (start, end) in enumerate(RANGES[total]) if shards.in_range(uid, start, end)]
    assert matching == [shards.shard_of(uid, total)]


@pytest.mark.parametrize('uid, hashed, of2, of3, of6', [
    ('6a1e0c3e-1b8c-4e1f-9a4b-2a3f0d4c5b6e', '0x6d9adf33d0adb68a', 0, 1, 2),
    ('00000000-0000-0000-0000-000000000000', '0x7c384c6218f299f1', 0, 1, 2),
    ('ffffffff-ffff-ffff-ffff-ffffffffffff', '0x7718f1b2f3cdd331', 0, 1, 2),
])
def test_known_uids(uid: str, hashed: str, of2: int, of3: int, of6: int) -> None:
    assert shards.hex_bound(shards.fnv1a64(uid)) == hashed
    assert [shards.shard_of(uid, n) for n in (2, 3, 6)] == [of2, of3, of6]


def test_range_edges() -> None:
    # start is inclusive, end exclusive; 2^64 (17 digits) is above every hash
    assert not shards.in_range('', '0xcbf29ce484222326', '0x10000000000000000')
    assert shards.in_range('', '0xcbf29ce484222325', '0xcbf29ce484222326')
    assert not shards.in_range('', '0x0000000000000000', '0xcbf29ce484222325')
    assert shards.in_range('', '0x0000000000000000', '0x10000000000000000')


def test_floor_bounds_at_the_edge() -> None:
    # ⌊2⁶⁴/3⌋ belongs to shard 1 although its hash·3/2⁶⁴ is just under 1
    start = shards.bounds(1, 3)[0]
    assert start * 3 // shards.SPACE == 0
    assert [i for i in range(3) if shards.bounds(i, 3)[0] <= start < shards.bounds(i, 3)[1]] == [1]


def test_selector_of_shards() -> None:
    assert shards.selector([5, 0], 6) == (
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x2aaaaaaaaaaaaaaa') || "
        "shardRange(object.metadata.uid, '0xd555555555555555', '0x10000000000000000')")
    assert shards.selector([], 6) == ''


def test_held_selector_merges_adjacent_shards() -> None:
    assert shards.ranges([0, 1, 3, 5], 6) == [(0, shards.bounds(1, 6)[1]), shards.bounds(3, 6), shards.bounds(5, 6)]
    assert shards.held_selector([5, 4, 0], 6) == (
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x2aaaaaaaaaaaaaaa') || "
        "shardRange(object.metadata.uid, '0xaaaaaaaaaaaaaaaa', '0x10000000000000000')")
    assert shards.held_selector(range(6), 6) == (
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')")
    assert shards.held_selector([], 6) == ''


@pytest.mark.parametrize('total, members, expected', [
    (6, ['a'], {'a': 6}),
    (6, ['b', 'a', 'c'], {'a': 2, 'b': 2, 'c': 2}),
    (6, ['a', 'b', 'c', 'd'], {'a': 2, 'b': 2, 'c': 1, 'd': 1}),
    (2, ['a', 'b', 'c'], {'a': 1, 'b': 1, 'c': 0}),
    (6, [], {}),
])
def test_fair_shares(total: int, members: list[str], expected: dict[str, int]) -> None:
    assert shards.targets(total, members) == expected


@pytest.mark.parametrize('me, members, holders, acquire, release', [
    ('a', [], {}, {0, 1, 2, 3, 4, 5}, set()),                                        # alone: everything
    ('b', ['a'], {i: 'a' for i in range(6)}, set(), set()),                          # a joiner waits ...
    ('a', ['b'], {i: 'a' for i in range(6)}, set(), {3, 4, 5}),                      # ... for a's surplus
    ('b', ['a'], {0: 'a', 1: 'a', 2: 'a'}, {3, 4, 5}, set()),                        # ... then takes it
    ('d', ['a', 'b', 'c'], {0: 'a', 1: 'a', 2: 'b', 3: 'b', 4: 'c', 5: 'c'}, set(), set()),
    ('c', ['a', 'b', 'd'], {0: 'a', 1: 'a', 2: 'b', 3: 'b', 4: 'c', 5: 'c'}, set(), {5}),
    ('a', ['b'], {0: 'a', 1: 'a', 2: 'b', 3: 'b', 4: None, 5: None}, {4}, set()),    # a dead one's shards
    ('a', ['b'], {0: 'a', 1: 'a', 2: 'a', 3: 'b', 4: 'b', 5: 'x'}, set(), set()),     # x is not a member yet
])
def test_plan(me: str, members: list[str], holders: dict[int, str | None], acquire: set[int],
              release: set[int]) -> None:
    planned = shards.plan(identity=me, total=6, members=members, holders=holders)
    assert (set(planned.acquire), set(planned.release)) == (acquire, release)


# Membership: live until the Lease's duration after its record last changed, by our clock.
@pytest.mark.parametrize('previous, key, now, observed_at', [
    (None, ('r1', 15.0, 't1'), 100.0, 100.0),                                   # first seen: now
    (shards.Member('r1', ('r1', 15.0, 't1'), 90.0, 15.0), ('r1', 15.0, 't1'), 100.0, 90.0),  # unchanged: kept
    (shards.Member('r1', ('r1', 15.0, 't1'), 90.0, 15.0), ('r1', 15.0, 't2'), 100.0, 100.0),  # renewed: now
])
def test_a_members_expiry_restarts_on_a_change_only(previous: shards.Member | None, key: tuple[str, float, str],
                                                    now: float, observed_at: float) -> None:
    seen = shards.member(previous, holder='r1', key=key, duration=15.0, now=now)
    assert seen == shards.Member('r1', key, observed_at, 15.0)


def test_live_members_by_our_clock() -> None:
    members = [shards.Member('r1', 'k1', 100.0, 15.0), shards.Member('r2', 'k2', 90.0, 15.0),
               shards.Member('', 'k3', 100.0, 15.0)]  # released: no holder
    assert shards.live(members, now=104.9) == {'r1', 'r2'}
    assert shards.live(members, now=105.0) == {'r1'}   # r2 expired: 90 + 15
    assert shards.live(members, now=115.0) == set()
