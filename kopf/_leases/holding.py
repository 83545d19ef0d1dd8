"""Leader election on `coordination.k8s.io/v1` Leases (`kopf run --lease NAME`): the I/O of `kopf._leases.elections`.

- One `Elector` per Lease; it pauses its scope (`kopf._engine.scopes`: the whole operator, or a shard's
  objects for `kopf._shards.membership`) from the start until it holds the Lease, and again when it cannot renew
  it before the renew deadline (a due time in the operator's one scheduler, so the pause comes on
  time even while a write hangs). Peering and Leases differ only in who pauses the scope.
- Writes: a create (no Lease yet), or an update with the Lease's resourceVersion (a precondition:
  a 409 means someone else wrote first; we read it again). No retries inside a write: the next
  attempt is the next retry period; each write is bounded in time.
- The Lease is watched (by name, without a listing: only `get`, `create`, `update`, `watch` are
  needed), so that a release (an empty holder) is seen at once; it is read (a GET) at the start and
  after a 409. The Leases of a sharding are not watched one by one: `kopf._shards.membership` watches
  them all with one watch by their label and hands each event to its Elector's `observe()`
  (`run(watches=False)`); a shard Lease carries that label from our first write to it.
- On exit, after the handlers stopped, a held Lease is released (an empty holder): the next
  replica acquires it at once.
"""
import asyncio
import datetime
import logging
import os
import signal
from collections.abc import Callable, Mapping
from typing import Any

from kopf._api import apierrors, watching
from kopf._engine import contexts, invoking, scopes
from kopf._leases import elections as leases
from kopf._shared import encoding

logger = logging.getLogger('kopf.reactor.leasing')

PATH = '/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases'
RELEASE_TIMEOUT = 2.0


class Elector:
    """One Lease that we try to hold, and the scope that it pauses while we do not hold it."""

    def __init__(self, ctx: contexts.OperatorContext, name: str, namespace: str | None, identity: str,
                 scope: scopes.Scope = scopes.WHOLE, *, pauses: bool = True, configures: bool = True,
                 labels: Mapping[str, str] | None = None, wanted: bool = True,
                 on_change: Callable[[], None] | None = None) -> None:
        self.ctx = ctx
        self.name = name
        self.namespace = namespace
        self.identity = identity
        self.scope = scope
        self.pauses = pauses          # its scope is paused while it is not ours (a membership Lease pauses nothing)
        self.configures = configures  # its holder writes the managed webhook configurations
        self.labels = labels
        self.wanted = wanted          # to be acquired when free (a shard: when the fair share says so)
        self.on_change = on_change
        self.releasing = False        # a release is being written: no renewal may count any more
        self.pauser = ('lease', name)
        self.durations = leases.durations_of(ctx.settings.peering.lease)
        self.lease: leases.Observed | None = None
        self.observed_at = 0.0
        self.renewed_at: float | None = None
        self.valid_until: float | None = None  # our last renewal's expiry, by our clock
        self.acquire_time: str | None = None
        self.write_due = 0.0
        self.leading = False
        self.warned: set[str] = set()
        self.changed = asyncio.Event()
        if pauses:
            ctx.pausing.pause(scope, self.pauser)  # nothing is in flight yet

    @property
    def where(self) -> str:
        return f'{self.namespace}/{self.name}'

    @property
    def path(self) -> str:
        return PATH.format(namespace=self.namespace)

    async def run(self, *, watches: bool = True) -> None:
        """Elect until cancelled; `watches`: the Lease's own watch by name (else its events come from `observe()`)."""
        if self.namespace is None:
            self.namespace = await resolve_namespace(self.ctx)
        logger.info(f'Leader election on the lease {self.where} as {self.identity!r}.')
        self.ctx.metrics.lease(self.name, False)
        try:
            async with asyncio.TaskGroup() as tg:
                if watches:
                    tg.create_task(self.watch(), name=f'kopf watch of the lease {self.where}')
                await self.elect()
        finally:
            self.ctx.scheduler.cancel((self, 'deadline'))
            self.ctx.scheduler.cancel((self, 'expiry'))

    async def elect(self) -> None:
        loop = asyncio.get_running_loop()
        await self.read()
        while True:
            now = loop.time()
            decision = self.decide(now)
            writing = not self.releasing and (decision.action is leases.Action.RENEW or (
                decision.action is leases.Action.ACQUIRE and self.wanted))
            if writing and now >= self.write_due:
                self.write_due = now + self.durations.retry_period
                await self.write()
                decision = self.decide(loop.time())
            holder = self.lease.holder if self.lease is not None else ''
            taken = holder not in ('', self.identity)
            self.set_leading(decision.leading, **({'why': f'it is held by {holder!r}'} if taken else {}))
            self.changed.clear()
            wake_at = decision.next_at if not writing else min(decision.next_at, self.write_due)
            try:
                async with asyncio.timeout_at(wake_at):
                    await self.changed.wait()
            except TimeoutError:
                pass

    def decide(self, now: float) -> leases.Decision:
        return leases.decide(self.lease, identity=self.identity, now=now, observed_at=self.observed_at,
                             renewed_at=self.renewed_at, durations=self.durations)

    def observe(self, body: Mapping[str, Any] | None) -> None:
        """A look at the Lease (a read, a watch event, our write's answer): changes restart the expiry."""
        lease = leases.parse(body)
        holder_changed = (lease.holder if lease else None) != (self.lease.holder if self.lease else None)
        if (lease.key if lease else None) != (self.lease.key if self.lease else None):
            self.observed_at = asyncio.get_running_loop().time()
            if lease is None or lease.holder != self.identity:  # not our own renewal (its answer, its echo):
                self.write_due = 0.0  # decide at once (e.g. a release is seen: acquire now)
        self.lease = lease
        if lease is None or lease.holder != self.identity:
            self.renewed_at = None
        problem = leases.problem(lease, self.identity)
        if problem is not None and problem not in self.warned:
            self.warned.add(problem)
            logger.warning(f'The lease {self.where}: {problem}.')
        self.changed.set()
        if self.on_change is not None and holder_changed:  # not on every renewal
            self.on_change()

    async def read(self) -> None:
        try:
            self.observe(await self.ctx.client.request('GET', f'{self.path}/{self.name}', backoffs=None,
                                                       urgent=True))
        except apierrors.APINotFoundError:
            self.observe(None)
        except (apierrors.APIError, OSError, TimeoutError) as exc:
            logger.warning(f'Reading the lease {self.where} failed: {_describe(exc)}')

    async def write(self) -> None:
        """Acquire or renew: create, or update with the resourceVersion we saw; the start time counts."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        lease = self.lease
        spec = leases.spec(lease, identity=self.identity, durations=self.durations,
                           wall=datetime.datetime.now(datetime.UTC), acquire_time=self.acquire_time)
        body = leases.body(self.name, self.namespace or 'default', spec, lease.resource_version if lease else None,
                           labels=self.labels)
        try:
            async with asyncio.timeout(self.durations.renew_deadline):
                if lease is None:
                    answer = await self.ctx.client.request('POST', self.path, payload=body, backoffs=None,
                                                           urgent=True)
                else:
                    answer = await self.ctx.client.request('PUT', f'{self.path}/{self.name}', payload=body,
                                                           backoffs=None, urgent=True)
        except apierrors.APIConflictError:  # 409: someone else wrote first (or created it first)
            await self.read()
            return
        except (apierrors.APIError, OSError, TimeoutError) as exc:
            logger.warning(f'Writing the lease {self.where} failed: {_describe(exc)}')
            return
        if self.releasing:  # a renewal that was in flight when the release began: it does not make us hold it
            self.observe(answer)
            return
        if lease is None or lease.holder != self.identity:
            self.acquire_time = spec['acquireTime']
            logger.info(f'The lease {self.where} is acquired by {self.identity!r}.')
        self.observe(answer)
        self.renewed_at = started
        self.valid_until = started + self.durations.lease_duration
        self.ctx.scheduler.at((self, 'deadline'), started + self.durations.renew_deadline, self.lapse, replace=True)

    def lapse(self) -> None:
        """The renew deadline passed without a renewal: pause now (the lease is still ours until it expires)."""
        loop = asyncio.get_running_loop()
        if not self.decide(loop.time()).leading:
            self.set_leading(False)
            if self.valid_until is not None and self.pauses:
                self.ctx.scheduler.at((self, 'expiry'), self.valid_until, self.expire, replace=True)
        self.changed.set()

    def expire(self) -> None:
        """Our lease expires (others may acquire it now): a sync handler still running would overlap; exit.

        A thread cannot be interrupted; the async handlers were cancelled at the renew deadline.
        """
        if self.leading or not self.pauses or not invoking.threads_busy():
            return  # a Lease that pauses nothing (a shard member's) lets nothing act: its expiry overlaps nothing
        logger.error(f'The lease {self.where} expires while {invoking.threads_busy()} sync handler(s) still run; '
                     f'exiting, so that no two replicas act at once (the handlers run again on the next holder).')
        os.kill(os.getpid(), signal.SIGKILL)

    def set_leading(self, leading: bool, why: str = 'it could not be renewed in time') -> None:
        if leading == self.leading:
            return
        self.leading = leading
        self.ctx.metrics.lease(self.name, leading)  # `kopf_peering_lease_held`
        if leading:
            self.ctx.scheduler.cancel((self, 'expiry'))
            if self.pauses:
                self.ctx.pausing.resume(self.scope, self.pauser)
                logger.info(f'Resuming operations: the lease {self.where} is ours.')
            if self.ctx.admission is not None and self.configures:  # an active replica manages the webhooks
                task = asyncio.create_task(self.ctx.admission.configure())
                task.add_done_callback(lambda t: t.cancelled() or t.exception())
        elif self.pauses:
            self.ctx.pausing.pause(self.scope, self.pauser, cancelling=True)  # async handlers in flight: cancelled
            logger.warning(f'Pausing operations: the lease {self.where} is not ours ({why}).')
        if self.on_change is not None:
            self.on_change()

    async def watch(self) -> None:
        """Every change of the Lease, from a watch by name (its current state first), reconnected after failures."""
        params = {'watch': 'true', 'fieldSelector': f'metadata.name={self.name}'}
        inactivity = self.ctx.settings.watching.inactivity_timeout
        while True:
            try:
                async with self.ctx.client.stream(self.path, params=params, backoffs=None) as response:
                    async for line in watching._lines(response, inactivity):
                        event = encoding.loads(line)
                        kind, obj = event.get('type'), event.get('object')
                        if kind in ('ADDED', 'MODIFIED') and isinstance(obj, Mapping):
                            self.observe(obj)
                        elif kind == 'DELETED':
                            self.observe(None)
                        elif kind == 'ERROR':
                            break
            except (apierrors.APIError, OSError, TimeoutError) as exc:
                logger.debug(f'The watch of the lease {self.where} broke ({_describe(exc)}); reconnecting.')
            await asyncio.sleep(self.durations.retry_period)

    async def release(self, why: str = 'the operator exits') -> None:
        """On exit: an empty holder, so the next replica acquires the Lease at once (unless it is not ours).

        A renewal cut by the exit may have landed unseen: on a conflict, the Lease is read once more.
        Also a shard's release on a rebalance (its work finished): no deadline or expiry is due after it.
        """
        if self.renewed_at is None:
            return
        self.releasing = True
        try:
            await self._release(why)
        finally:
            self.releasing = False

    async def _release(self, why: str) -> None:
        self.set_leading(False, why=why)
        self.ctx.scheduler.cancel((self, 'deadline'))
        self.ctx.scheduler.cancel((self, 'expiry'))
        self.renewed_at = self.valid_until = None
        try:
            async with asyncio.timeout(RELEASE_TIMEOUT):
                for _ in range(2):
                    lease = self.lease
                    if lease is None or lease.holder != self.identity:
                        return
                    spec = leases.released(lease, wall=datetime.datetime.now(datetime.UTC))
                    body = leases.body(self.name, self.namespace or 'default', spec, lease.resource_version,
                                       labels=self.labels)
                    try:
                        await self.ctx.client.request('PUT', f'{self.path}/{self.name}', payload=body,
                                                      backoffs=None, urgent=True)
                    except apierrors.APIConflictError:
                        await self.read()
                        continue
                    self.lease = None
                    logger.info(f'The lease {self.where} is released.')
                    return
        except Exception as exc:  # the exit goes on: the lease expires by itself
            logger.warning(f'The lease {self.where} could not be released ({_describe(exc)}); it expires by itself.')


async def resolve_namespace(ctx: contexts.OperatorContext) -> str:
    """`settings.peering.lease.namespace`, else `$POD_NAMESPACE`, else the credentials' context's, else `default`."""
    configured = ctx.settings.peering.lease.namespace or os.environ.get('POD_NAMESPACE')
    if configured:
        return configured
    try:
        return await ctx.client.default_namespace() or 'default'
    except Exception:  # no usable credentials yet: the requests say so
        return 'default'


class Leasing:
    """The Lease of `--lease NAME` without `--shards`: one `Elector` for the whole operator (the shards'
    Leases are `kopf._shards.membership.Sharding`'s)."""

    def __init__(self, ctx: contexts.OperatorContext) -> None:
        settings = ctx.settings.peering.lease
        identity = ctx.identity or ''
        assert settings.name is not None  # its durations are checked at the start (`running`)
        namespace, name = leases.split_name(settings.name)
        self.electors = [Elector(ctx, name, namespace or settings.namespace, identity)]

    def start(self, tg: asyncio.TaskGroup) -> None:
        for elector in self.electors:
            tg.create_task(elector.run(), name=f'kopf lease {elector.name}')

    async def release(self) -> None:
        await asyncio.gather(*(elector.release() for elector in self.electors), return_exceptions=True)


def _describe(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, apierrors.APIError) else f'{type(exc).__name__}: {exc}'
