"""The watch streams of a sharded replica (`--shards N`): the shards it holds go to the server as `shardSelector=`.

- The selector is the shards held (`sharding.Selection`), adjacent ones merged into one range
  (`shards.held_selector`): one LIST + WATCH per resource and namespace, as without shards. While the
  replica holds no shard, nothing is watched.
- A change of the shards held (a takeover; a release, once the shard's work is finished) restarts the
  stream after a short settle (shards often change together): the objects that left the selection are
  forgotten without a DELETED event (their idle records too: another replica has them); the re-list
  sends the objects that came as listed, as at the operator's start (resumed; completed handlers, which
  their objects record, never run again). A shard lost and regained meanwhile (its Lease not renewed in
  time, then re-acquired) is re-listed too: its objects' cycles that ended paused wait for a listing.
- Whether the server filtered: a built-in kind's LIST says so in `metadata.shardInfo` (custom
  resources' lists cannot: a real server filters them without saying). An object outside the selection
  proves that the server ignored it (the feature gate ShardedListAndWatch off, a server before 1.36,
  `initial_streaming` included: no probe is needed): logged once per resource; the replica then filters
  on the client as unsharded replicas did (the records of other shards' objects are kept, paused).
- Not for indexed resources (every replica's indices hold every object) nor for those with a static
  `settings.watching.shard_selectors` entry (sent as given).
"""
import asyncio
import logging
from typing import Any

from kopf._api import watching, watchstate
from kopf._core import handlers, records
from kopf._engine import contexts
from kopf._shards import assignment as shards

logger = logging.getLogger('kopf.shards.streams')

SETTLE = 0.3       # seconds without another change of the shards before the stream restarts
SETTLE_MAX = 2.0   # at most, when the shards keep changing


def selection_for(ctx: contexts.OperatorContext, resource: Any) -> Any:
    """The replica's shards (a `sharding.Selection`) if this resource's watches send them, else None."""
    if ctx.selection is None or ctx.registry.has_handlers(resource, handlers.IndexingHandler):
        return None
    if watching.server_side_selectors(ctx.settings, resource).get('shardSelector'):
        return None   # a static selector of the settings: sent as given
    return ctx.selection


async def read(ctx: contexts.OperatorContext, rctx: contexts.ResourceContext, namespace: str | None,
               selection: Any, deliver: contexts.Deliver, *, keep_bodies: bool = False) -> None:
    """Stream the objects of the shards held, restarting on every change of them; ends as the watch ends."""
    state = watchstate.WatchState(keep_bodies=keep_bodies)
    while True:
        held, version = selection.held, selection.version
        if held:
            selector = shards.held_selector(held, selection.total)
            where = f'{rctx.resource} in {namespace}' if namespace else f'{rctx.resource} cluster-wide'
            logger.info(f'Watching {where} for the shards {shards.describe(held)}: shardSelector={selector}')
            consumer = asyncio.create_task(_consume(ctx, rctx, namespace, selection, held, selector, state, deliver))
            changed = asyncio.create_task(selection.changed_since(version))
            try:
                done, _ = await asyncio.wait([consumer, changed], return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (consumer, changed):
                    task.cancel()
                await asyncio.wait([consumer, changed])
            if consumer in done:
                consumer.result()  # an error of the watch (e.g. the resource is gone) ends the stream
                return
        else:
            await selection.changed_since(version)   # nothing is ours: nothing to watch
        await _settle(selection)
        _narrow(rctx, state, selection, since=version)


async def _consume(ctx: contexts.OperatorContext, rctx: contexts.ResourceContext, namespace: str | None,
                   selection: Any, held: frozenset[int], selector: str, state: watchstate.WatchState,
                   deliver: contexts.Deliver) -> None:
    resource = rctx.resource
    name = str(resource)
    async for batch in watching.watch_batches(ctx.client, resource, namespace=namespace, shard_selector=selector,
                                              state=state):   # not `watch_objs`: one async step less per item
        for item in batch:
            if item is not watchstate.LISTED and name not in selection.ignored:   # once ignored, the engine filters
                uid = (item['object'].get('metadata') or {}).get('uid')
                if uid and _shard(rctx, str(uid), selection.total) not in held:
                    _ignored(selection, resource, state)
            await deliver(item)


def _shard(rctx: contexts.ResourceContext, uid: str, total: int) -> int:
    """The object's shard: its record's (hashed once, when the record was made), else hashed now."""
    record = rctx.records.get(uid)
    return record.shard if record is not None and record.shard is not None else shards.shard_of(uid, total)


def _ignored(selection: Any, resource: Any, state: watchstate.WatchState) -> None:
    name = str(resource)
    if name not in selection.ignored:
        selection.ignored.add(name)
        said = 'its list said it filtered' if state.shard_info else 'its list had no shardInfo'
        logger.warning(f'The server ignored the shard selector for {name} ({said}, and sent an object of a '
                       f'shard not held: is the feature gate ShardedListAndWatch off, or the server older than '
                       f'1.36?); filtering on the client instead.')


async def _settle(selection: Any) -> None:
    """Wait until the shards stop changing for a moment (or for SETTLE_MAX at most)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SETTLE_MAX
    while True:
        version = selection.version
        try:
            async with asyncio.timeout(min(SETTLE, max(0.0, deadline - loop.time()))):
                await selection.changed_since(version)
        except TimeoutError:
            return
        if loop.time() >= deadline:
            return


def _narrow(rctx: contexts.ResourceContext, state: watchstate.WatchState, selection: Any, *, since: int) -> None:
    """Forget the objects of the shards not held any more (their idle records too); re-list the rest.

    A shard lost and gained again since the stream began (a Lease not renewed in time, then re-acquired)
    is re-listed in full, though the same shards are held as before: its objects' cycles that ended while
    it was paused did nothing and wait for a listing (`records.Paused`); their records are kept.
    """
    held, total = selection.held, selection.total
    regained = frozenset(shard for shard in held if selection.gained.get(shard, 0) > since)
    kept, left = held - regained, []

    def keep(uid: str) -> bool:
        shard = shards.shard_of(uid, total)
        if shard not in held:
            left.append(uid)
        return shard in kept

    watchstate.narrow(state, keep=keep)
    for uid in left:
        record = rctx.records.get(uid)
        background = rctx.background_of(uid)
        if record is not None and record.phase is records.Phase.IDLE and (background is None or not background.running):
            rctx.forget(uid)
    if left:
        logger.debug(f'{len(left)} objects of {rctx.resource} left this replica\'s shards; forgotten.')
    if regained:
        logger.debug(f'The shards {shards.describe(regained)} were lost and regained: {rctx.resource} re-listed.')
