"""Peering: several operators on one peering object; the one of the highest priority acts.

The decisions are pure (`kopf._peering.priorities`); this module talks and waits:
- One `Peering` per peering scope: the cluster-wide `ClusterKopfPeering` (with `-A`), or one
  `KopfPeering` in each served namespace (with `-n`, including namespaces found through globs).
- Its scope (`kopf._engine.scopes`) is paused from the start until the first look at the peering
  object (as upstream: "Resuming operations after the pause." once nobody blocks us).
- The peering object is looked up in `kopf.dev/v1` and in the legacy `zalando.org/v1`; as upstream,
  if both exist, both are kept alive and watched, and the peers of both count (one merged view,
  `peers.merge`). A 403 on the legacy kinds counts as absent (old RBAC or new, either works). Absent:
  in auto mode (no `--peering`), the operator runs standalone (a debug line only: upstream says
  nothing then); in mandatory mode (`--peering NAME`), a warning
  every `ABSENT_RECHECK` seconds and no handling until it exists.
- Its object is watched (by name); every event is decided on: dead entries of others are nulled,
  a live peer of a higher priority (or of the same priority, unless sharded) pauses the scope; the
  decision is made again when the earliest blocking entry expires (a due time in the operator's
  one scheduler, `kopf._engine.scheduling`).
- Keep-alives: our entry is merge-patched every `lifetime - rand(5..10)` s (also a due time in the
  scheduler), and nulled on exit. Malformed entries get one warning each, and are ignored.
- `freeze()`/`resume()`: the `kopf freeze`/`kopf resume` commands: one entry written or nulled (in
  each peering object of the name: kopf.dev's and the legacy one).
"""
import asyncio
import datetime
import logging
import random
from collections.abc import Collection, Coroutine, Mapping
from typing import Any

from kopf._api import apierrors, credentials, loginning, watching, watchstate
from kopf._api import client as client_
from kopf._core import resources
from kopf._core import settings as settings_
from kopf._engine import contexts
from kopf._engine import identity as identity_
from kopf._peering import priorities as peers

logger = logging.getLogger('kopf.reactor.peering')

ABSENT_RECHECK = 10.0  # seconds between the looks for an absent mandatory peering object
FIND_BACKOFFS = (0.5, 1.0, 2.0)  # retries of the look-up (5xx; 403 of kopf.dev): mandatory peering looks again later
PAUSER = 'peering'

CLUSTER_PEERINGS = (
    resources.Resource('kopf.dev', 'v1', 'clusterkopfpeerings', kind='ClusterKopfPeering', namespaced=False),
    resources.Resource('zalando.org', 'v1', 'clusterkopfpeerings', kind='ClusterKopfPeering', namespaced=False),
)
NAMESPACED_PEERINGS = (
    resources.Resource('kopf.dev', 'v1', 'kopfpeerings', kind='KopfPeering', namespaced=True),
    resources.Resource('zalando.org', 'v1', 'kopfpeerings', kind='KopfPeering', namespaced=True),
)


async def find(client: client_.APIClient, name: str,
               namespace: str | None) -> dict[resources.Resource, dict[str, Any]]:
    """The peering objects of this name: kopf.dev's and the legacy zalando.org's, those that exist.

    A 403 on one group counts as absent there (an operator's RBAC may name only one group); if
    nothing is found and kopf.dev's was forbidden, that 403 is raised: a clearer cause than "not found".
    """
    candidates = CLUSTER_PEERINGS if namespace is None else NAMESPACED_PEERINGS
    found: dict[resources.Resource, dict[str, Any]] = {}
    forbidden: apierrors.APIForbiddenError | None = None
    for resource in candidates:
        legacy = resource is not candidates[0]
        url = resource.get_url(namespace=namespace, name=name)
        # The legacy group's 403 is final (the common case: RBAC for kopf.dev only); a 5xx is retried.
        final = (apierrors.APIForbiddenError,) if legacy else ()
        try:
            body = await client.request('GET', url, backoffs=FIND_BACKOFFS, final=final)
        except apierrors.APINotFoundError:
            continue
        except apierrors.APIForbiddenError as exc:
            logger.debug(f'The peering objects of {resource.group} cannot be read ({exc}); counted as absent.')
            forbidden = forbidden if legacy else exc
            continue
        if isinstance(body, dict):
            found[resource] = body
    if not found and forbidden is not None:
        raise forbidden
    return found


async def write(client: client_.APIClient, resource: resources.Resource, name: str, namespace: str | None,
                patch: Mapping[str, Any]) -> Any:
    """A merge-patch of the peering object (as upstream sends it); the server's answer."""
    return await client.request('PATCH', resource.get_url(namespace=namespace, name=name), payload=patch,
                                content_type=client_.MERGE_PATCH_CT)


class Peering:
    """One peering object that the operator takes part in, and the scope it pauses."""

    def __init__(self, ctx: contexts.OperatorContext, namespace: str | None, identity: str) -> None:
        self.ctx = ctx
        self.namespace = namespace
        self.identity = identity
        self.settings = ctx.settings.peering
        self.where = peers.describe_scope(self.settings.name, namespace)
        self.resources: tuple[resources.Resource, ...] = ()  # the groups whose peering object was found
        self.lasts: dict[resources.Resource, Mapping[str, Any]] = {}  # each one's latest body
        self.warned: set[str] = set()
        self.touched = False
        self.announced: tuple[str, frozenset[str]] | None = None  # what was logged last: why, and who
        self.writes: set[asyncio.Task[Any]] = set()
        self.advisory = bool(self.settings.lease.name)  # with a Lease: keep-alives only, the Lease decides
        if not self.advisory:
            ctx.pausing.pause(namespace, PAUSER)  # until the first look at the peering object

    @property
    def priority(self) -> int:
        return self.settings.priority

    @property
    def sharded(self) -> bool:
        return bool(self.ctx.settings.watching.shard_selectors)

    async def run(self) -> None:
        """Take part in the peering until the operator exits (or, in auto mode, run standalone)."""
        try:
            while True:
                try:
                    if await self.serve():
                        return
                except* apierrors.APIError as group:  # e.g. no permission, the CRD deleted: paused, retried
                    logger.warning(f'The peering {self.where} failed: {group.exceptions[0]}; the operator does not '
                                   f'handle anything there until it works. Retrying in {ABSENT_RECHECK:g} s.')
                    self._set_paused(True, quiet=True)
                await self._sleep(ABSENT_RECHECK)
        finally:
            self.ctx.scheduler.cancel((self, 'recheck'))
            if self.touched and self.resources:
                await asyncio.shield(self._untouch())

    async def serve(self) -> bool:
        """Keep alive and watch the peering object; True if there is none in auto mode (then: standalone)."""
        try:
            found = await find(self.ctx.client, self.settings.name, self.namespace)
        except apierrors.APIForbiddenError as exc:
            if self.settings.mandatory:
                raise
            logger.warning(f'The peering objects cannot be read ({exc}); falling back to the standalone mode.')
            self._set_paused(False, quiet=True)
            return True
        self.resources = tuple(found)
        self.lasts = {}
        if not found:
            if not self.settings.mandatory:
                logger.debug('Default peering object is not found, falling back to the standalone mode.')  # silent
                self._set_paused(False, quiet=True)
                return True
            logger.warning(f'The peering object {self.where} is not found (neither KopfPeering nor the legacy '
                           f'zalando.org kind); the operator does not handle anything until it exists. '
                           f'Checking again in {ABSENT_RECHECK:g} s.')
            return False
        for resource, body in found.items():  # the first look: before any watch event
            self.react(body, resource)
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.keep_alive(), name=f'kopf peering keep-alives of {self.where}')
            for resource in self.resources[1:]:
                tg.create_task(self.watch(resource), name=f'kopf peering watch of {self.where} ({resource.group})')
            await self.watch(self.resources[0])
        return False

    async def watch(self, resource: resources.Resource) -> None:
        selector = f'metadata.name={self.settings.name}'
        async for item in watching.watch_objs(self.ctx.client, resource, namespace=self.namespace,
                                              field_selector=selector):
            if item is watchstate.LISTED:
                continue
            body = item.get('object') or {}
            if (body.get('metadata') or {}).get('name') != self.settings.name:
                continue
            if item.get('type') == 'DELETED':
                self.lasts.pop(resource, None)
                if self.lasts:  # the other group's object still exists: its peers decide
                    logger.warning(f'The peering object {self.where} of {resource.group} is deleted.')
                    self._recheck()
                    continue
                if self.settings.mandatory:
                    logger.warning(f'The peering object {self.where} is deleted; the operator pauses until it exists.')
                    self._set_paused(True, quiet=True)
                else:
                    logger.warning(f'The peering object {self.where} is deleted; the operator runs standalone.')
                    self._set_paused(False, quiet=True)
                continue
            self.react(body, resource)

    def react(self, body: Mapping[str, Any] | None = None, resource: resources.Resource | None = None) -> None:
        """Decide on the peering objects' current entries: pause or resume; clean the dead entries."""
        if resource is not None and body is not None:
            self.lasts[resource] = body
        now = datetime.datetime.now(datetime.UTC)
        found: list[list[peers.Peer]] = []
        for group, last in self.lasts.items():
            entries, problems = peers.parse(last.get('status'))
            found.append(entries)
            for problem in problems:
                if problem not in self.warned:
                    self.warned.add(problem)
                    logger.warning(f'The peering object {self.where}: {problem}')
            if resource is None or group == resource:  # dead entries are nulled in their own object
                dead = peers.decide(entries, identity=self.identity, priority=self.priority, now=now).dead
                if dead:
                    self._write(group, peers.clean_patch(dead))
        verdict = peers.decide(peers.merge(*found), identity=self.identity, priority=self.priority, now=now,
                               sharded=self.sharded)
        self._set_paused(verdict.paused)
        if not self.advisory:  # with a Lease, the peers' priorities pause nobody: nothing to announce
            self._announce(verdict)
        if verdict.recheck_at is not None:  # when the earliest blocker expires: decide again
            loop = asyncio.get_running_loop()
            at = loop.time() + max(0.0, (verdict.recheck_at - now).total_seconds()) + 0.01
            self.ctx.scheduler.at((self, 'recheck'), at, self._recheck, replace=True)
        else:
            self.ctx.scheduler.cancel((self, 'recheck'))

    def _announce(self, verdict: peers.Verdict) -> None:
        """Log why we pause (or share the work) when that, or who causes it, changes (not on every keep-alive)."""
        if verdict.blockers:
            why, who = 'blockers', verdict.blockers
        elif verdict.same:
            why, who = ('same' if verdict.paused else 'shared'), verdict.same
        else:
            self.announced = None
            return
        announced = (why, frozenset(peer.identity for peer in who))
        if announced == self.announced:
            return
        self.announced = announced
        if why == 'blockers':
            logger.info(f'Pausing operations in favour of {list(who)}.')
        elif why == 'same':
            logger.warning(f'Possibly conflicting operators with the same priority: {list(who)}.')
        else:
            logger.info(f'Operators with the same priority share the work (shard selectors are configured): '
                        f'{list(who)}.')

    def _recheck(self) -> None:
        if self.lasts:
            self.react()

    def _set_paused(self, paused: bool, *, quiet: bool = False) -> bool:
        """Pause or resume our scope; True if that changed it (then logged, unless quiet)."""
        if self.advisory:  # with a Lease, the Lease pauses us; our entry only tells the peers we are here
            return False
        if paused:
            return self.ctx.pausing.pause(self.namespace, PAUSER)
        changed = self.ctx.pausing.resume(self.namespace, PAUSER)
        if changed and not quiet:
            logger.info('Resuming operations after the pause. Conflicting operators with the same priority are gone.')
        if changed and self.ctx.admission is not None:  # an active replica manages the webhook configurations
            self._spawn(self.ctx.admission.configure(), 'kopf admission configuration after resuming')
        return changed

    async def keep_alive(self) -> None:
        """Our entry, renewed `lifetime - rand(5..10)` s before it expires, for as long as we run."""
        lifetime = self.settings.lifetime
        while True:
            now = datetime.datetime.now(datetime.UTC)
            patch = peers.touch_patch(self.identity, priority=self.priority, lifetime=lifetime, now=now)
            for resource in self.resources:  # as upstream: in kopf.dev's and in the legacy one, if both exist
                where = self.where if resource is self.resources[0] else f'{self.where} ({resource.group})'
                try:
                    answer = await write(self.ctx.client, resource, self.settings.name, self.namespace, patch)
                    self.touched = True
                    if not self.settings.stealth:
                        logger.debug(f'Keep-alive in {where}: ok.')
                    if isinstance(answer, Mapping):
                        self.react(answer, resource)
                except apierrors.APINotFoundError:
                    logger.warning(f'Keep-alive in {where}: the peering object is gone.')
                except apierrors.APIError as exc:
                    logger.warning(f'Keep-alive in {where} failed: {exc}')
            await self._sleep(peers.keepalive_delay(lifetime, random.uniform(*peers.KEEPALIVE_JITTER)))

    async def _sleep(self, delay: float) -> None:
        """A wait as a due time in the operator's one scheduler."""
        loop = asyncio.get_running_loop()
        woken = loop.create_future()
        key = (self, 'sleep')

        def wake() -> None:
            if not woken.done():
                woken.set_result(None)
        self.ctx.scheduler.at(key, loop.time() + delay, wake, replace=True)
        try:
            await woken
        finally:
            self.ctx.scheduler.cancel(key)

    def _write(self, resource: resources.Resource, patch: Mapping[str, Any]) -> None:
        self._spawn(self._send(resource, patch), f'kopf peering write to {self.where}')

    def _spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> None:
        task = asyncio.create_task(coro, name=name)
        self.writes.add(task)
        task.add_done_callback(self.writes.discard)

    async def _send(self, resource: resources.Resource, patch: Mapping[str, Any]) -> None:
        try:
            await write(self.ctx.client, resource, self.settings.name, self.namespace, patch)
        except apierrors.APIError as exc:
            logger.warning(f'Cleaning the dead peers in {self.where} failed: {exc}')

    async def _untouch(self) -> None:
        for resource in self.resources:
            try:
                await write(self.ctx.client, resource, self.settings.name, self.namespace,
                            peers.clean_patch([self.identity]))
            except Exception as exc:  # the exit goes on: the entry expires by itself
                logger.warning(f'Our entry in {self.where} could not be removed on exit ({exc!r}); '
                               f'it expires by itself.')


class Peerings:
    """The operator's peerings: one cluster-wide, or one per served namespace (made as they are served)."""

    def __init__(self, ctx: contexts.OperatorContext, *, clusterwide: bool, namespaces: Collection[str] = ()) -> None:
        self.ctx = ctx
        self.identity = ctx.identity or identity_.make_identity()
        self.clusterwide = clusterwide
        self.tg: asyncio.TaskGroup | None = None
        self.peerings: dict[str | None, tuple[Peering, asyncio.Task[None] | None]] = {}
        for namespace in ([None] if clusterwide else namespaces):
            self.peerings[namespace] = (Peering(ctx, namespace, self.identity), None)

    def start(self, tg: asyncio.TaskGroup) -> None:
        self.tg = tg
        for namespace, (peering, task) in list(self.peerings.items()):
            if task is None:
                task = tg.create_task(peering.run(), name=f'kopf peering {peering.where}')
                self.peerings[namespace] = (peering, task)

    def serve(self, namespace: str) -> None:
        """A namespace is served (found through globs): its peering starts (paused until its first look)."""
        if self.clusterwide or namespace in self.peerings:
            return
        self.peerings[namespace] = (Peering(self.ctx, namespace, self.identity), None)
        if self.tg is not None:
            self.start(self.tg)

    def forget(self, namespace: str) -> None:
        """A served namespace is deleted: its peering stops."""
        peering, task = self.peerings.pop(namespace, (None, None))
        if task is not None:
            task.cancel()
        if peering is not None:
            self.ctx.pausing.resume(namespace, PAUSER)


async def freeze(client: client_.APIClient, *, name: str, namespaces: Collection[str | None], identity: str,
                 priority: int, lifetime: int) -> None:
    """`kopf freeze`: our entry in each peering object, so that operators of lower priorities pause."""
    now = datetime.datetime.now(datetime.UTC)
    for namespace in namespaces:
        for resource in await _found(client, name, namespace):
            await write(client, resource, name, namespace,
                        peers.touch_patch(identity, priority=priority, lifetime=lifetime, now=now))


async def resume(client: client_.APIClient, *, name: str, namespaces: Collection[str | None], identity: str) -> None:
    """`kopf resume`: our entry removed from each peering object."""
    for namespace in namespaces:
        for resource in await _found(client, name, namespace):
            await write(client, resource, name, namespace, peers.clean_patch([identity]))


class PeeringNotFound(Exception):
    pass


async def _found(client: client_.APIClient, name: str, namespace: str | None) -> list[resources.Resource]:
    """The peering resources (kopf.dev's, the legacy one, or both) with an object of this name."""
    found = list(await find(client, name, namespace))
    if not found:
        kind = 'ClusterKopfPeering' if namespace is None else f'KopfPeering in the namespace {namespace!r}'
        raise PeeringNotFound(f'The peering object {name!r} ({kind}) is not found.')
    return found


async def command(command: str, *, vault: Any, name: str, namespaces: Collection[str | None], identity: str,
                  **options: Any) -> None:
    """`kopf freeze` / `kopf resume` with their own API client (the given vault, or kubeconfig & co)."""

    vault = vault if vault is not None else credentials.Vault(loginning.login_by_defaults)
    client = client_.APIClient(vault, settings_.OperatorSettings())
    try:
        if command == 'freeze':
            await freeze(client, name=name, namespaces=namespaces, identity=identity, **options)
        else:
            await resume(client, name=name, namespaces=namespaces, identity=identity)
    finally:
        await client.close()
    where = ', '.join(peers.describe_scope(name, namespace) for namespace in namespaces)
    done = 'frozen' if command == 'freeze' else 'resumed'
    logger.info(f'The peering {where} is {done} by {identity!r}.')
