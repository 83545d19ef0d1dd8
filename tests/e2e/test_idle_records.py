"""What an idle object keeps is minimal, yet what users rely on stays exact: the per-object memo (made at first
sight from the operator's memo, shared by the object's handlers, daemons and timers, kept while the operator
lives); the last body for optional delete handlers of an object that vanished while the watch re-listed; a
paged listing whose `continue` token expires midway, restarted with no object lost or handled twice."""
import asyncio
import collections
from typing import Any

import pytest

import kopf

from ..backends import Cluster
from .conftest import Kube, Starter, eventually, example, fast_settings, operators


def records(registry: kopf.OperatorRegistry) -> dict[str, Any]:
    return {uid: record for ctx in operators(registry) for rctx in ctx.served.values()
            for uid, record in rctx.records.items()}


async def test_the_memo_is_the_objects_own_from_first_sight_and_shared_by_its_handlers_and_timers(
        cluster: Cluster, registry: kopf.OperatorRegistry, start_operator: Starter, kube: Kube) -> None:
    seen: dict[str, list[tuple[str, Any, Any, int]]] = collections.defaultdict(list)

    @kopf.on.create('kopfexamples', registry=registry)
    def created(name: str, memo: kopf.Memo, **_: Any) -> None:
        memo.mine = name
        seen[name].append(('create', memo.flag, memo.get('mine'), id(memo)))

    @kopf.on.update('kopfexamples', registry=registry)
    def updated(name: str, memo: kopf.Memo, **_: Any) -> None:
        seen[name].append(('update', memo.flag, memo.get('mine'), id(memo)))

    @kopf.timer('kopfexamples', interval=0.2, registry=registry)
    def ticked(name: str, memo: kopf.Memo, **_: Any) -> None:
        if not any(kind == 'timer' for kind, *_ in seen[name]):
            seen[name].append(('timer', memo.flag, memo.get('mine'), id(memo)))

    operator_memo = kopf.Memo(flag='early')
    await start_operator(memo=operator_memo)
    cluster.apply(example('kex-a'))
    await eventually(lambda: {'create', 'timer'} <= {kind for kind, *_ in seen['kex-a']})
    operator_memo.flag = 'late'  # objects seen from now on copy this; kex-a keeps its own copy
    cluster.apply(example('kex-b'))
    await eventually(lambda: seen['kex-b'])
    await eventually(lambda: all(record.work is None for record in records(registry).values()))  # idle
    await kube.patch('kex-a', {'spec': {'field': 'changed'}})
    await eventually(lambda: any(kind == 'update' for kind, *_ in seen['kex-a']))
    memos = {id_ for *_, id_ in seen['kex-a']}
    assert len(memos) == 1  # one memo object: its handlers' and its timer's, kept while idle
    assert {(flag, mine) for _, flag, mine, _ in seen['kex-a'] if _ != 'create'} == {('early', 'kex-a')}
    assert seen['kex-b'][0][1:3] == ('late', 'kex-b')
    assert {id_ for *_, id_ in seen['kex-b']}.isdisjoint(memos)  # the object's own


@pytest.mark.emulator_only(reason="a re-list at a chosen moment needs the emulator's faults and history compaction")
@pytest.mark.parametrize('optional_delete', [True, False], ids=['optional-delete', 'no-delete-handlers'])
async def test_an_object_gone_while_the_watch_relisted(
        cluster: Cluster, registry: kopf.OperatorRegistry, start_operator: Starter, kube: Kube,
        optional_delete: bool) -> None:
    deleted: list[dict[str, Any]] = []
    created: list[str] = []

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(name: str, **_: Any) -> None:
        created.append(name)

    if optional_delete:
        @kopf.on.delete('kopfexamples', optional=True, registry=registry)
        def delete_fn(body: kopf.Body, **_: Any) -> None:
            deleted.append(dict(body))

    await start_operator()
    cluster.apply(example('kex-gone', field='its last value'))
    await eventually(lambda: created == ['kex-gone'])
    [uid] = await eventually(lambda: list(records(registry)))
    await eventually(lambda: records(registry)[uid].work is None)  # idle: no body kept in its record
    assert isinstance(cluster, kopf.testing.LocalCluster)
    cluster.fail('GET', '*/kopfexamples', 503, count=None)  # the watch cannot come back: it will re-list
    cluster.close_watches()
    await kube.delete('kex-gone')
    cluster.compact_history()  # its DELETED event is gone from the history: only the re-list can tell
    since = len(cluster.request_log())
    cluster.clear_faults()
    await eventually(lambda: uid not in records(registry))  # its stub's (or body's) DELETED cycle has ended
    assert any(r['path'].endswith('/kopfexamples') and 'watch=' not in r['query'] and r['code'] == 200
               for r in cluster.request_log()[since:])  # it was re-listed (after a 410), not watched
    if optional_delete:  # the last body, as listed or watched before: spec included
        [body] = deleted
        assert body['metadata']['name'] == 'kex-gone' and body['spec'] == {'field': 'its last value'}
    assert created == ['kex-gone']  # nothing re-run


@pytest.mark.emulator_only(reason="a continue token expired at a chosen moment needs the emulator's faults")
async def test_a_paged_listing_whose_continue_expires_midway_loses_and_repeats_nothing(
        cluster: Cluster, registry: kopf.OperatorRegistry, start_operator: Starter) -> None:
    names = [f'kex-{idx:03d}' for idx in range(120)]
    for name in names:
        cluster.apply(example(name))
    calls: collections.Counter[str] = collections.Counter()

    @kopf.on.create('kopfexamples', registry=registry)
    async def create_fn(name: str, **_: Any) -> None:
        calls[name] += 1
        await asyncio.sleep(0)

    settings = fast_settings()
    settings.watching.chunk_size = 25
    assert isinstance(cluster, kopf.testing.LocalCluster)
    cluster.fail('GET', r're:/kopfexamples\?.*continue=', 410, count=1)  # the listing's 2nd page: expired
    await start_operator(settings=settings)
    await eventually(lambda: len(calls) == len(names))
    assert max(calls.values()) == 1
    lists = [r for r in cluster.request_log() if r['path'].endswith('/kopfexamples') and 'watch=' not in r['query']]
    assert [r['code'] for r in lists].count(410) == 1 and len(lists) > len(names) // 25 + 1  # listed again
