"""Peering as values: who is alive, who pauses whom, when to keep alive. Pure.

The peering object (`KopfPeering` in a namespace, `ClusterKopfPeering` for the cluster, of
`kopf.dev/v1`, or the legacy `zalando.org/v1`) keeps one entry per operator in its status:
`status.<identity> = {priority, lifetime, lastseen}` (lastseen: ISO-8601, UTC). The rules:

- An entry is alive until `lastseen + lifetime`; then it is dead, and any peer nulls it.
- A live peer of a higher priority pauses us; a live peer of the same priority pauses both (with a
  warning) — unless shard selectors are configured (`settings.watching.shard_selectors`): then
  peers of the same priority share the work and do not pause each other. Else, we act.
- A paused operator decides again when the earliest blocking entry expires, or on any change.
- With both a kopf.dev and a legacy zalando.org peering object of the name, the peers of both
  count (`merge`): an entry in either pauses us.
- Keep-alives: every `lifetime - rand(5..10)` seconds, at least every second.
- A malformed entry (not a mapping, a lastseen that is not ISO-8601, a lifetime or priority that is
  not a number, a negative lifetime) is ignored; `parse` names it, for one warning.
"""
import dataclasses
import datetime
from collections.abc import Iterable, Mapping
from typing import Any

KEEPALIVE_JITTER = (5.0, 10.0)  # seconds before the entry's expiry when it is renewed: a random one of these
MIN_KEEPALIVE = 1.0
DEV_PRIORITY = 666  # `--dev`


@dataclasses.dataclass(frozen=True)
class Peer:
    """One operator's (or a freezer's) entry in a peering object."""

    identity: str
    priority: int
    lifetime: float
    lastseen: datetime.datetime  # aware, UTC

    @property
    def deadline(self) -> datetime.datetime:
        return self.lastseen + datetime.timedelta(seconds=self.lifetime)

    def is_dead(self, now: datetime.datetime) -> bool:
        return self.deadline <= now

    def __repr__(self) -> str:  # as upstream logs its peers
        lifetime = int(self.lifetime) if float(self.lifetime).is_integer() else self.lifetime
        return (f'<Peer {self.identity}: priority={self.priority}, lifetime={lifetime}, '
                f'lastseen={format_time(self.lastseen)!r}>')


@dataclasses.dataclass(frozen=True)
class Verdict:
    """What the peering's current entries mean for us."""

    paused: bool
    blockers: tuple[Peer, ...] = ()  # live peers of a higher priority
    same: tuple[Peer, ...] = ()      # live peers of our priority (they pause us unless sharded)
    dead: tuple[str, ...] = ()       # identities of the expired entries of others: to be nulled
    recheck_at: datetime.datetime | None = None  # the earliest expiry of a blocking entry


def format_time(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).isoformat(timespec='microseconds')


def parse_time(value: Any) -> datetime.datetime:
    """An ISO-8601 time (naive ones are UTC, as old operators wrote them); ValueError if it is not one."""
    if not isinstance(value, str):
        raise ValueError(f'not a string: {value!r}')
    moment = datetime.datetime.fromisoformat(value)
    return moment.replace(tzinfo=datetime.UTC) if moment.tzinfo is None else moment


def parse_peer(identity: str, entry: Any) -> Peer:
    """One status entry as a peer; ValueError naming what is wrong with it."""
    if not isinstance(entry, Mapping):
        raise ValueError(f'not a mapping: {entry!r}')
    try:
        lastseen = parse_time(entry.get('lastseen'))
    except ValueError:
        raise ValueError(f'lastseen is not an ISO-8601 time: {entry.get("lastseen")!r}') from None
    lifetime, priority = entry.get('lifetime'), entry.get('priority', 0)
    if isinstance(lifetime, bool) or not isinstance(lifetime, (int, float)) or lifetime < 0:
        raise ValueError(f'lifetime is not a non-negative number: {lifetime!r}')
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise ValueError(f'priority is not an integer: {priority!r}')
    return Peer(identity=identity, priority=priority, lifetime=float(lifetime), lastseen=lastseen)


def parse(status: Any) -> tuple[list[Peer], list[str]]:
    """The peers of a peering object's status, and a description of each malformed entry (ignored)."""
    if not isinstance(status, Mapping):
        return [], ([] if status is None else [f'the status is not a mapping: {status!r}'])
    peers: list[Peer] = []
    problems: list[str] = []
    for identity, entry in status.items():
        if entry is None:
            continue  # nulled: gone
        try:
            peers.append(parse_peer(str(identity), entry))
        except ValueError as exc:
            problems.append(f'the entry {identity!r} is ignored: {exc}')
    return peers, problems


def merge(*groups: Iterable[Peer]) -> list[Peer]:
    """One view of the peers of several peering objects (kopf.dev and the legacy zalando.org ones).

    An operator that keeps alive in both has an entry in each: the one that lives longest counts.
    """
    merged: dict[str, Peer] = {}
    for group in groups:
        for peer in group:
            known = merged.get(peer.identity)
            if known is None or peer.deadline > known.deadline:
                merged[peer.identity] = peer
    return list(merged.values())


def decide(peers: Iterable[Peer], *, identity: str, priority: int, now: datetime.datetime,
           sharded: bool = False) -> Verdict:
    """Whether we pause, in favour of whom, and which entries of others are dead."""
    others = [peer for peer in peers if peer.identity != identity]
    dead = tuple(sorted(peer.identity for peer in others if peer.is_dead(now)))
    alive = [peer for peer in others if not peer.is_dead(now)]
    blockers = tuple(peer for peer in alive if peer.priority > priority)
    same = tuple(peer for peer in alive if peer.priority == priority)
    blocking = [*blockers, *(() if sharded else same)]
    recheck_at = min((peer.deadline for peer in blocking), default=None)
    return Verdict(paused=bool(blocking), blockers=blockers, same=same, dead=dead, recheck_at=recheck_at)


def keepalive_delay(lifetime: float, jitter: float) -> float:
    """Seconds until the next keep-alive: `jitter` (5..10 s, random) before our entry expires."""
    return max(MIN_KEEPALIVE, lifetime - jitter)


def touch_patch(identity: str, *, priority: int, lifetime: float, now: datetime.datetime) -> dict[str, Any]:
    """The merge-patch of our keep-alive entry."""
    seconds = int(lifetime) if float(lifetime).is_integer() else lifetime
    return {'status': {identity: {'priority': priority, 'lifetime': seconds, 'lastseen': format_time(now)}}}


def clean_patch(identities: Iterable[str]) -> dict[str, Any]:
    """The merge-patch that removes these entries (ours on exit, dead ones of others)."""
    return {'status': {identity: None for identity in identities}}


def describe_scope(name: str, namespace: str | None) -> str:
    return f'{name!r} in {namespace!r}' if namespace is not None else f'{name!r} cluster-wide'
