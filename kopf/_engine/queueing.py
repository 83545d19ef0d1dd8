"""Per-object work: the records of one watch stream's objects, a queue of them, and a pool of runners.

- Events are routed by uid to the object's record (`kopf._core.records`): every signal goes
  through its pure `step()`, and this module carries out the effects that come back: queueing it,
  asking the operator's scheduler to wake it, running a cycle, logging an error's retry, forgetting it.
- Only keys go through the queue (controller-runtime style): records with something to do wait in a
  FIFO; a pool of runner tasks takes them one by one. An object with nothing to do costs no task and
  no timer, only its record in the resource context (until it is deleted).
- A new object from a listing that needs nothing (`plans.quiet_at_first_sight`: unchanged since handled,
  nothing in progress; most objects of a restart) is handled inside `dispatch()` (`records.Quiet`), not
  queued: no runner, logger or coroutine for it. Not while its scope is paused, nor where indices are fed.
- At most `settings.queueing.worker_limit` runners (None: no limit) run cycles at once;
  a runner inside an async handler does not count (a long await must never hold others back), so
  async handlers of any number of objects run concurrently. Sync handlers are bounded by the
  executor's threads anyway: with None, a resource with sync handlers gets 4 runners per thread
  (at least 200), not one per object that would only wait for a thread.
- Everything later (a handler's delay, the error throttling, the end of the wait for our own write)
  is a due time in the operator's one scheduler (`scheduling`), which queues the record when due.
- An idle runner exits after `settings.queueing.idle_timeout`; a wake-up starts one again.
- When the stream ends (`drain`), idle runners exit at once; the cycles running are given
  `settings.queueing.exit_timeout` seconds to finish (None: as long as they take), then cancelled.
- The stream's initial listing and the first cycles of its objects are counted (`kopf._engine.listings`):
  progress lines at most every few seconds while that lasts, one line when all are resumed.
- The initial listing is read no faster than its objects' cycles take them: while more than
  `settings.watching.chunk_size` records (500 without chunks) wait in the queue, the reader waits
  (`backlog()`), so that the listing's bodies are not all held at once.
- Pausing (`pause()`, when the stream's scope is paused): the records' wake-ups are cancelled, their
  daemons and timers stopped; cycles in flight finish; a cycle that begins while paused only feeds
  the indices (`processing`).
- Shards (`--shards N`): a record's shard is paused while its Lease is not ours. Its events are only
  kept (`newest`, here, by uid), never queued (unless its resource is indexed: then its cycles feed the
  indices). The newest events of the shards held are kept only where the stream does not re-list on a
  change of the shards (indexed resources, static shard selectors): a re-listing stream
  (`kopf._shards.streams`) sends a lost shard's objects again once it is taken over again, and keeping
  them cost a whole body per object held (measured: +48 MB per replica of 3 at 20,000 objects).
  A shard paused is `pause_record()`ed record by record (a lost Lease also cancels the cycles in
  flight: its task becomes `None` in `tasks`, then is cancelled); a shard taken over re-runs each
  record's newest body as listed (`take_over()`).
- What the engine holds of an object beside its record is here: its runner's task while a cycle runs
  (`tasks`), and its newest event while its shard is not ours (`newest`).
"""
import asyncio
import collections
import functools
import logging
import math
from collections.abc import Callable
from typing import Any

from kopf._core import handlers, records
from kopf._core.bodies import RawEvent
from kopf._engine import contexts, invoking, listings, loggers, memory, processing, scopes

logger = logging.getLogger('kopf.reactor.queueing')



SYNC_RUNNERS_PER_THREAD = 4   # with `worker_limit=None`, runners per executor thread if there are sync handlers
SYNC_RUNNERS_MIN = 200
RELEASE_DELAY = 1.0  # seconds after a large resumption before its freed heap goes back to the OS
BACKLOG = 500  # records waiting in the queue before the listing's reader waits (without `chunk_size`)


_KICKED = True  # an idle runner's waiter, woken by `kick()` (`drain()` wakes them with None)


_EXPIRED = False  # an idle runner's waiter, resolved by its idle timeout (a timer, not a cancellation)


def _kicked(waiter: 'asyncio.Future[bool | None]') -> bool:
    return waiter.done() and not waiter.cancelled() and waiter.result() is _KICKED


def _expire(waiter: 'asyncio.Future[bool | None]') -> None:
    if not waiter.done():  # else kicked or drained first: that counts
        waiter.set_result(_EXPIRED)


class _Slot(invoking.Slot):
    """A runner's place in the pool's limit; freed while the runner awaits an async handler."""

    def __init__(self, dispatcher: 'Dispatcher') -> None:
        self.dispatcher = dispatcher
        self.held = True

    def release(self) -> bool:
        if not self.held:
            return False
        self.held = False
        self.dispatcher.active -= 1
        self.dispatcher.kick()
        return True

    def reacquire(self) -> None:
        self.held = True
        self.dispatcher.active += 1


class Dispatcher:
    """Routes the events of one watch stream to the objects' records, run by runners in the given task group."""

    # One cycle of one object. A seam: a subclass may run its own cycles (e.g. to test the queue alone).
    process = staticmethod(processing.process)

    def __init__(self, rctx: contexts.ResourceContext, tg: asyncio.TaskGroup, *, key: Any = None) -> None:
        self.rctx = rctx
        self.tg = tg
        self.scheduler = rctx.operator.scheduler
        self.ready: collections.deque[records.ObjectRecord] = collections.deque()  # the queue: phase QUEUED
        self.waiters: collections.deque[asyncio.Future[bool | None]] = collections.deque()  # idle runners
        self.tasks: dict[records.ObjectRecord, asyncio.Task[Any] | None] = {}  # phase RUNNING: its runner's task
        self.newest: dict[str, RawEvent] | None = {} if rctx.operator.shards else None  # shards not ours: by uid
        selection = rctx.operator.selection  # a stream that sends the shards held re-lists when they change
        self.relisting = selection is not None and selection.applies(rctx.operator, rctx.resource)
        self.drained: asyncio.Event | None = None  # set when the queue is short again (the listing's reader waits)
        self.active = 0   # runners counted against the limit
        self.starting: set[asyncio.Task[None]] = set()  # runners started that have not run yet (see `kick`)
        self.woken = 0    # idle runners woken by `kick` that have not looked at the queue yet
        limit = rctx.settings.queueing.worker_limit
        self.limit: float = math.inf if limit is None else limit  # None: unlimited, as upstream
        # ... though more cycles than the executor has threads for the sync handlers (4 per thread, for the
        # overlap with API requests) would only wait for one, holding their bodies and kwargs meanwhile
        # (their bodies and kwargs held meanwhile): those start when a runner is free instead.
        # Async handlers free their runner's place while they await, so they are never held back.
        selected = rctx.registry.select(handlers.ResourceHandler, rctx.resource)
        threads = getattr(rctx.settings.execution.executor, '_max_workers', None)
        if limit is None and isinstance(threads, int) and any(
                not invoking.is_async(h.fn) for h in selected if not isinstance(h, handlers.SpawningHandler)):
            self.limit = max(SYNC_RUNNERS_MIN, SYNC_RUNNERS_PER_THREAD * threads)  # daemons, timers: own tasks
        self.backlog_limit = rctx.settings.watching.chunk_size or BACKLOG
        self.runners: set[asyncio.Task[None]] = set()
        self.daemons = rctx.daemons if rctx.registry.has_handlers(rctx.resource, handlers.SpawningHandler) else None
        self.closed = False
        self.indexing = rctx.operator.indexing if rctx.registry.has_handlers(rctx.resource,
                                                                            handlers.IndexingHandler) else None
        self.key = key if key is not None else self  # the stream: (resource, namespace)
        self.started: float | None = None  # the stream's first item: its initial listing is timed from it
        self.namespace: str | None = key[1] if isinstance(key, tuple) and len(key) == 2 else None
        rctx.dispatchers[self.namespace] = self
        self.progress: listings.Progress | None = None  # of the initial listing, until all its objects are resumed
        self.resuming = True
        self._release: asyncio.TimerHandle | None = None  # the heap's release, soon after the resumption
        self._gc = False  # gc's threshold raised while its initial listing runs (`memory.listing_started`)
        if self.indexing is not None:
            self.indexing.register(self.key)
        # The effects of the records' steps by their type (Run, one per cycle, is handled inline).
        self._effects: dict[type, Callable[[records.ObjectRecord, Any], None]] = {
            records.Enqueue: self._enqueue, records.Schedule: self._schedule, records.Retry: self._retry,
            records.Converged: self._converged, records.Forget: self._forget,
        }

    def dispatch(self, event: RawEvent) -> None:
        if self.started is None:
            self.started = asyncio.get_running_loop().time()
        meta = event.get('object', {}).get('metadata') or {}
        name, namespace = meta.get('name'), meta.get('namespace')
        uid = str(meta.get('uid') or f'{namespace}/{name}')
        record = self.rctx.remember(uid, name, namespace)
        if event.get('type') == 'DELETED' and name is None:  # a vanished object's stub (a re-list): as we knew it
            event = {'type': 'DELETED', 'object': {**event['object'], 'metadata': {
                **meta, 'name': record.name, 'namespace': record.namespace}}}
        if self.newest is not None and record.shard is not None:
            foreign = self.rctx.operator.pausing.pauses.scope_paused(scopes.Shard(record.shard))
            if foreign or not self.relisting:
                self.newest[uid] = event  # for a takeover of its shard
            else:  # ours, and a re-listing stream sends it again if its shard is lost and taken over again
                self.newest.pop(uid, None)
            if self.indexing is None and foreign:
                if event.get('type') == 'DELETED' and record.phase is records.Phase.IDLE and not self._running(uid):
                    self.newest.pop(uid, None)
                    self.rctx.forget(uid)
                return  # not ours: another replica handles it
            if event.get('type') == 'DELETED':
                self.newest.pop(uid, None)
        if self.daemons is not None:
            self.daemons.sighted(record, event, self)  # its daemons and timers see every event's body at once
        if self.indexing is not None and event.get('type') is None:
            self.indexing.expect(self.key, uid, limit=self.limit)
        if self.resuming and event.get('type') is None:
            if self.progress is None:
                self.progress = listings.Progress(self._describe(), started=self.started)
                self._gc = memory.listing_started(self.rctx.settings.process.listing_gc_threshold)
            self.progress.seen(uid)
        arrived = records.Arrived(event, now=asyncio.get_running_loop().time())  # its convergence clock
        if record.initial is None and event.get('type') is None and self._quietly(record, event, arrived):
            return
        self._carry_out(record, records.step(record, arrived))

    def echoed(self, uid: str, rv: str) -> None:
        """The awaited echo of our patch has come (`observing`): as `dispatch()` of its event, without its body."""
        record = self.rctx.records.get(uid)
        if record is not None:
            event = {'type': 'MODIFIED', 'object': {'metadata': {'uid': uid, 'resourceVersion': rv}}}
            self._carry_out(record, records.step(record, records.Arrived(event)))  # dropped: nothing to carry out

    def _quietly(self, record: records.ObjectRecord, event: RawEvent, arrived: records.Arrived) -> bool:
        """A new object of a listing that needs nothing (`processing.quiet_listed`): handled as it arrives.

        What its first cycle would come to ("handled", nothing sent), without the queue, a runner, its logger
        or a coroutine: most objects of a restart. Not while its scope is paused, nor where indices are fed.
        """
        if record.phase is not records.Phase.IDLE or record.work is not None or self.closed:
            return False
        if not processing.quiet_listed(self.rctx, record, event):
            return False
        self._carry_out(record, records.step(record, records.Quiet(event, now=arrived.now)))
        if self.progress is not None:
            self._report(self.progress.handled(record.uid, asyncio.get_running_loop().time()))
        return True

    def _running(self, uid: str) -> bool:
        background = self.rctx.background_of(uid)
        return background is not None and background.running > 0

    async def backlog(self) -> None:
        """Until the queue is short enough to read on: the listing's bodies are held in the queue meanwhile."""
        while len(self.ready) > self.backlog_limit and not self.closed:
            if self.drained is None:
                self.drained = asyncio.Event()
            await self.drained.wait()

    def nudge(self, record: records.ObjectRecord, event: RawEvent) -> None:
        """Re-run the object's newest body soon (its daemons or timers changed: the finalizer may go)."""
        if not self.closed and self.rctx.records.get(record.uid) is record:
            now = asyncio.get_running_loop().time()
            self._carry_out(record, records.step(record, records.Nudged(event=event, now=now)))

    def listed(self) -> None:
        """The initial listing of the stream is over (its objects may still be in the queue)."""
        if self.indexing is not None:
            self.indexing.listed(self.key)
        if self.resuming:
            self.resuming = False  # later re-lists (after a 410) are not counted
            if self.progress is None:  # an empty listing: processed at once
                now = asyncio.get_running_loop().time()
                self.progress = listings.Progress(self._describe(), started=self.started or now)
            self._report(self.progress.listing_over(asyncio.get_running_loop().time()))

    def _describe(self) -> str:
        namespace = self.key[1] if isinstance(self.key, tuple) and len(self.key) == 2 else None
        return f'{self.rctx.resource.name} in {namespace}' if namespace else f'{self.rctx.resource.name}'

    def _report(self, report: listings.Report | None) -> None:
        if report is not None:
            logger.log(report.level, report.message)
        if self.progress is not None and self.progress.finished:
            seconds = asyncio.get_running_loop().time() - self.progress.started
            logger.debug(f'The initial listing of {self._describe()} is processed: {self.progress.total:,} '
                         f'objects in {seconds:.1f} s.')
            metrics = self.rctx.operator.metrics
            if metrics.enabled:
                metrics.listed(self.rctx.resource, seconds)
            if not self.closed and self.rctx.settings.process.release_memory and \
                    (memory.startup_over() or self.progress.large):  # the start's heap (once), or the listing's
                # The listing's bodies are freed; the echoes of the last patches pass within a second.
                loop = asyncio.get_running_loop()
                total = self.progress.total if self.progress.large else None
                self._release = loop.call_later(RELEASE_DELAY, self._release_memory, total)
            self.progress = None
            self._gc_over()

    def _gc_over(self) -> None:
        if self._gc:
            self._gc = False
            memory.listing_ended()

    def _release_memory(self, total: int | None) -> None:
        self._release = None
        if memory.release() and total is not None:
            logger.debug(f'Gave the heap freed by resuming {total:,} objects back to the OS.')

    async def drain(self, grace: float | None) -> None:
        """The stream is over: close; idle runners exit now; running cycles get `grace` seconds, then are cancelled."""
        self.close()
        for waiter in self.waiters:
            if not waiter.done():
                waiter.set_result(None)
        busy = [task for task in self.runners if not task.done()]
        if busy:
            _, late = await asyncio.wait(busy, timeout=grace)
            for task in late:
                task.cancel()

    def close(self) -> None:
        """The stream is over: no more wake-ups of its records."""
        self.closed = True
        self._gc_over()  # a stream that ends before its listing is processed
        if self._release is not None:
            self._release.cancel()
            self._release = None
        for record in self._own():
            if record.phase is records.Phase.WAITING:
                self.scheduler.cancel(record)
            if record.phase is not records.Phase.IDLE:
                records.step(record, records.Stopped())
        self.ready.clear()
        if self.drained is not None:
            self.drained.set()
        if self.rctx.dispatchers.get(self.namespace) is self:
            del self.rctx.dispatchers[self.namespace]

    def _own(self) -> list[records.ObjectRecord]:
        """The records of this stream's objects: of its namespace (all of the resource's, if cluster-wide)."""
        every = self.rctx.records.values()
        return list(every) if self.namespace is None else [r for r in every if r.namespace == self.namespace]

    def pause(self) -> None:
        """The stream's scope is paused: nothing of its objects is due; their daemons and timers stop."""
        for record in self._own():
            self.pause_record(record)

    def pause_record(self, record: records.ObjectRecord, *, cancelling: bool = False) -> None:
        """Its scope (or shard) is paused: nothing of it is due; its daemons and timers stop; maybe its cycle is cut."""
        if record.phase is records.Phase.WAITING:
            self.scheduler.cancel(record)
        records.step(record, records.Paused())
        background = self.rctx.background_of(record.uid)
        if background is not None:
            background.pause()
        task = self.tasks.get(record)
        if cancelling and task is not None and not task.done():
            self.tasks[record] = None  # cut: its shard's Lease is lost (see `_serve`)
            task.cancel()

    def take_over(self, record: records.ObjectRecord) -> None:
        """Its shard is ours now: as at operator start (a new memo; its newest body re-run as listed)."""
        if not self.closed:
            memo = self.rctx.operator.seeds.seed(self.rctx.operator.memo)
            now = asyncio.get_running_loop().time()
            event = None if self.newest is None else self.newest.get(record.uid)
            self._carry_out(record, records.step(record, records.TakenOver(memo=memo, now=now, event=event)))

    # -- effects --------------------------------------------------------------------------------------

    def _carry_out(self, record: records.ObjectRecord, effects: list[records.Effect]) -> records.Run | None:
        """Do what the record's step asks; the cycle to run, if it asks for one (the caller runs it)."""
        run: records.Run | None = None
        for effect in effects:
            if effect.__class__ is records.Run:  # by exact type: the effects are final (no subclasses)
                run = effect
            else:
                self._effects[effect.__class__](record, effect)
        return run

    def _enqueue(self, record: records.ObjectRecord, effect: records.Enqueue) -> None:
        if self.closed:  # e.g. a cycle that outlived its stream: idle, for a new stream to queue
            records.step(record, records.Stopped())
            return
        if effect.first:
            self.ready.appendleft(record)  # work begun is finished before new work is begun
        else:
            self.ready.append(record)
        self.kick()

    def _schedule(self, record: records.ObjectRecord, effect: records.Schedule) -> None:
        if not self.closed:
            self.scheduler.at(record, effect.at, functools.partial(self._due, record))

    def _retry(self, record: records.ObjectRecord, effect: records.Retry) -> None:
        body = effect.event['object'] if effect.event is not None else {'metadata': {'name': record.name}}
        log = loggers.ObjectLogger(body=loggers.identity(body), settings=self.rctx.settings)
        log.error(f'Handling failed with an unexpected error ({effect.error}); retrying in {effect.delay}s.',
                  exc_info=effect.error)

    def _converged(self, record: records.ObjectRecord, effect: records.Converged) -> None:
        metrics = self.rctx.operator.metrics
        if metrics.enabled:  # off: not even the no-op's call
            metrics.converged(self.rctx.resource, effect.lag)

    def _forget(self, record: records.ObjectRecord, effect: records.Forget) -> None:
        if self.progress is not None:
            self._report(self.progress.forget(record.uid, asyncio.get_running_loop().time()))
        self.rctx.forget(record.uid)
        if self.newest is not None:
            self.newest.pop(record.uid, None)
        self.scheduler.cancel(record)

    def _due(self, record: records.ObjectRecord) -> None:
        if not self.closed:
            self._carry_out(record, records.step(record, records.Due()))

    # -- the pool -------------------------------------------------------------------------------------

    def kick(self) -> None:
        """Wake an idle runner, or start one within the limit, if work is waiting and no runner is coming for it.

        One at a time: a runner that takes a record kicks the next one if more are waiting, so runners are
        added as fast as the cycles block, not one per record queued (a listing's page queues 500 at once,
        and a runner serves the records that need no I/O one after another without yielding).
        """
        if not self.ready or self.closed or self.starting or self.woken:
            return
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(_KICKED)
                self.woken += 1
                return
        if self.active < self.limit:
            runner = self._runner()
            try:
                task = self.tg.create_task(runner, name=f'kopf runner of {self.rctx.resource.name}')
            except RuntimeError:  # its task group is shutting down (the operator stops): no new runner
                runner.close()  # never started: not a "never awaited" warning
                return
            self.active += 1
            self.runners.add(task)
            self.starting.add(task)  # until it runs; if it never does (cancelled first), until it is done
            task.add_done_callback(self.runners.discard)
            task.add_done_callback(self.starting.discard)

    async def _runner(self) -> None:
        slot = _Slot(self)
        token = invoking.slot.set(slot)
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()  # the same for all the cycles it runs
        if task is not None:
            self.starting.discard(task)
        woken = False  # counted in `self.woken` by the kick that woke it, until it looks at the queue
        try:
            while True:
                if woken:
                    woken, self.woken = False, self.woken - 1
                if not self.ready and self.closed:
                    return
                if not self.ready:
                    waiter: asyncio.Future[bool | None] = loop.create_future()
                    self.waiters.append(waiter)
                    timeout = self.rctx.settings.queueing.idle_timeout
                    expiry = loop.call_later(timeout, _expire, waiter) if timeout is not None else None
                    try:
                        await waiter
                    finally:
                        if expiry is not None:
                            expiry.cancel()
                        woken = _kicked(waiter)  # counted by `kick()` (even if its timeout came meanwhile)
                        if not waiter.done():
                            waiter.cancel()
                    if waiter.result() is _EXPIRED:
                        if waiter in self.waiters:
                            self.waiters.remove(waiter)
                        if not self.ready:
                            return
                    continue
                record = self.ready.popleft()
                if self.ready:
                    self.kick()  # the next runner, in case this cycle blocks
                if self.drained is not None and len(self.ready) <= self.backlog_limit:
                    self.drained.set()
                    self.drained = None
                await self._serve(record, task)
        finally:
            if woken:
                self.woken -= 1
            if slot.held:
                self.active -= 1
            invoking.slot.reset(token)

    # -- one object -----------------------------------------------------------------------------------

    async def _serve(self, record: records.ObjectRecord, task: asyncio.Task[Any] | None) -> None:
        """Run the record's next cycle (in the runner's task) if it is due and consistent; else it waits."""
        rctx = self.rctx
        settings = rctx.operator.settings
        now = asyncio.get_running_loop().time()
        taken = records.Taken(now=now, consistency_timeout=settings.persistence.consistency_timeout)
        run = self._carry_out(record, records.step(record, taken))
        if run is None:
            return
        self.scheduler.cancel(record)  # queued early by an event while waiting: the wake-up is not needed
        background = rctx.background_of(record.uid)  # its daemons' and timers' logger, on the live body
        log = background.logger if background is not None else \
            loggers.ObjectLogger(body=loggers.identity(run.event['object']), settings=settings)
        self.tasks[record] = task
        try:
            done = await self.process(rctx, record, run.event, fresh=run.fresh, logger=log, stream=self.key)
        except asyncio.CancelledError:
            if record not in self.tasks or self.tasks[record] is not None:
                raise  # not cut by `pause_record()`: the runner is cancelled
            if task is not None:
                task.uncancel()  # ours: its shard's Lease is lost; the runner goes on
            done = records.Done(event=run.event, now=asyncio.get_running_loop().time(), paused=True)
        except Exception as exc:
            done = records.Done(event=run.event, now=asyncio.get_running_loop().time(), error=exc,
                                error_delays=rctx.error_delays)
        finally:
            self.tasks.pop(record, None)
            if record.shard is not None:
                rctx.operator.pausing.poke()  # a released shard waits for its cycles to end
        if self.progress is not None:
            self._report(self.progress.handled(record.uid, asyncio.get_running_loop().time()))
        self._carry_out(record, records.step(record, done))
        records.spare_memo(record, rctx.operator.seeds)  # unless held or changed: an idle object keeps no memo
