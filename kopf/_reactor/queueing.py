"""Per-object work: one cycle at a time per object, the newest body only, in-memory wake-ups.

- Events are routed by uid to the object's work state; only the newest unprocessed event is kept
  (older ones are superseded), and one object's cycles never overlap.
- Only keys go through the work queue (controller-runtime style): objects with something to do wait
  in a FIFO of uids; a pool of runner tasks takes them one by one. An object with nothing to do costs
  no task and no timer, only its memory in the resource context (until it is deleted).
- At most `settings.queueing.worker_limit` runners (default `DEFAULT_WORKER_LIMIT`) run cycles at once;
  a runner inside an async handler does not count (a long await must never hold others back), so
  async handlers of any number of objects run concurrently, as before. Sync handlers are bounded
  by the executor's threads anyway.
- After our own patch, the server's answer is the newest body: the object's next cycle decides on it
  at once, and the watch events of the object up to that resourceVersion (the echoes of our own
  writes, or changes that the answer already includes) are skipped. If the cycle left nothing to do
  and the answer differs from the body only by what we wrote (`processing.needs_recheck`), there is
  no next cycle at all: it would find nothing to do. Not so where `on.event` handlers
  must see every event, and not for an object that our patch lets go (deleted, no finalizer of ours):
  there, the object waits (up to `settings.persistence.consistency_timeout`) until the watch brings
  a body at least as new as the patch's resourceVersion, so it is never decided on a stale body;
  after the timeout it goes on with what it has.
- A delay (a retry later, or the next handler now) wakes the object in memory, re-processing the
  newest known body; a fresh event replaces the wake-up ("Our decisions" 5).
- An idle runner exits after `settings.queueing.idle_timeout` (not while wake-ups are pending).
- An unexpected error in a cycle is logged and the object is retried after the next
  `settings.queueing.error_delays` step; new events in the meantime do not cut the delay short
  (the newest of them is kept and decided on when the delay is over, in one cycle).
"""
import asyncio
import collections
import itertools
import logging
from collections.abc import Iterator
from typing import Any

from kopf._model import handlers
from kopf._model.bodies import RawEvent
from kopf._reactor import applying, contexts, invoking, loggers, processing

logger = logging.getLogger('kopf.reactor.queueing')

DEFAULT_WORKER_LIMIT = 200  # cycles at once per watcher, when `settings.queueing.worker_limit` is None


def _rv(event: RawEvent) -> str | None:
    rv = (event.get('object', {}).get('metadata') or {}).get('resourceVersion')
    return None if rv is None else str(rv)


def is_consistent(rv: str | None, expected: str | None) -> bool:
    """Whether a body of `rv` is at least as new as our patch's `expected` resourceVersion."""
    if expected is None or rv == expected:
        return True
    if rv is not None and rv.isdigit() and expected.isdigit():
        return int(rv) >= int(expected)
    return False


class Work:
    """What the queue knows of one object with something to do (dropped when it has nothing)."""

    __slots__ = ('deadline', 'errors', 'last', 'logger', 'pending', 'queued', 'running', 'throttled_until',
                 'timer', 'timer_at', 'uid', 'wakeup_at')

    def __init__(self, uid: str) -> None:
        self.uid = uid
        self.pending: RawEvent | None = None    # the newest unprocessed event
        self.last: RawEvent | None = None       # the newest processed event (for wake-ups)
        self.wakeup_at: float | None = None     # loop time
        self.deadline: float | None = None      # the end of the consistency wait
        self.errors: Iterator[float] | None = None
        self.throttled_until: float | None = None  # loop time: no cycle before it (after an unexpected error)
        self.queued = False
        self.running = False
        self.timer: asyncio.TimerHandle | None = None
        self.timer_at: float | None = None
        self.logger: loggers.ObjectLogger | None = None  # for the object's cycles while it has work (not idle)


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
    """Routes the events of one watch stream to per-object work, run by runners in the given task group."""

    def __init__(self, rctx: contexts.ResourceContext, tg: asyncio.TaskGroup) -> None:
        self.rctx = rctx
        self.tg = tg
        self.works: dict[str, Work] = {}
        self.ready: collections.deque[Work] = collections.deque()
        self.waiters: collections.deque[asyncio.Future[None]] = collections.deque()  # idle runners
        self.active = 0   # runners counted against the limit
        self.timers = 0   # pending wake-ups & consistency deadlines
        self.limit = rctx.settings.queueing.worker_limit or DEFAULT_WORKER_LIMIT

    def dispatch(self, event: RawEvent) -> None:
        meta = event.get('object', {}).get('metadata') or {}
        uid = str(meta.get('uid') or f"{meta.get('namespace')}/{meta.get('name')}")
        memory = self.rctx.memories.get(uid)
        if memory is not None and memory.applied_rv is not None and event.get('type') != 'DELETED':
            rv = _rv(event)
            if rv is not None and is_consistent(memory.applied_rv, rv):
                return  # not newer than our patch's answer, which is decided on already
        work = self.works.get(uid)
        if work is None:
            work = self.works[uid] = Work(uid)
        work.pending = event
        self._enqueue(work)

    # -- the queue ----------------------------------------------------------------------------------

    def _enqueue(self, work: Work, *, first: bool = False) -> None:
        if work.queued or work.running:
            return  # a running object looks at its pending event when its cycle ends
        work.queued = True
        if first:
            self.ready.appendleft(work)  # work begun is finished before new work is begun
        else:
            self.ready.append(work)
        self.kick()

    def kick(self) -> None:
        """Wake an idle runner, or start one within the limit, if work is waiting."""
        if not self.ready:
            return
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        if self.active < self.limit:
            self.active += 1
            self.tg.create_task(self._runner(), name=f'kopf runner of {self.rctx.resource.name}')

    def _later(self, work: Work, at: float) -> None:
        """Queue the object again at `at` (loop time), unless an earlier timer is set already."""
        if work.timer is not None and work.timer_at is not None and work.timer_at <= at:
            return
        if work.timer is not None:
            work.timer.cancel()
            self.timers -= 1
        loop = asyncio.get_running_loop()
        work.timer, work.timer_at = loop.call_at(at, self._fire, work), at
        self.timers += 1

    def _fire(self, work: Work) -> None:
        work.timer, work.timer_at = None, None
        self.timers -= 1
        if self.works.get(work.uid) is work:
            self._enqueue(work)

    def _cancel_timers(self) -> None:
        for work in self.works.values():
            if work.timer is not None:
                work.timer.cancel()
                work.timer, work.timer_at = None, None
        self.timers = 0

    async def _runner(self) -> None:
        slot = _Slot(self)
        token = invoking.slot.set(slot)
        loop = asyncio.get_running_loop()
        try:
            while True:
                if not self.ready:
                    waiter = loop.create_future()
                    self.waiters.append(waiter)
                    try:
                        async with asyncio.timeout(self.rctx.settings.queueing.idle_timeout):
                            await waiter
                    except TimeoutError:
                        if waiter in self.waiters:
                            self.waiters.remove(waiter)
                        others = any(not w.done() for w in self.waiters)
                        if not self.ready and (not self.timers or others):  # one runner stays for timers
                            return
                    finally:
                        if not waiter.done():
                            waiter.cancel()
                    continue
                work = self.ready.popleft()
                work.queued = False
                await self._serve(work)
        except asyncio.CancelledError:
            self._cancel_timers()
            raise
        finally:
            if slot.held:
                self.active -= 1
            invoking.slot.reset(token)

    # -- one object ---------------------------------------------------------------------------------

    async def _serve(self, work: Work) -> None:
        """Run the object's next cycle if it is due and consistent; else re-queue it when it will be."""
        now = asyncio.get_running_loop().time()
        woken = work.wakeup_at is not None and work.wakeup_at <= now
        candidate = work.pending if work.pending is not None else work.last if woken else None
        fresh = candidate is not None and candidate is work.pending  # not a re-run of an event seen before
        if candidate is None:
            self._settle(work)
            return
        if work.throttled_until is not None and now < work.throttled_until:
            self._later(work, work.throttled_until)  # the error delay first; the newest event is kept
            return
        work.throttled_until = None
        memory = self.rctx.memories.get(work.uid)
        expected = memory.expected_rv if memory is not None else None
        if not is_consistent(_rv(candidate), expected) and not (work.deadline is not None and now >= work.deadline):
            if work.deadline is None:
                work.deadline = now + self.rctx.settings.persistence.consistency_timeout
            self._later(work, work.deadline)  # a fresh event queues it earlier
            return
        if memory is not None:
            memory.expected_rv = None
        work.pending, work.wakeup_at, work.deadline = None, None, None
        if work.timer is not None:
            work.timer.cancel()
            work.timer, work.timer_at = None, None
            self.timers -= 1
        work.running = True
        try:
            continued = await self._cycle(work, candidate, fresh=fresh)
        finally:
            work.running = False
        if candidate.get('type') == 'DELETED':
            self.rctx.forget(work.uid)
            if self.works.get(work.uid) is work:
                del self.works[work.uid]
            return
        self._settle(work, first=continued)

    def _settle(self, work: Work, *, first: bool = False) -> None:
        """After a cycle (or a spurious wake-up): queue it, time it, or forget it (nothing to do)."""
        if work.pending is not None:
            self._enqueue(work, first=first)
        elif work.wakeup_at is not None:
            self._later(work, work.wakeup_at)
        elif work.timer is None and not work.queued and self.works.get(work.uid) is work:
            del self.works[work.uid]

    async def _cycle(self, work: Work, event: RawEvent, *, fresh: bool = True) -> bool:
        """One cycle; True if the server's answer is queued as the object's next event (to be done first:
        work begun is finished before new work is begun, e.g. the handlers after adding the finalizer)."""
        memory = self.rctx.remember(work.uid, initial=event.get('type') is None)
        cycle = processing.make_cycle(self.rctx, memory, event, logger=work.logger)
        work.logger = cycle.logger
        try:
            await processing.process(cycle, event, fresh=fresh)
            if cycle.event_type != 'DELETED':
                await applying.apply(cycle)
        except Exception as exc:
            work.errors = work.errors or iter(_delays(self.rctx.settings.queueing.error_delays))
            delay = next(work.errors)
            cycle.logger.exception(f'Handling failed with an unexpected error ({exc}); retrying in {delay}s.')
            self._schedule(work, event, delay)
            work.throttled_until = work.wakeup_at
            return False
        work.errors = None
        latest = self._answered(cycle)
        if latest is not None and not processing.needs_recheck(cycle, latest['object']):
            if work.pending is not None and is_consistent(_rv(latest), _rv(work.pending)):
                work.pending = None  # not newer than the answer, which needs nothing more
            latest = None
        elif latest is not None and (work.pending is None or not is_consistent(_rv(work.pending), _rv(latest))):
            work.pending = latest  # decide on the server's answer now, not on its echo later
        elif latest is None and work.pending is not None and self._released(cycle, work.pending):
            work.pending = None  # it still shows our finalizer, which our patch has just released
        if cycle.wakeup is not None:
            self._schedule(work, latest or event, cycle.wakeup)
        return latest is not None

    def _answered(self, cycle: contexts.Cycle) -> RawEvent | None:
        """The server's answer to the cycle's patch as the object's newest event, if it may be used so."""
        body = cycle.applied
        if body is None or self.rctx.registry.has_handlers(self.rctx.resource, handlers.WatchingHandler):
            return None
        meta = body.get('metadata') or {}
        if meta.get('deletionTimestamp') and self.rctx.finalizer not in (meta.get('finalizers') or ()):
            return None  # let go: the object's last events come through the watch
        rv = meta.get('resourceVersion')
        if rv is None:
            return None
        cycle.memory.applied_rv = str(rv)
        cycle.memory.expected_rv = None
        return {'type': 'MODIFIED', 'object': body}

    def _released(self, cycle: contexts.Cycle, pending: RawEvent) -> bool:
        """Whether our patch let the deleted object go and the pending event is not newer than its answer.

        Deciding on such an event would see our finalizer and the handling records we have just purged,
        and would run the delete handlers again. (Releasing the last finalizer of a deleted object
        answers with the previous resourceVersion, so "not newer" includes "equal".)
        """
        meta = (cycle.applied or {}).get('metadata') or {}
        if not meta.get('deletionTimestamp') or self.rctx.finalizer in (meta.get('finalizers') or ()):
            return False
        if self.rctx.registry.has_handlers(self.rctx.resource, handlers.WatchingHandler):
            return False  # on.event handlers see every event, stale or not
        rv = meta.get('resourceVersion')
        return rv is not None and pending.get('type') != 'DELETED' and is_consistent(str(rv), _rv(pending))

    def _schedule(self, work: Work, event: RawEvent, delay: float) -> None:
        work.last = event
        work.wakeup_at = asyncio.get_running_loop().time() + delay


def _delays(backoffs: Any) -> Iterator[float]:
    last = 1.0
    items = [backoffs] if isinstance(backoffs, (int, float)) else list(backoffs)
    for last in items:
        yield float(last)
    yield from itertools.repeat(last)
