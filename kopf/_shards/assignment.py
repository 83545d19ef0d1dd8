"""Sharding across replicas (`kopf run --lease NAME --shards N`), as values. Pure.

- An object belongs to shard `i` of `N` by the hash that Kubernetes' `shardSelector` uses
  (`k8s.io/apimachinery/pkg/sharding`): the 64-bit FNV-1a of the bytes of `metadata.uid`; the
  range test is `start <= hash < end`; shard `i` covers `[⌊i·2⁶⁴/N⌋, ⌊(i+1)·2⁶⁴/N⌋)`, so the
  last one ends at 2⁶⁴ (written `0x10000000000000000` on the wire).
- `selector()` is the `shardRange(object.metadata.uid, '0x…', '0x…')` expression of some shards
  (joined with `||`), for a server that filters by it; `held_selector()` the same with adjacent shards'
  ranges merged (what a replica sends for the shards it holds); the client filters by `shard_of()` anyway.
- Shard assignment (`plan()`): each live member targets a fair share of the N shards (⌈N/m⌉ for
  the first `N mod m` members by identity, ⌊N/m⌋ for the others); a replica over its share
  releases its highest shards; one under its share takes the lowest free ones (no valid holder).
- Membership (`member()`, `live()`): a member is live until its Lease's duration after we last saw
  its record change (a renewal, a new holder), by our clock (`now`: the loop's time, passed in).
"""
import dataclasses
from collections.abc import Collection, Hashable, Iterable, Mapping

SPACE = 1 << 64
FNV_OFFSET = 0xcbf29ce484222325
FNV_PRIME = 0x100000001b3
KEY = 'object.metadata.uid'


def fnv1a64(value: str) -> int:
    """The 64-bit FNV-1a hash of the string's UTF-8 bytes (Go's `hash/fnv.New64a`)."""
    h = FNV_OFFSET
    for byte in value.encode('utf-8'):
        h = ((h ^ byte) * FNV_PRIME) & (SPACE - 1)
    return h


def bounds(index: int, total: int) -> tuple[int, int]:
    """The hash range `[start, end)` of shard `index` of `total`."""
    if not 0 <= index < total:
        raise ValueError(f'shard {index} of {total} does not exist')
    return index * SPACE // total, (index + 1) * SPACE // total


def shard_of(uid: str, total: int) -> int:
    """The shard of an object by its uid: the one whose range holds the uid's hash."""
    h = fnv1a64(uid)
    index = h * total // SPACE
    if index + 1 < total and h >= (index + 1) * SPACE // total:  # ⌊…⌋ bounds may start a hair below
        index += 1
    return index


def hex_bound(value: int) -> str:
    """A range bound as the server writes it: 16 lowercase hex digits (17 for 2⁶⁴), `0x`-prefixed."""
    return f'0x{value:016x}'


def in_range(uid: str, start: str, end: str) -> bool:
    """The server's range test on normalized hex strings (shorter is smaller; else lexicographic)."""
    def less(a: str, b: str) -> bool:
        return len(a) < len(b) if len(a) != len(b) else a < b
    h = hex_bound(fnv1a64(uid))
    return not less(h, start) and less(h, end)


def selector(indices: Iterable[int], total: int) -> str:
    """The `shardSelector` of these shards (empty: none)."""
    ranges = [bounds(i, total) for i in sorted(set(indices))]
    return ' || '.join(f"shardRange({KEY}, '{hex_bound(start)}', '{hex_bound(end)}')" for start, end in ranges)


def ranges(indices: Iterable[int], total: int) -> list[tuple[int, int]]:
    """The hash ranges of these shards, adjacent ones merged: `[0, 1, 3]` of 6 is two ranges, not three."""
    merged: list[tuple[int, int]] = []
    for start, end in (bounds(i, total) for i in sorted(set(indices))):
        if merged and merged[-1][1] == start:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def held_selector(indices: Iterable[int], total: int) -> str:
    """The `shardSelector` a replica sends for the shards it holds: one expression, adjacent shards merged
    (its normal form, as the server echoes it in `shardInfo`); empty if it holds none."""
    return ' || '.join(f"shardRange({KEY}, '{hex_bound(start)}', '{hex_bound(end)}')"
                       for start, end in ranges(indices, total))


def targets(total: int, members: Collection[str]) -> dict[str, int]:
    """How many shards each member should hold: ⌈N/m⌉ for the first `N mod m` (by identity), ⌊N/m⌋ for the rest."""
    ordered = sorted(set(members))
    if not ordered:
        return {}
    base, extra = divmod(total, len(ordered))
    return {member: base + (1 if position < extra else 0) for position, member in enumerate(ordered)}


@dataclasses.dataclass(frozen=True)
class Plan:
    acquire: frozenset[int] = frozenset()  # free shards to take now
    release: frozenset[int] = frozenset()  # our surplus shards, to release once their work is finished
    target: int = 0


def plan(*, identity: str, total: int, members: Collection[str], holders: Mapping[int, str | None]) -> Plan:
    """What this replica should do with the shards, given the live members and each shard's valid holder."""
    target = targets(total, {*members, identity})[identity]
    mine = sorted(i for i in range(total) if holders.get(i) == identity)
    if len(mine) > target:
        return Plan(release=frozenset(mine[target:]), target=target)
    free = [i for i in range(total) if not holders.get(i)]
    return Plan(acquire=frozenset(free[:target - len(mine)]), target=target)


def describe(indices: Collection[int]) -> str:
    return '[' + ', '.join(str(i) for i in sorted(indices)) + ']'


@dataclasses.dataclass(frozen=True)
class Member:
    """A membership Lease as last seen: its holder, its record's key, since when unchanged (our clock), for how long."""
    holder: str
    key: Hashable
    observed_at: float
    duration: float


def member(previous: Member | None, *, holder: str, key: Hashable, duration: float, now: float) -> Member:
    """A membership Lease seen now: its expiry restarts only if its record changed since `previous`."""
    observed_at = previous.observed_at if previous is not None and previous.key == key else now
    return Member(holder=holder, key=key, observed_at=observed_at, duration=duration)


def live(members: Iterable[Member], now: float) -> set[str]:
    """The holders of the membership Leases not expired by our clock."""
    return {m.holder for m in members if m.holder and now < m.observed_at + m.duration}
