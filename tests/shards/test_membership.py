"""The shards' side of the reactor: a shard's scope flips are reported once; waits for a released shard's work;
one watch of all the Leases of a sharding (not one per Lease), through which the members' changes are seen."""
import asyncio
import urllib.parse
from collections.abc import AsyncIterator
from typing import Any

import pytest

import kopf
from kopf._engine import scopes
from kopf.testing import LocalCluster

from ..waiting import eventually


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


# -- one watch of the sharding's Leases (against the local cluster) ------------------------------------

LEASES_PATH = '/apis/coordination.k8s.io/v1/namespaces/default/leases'
SHARDS = 6


def holders(cluster: LocalCluster) -> list[str]:
    return [((cluster.get('coordination.k8s.io/v1', 'Lease', f'watched-{i}', 'default') or {}).get('spec') or {})
            .get('holderIdentity') or '' for i in range(SHARDS)]


def foreign_member(holder: str, renewed: str, duration: int = 2) -> dict[str, Any]:
    """Another replica's membership Lease (valid for `duration` s after each change, by the watcher's clock)."""
    return {'apiVersion': 'coordination.k8s.io/v1', 'kind': 'Lease',
            'metadata': {'name': 'watched-member-other', 'namespace': 'default',
                         'labels': {'kopf.dev/shards-of': 'watched'}},
            'spec': {'holderIdentity': holder, 'leaseDurationSeconds': duration, 'renewTime': renewed}}


def leases_watched(cluster: LocalCluster) -> bool:
    """The operator's one watch of the Leases is open in the server (a fault injected before hits nothing)."""
    return bool(cluster.emulator.hub.watchers.get(('coordination.k8s.io', 'leases')))


@pytest.fixture
async def sharded(local_cluster: LocalCluster) -> AsyncIterator[str]:
    """An operator with 6 shards (fast durations), holding all of them: its identity."""
    settings = kopf.OperatorSettings()
    settings.peering.lease.lease_duration, settings.peering.lease.renew_deadline = 3.0, 2.0
    settings.peering.lease.retry_period = 0.2
    settings.watching.reconnect_backoff = 0.05
    stop = asyncio.Event()
    task = asyncio.create_task(kopf.operator(registry=kopf.OperatorRegistry(), settings=settings, stop_flag=stop,
                                             vault=kopf.testing.cluster_vault(local_cluster), clusterwide=True,
                                             lease_name='watched', lease_namespace='default', shards=SHARDS))
    try:
        held = await eventually(lambda: (found := holders(local_cluster)) and len(set(found) - {''}) == 1 and found)
        yield held[0]
    finally:
        stop.set()
        await asyncio.wait_for(task, timeout=10)


async def test_one_watch_of_all_the_leases_sees_a_members_join_and_expiry(local_cluster: LocalCluster,
                                                                          sharded: str) -> None:
    for i in range(SHARDS):  # the shard Leases carry the label (the one watch selects them by it)
        lease = local_cluster.get('coordination.k8s.io/v1', 'Lease', f'watched-{i}', 'default') or {}
        assert lease['metadata']['labels'] == {'kopf.dev/shards-of': 'watched'}

    # Another member joins: seen through the watch, the fair share is 3 each; the highest 3 are released.
    local_cluster.apply(foreign_member('other', '2026-01-01T00:00:00.000000Z'))
    await eventually(lambda: holders(local_cluster) == [sharded] * 3 + [''] * 3)
    local_cluster.apply(foreign_member('other', '2026-01-01T00:00:01.000000Z'))  # a renewal: still a member
    await asyncio.sleep(1.0)
    assert holders(local_cluster) == [sharded] * 3 + [''] * 3

    # It stops renewing: it expires by our clock (2 s after its last change), all 6 shards are ours again.
    await eventually(lambda: holders(local_cluster) == [sharded] * SHARDS, within=10)

    watches = [r for r in local_cluster.request_log() if r['path'].startswith(LEASES_PATH) and watching(r)]
    listings = [r for r in local_cluster.request_log() if r['method'] == 'GET' and r['path'] == LEASES_PATH
                and not watching(r)]
    assert len(watches) == 1, watches   # one watch of all 7 Leases (6 shards, 1 member), not one per Lease
    assert watches[0]['path'] == LEASES_PATH   # not by name
    assert urllib.parse.parse_qs(watches[0]['query'])['labelSelector'] == ['kopf.dev/shards-of=watched']
    assert len(listings) == 1, listings  # its initial listing only, not a LIST of the members per retry period


@pytest.mark.parametrize('fault', ['closed', 'reset', '410'])
async def test_the_watch_of_the_leases_reconnects(local_cluster: LocalCluster, sharded: str, fault: str) -> None:
    # The shards are held through the Electors' own requests, maybe before the watch is open (a loaded host).
    await eventually(lambda: leases_watched(local_cluster))
    if fault == '410':
        local_cluster.fail_watches(410)   # too old: listed again
    else:
        local_cluster.close_watches(abort=fault == 'reset')
    watches = await eventually(lambda: (found := [r for r in local_cluster.request_log()
                                                  if r['path'] == LEASES_PATH and watching(r)]) and
                               len(found) >= 2 and found)
    assert len(watches) == 2, watches
    # Seen by the new watch; valid long enough that a slow release of the 3 shards is not missed by its expiry.
    local_cluster.apply(foreign_member('other', '2026-01-01T00:00:00.000000Z', duration=300))
    await eventually(lambda: holders(local_cluster) == [sharded] * 3 + [''] * 3)
    listings = [r for r in local_cluster.request_log() if r['method'] == 'GET' and r['path'] == LEASES_PATH
                and not watching(r)]
    assert len(listings) == (2 if fault == '410' else 1)  # resumed from its resourceVersion, unless expired


def watching(request: dict[str, Any]) -> bool:
    return urllib.parse.parse_qs(request['query']).get('watch') == ['true']
