"""Which scopes of the operator are paused, and by whom: the one answer to "may this act now?".

A scope is a namespace (a namespaced peering), `WHOLE` (the cluster-wide peering, the Lease of
the leader election), or a `Shard` (`--shards N`: the objects whose uid hashes into shard i, paused
while this replica does not hold its Lease). A scope is paused while anyone pauses it; an object
may act unless the whole operator, its namespace or its shard is paused (`paused(namespace, shard)`:
the shard is the object's record's, `ObjectRecord.shard`).

What a paused scope means for the reactor (`kopf._engine.observing`, `queueing`, `kopf._daemons.spawning`):
its watch streams stop (the streams of indexed resources go on feeding the indices only), no
cycle runs handlers, its daemons stop with `OPERATOR_PAUSING` and its timers stop; cycles that are
in flight finish, unless a pauser cancels them (`cancelling=True`: a Lease lost, whose holder must
stop acting before anyone else may acquire it). Resuming re-lists its streams: the objects'
cycles, daemons and timers start again.

`Pauses` is the pure value (tested without a loop); `Pausing` holds it for the operator, with waits for
its changes: peering, Leases and shards pause and resume scopes there, the watchers wait there for their
scope to be paused or resumed, and the cycles and daemons ask `paused()` before they act. A shard's scope
pauses objects, not streams: its changes go to `on_shard` (`kopf._shards.membership`), which pauses or
takes over the shard's objects' records.
"""
import asyncio
import dataclasses
import functools
from collections.abc import Callable, Hashable

WHOLE = None  # the scope of the whole operator (cluster-wide peering)


@dataclasses.dataclass(frozen=True)
class Shard:
    """The objects of one shard (`kopf._shards.assignment.shard_of`); paused unless its Lease is ours."""
    index: int


Scope = str | Shard | None


@dataclasses.dataclass
class Pauses:
    """The pausers of each paused scope; changes count up `version`."""

    by: dict[Scope, set[Hashable]] = dataclasses.field(default_factory=dict)
    cancelling: set[tuple[Scope, Hashable]] = dataclasses.field(default_factory=set)  # they cancel cycles in flight
    version: int = 0

    def pause(self, scope: Scope, pauser: Hashable, *, cancelling: bool = False) -> bool:
        """Pause the scope for this pauser; True if the scope was not paused before."""
        pausers = self.by.setdefault(scope, set())
        was = bool(pausers)
        if pauser not in pausers:
            pausers.add(pauser)
            self.version += 1
        if cancelling:
            self.cancelling.add((scope, pauser))
        else:
            self.cancelling.discard((scope, pauser))
        return not was

    def resume(self, scope: Scope, pauser: Hashable) -> bool:
        """This pauser no longer pauses the scope; True if the scope is not paused any more."""
        pausers = self.by.get(scope)
        if not pausers or pauser not in pausers:
            return False
        pausers.discard(pauser)
        self.cancelling.discard((scope, pauser))
        self.version += 1
        if not pausers:
            del self.by[scope]
            return True
        return False

    def cancels(self, namespace: str | None, shard: int | None = None) -> bool:
        """Whether the cycles in flight of this namespace's (and shard's) objects are to be cancelled (not finished)."""
        scopes: list[Scope] = [WHOLE] if namespace is None else [WHOLE, namespace]
        if shard is not None:
            scopes.append(Shard(shard))
        return any((scope, pauser) in self.cancelling for scope in scopes for pauser in self.by.get(scope, ()))

    def scope_paused(self, scope: Scope) -> bool:
        return bool(self.by.get(scope))

    def paused(self, namespace: str | None, shard: int | None = None) -> bool:
        """Whether an object of this namespace (None: cluster-scoped) and shard (None: unsharded) may not act now."""
        if not self.by:
            return False
        return self.scope_paused(WHOLE) or (namespace is not None and self.scope_paused(namespace)) or \
            (shard is not None and self.scope_paused(Shard(shard)))

    def manages_webhooks(self) -> bool:
        """Whether this replica writes the managed webhook configurations: nothing is paused, but shards
        other than shard 0 (a shard pauses objects, not the operator; shard 0's holder writes them)."""
        return not any(not isinstance(scope, Shard) or scope.index == 0 for scope in self.by)


class Pausing:
    """Who pauses which scope; awaitable changes."""

    def __init__(self) -> None:
        self.pauses = Pauses()
        self._changed: asyncio.Event | None = None  # the waiters of `wait()` and `wait_for()`
        self._poked: asyncio.Event | None = None    # the waiters of `wait_for()` only (`poke()`)
        self.on_shard: Callable[[int, bool, bool], None] | None = None  # (index, paused, cancelling)

    def paused(self, namespace: str | None, shard: int | None = None) -> bool:
        return self.pauses.paused(namespace, shard)

    def pause(self, scope: Scope, pauser: Hashable, *, cancelling: bool = False) -> bool:
        """Pause the scope for this pauser (cancelling the cycles in flight, if asked); True if it was not paused."""
        return self._change(functools.partial(self.pauses.pause, cancelling=cancelling), scope, pauser)

    def cancels(self, namespace: str | None, shard: int | None = None) -> bool:
        return self.pauses.cancels(namespace, shard)

    def resume(self, scope: Scope, pauser: Hashable) -> bool:
        """This pauser no longer pauses the scope; True if it is not paused any more."""
        return self._change(self.pauses.resume, scope, pauser)

    def _change(self, change: Callable[[Scope, Hashable], bool], scope: Scope,
                pauser: Hashable) -> bool:
        version = self.pauses.version
        was = self.pauses.scope_paused(scope)
        result = change(scope, pauser)
        if self.pauses.version != version:
            self._notify()
        now = self.pauses.scope_paused(scope)
        if isinstance(scope, Shard) and was != now and self.on_shard is not None:
            self.on_shard(scope.index, now, (scope, pauser) in self.pauses.cancelling)
        return result

    async def wait(self, namespace: str | None, *, paused: bool) -> None:
        """Until objects of this namespace are paused (or resumed, with `paused=False`)."""
        while self.paused(namespace) != paused:
            if self._changed is None:
                self._changed = asyncio.Event()
            await self._changed.wait()

    async def wait_for(self, check: Callable[[], bool]) -> None:
        """Until the check is true, re-checked on every change and `poke()` (e.g. a released shard's work finished)."""
        while not check():
            if self._poked is None:
                self._poked = asyncio.Event()
            await self._poked.wait()

    def poke(self) -> None:
        """Something the waiters of `wait_for()` may look at has changed (a sharded object's cycle ended).

        Only those: the watch streams' waiters of `wait()` (one per stream) are not woken on every cycle's end.
        """
        if self._poked is not None:
            self._poked.set()
            self._poked = None

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None  # the waiters re-check; later waits get a new event
        self.poke()
