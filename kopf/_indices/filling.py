"""In-memory indices: `@kopf.index` handlers fill them; every handler gets them as kwargs by their ids.

- Each fresh event of an object of an indexed resource runs its matching index handlers first in
  its cycle (before any other handler of it); a handler's result replaces the object's values in
  that index (`kopf._indices.lookups.replace`: a mapping per key, anything else under None, None:
  untouched). DELETED, or the filters no longer matching, removes the object's values.
- Errors (counted in memory only): IGNORED keeps the stale values; PERMANENT drops the object's
  values and excludes it for good; TEMPORARY drops them and excludes it until the delay has passed
  (then its next event indexes it again); out of `retries` or `timeout`: excluded for good. A
  result that cannot be indexed (e.g. an unhashable key) drops the object's values for that index;
  each is logged with the object and the index id; other indices are unaffected.
- The start: no handler of any resource runs (cycles wait at `wait()`, without holding a place in
  the runners' limit) until every served indexed resource has finished its initial listing and
  every object of it is indexed; one log line says when, with the count and the time it took.
  Cycles of a resource with index handlers only do not wait (nothing in them sees an index).
- Indices are fed by every object of the resource, whatever else pauses its handling.
"""
import asyncio
import logging
import time
from collections.abc import Hashable, Mapping
from typing import Any

from kopf._core import handlers, patches, progress, records
from kopf._core.bodies import Body, RawEvent
from kopf._core.kwargs import IndexingCause, handler_kwargs
from kopf._core.outcomes import OutcomeKind, describe
from kopf._core.registries import OperatorRegistry
from kopf._engine import changing, invoking
from kopf._indices import lookups as indices

logger = logging.getLogger('kopf.reactor.indexing')


class Indexing:
    """The operator's indices, the error states of their handlers, and the gate of the start."""

    def __init__(self, registry: OperatorRegistry) -> None:
        self.indices: dict[str, indices.Index[Any, Any]] = {h.id: indices.Index() for h in registry.indexing}
        self.states: dict[tuple[str, Hashable], progress.HandlerState] = {}  # after errors only
        self.ready = asyncio.Event()
        self.parts = {'resources'}                # what the observer serves at the start (+ namespaces)
        self.served: set[str] = set()             # ... and of that, what it has served already
        self.watchers: set[Any] = set()           # indexed watchers not listed yet
        self.waiting: dict[Any, set[str]] = {}    # watcher → uids listed but not indexed yet
        self.count = 0
        self.started = time.monotonic()
        self.warned = False
        if not self.indices:
            self.ready.set()

    # -- the gate -----------------------------------------------------------------------------------

    def register(self, watcher: Any) -> None:
        if not self.ready.is_set():
            self.watchers.add(watcher)
            self.waiting.setdefault(watcher, set())

    def expect(self, watcher: Any, uid: str, *, limit: float) -> None:
        """An object of the initial listing: to be indexed before the handlers start."""
        if watcher in self.watchers:
            waiting = self.waiting[watcher]
            waiting.add(uid)
            if len(waiting) > limit and not self.warned:
                self.warned = True
                logger.warning(f'More objects wait to be indexed ({len(waiting)}+) than settings.queueing.'
                               f'worker_limit ({limit}); they are indexed anyway: runners waiting for the indices'
                               f' free their places.')

    def unregister(self, watcher: Any) -> None:
        """A stream ended before its listing did (e.g. no permission): the start does not wait for it."""
        if watcher in self.watchers or self.waiting.get(watcher):
            logger.warning(f'The indices are incomplete: the listing of {_name(watcher)} did not finish.')
            self.watchers.discard(watcher)
            self.waiting.pop(watcher, None)
            self._check()

    def awaits(self, watcher: Any, uid: str) -> bool:
        """Whether the start still waits for this object to be indexed (e.g. its first cycle failed)."""
        return uid in self.waiting.get(watcher, ())

    def listed(self, watcher: Any) -> None:
        if watcher in self.watchers:
            self.watchers.discard(watcher)
            self._check()

    def indexed(self, watcher: Any, uid: str) -> None:
        waiting = self.waiting.get(watcher)
        if waiting is not None and uid in waiting:
            waiting.discard(uid)
            self.count += 1
            self._check()

    def serving_started(self, part: str = 'resources') -> None:
        """The observer has served what it found at the start: the resources, or the namespaces."""
        self.served.add(part)
        self._check()

    def _check(self) -> None:
        if self.ready.is_set() or self.parts - self.served or self.watchers or any(self.waiting.values()):
            return
        self.ready.set()
        self.waiting.clear()
        took = time.monotonic() - self.started
        logger.info(f'Indexing is complete: {self.count} objects for {len(self.indices)} index(es) in {took:.3f}s.')

    async def wait(self) -> None:
        """Until the indices are complete; the runner's place in the limit is free meanwhile."""
        slot = invoking.slot.get()
        released = slot is not None and slot.release()
        try:
            await self.ready.wait()
        finally:
            if released and slot is not None:
                slot.reacquire()

    # -- indexing -----------------------------------------------------------------------------------

    async def index(self, rctx: Any, record: records.ObjectRecord, event: RawEvent, logger: Any) -> None:
        """Run the object's matching index handlers on this event; update (or clean) the indices."""
        body: Mapping[str, Any] = event['object']
        meta = body.get('metadata') or {}
        key = (meta.get('namespace'), meta.get('name'), meta.get('uid'))
        resource_handlers = rctx.registry.select(handlers.IndexingHandler, rctx.resource)
        if event.get('type') == 'DELETED':
            for handler in resource_handlers:
                self._drop(handler.id, key, forget=True)
            return
        cause = IndexingCause(logger=logger, memo=records.memo_of(record), indices=self.indices, resource=rctx.resource,
                              body=Body(body), patch=patches.Patch())
        try:
            matching = list(rctx.registry.iter_indexing_handlers(cause))
        except Exception as exc:  # a filter failed: the object is not indexed now; others go on
            logger.error(f'The filters of the index handlers failed: {exc!r}')
            matching = []
        matched = {h.id for h in matching}
        for handler in resource_handlers:
            if handler.id not in matched:
                self._drop(handler.id, key, forget=True)  # no longer matching: its values go
        for handler in matching:
            await self._run(rctx, handler, cause, key, logger)

    async def _run(self, rctx: Any, handler: handlers.IndexingHandler, cause: IndexingCause,
                   key: Hashable, logger: Any) -> None:
        moment = changing.now()
        state = self.states.get((handler.id, key))
        if state is not None and (state.failure or (state.delayed is not None and state.delayed > moment)):
            return  # excluded: for good, or until its delay has passed
        state = state or progress.HandlerState.from_scratch(now=moment, purpose=None)
        kwargs = handler_kwargs(handler, cause, state=state, now=moment)
        settings = rctx.settings
        outcome = await invoking.invoke_handler(handler, kwargs=kwargs, execution=settings.execution)
        index = self.indices[handler.id]
        if outcome.kind is OutcomeKind.SUCCESS:
            describe(handler, outcome).emit(logger)  # as upstream: "Indexer 'x' succeeded." (or "... will ignore it")
            self.states.pop((handler.id, key), None)
            try:
                indices.replace(index, key, outcome.result)
            except TypeError as exc:  # e.g. an unhashable key: nothing of this result is indexed
                indices.discard(index, key)
                logger.error(f"{handler} returned what cannot be indexed in index '{handler.id}': {exc}",
                             extra={'kopf_handler_id': handler.id})
            return
        backoff = settings.execution.default_backoff
        judged = state.with_outcome(outcome, handler=handler, now=changing.now(), default_backoff=backoff)
        describe(handler, outcome, judged).emit(logger)
        self.states[(handler.id, key)] = judged
        indices.discard(index, key)

    def _drop(self, index_id: str, key: Hashable, *, forget: bool) -> None:
        index = self.indices.get(index_id)
        if index is not None:
            indices.discard(index, key)
        if forget:
            self.states.pop((index_id, key), None)


def _name(watcher: Any) -> str:
    if isinstance(watcher, tuple) and len(watcher) == 2:
        resource, namespace = watcher
        name = getattr(resource, 'name', resource)
        return f'{name} in {namespace}' if namespace else f'{name}'
    return repr(watcher)
