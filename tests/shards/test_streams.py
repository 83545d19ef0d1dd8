"""The sharded watch: each event's shard (the record's, hashed once, else the hash); what a change of the shards
held forgets and lists again."""
import asyncio
import uuid
from typing import Any

import kopf
from kopf._api import client as client_
from kopf._api import watchstate
from kopf._engine import contexts
from kopf._shards import assignment, membership, streams
from kopf.testing import LocalCluster

from ..waiting import eventually

RESOURCE = kopf.Resource('kopf.dev', 'v1', 'kopfexamples')


def make_rctx(total: int) -> contexts.ResourceContext:
    settings = kopf.OperatorSettings()
    operator = contexts.OperatorContext(settings=settings, registry=kopf.OperatorRegistry(),
                                        client=None,  # type: ignore[arg-type]
                                        memo=kopf.Memo(), lifecycle=kopf.lifecycles.asap)
    operator.shard_of = lambda uid: assignment.shard_of(uid, total)
    return contexts.ResourceContext(operator=operator, resource=RESOURCE,
                                    progress_storage=settings.persistence.progress_storage,
                                    diffbase_storage=settings.persistence.diffbase_storage)


def test_a_known_object_is_not_hashed_again() -> None:
    rctx = make_rctx(6)
    record = rctx.remember('uid-1')
    assert record.shard == assignment.shard_of('uid-1', 6)
    record.shard = (record.shard + 1) % 6   # not what the hash says: the record's shard is what counts
    assert streams._shard(rctx, 'uid-1', 6) == record.shard


def test_an_unknown_object_is_hashed() -> None:
    rctx = make_rctx(6)
    assert 'uid-2' not in rctx.records
    assert streams._shard(rctx, 'uid-2', 6) == assignment.shard_of('uid-2', 6)


# -- a shard lost and regained between two streams: its objects are listed again -------------------------

CONFIGMAPS = kopf.Resource('', 'v1', 'configmaps', kind='ConfigMap', namespaced=True)


def uids_of(items: list[Any]) -> list[tuple[Any, str]]:
    return [(item['type'], item['object']['metadata']['uid']) for item in items if item is not watchstate.LISTED]


UIDS = [str(uuid.uuid5(uuid.NAMESPACE_DNS, str(i))) for i in range(20)]


def listed_in_two_shards() -> tuple[contexts.ResourceContext, membership.Selection, watchstate.WatchState]:
    """A stream's state and records after listing UIDS, both shards held."""
    rctx = make_rctx(2)
    selection = membership.Selection(2)
    selection.update({0, 1})
    state = watchstate.WatchState()
    watchstate.step(state, watchstate.Page([{'metadata': {'uid': uid, 'resourceVersion': '1'}} for uid in UIDS], '1'))
    for uid in UIDS:
        rctx.remember(uid)
    return rctx, selection, state


def test_a_lost_and_regained_shard_is_relisted_and_its_records_kept() -> None:
    rctx, selection, state = listed_in_two_shards()
    since = selection.version
    selection.update({1})   # shard 0's Lease is not renewed in time ...
    selection.update({0, 1})   # ... and is acquired again before the stream restarts
    streams._narrow(rctx, state, selection, since=since)
    regained = {uid for uid in UIDS if assignment.shard_of(uid, 2) == 0}
    assert regained and set(state.known) == set(UIDS) - regained   # shard 0 is listed again, shard 1 is not
    assert set(rctx.records) == set(UIDS)   # the regained shard's records are kept (taken over)


def test_a_lost_shard_is_forgotten_with_its_idle_records() -> None:
    rctx, selection, state = listed_in_two_shards()
    since = selection.version
    selection.update({1})
    streams._narrow(rctx, state, selection, since=since)
    assert set(state.known) == set(rctx.records) == {uid for uid in UIDS if assignment.shard_of(uid, 2) == 1}


async def test_an_object_seen_just_before_its_shard_was_lost_and_regained_is_listed_again(
        local_cluster: LocalCluster) -> None:
    """Its cycle ended paused (the shard not ours for a moment): only a listing resumes it (`records.Paused`)."""
    settings = kopf.OperatorSettings()
    settings.watching.reconnect_backoff = 0.05
    client = client_.APIClient(kopf.testing.cluster_vault(local_cluster), settings)
    operator = contexts.OperatorContext(settings=settings, registry=kopf.OperatorRegistry(), client=client,
                                        memo=kopf.Memo(), lifecycle=kopf.lifecycles.asap)
    operator.shard_of = lambda uid: assignment.shard_of(uid, 2)
    rctx = contexts.ResourceContext(operator=operator, resource=CONFIGMAPS,
                                    progress_storage=settings.persistence.progress_storage,
                                    diffbase_storage=settings.persistence.diffbase_storage)
    selection = membership.Selection(2)
    selection.update({0, 1})
    seen: list[Any] = []

    async def deliver(item: Any) -> None:
        seen.append(item)

    task = asyncio.create_task(streams.read(operator, rctx, 'default', selection, deliver))
    try:
        await eventually(lambda: watchstate.LISTED in seen)
        uid = local_cluster.apply({'apiVersion': 'v1', 'kind': 'ConfigMap',
                                   'metadata': {'name': 'x', 'namespace': 'default'}})[0]['metadata']['uid']
        await eventually(lambda: ('ADDED', uid) in uids_of(seen))
        seen.clear()
        shard = assignment.shard_of(uid, 2)
        selection.update({1 - shard})   # lost (the object's cycle, if it ran now, would end paused) ...
        selection.update({0, 1})         # ... and regained at once: the same shards as the stream began with
        assert await eventually(lambda: (None, uid) in uids_of(seen))   # listed again, as arriving objects are
    finally:
        task.cancel()
        await asyncio.wait([task])
        await client.close()
