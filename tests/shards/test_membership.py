"""The shards' side of the reactor: a shard's scope flips are reported once; waits for a released shard's work."""
import asyncio

from kopf._engine import scopes


def test_a_shards_flips_are_reported_once_each() -> None:
    seen: list[tuple[int, bool, bool]] = []
    state = scopes.Pausing()
    state.on_shard = lambda index, paused, cancelling: seen.append((index, paused, cancelling))
    state.pause(scopes.Shard(2), 'lease')
    state.pause(scopes.Shard(2), 'rebalance')  # paused already: no flip
    state.pause('ns1', 'peering')               # not a shard
    state.resume(scopes.Shard(2), 'lease')     # still paused by the other
    state.resume(scopes.Shard(2), 'rebalance')
    state.pause(scopes.Shard(2), 'lease', cancelling=True)
    assert seen == [(2, True, False), (2, False, False), (2, True, True)]


async def test_wait_for_is_woken_by_pokes() -> None:
    state = scopes.Pausing()
    busy = [True]
    waiting = asyncio.create_task(state.wait_for(lambda: not busy[0]))
    await asyncio.sleep(0)
    assert not waiting.done()
    busy[0] = False
    state.poke()
    await asyncio.wait_for(waiting, timeout=5)
