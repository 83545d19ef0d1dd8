"""Per-object workers: one at a time per object, the newest body only, in-memory wake-ups.

- Events are routed by uid to the object's worker; a worker keeps only the newest event (older
  unprocessed ones are superseded) and never runs two cycles of one object at once.
- After our own patch, the worker waits (up to `settings.persistence.consistency_timeout`) until
  the watch brings a body at least as new as the patch's resourceVersion, so it never decides on
  a stale body; after the timeout it goes on with what it has.
- A delay (a retry later, or the next handler now) wakes the worker in memory, re-processing the
  newest known body; a fresh event replaces the wake-up ("Our decisions" 5).
- An idle worker (no events, no wake-up) exits after `settings.queueing.idle_timeout`; the object's
  memory stays in the resource context until the object is deleted.
- An unexpected error in a cycle is logged and the object is retried after the next
  `settings.queueing.error_delays` step.
"""
import asyncio
import functools
import itertools
import logging
from collections.abc import Iterator
from typing import Any

from kopf._model.bodies import RawEvent
from kopf._reactor import applying, contexts, processing

logger = logging.getLogger('kopf.reactor.queueing')


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


class Worker:
    """The one worker of one object."""

    def __init__(self, rctx: contexts.ResourceContext, uid: str) -> None:
        self.rctx = rctx
        self.uid = uid
        self.pending: RawEvent | None = None   # the newest unprocessed event
        self.last: RawEvent | None = None      # the newest processed event (for wake-ups)
        self.wakeup_at: float | None = None    # loop time
        self.deadline: float | None = None     # the end of the consistency wait
        self.signal = asyncio.Event()
        self.errors: Iterator[float] | None = None
        self.task: asyncio.Task[None] | None = None

    def feed(self, event: RawEvent) -> None:
        self.pending = event
        self.signal.set()

    async def run(self) -> None:
        while True:
            event = await self._next()
            if event is None:
                return
            await self._cycle(event)
            if event.get('type') == 'DELETED':
                self.rctx.forget(self.uid)
                return

    async def _next(self) -> RawEvent | None:
        loop = asyncio.get_running_loop()
        memory = self.rctx.memories.get(self.uid)
        while True:
            now = loop.time()
            woken = self.wakeup_at is not None and self.wakeup_at <= now
            candidate = self.pending if self.pending is not None else self.last if woken else None
            idle = False
            if candidate is not None:
                expected = memory.expected_rv if memory is not None else None
                if is_consistent(_rv(candidate), expected) or (self.deadline is not None and now >= self.deadline):
                    if memory is not None:
                        memory.expected_rv = None
                    self.pending, self.wakeup_at, self.deadline = None, None, None
                    return candidate
                if self.deadline is None:
                    self.deadline = now + self.rctx.settings.persistence.consistency_timeout
                timeout = self.deadline - now
            elif self.wakeup_at is not None:
                timeout = self.wakeup_at - now
            else:
                timeout, idle = self.rctx.settings.queueing.idle_timeout, True
            self.signal.clear()
            try:
                async with asyncio.timeout(max(0.0, timeout)):
                    await self.signal.wait()
            except TimeoutError:
                if idle and self.pending is None:
                    return None

    async def _cycle(self, event: RawEvent) -> None:
        memory = self.rctx.remember(self.uid, initial=event.get('type') is None)
        cycle = processing.make_cycle(self.rctx, memory, event)
        try:
            await processing.process(cycle, event)
            if cycle.event_type != 'DELETED':
                await applying.apply(cycle)
        except Exception as exc:
            self.errors = self.errors or iter(_delays(self.rctx.settings.queueing.error_delays))
            delay = next(self.errors)
            cycle.logger.exception(f'Handling failed with an unexpected error ({exc}); retrying in {delay}s.')
            self._schedule(event, delay)
            return
        self.errors = None
        if cycle.wakeup is not None:
            self._schedule(event, cycle.wakeup)

    def _schedule(self, event: RawEvent, delay: float) -> None:
        self.last = event
        self.wakeup_at = asyncio.get_running_loop().time() + delay


def _delays(backoffs: Any) -> Iterator[float]:
    last = 1.0
    items = [backoffs] if isinstance(backoffs, (int, float)) else list(backoffs)
    for last in items:
        yield float(last)
    yield from itertools.repeat(last)


class Dispatcher:
    """Routes the events of one watch stream to per-object workers (spawned in the given task group)."""

    def __init__(self, rctx: contexts.ResourceContext, tg: asyncio.TaskGroup) -> None:
        self.rctx = rctx
        self.tg = tg
        self.workers: dict[str, Worker] = {}

    def dispatch(self, event: RawEvent) -> None:
        meta = event.get('object', {}).get('metadata') or {}
        uid = str(meta.get('uid') or f"{meta.get('namespace')}/{meta.get('name')}")
        worker = self.workers.get(uid)
        if worker is None or worker.task is None or worker.task.done():
            worker = self.workers[uid] = Worker(self.rctx, uid)
            worker.task = self.tg.create_task(worker.run(), name=f'kopf worker for {meta.get("name")}')
            worker.task.add_done_callback(functools.partial(self._exited, uid, worker))
        worker.feed(event)

    def _exited(self, uid: str, worker: Worker, _: 'asyncio.Task[None]') -> None:
        if self.workers.get(uid) is worker:
            del self.workers[uid]
