"""The shards' side of the reactor: a shard's scope flips are reported once; waits for a released shard's work."""
import asyncio

from kopf._model import pausing
from kopf._reactor import pausing as pausing_


def test_a_shards_flips_are_reported_once_each() -> None:
    seen: list[tuple[int, bool, bool]] = []
    scopes = pausing_.Pausing()
    scopes.on_shard = lambda index, paused, cancelling: seen.append((index, paused, cancelling))
    scopes.pause(pausing.Shard(2), 'lease')
    scopes.pause(pausing.Shard(2), 'rebalance')  # paused already: no flip
    scopes.pause('ns1', 'peering')               # not a shard
    scopes.resume(pausing.Shard(2), 'lease')     # still paused by the other
    scopes.resume(pausing.Shard(2), 'rebalance')
    scopes.pause(pausing.Shard(2), 'lease', cancelling=True)
    assert seen == [(2, True, False), (2, False, False), (2, True, True)]


async def test_wait_for_is_woken_by_pokes() -> None:
    scopes = pausing_.Pausing()
    busy = [True]
    waiting = asyncio.create_task(scopes.wait_for(lambda: not busy[0]))
    await asyncio.sleep(0)
    assert not waiting.done()
    busy[0] = False
    scopes.poke()
    await asyncio.wait_for(waiting, timeout=5)
