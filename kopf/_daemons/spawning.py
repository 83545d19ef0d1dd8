"""The background runtime: the daemons and timers of objects, beside each object's record.

`Daemons` (one per resource with daemons or timers, made by the resource's context: `running` plugs it in)
keeps a `Background` per object that has any. The engine calls it through `kopf._engine.contexts.Daemons`:
each event's body goes to the object's `Background` at once (`sighted`); after every cycle, `reconcile()`
feeds it the newest body and starts or stops its daemons and timers as `kopf._daemons.decisions.reconcile`
decides.
- A daemon is one task per (object, daemon): async ones in the loop, sync ones each in a thread of
  its own (never in the handlers' executor, which a few long sync daemons would starve). It is
  retried per its errors/backoff/TemporaryError delays, its patch applied after every attempt; it
  is not restarted after it returned on its own or failed for good.
- A timer is a due time in the operator's one scheduler, not a sleeping task: when due, one call
  runs (a short task), its patch is applied, and the next due time is computed
  (`kopf._daemons.decisions.next_due`). Essential changes of the object postpone `idle` timers.
- Both see the live body (replaced on every event), the object's memo, and a `stopped` flag.
- Stopping a daemon: `stopped` is set; after `cancellation_backoff` an async one is cancelled; after
  `cancellation_timeout` it is abandoned (a warning and a ResourceWarning); without a timeout, it
  is waited for, re-checked every `cancellation_polling` seconds. A timer stops after its call.
- While any of them runs, our finalizer stays: the object's `Background` counts them (`running`), and
  each exit nudges the object's record through its stream's dispatcher, so that its next cycle may
  release the finalizer.
- While the object's scope is paused (peering), its daemons and timers are stopped (`OPERATOR_PAUSING`)
  and none starts; resuming re-lists the object, whose next cycle starts them again. The same for
  its shard (`--shards`): released or lost, they stop; on a takeover, its newest body is re-run.
- When the object is being deleted, they are stopped before its delete handlers run (as upstream).
- On operator exit, all are stopped (OPERATOR_EXITING) and awaited a few seconds; leftovers are cancelled.
"""
import asyncio
import logging
from collections.abc import Iterator, Mapping
from typing import Any

from kopf._api import apierrors
from kopf._core import finalizers, handlers, patches, plans, records
from kopf._core.bodies import Body
from kopf._core.kwargs import SpawningCause, filter_kwargs
from kopf._daemons import decisions
from kopf._daemons import workers as spawns
from kopf._daemons.reasons import DaemonStoppingReason
from kopf._engine import applying, contexts, loggers

logger = logging.getLogger('kopf.reactor.spawning')
EXIT_TIMEOUT = 5.0  # on operator exit: seconds for daemons to stop before they are cancelled


class Latest(Mapping[str, Any]):
    """The object's newest raw body, replaced on every event: what daemons and timers see as `body`."""

    __slots__ = ('raw',)

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = raw

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.raw)

    def __len__(self) -> int:
        return len(self.raw)


class Daemons:
    """The daemons and timers of one resource's objects: a `Background` per object that has any."""

    def __init__(self, rctx: contexts.ResourceContext) -> None:
        self.rctx = rctx
        self.backgrounds: dict[str, Background] = {}

    def forget(self, uid: str) -> None:
        self.backgrounds.pop(uid, None)

    def sighted(self, record: records.ObjectRecord, event: Mapping[str, Any], dispatcher: contexts.Dispatcher) -> None:
        """An event of an object arrived: its body is the live one at once.

        The object's `Background` is made at its first event (not at the end of its first cycle), so that
        the echo of our own first patch, which may come before the patch's answer, is what it keeps:
        the watch stream's own newest body, not a second copy of it per object.
        """
        background = self.backgrounds.get(record.uid)
        if background is None:
            if event.get('type') == 'DELETED' or self.rctx.operator.exiting:
                return
            loop_now = asyncio.get_running_loop().time()
            background = self.backgrounds[record.uid] = Background(self.rctx, record, event['object'], now=loop_now)
        background.see(event['object'])

    def reconcile(self, record: records.ObjectRecord, plan: plans.Plan, answer: Mapping[str, Any] | None) -> None:
        """After a cycle: the newest body to the object's daemons and timers; start or stop them."""
        rctx = self.rctx
        background = self.backgrounds.get(record.uid)
        if rctx.operator.exiting:
            return  # stopped for the operator's exit: nothing starts again
        if plan.event_type == 'DELETED':
            if background is not None:
                background.stop_all(DaemonStoppingReason.RESOURCE_DELETED)
            return
        if rctx.operator.pausing.paused((plan.body.get('metadata') or {}).get('namespace'), record.shard):
            if background is not None:  # a cycle in flight when its scope was paused: nothing starts
                background.stop_all(DaemonStoppingReason.OPERATOR_PAUSING)
            return
        body = answer if answer is not None else plan.body
        loop_now = asyncio.get_running_loop().time()
        if background is None:
            background = self.backgrounds[record.uid] = Background(rctx, record, body, now=loop_now)
        background.see(body, answer=answer is not None)
        if _idle_timers(rctx) and plan.essence is not None and plan.essence != background.essence:
            if background.essence is not None:
                background.changed(loop_now)
            background.essence = plan.essence
        cause = background.cause(patches.Patch())
        changes = decisions.reconcile(rctx.registry.iter_spawning_handlers(cause), running=background.spawns.keys(),
                                      finished=background.finished,
                                      has_finalizer=finalizers.present(body, rctx.finalizer),
                                      deleting=finalizers.deleting(body))
        for key, reason in changes.stop:
            background.spawns[key].stop(reason)
        for handler in changes.start:
            background.start(handler)


def _idle_timers(rctx: contexts.ResourceContext) -> bool:
    """Whether a timer of the resource has `idle`: only then are essential changes tracked (the essence kept)."""
    return any(isinstance(handler, handlers.TimerHandler) and handler.idle is not None
               for handler in rctx.registry.select(handlers.SpawningHandler, rctx.resource))


async def stop_all(ctx: contexts.OperatorContext, reason: DaemonStoppingReason) -> None:
    """Stop every daemon and timer of the operator; wait for them a while; cancel the leftovers."""
    ctx.exiting = True
    spawns = list(ctx.spawns)
    if not spawns:
        return
    for spawn in spawns:
        spawn.stop(reason)
    settings = ctx.settings.background
    for _ in range(settings.instant_exit_zero_time_cycles or 0):  # most exit at once on their flag
        if not ctx.spawns:
            return
        await asyncio.sleep(0)
    instant = [task for spawn in list(ctx.spawns) for task in spawn.tasks()]
    if instant and settings.instant_exit_timeout:
        await asyncio.wait(instant, timeout=settings.instant_exit_timeout)
    tasks = [task for spawn in list(ctx.spawns) for task in spawn.tasks()]
    if tasks:
        await asyncio.wait(tasks, timeout=EXIT_TIMEOUT)
    for spawn in list(ctx.spawns):
        spawn.cancel()


class Background:
    """The daemons and timers of one object, and what they share: its live body, logger, last change."""

    __slots__ = ('essence', 'finished', 'last_change', 'latest', 'logger', 'rctx', 'record', 'spawns')

    def __init__(self, rctx: contexts.ResourceContext, record: records.ObjectRecord,
                 body: Mapping[str, Any], *, now: float) -> None:
        self.rctx = rctx
        self.record = record
        self.latest = Latest(body)
        self.spawns: dict[str, spawns.Spawn] = {}
        self.finished: frozenset[str] = frozenset()  # done for good: not restarted, not holding our finalizer
        self.essence: Any = None
        self.last_change = now  # essential changes before the first sight are not known: counted from it
        self.logger = loggers.ObjectLogger(body=self.latest, settings=rctx.settings)  # no copy: the live body

    @property
    def running(self) -> int:
        """Its daemons and timers not exited yet: they hold our finalizer."""
        return len(self.spawns)

    def pause(self) -> None:
        self.stop_all(DaemonStoppingReason.OPERATOR_PAUSING)

    def delete(self) -> None:
        self.stop_all(DaemonStoppingReason.RESOURCE_DELETED)

    def see(self, body: Mapping[str, Any], *, answer: bool = False) -> None:
        """A body (of an event, or of our patch's answer) is the live one, unless it is older (`decisions.is_live`)."""
        if decisions.is_live(body, self.latest.raw, answer=answer):
            self.latest.raw = body

    def cause(self, patch: patches.Patch) -> SpawningCause:
        return SpawningCause(logger=self.logger, memo=records.memo_of(self.record), indices=self.rctx.indices,
                             resource=self.rctx.resource, body=Body(self.latest), patch=patch)

    def start(self, handler: handlers.SpawningHandler) -> None:
        spawn: spawns.Spawn = spawns.Daemon(self, handler) if isinstance(handler, handlers.DaemonHandler) else \
            spawns.Timer(self, handler) if isinstance(handler, handlers.TimerHandler) else _unknown(handler)
        try:
            spawn.begin()
        except Exception as exc:  # the framework's own failure: logged; it is tried again on the next event
            self.logger.exception(f'{handler} could not be started: {exc!r}')
            return
        self.spawns[handler.id] = spawn
        self.rctx.operator.spawns.add(spawn)

    def changed(self, at: float) -> None:
        self.last_change = at
        for spawn in self.spawns.values():
            spawn.changed(at)

    def stop_all(self, reason: DaemonStoppingReason) -> None:
        for spawn in list(self.spawns.values()):
            spawn.stop(reason)

    def exited(self, spawn: 'spawns.Spawn', *, finished: bool) -> None:
        """A daemon or timer is gone: it no longer holds the finalizer; the object's next cycle may release it."""
        if self.spawns.get(spawn.handler.id) is spawn:
            del self.spawns[spawn.handler.id]
        self.rctx.operator.spawns.discard(spawn)
        if finished:
            self.finished = self.finished | {spawn.handler.id}
        dispatcher = self.rctx.dispatcher_of(self.record)
        if dispatcher is not None:
            dispatcher.nudge(self.record, {'type': 'MODIFIED', 'object': self.latest.raw})

    async def apply(self, patch: patches.Patch) -> None:
        """The patch of one call or attempt, sent at once (errors are logged, never raised)."""
        try:
            await applying.apply(self.rctx, self.latest.raw, patch, self.logger)
        except apierrors.APINotFoundError:
            pass  # the object is gone: nothing to write to
        except Exception as exc:
            self.logger.error(f'Patching failed with an error: {exc!r}')

    def initial_delay(self, handler: handlers.SpawningHandler) -> float:
        delay = handler.initial_delay
        if callable(delay):
            try:
                delay = delay(**filter_kwargs(self.cause(patches.Patch())))
            except Exception as exc:  # the user's callable: logged; it starts without a delay
                self.logger.error(f'The initial_delay of {handler} failed: {exc!r}; starting without a delay.')
                return 0.0
        try:
            return float(delay or 0.0)
        except (TypeError, ValueError):
            self.logger.error(f'The initial_delay of {handler} is not a number: {delay!r}; starting without a delay.')
            return 0.0


def _unknown(handler: handlers.SpawningHandler) -> 'spawns.Spawn':
    raise TypeError(f'Unknown background handler: {handler!r}')
