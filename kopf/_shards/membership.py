"""Sharding across replicas on Leases (`kopf run --lease NAME --shards N`): the I/O of `kopf._shards.assignment`.

- N shard Leases `NAME-<i>`, each an `Elector` (`kopf._leases.holding`) whose scope is `scopes.Shard(i)`: the
  objects hashed into shard i act only while its Lease is ours (the one "may act now?" predicate of
  `kopf._engine.scopes`, asked with the object's record's shard).
- Membership: one Lease per replica (`NAME-member-<hash of the identity>`), renewed like the shards'; a
  member is live until its Lease's duration after we last saw it change, by our clock (`shards.live()`,
  evaluated on every change and every retry period).
- One watch per replica for all these Leases: the shards' and the members' carry the label
  `kopf.dev/shards-of: NAME` (written on every create and update: a shard Lease written by an older
  version, unlabelled, is seen from our first write to it; until then its Elector knows it from its own
  GET at the start and after a 409). Each event goes by name to the shard's (or our membership's)
  `Elector.observe()` and to the membership; a DELETED is checked with a GET (a Lease whose label an
  older version's update dropped is not gone). The watch is `watching.watch_objs()`: listed at the
  start and again only after a 410; reconnected after failures, resumed from the last resourceVersion.
- Every retry period (and on any change of a Lease's holder or of the live members), `shards.plan()`
  says what to do: free shards under our fair share are wanted (their Electors acquire them); surplus
  shards are released once their work is finished: their scope is paused first (no new cycle; daemons
  and timers stop with `OPERATOR_PAUSING`), then, when no cycle, daemon or timer of theirs runs any
  more, the Lease is released (an empty holder: the next replica takes it at once). A dead replica's
  shards are taken once their Leases expire by our clock.
- A shard that becomes ours is taken over (`queueing.Dispatcher.take_over`): its objects are treated
  as at operator start; a shard lost (its Lease could not be renewed) pauses its objects and cancels
  their cycles in flight, as a lost Lease does for the whole operator.
- Every change of the shard set is logged with the identity (and `kopf_peering_shards_held` is set).
- The shards held are also the `Selection` the watches send as `shardSelector=` (`observing`): a server
  that serves it sends each replica only its shards' objects; a change re-lists with the new ranges.
"""
import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from kopf._api import apierrors, watching, watchstate
from kopf._core import records, resources
from kopf._engine import contexts, scopes
from kopf._leases import elections
from kopf._leases import holding as leasing
from kopf._shards import assignment as shards
from kopf._shards import streams

logger = logging.getLogger('kopf.reactor.sharding')

LABEL = 'kopf.dev/shards-of'
LEASES = resources.Resource('coordination.k8s.io', 'v1', 'leases', kind='Lease', namespaced=True)


class Selection:
    """The shards held, for the watches' `shardSelector`: each change bumps the version and wakes the watchers."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.held: frozenset[int] = frozenset()
        self.version = 0
        self.ignored: set[str] = set()   # the resources whose server was seen to ignore the selector (logged once)
        self.gained: dict[int, int] = {}   # per shard, the version in which it was last gained (`streams._narrow`)
        self._changed = asyncio.Event()

    def update(self, held: set[int]) -> None:
        if frozenset(held) != self.held:
            self.version += 1
            for shard in frozenset(held) - self.held:
                self.gained[shard] = self.version
            self.held = frozenset(held)
            self._changed.set()
            self._changed = asyncio.Event()

    async def changed_since(self, version: int) -> None:
        while self.version == version:
            await self._changed.wait()

    def applies(self, ctx: contexts.OperatorContext, resource: Any) -> bool:
        """Whether this resource's watches send the shards (`streams.selection_for`)."""
        return streams.selection_for(ctx, resource) is not None

    async def read(self, ctx: contexts.OperatorContext, rctx: contexts.ResourceContext, namespace: str | None,
                   deliver: contexts.Deliver, *, keep_bodies: bool = False) -> None:
        """The engine's watch of the resource, as a sharded replica's (`streams.read`)."""
        await streams.read(ctx, rctx, namespace, self, deliver, keep_bodies=keep_bodies)


class Sharding:
    """The shard Leases and the membership Lease of this replica; the same `start()`/`release()` as `Leasing`."""

    def __init__(self, ctx: contexts.OperatorContext) -> None:
        settings = ctx.settings.peering.lease
        assert settings.name is not None and ctx.shards > 0
        namespace, self.name = elections.split_name(settings.name)
        self.namespace = namespace or settings.namespace
        self.ctx = ctx
        self.total = ctx.shards
        self.identity = ctx.identity or ''
        self.durations = elections.durations_of(settings)
        self.changed = asyncio.Event()
        self.held: set[int] = set()
        self.releasing: set[int] = set()
        self.seen: dict[str, shards.Member] = {}  # membership Lease name → its holder and expiry (our clock)
        self.members: set[str] = {self.identity}
        self.listed = asyncio.Event()  # the watch's initial listing is in (the members known)
        self.exiting = False
        labels = {LABEL: self.name}
        self.electors = [leasing.Elector(ctx, f'{self.name}-{i}', self.namespace, self.identity, scopes.Shard(i),
                                         configures=(i == 0), labels=labels, wanted=False,
                                         on_change=self.changed.set)
                         for i in range(self.total)]
        self.member_prefix = f'{self.name}-member-'
        member = f'{self.member_prefix}{shards.fnv1a64(self.identity):016x}'
        self.membership = leasing.Elector(ctx, member, self.namespace, self.identity, pauses=False,
                                          configures=False, labels=labels, on_change=self.changed.set)
        self.by_name = {elector.name: elector for elector in [*self.electors, self.membership]}
        ctx.pausing.on_shard = self.shard_changed  # after the electors paused their shards (nothing was held)
        ctx.selection = self.selection = Selection(self.total)  # what the watches send as `shardSelector`

    def start(self, tg: asyncio.TaskGroup) -> None:
        tg.create_task(self.run(tg), name=f'kopf shards of {self.name}')

    async def run(self, tg: asyncio.TaskGroup) -> None:
        if self.namespace is None:
            self.namespace = await leasing.resolve_namespace(self.ctx)
            for elector in [self.membership, *self.electors]:
                elector.namespace = self.namespace
        logger.info(f'Sharding {self.name} in {self.total} shards as {self.identity!r}.')
        self.ctx.metrics.shards(0)
        tg.create_task(self.watch(), name=f'kopf watch of the leases of {self.namespace}/{self.name}')
        for elector in [self.membership, *self.electors]:
            tg.create_task(elector.run(watches=False), name=f'kopf lease {elector.name}')
        loop = asyncio.get_running_loop()
        with contextlib.suppress(TimeoutError):  # the members known before the first plan (if the listing comes)
            async with asyncio.timeout(self.durations.retry_period):
                await self.listed.wait()
        while True:
            self.count_members(loop.time())  # the members' expiry: on every change, at least every retry period
            self.changed.clear()
            self.rebalance(tg, loop.time())  # and on every change of a Lease's holder
            try:
                async with asyncio.timeout(self.durations.retry_period):
                    await self.changed.wait()
            except TimeoutError:
                pass

    async def watch(self) -> None:
        """All the Leases of this sharding, one watch by their label; each event to its Elector and the membership."""
        state = watchstate.WatchState(keep_bodies=True)  # a DELETED found by a re-list carries the Lease's name
        where = f'{self.namespace}/{self.name}'
        while True:
            try:
                async for item in watching.watch_objs(self.ctx.client, LEASES, namespace=self.namespace,
                                                      label_selector=f'{LABEL}={self.name}', state=state):
                    if item is watchstate.LISTED:
                        self.listed.set()
                    else:
                        await self.observe(item)
            except (apierrors.APIError, OSError, TimeoutError) as exc:
                logger.warning(f'Watching the leases of the shards {where} failed ({exc}); retrying.')
            await asyncio.sleep(self.durations.retry_period)

    async def observe(self, event: Mapping[str, Any]) -> None:
        """A Lease of the sharding changed (or was listed): its Elector's view, and the members'."""
        body = event.get('object')
        name = (body.get('metadata') or {}).get('name') if isinstance(body, Mapping) else None
        deleted = event.get('type') == 'DELETED'
        elector = self.by_name.get(name) if isinstance(name, str) else None
        if elector is not None and deleted:
            await elector.read()  # gone, or only unlabelled (an older version's update): a GET says which
        elif elector is not None and isinstance(body, Mapping):
            elector.observe(body)
        if isinstance(name, str) and name.startswith(self.member_prefix):
            self.see_member(name, None if deleted or not isinstance(body, Mapping) else body)

    def see_member(self, name: str, body: Mapping[str, Any] | None) -> None:
        now = asyncio.get_running_loop().time()
        lease = elections.parse(body)
        if lease is None or not lease.holder:  # deleted, or released (an exit)
            self.seen.pop(name, None)
        else:
            duration = lease.duration or self.durations.lease_duration
            self.seen[name] = shards.member(self.seen.get(name), holder=lease.holder, key=lease.key,
                                            duration=duration, now=now)
        self.count_members(now)

    def count_members(self, now: float) -> None:
        """The live members by our clock, ourselves included; a change of them wakes the rebalancing."""
        members = shards.live(self.seen.values(), now) | {self.identity}
        if members != self.members:
            self.members = members
            self.changed.set()

    def holders(self, now: float) -> dict[int, str | None]:
        """Each shard's valid holder by our clock (None: free or expired)."""
        found: dict[int, str | None] = {}
        for i, elector in enumerate(self.electors):
            decision = elector.decide(now)
            if decision.action is elections.Action.RENEW or i in self.releasing:
                found[i] = self.identity
            elif decision.action is elections.Action.WAIT and elector.lease is not None:
                found[i] = elector.lease.holder
            else:
                found[i] = None
        return found

    def rebalance(self, tg: asyncio.TaskGroup, now: float) -> None:
        planned = shards.plan(identity=self.identity, total=self.total, members=self.members,
                              holders=self.holders(now))
        for i, elector in enumerate(self.electors):
            wanted = i in planned.acquire or (elector.leading and i not in planned.release)
            if wanted != elector.wanted and i not in self.releasing:
                elector.wanted = wanted
                elector.changed.set()
        for i in sorted(planned.release - self.releasing):
            self.releasing.add(i)
            tg.create_task(self.release_shard(i), name=f'kopf release of the shard {self.electors[i].name}')

    async def release_shard(self, index: int) -> None:
        """A surplus shard: pause its objects, let their work finish, then release its Lease."""
        elector = self.electors[index]
        pauser = ('rebalance', self.name)
        elector.wanted = False
        self.ctx.pausing.pause(scopes.Shard(index), pauser)  # no new cycle; daemons and timers stop
        try:
            await self.ctx.pausing.wait_for(lambda: not busy(self.ctx, index))  # poked as their cycles end
            await elector.release(why='rebalanced to another replica')
        finally:
            self.ctx.pausing.resume(scopes.Shard(index), pauser)  # the elector's own pause goes on
            self.releasing.discard(index)
            self.changed.set()

    def shard_changed(self, index: int, paused: bool, cancelling: bool) -> None:
        """A shard's scope flipped: pause its objects (cancelling cycles if its Lease is lost), or take them over."""
        if paused:
            self.held.discard(index)
        else:
            self.held.add(index)
        for rctx in list(self.ctx.served.values()):
            for record in list(rctx.records.values()):
                owner = rctx.dispatcher_of(record)
                if record.shard != index or owner is None:
                    continue
                if paused:
                    owner.pause_record(record, cancelling=cancelling)
                else:
                    owner.take_over(record)
        self.ctx.metrics.shards(len(self.held))
        self.selection.update(self.held)  # the watches re-list with the new ranges (after the pause, if released)
        what = ('released' if self.exiting or not cancelling else 'lost') if paused else 'taken over'
        logger.info(f'The shard {self.electors[index].name} is {what} by {self.identity!r}; '
                    f'the shards held: {shards.describe(self.held)} of {self.total}.')

    async def release(self) -> None:
        self.exiting = True
        await asyncio.gather(*(elector.release() for elector in [*self.electors, self.membership]),
                             return_exceptions=True)


def busy(ctx: contexts.OperatorContext, index: int) -> bool:
    """Whether a cycle, a daemon or a timer of the shard's objects still runs."""
    return any(record.shard == index and (record.phase is records.Phase.RUNNING or _daemons(rctx, record.uid))
               for rctx in ctx.served.values() for record in rctx.records.values())


def _daemons(rctx: contexts.ResourceContext, uid: str) -> bool:
    background = rctx.background_of(uid)
    return background is not None and background.running > 0
