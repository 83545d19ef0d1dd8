"""One cycle of one object: decide → invoke → settle → apply (→ its daemons and timers see the newest body).

A cycle of an object whose scope is paused (peering, a Lease, its shard not ours) only feeds the indices.
`decide` and `settle` are pure (`kopf._core.plans`); this module only awaits the invocations
(`changing`) and the patch (`applying`), logs what the pure steps decided, and reports the cycle's
end to the object's record as a value (`kopf._core.records.Done`).
"""
import asyncio
from collections.abc import Sequence
from typing import Any

from kopf._api import watchstate
from kopf._core import handlers, plans, records
from kopf._core.bodies import RawEvent
from kopf._core.kwargs import Logger
from kopf._core.outcomes import LogEntry
from kopf._engine import applying, changing, contexts, loggers


async def process(rctx: contexts.ResourceContext, record: records.ObjectRecord, event: RawEvent, *,
                  fresh: bool, logger: Logger, stream: Any = None) -> records.Done:
    """Decide and invoke everything for this event, send the one patch; what the cycle came to."""
    operator = rctx.operator
    kinds = operator.registry.kinds(rctx.resource)  # once per cycle, not a look-up per kind
    indexing = operator.indexing
    if indexing is not None:
        if handlers.IndexingHandler in kinds:
            if fresh or indexing.awaits(stream, record.uid):  # first: every fresh event, whatever else
                try:
                    await indexing.index(rctx, record, event, logger)
                finally:
                    indexing.indexed(stream, record.uid)  # a failure must not hold the start forever
    pauses = operator.pausing.pauses
    if pauses.by and paused(rctx, record, event):  # nothing paused (the usual case): not even the call
        return records.Done(event=event, now=asyncio.get_running_loop().time(), paused=True)  # indices only
    if plans.quiet_at_first_sight(rctx, record, event):  # unchanged since handled: nothing to decide or write
        return quiet(rctx, record, event)
    if indexing is not None and not indexing.ready.is_set() and handles(rctx):
        await indexing.wait()  # no handler sees a half-filled index (a cycle without handlers need not wait)
    background = rctx.background_of(record.uid)
    plan = plans.decide(rctx, record, event, now=changing.now(), fresh=fresh, logger=logger,
                        event_logger=lambda: loggers.LocalObjectLogger(body=event['object'], settings=rctx.settings),
                        busy=background is not None and background.running > 0,
                        finished=background.finished if background is not None else frozenset())
    if background is not None and (plan.event_type == 'DELETED' or plan.deleting):
        background.delete()  # as upstream: daemons and timers stop before the delete handlers
    if plan.logs:
        emit(plan.logs, logger)
    outcomes = await changing.invoke(rctx, plan)
    settlement = plans.settle(plan, outcomes, now=changing.now())
    if settlement.logs:
        emit(settlement.logs, logger)
    deleted = plan.event_type == 'DELETED'
    result = None if deleted else await applying.apply(rctx, plan.body, settlement.patch, logger)
    answer, raw = (None, None) if result is None else (result.body, result.raw)
    written = answer is not None or deleted or not settlement.patch  # a refused patch re-runs its handlers
    if rctx.daemons is not None and handlers.SpawningHandler in kinds:
        rctx.daemons.reconcile(record, plan, answer)  # daemons and timers see the newest body
    settled = answer is not None and not plans.needs_recheck(rctx, plan, settlement, answer)
    watched = handlers.WatchingHandler in kinds
    # The key of its echo, where the echo is only awaited (`observing._Echoes.match`): not seen by `on.event`
    # handlers, daemons or timers, nor kept for a shard.
    echo = settled and not watched and not operator.shards and handlers.SpawningHandler not in kinds
    return records.Done(
        event=event, now=asyncio.get_running_loop().time(), wakeup=settlement.wakeup, answer=answer,
        echo=watchstate.echo_key(raw) if echo and raw is not None else None, settled=settled, watched=watched,
        finalizer=operator.settings.persistence.finalizer,
        handled=written and settlement.handled, deletion_handled=written and settlement.deletion_handled,
        paused=bool(pauses.by) and paused(rctx, record, event))  # no error: its delays are not read


def quiet(rctx: contexts.ResourceContext, record: records.ObjectRecord, event: RawEvent) -> records.Done:
    """The end of a cycle that would decide and settle to "handled" only (`plans.quiet_at_first_sight`)."""
    applying.skipped(rctx)
    pauses = rctx.operator.pausing.pauses
    return records.Done(event=event, now=asyncio.get_running_loop().time(), handled=True,
                        finalizer=rctx.operator.settings.persistence.finalizer,
                        paused=bool(pauses.by) and paused(rctx, record, event))


def quiet_listed(rctx: contexts.ResourceContext, record: records.ObjectRecord, event: RawEvent) -> bool:
    """Whether a new record's listed event needs nothing: its cycle would end in `quiet()` (counted so if it does).

    Asked by the dispatcher before queueing it (`records.Quiet`): not while the object's scope is paused, nor
    where its cycles feed the indices (`process()` does those first); a storage that raises leaves it to its
    cycle, which fails the usual way (named, retried).
    """
    operator = rctx.operator
    if operator.pausing.pauses.by and paused(rctx, record, event):
        return False
    if operator.indexing is not None and handlers.IndexingHandler in operator.registry.kinds(rctx.resource):
        return False
    try:  # as its first cycle would see it (`Taken` marks it as first seen in a listing)
        quiet = plans.quiet_at_first_sight(rctx, record, event, listed=True)
    except Exception:
        return False
    if quiet:
        applying.skipped(rctx)
    return quiet


HANDLING = (handlers.ChangingHandler, handlers.WatchingHandler, handlers.SpawningHandler)


def handles(rctx: contexts.ResourceContext) -> bool:
    """Whether a cycle of the resource's objects may run a handler that sees the indices (not only index them).

    Else its objects' cycles do not wait for the indices to be complete: 10,000 cycles of an indexed-only
    resource waiting at the start held ~3 KB each (a task, its frames, the event) until all were indexed.
    """
    return not rctx.registry.kinds(rctx.resource).isdisjoint(HANDLING)  # the cached kinds, base kinds included


def paused(rctx: contexts.ResourceContext, record: records.ObjectRecord, event: RawEvent) -> bool:
    """Whether the object's scope (or its shard) is paused (`kopf._engine.scopes`): its handlers must not run now."""
    namespace = (event.get('object', {}).get('metadata') or {}).get('namespace')
    return rctx.operator.pausing.pauses.paused(namespace, record.shard)  # nothing paused: False at once


def emit(entries: Sequence[LogEntry], logger: Logger) -> None:
    held = len(entries) > 1 and loggers.hold_routes()  # the plain route found once for the lines in a row
    try:
        for entry in entries:
            if entry.exc_info is None and entry.extra is None:  # most of them: no `LogEntry.emit` call in between
                logger.log(entry.level, entry.message)
            else:
                entry.emit(logger)
    finally:
        if held:
            loggers.release_routes()
