"""What an idle object keeps is minimal, yet what users rely on stays exact: the per-object memo (made at first
sight from the operator's memo, shared by the object's handlers, daemons and timers, kept while the operator
lives); the last body for optional delete handlers of an object that vanished while the watch re-listed; a
paged listing whose `continue` token expires midway, restarted with no object lost or handled twice."""
import collections
import threading
from typing import Any

import pytest

import kopf

from .. import backends
from ..backends import Cluster
from ..relay import Relay
from .conftest import Kube, Starter, eventually, example, fast_settings, idle, operators, vault_for

RELISTED = 'is too old (410 Expired); re-listing.'
EXPIRED_MIDWAY = 'expired midway; listing again.'


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


async def test_an_untouched_memo_is_not_kept_yet_is_the_copy_as_of_first_sight(
        cluster: Cluster, registry: kopf.OperatorRegistry, start_operator: Starter, kube: Kube) -> None:
    seen: list[tuple[str, str, Any]] = []

    @kopf.on.create('kopfexamples', registry=registry)
    def created(name: str, memo: kopf.Memo, **_: Any) -> None:
        seen.append(('create', name, memo.flag))  # read, not changed

    @kopf.on.update('kopfexamples', registry=registry)
    def updated(name: str, memo: kopf.Memo, **_: Any) -> None:
        seen.append(('update', name, memo.flag))

    operator_memo = kopf.Memo(flag='early')
    await start_operator(memo=operator_memo)
    cluster.apply(example('kex-a'))
    await eventually(lambda: ('create', 'kex-a', 'early') in seen)
    [uid] = await eventually(lambda: list(records(registry)))
    await eventually(lambda: records(registry)[uid].work is None)  # idle
    assert type(records(registry)[uid].memo) is not kopf.Memo  # no memo of its own while idle: its seed
    operator_memo.flag = 'late'  # objects seen from now on copy this; kex-a's memo is as of its first sight
    cluster.apply(example('kex-b'))
    await eventually(lambda: ('create', 'kex-b', 'late') in seen)
    await kube.patch('kex-a', {'spec': {'field': 'changed'}})
    await eventually(lambda: ('update', 'kex-a', 'early') in seen)
    assert ('update', 'kex-a', 'late') not in seen


@pytest.mark.parametrize('optional_delete', [True, False], ids=['optional-delete', 'no-delete-handlers'])
async def test_an_object_gone_while_the_watch_relisted(
        cluster: Cluster, registry: kopf.OperatorRegistry, relay: Relay, start_operator: Starter, kube: Kube,
        caplog: pytest.LogCaptureFixture, optional_delete: bool) -> None:
    deleted: list[dict[str, Any]] = []
    created: list[str] = []

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(name: str, **_: Any) -> None:
        created.append(name)

    if optional_delete:
        @kopf.on.delete('kopfexamples', optional=True, registry=registry)
        def delete_fn(body: kopf.Body, **_: Any) -> None:
            deleted.append(dict(body))

    await start_operator(vault=vault_for(cluster, relay.url))
    cluster.apply(example('kex-gone', field='its last value'))
    await eventually(lambda: created == ['kex-gone'])
    [uid] = await eventually(lambda: list(records(registry)))
    await eventually(lambda: records(registry)[uid].work is None)  # idle: no body kept in its record
    relay.cut()  # the watch breaks and cannot come back meanwhile
    await kube.delete('kex-gone')
    await backends.expire_history(cluster)  # its DELETED event is not served any more: only a re-list can tell
    relay.restore()
    await eventually(lambda: uid not in records(registry))  # its stub's (or body's) DELETED cycle has ended
    assert RELISTED in caplog.text  # it was re-listed (after a 410), not watched
    if optional_delete:  # the last body, as listed or watched before: spec included
        [body] = deleted
        assert body['metadata']['name'] == 'kex-gone' and body['spec'] == {'field': 'its last value'}
    assert created == ['kex-gone']  # nothing re-run


async def test_a_paged_listing_whose_continue_expires_midway_loses_and_repeats_nothing(
        cluster: Cluster, registry: kopf.OperatorRegistry, start_operator: Starter,
        caplog: pytest.LogCaptureFixture) -> None:
    names = [f'kex-{idx:02d}' for idx in range(24)]  # 8 pages: the listing waits midway with more to ask for
    cluster.apply(*[example(name) for name in names])
    calls: collections.Counter[str] = collections.Counter()
    holding, held = threading.Event(), threading.Event()

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(name: str, **_: Any) -> None:  # sync: it holds the only runner while it waits
        calls[name] += 1
        if len(calls) == 3:  # two objects handled already, in the listing's first page
            held.set()
            holding.wait(timeout=30)

    settings = fast_settings()
    settings.watching.chunk_size = 3
    settings.queueing.worker_limit = 1  # the queue grows past a page: the listing waits for it midway
    await start_operator(settings=settings)
    try:
        await eventually(lambda: held.is_set() and waiting_midway(registry))  # the next page is not asked for yet
        await backends.expire_history(cluster)  # the listing's continue token is too old now
    finally:
        holding.set()
    await eventually(lambda: listed(registry) and idle(registry))  # the listing started anew and is processed
    assert calls == collections.Counter(names)  # each handled once: none lost, none repeated
    assert caplog.text.count(EXPIRED_MIDWAY) == 1


def dispatchers(registry: kopf.OperatorRegistry) -> list[Any]:
    return [dispatcher for ctx in operators(registry) for rctx in ctx.served.values()
            for dispatcher in rctx.dispatchers.values()]


def waiting_midway(registry: kopf.OperatorRegistry) -> bool:
    """The initial listing waits for the queue to shorten (a page read, the one after the next not yet asked for)."""
    return any(len(d.ready) > d.backlog_limit and d.resuming for d in dispatchers(registry))


def listed(registry: kopf.OperatorRegistry) -> bool:
    """The initial listings are over (to their last page)."""
    return bool(dispatchers(registry)) and not any(d.resuming for d in dispatchers(registry))


async def test_watched_events_wait_for_a_long_queue_as_the_listing_does(
        cluster: Cluster, registry: kopf.OperatorRegistry, start_operator: Starter) -> None:
    calls: collections.Counter[str] = collections.Counter()
    holding, held = threading.Event(), threading.Event()

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(name: str, **_: Any) -> None:  # sync: it holds the only runner while it waits
        calls[name] += 1
        if name == 'kex-00':
            held.set()
            holding.wait(timeout=30)

    settings = fast_settings()
    settings.watching.chunk_size = 3  # the queue's limit: 3 records
    settings.queueing.worker_limit = 1
    await start_operator(settings=settings)
    await eventually(lambda: listed(registry))  # nothing listed: what follows is watched
    names = [f'kex-{idx:02d}' for idx in range(8)]
    try:
        cluster.apply(example(names[0]))
        await eventually(held.is_set)
        cluster.apply(*[example(name) for name in names[1:]])
        await eventually(lambda: any(d.drained is not None and len(d.ready) > d.backlog_limit
                                     for d in dispatchers(registry)))  # the watch's reader waits
        assert len(records(registry)) < len(names)  # the rest is not read (no body held) until the queue shortens
    finally:
        holding.set()
    await eventually(lambda: calls == collections.Counter(names))


async def test_the_echo_of_our_own_patch_is_known_by_its_bytes_and_nothing_else_is(
        cluster: Cluster, registry: kopf.OperatorRegistry, start_operator: Starter, kube: Kube,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from kopf._engine import queueing
    calls: collections.Counter[str] = collections.Counter()
    echoed, dispatch = queueing.Dispatcher.echoed, queueing.Dispatcher.dispatch

    def counted_echo(self: queueing.Dispatcher, uid: str, rv: str) -> None:
        calls['echoed'] += 1
        echoed(self, uid, rv)

    def counted_event(self: queueing.Dispatcher, event: Any) -> None:
        calls[event.get('type') or 'listed'] += 1
        dispatch(self, event)
    monkeypatch.setattr(queueing.Dispatcher, 'echoed', counted_echo)
    monkeypatch.setattr(queueing.Dispatcher, 'dispatch', counted_event)
    seen: list[tuple[str, Any]] = []

    @kopf.on.create('kopfexamples', registry=registry)
    def created(name: str, **_: Any) -> dict[str, Any]:
        seen.append(('create', name))
        return {'done': True}  # a result: the cycle's one patch, to /status

    @kopf.on.update('kopfexamples', registry=registry)
    def updated(name: str, new: Any, **_: Any) -> None:
        seen.append(('update', new['spec']['field']))

    await start_operator()
    cluster.apply(example('kex-a'))
    await eventually(lambda: ('create', 'kex-a') in seen)
    [uid] = await eventually(lambda: list(records(registry)))
    await eventually(lambda: idle(registry) and records(registry)[uid].work is None)  # its echo came: nothing awaited
    if not backends.is_envtest(cluster):  # a write's answer is its watch event, byte for byte; kube-apiserver 1.34's
        await eventually(lambda: calls['echoed'] >= 1)  # too, but its echo often comes before the answer (then parsed)
    await kube.patch('kex-a', {'spec': {'field': 'changed'}})  # a change by others: parsed and handled as usual
    await eventually(lambda: ('update', 'changed') in seen)
    await eventually(lambda: idle(registry) and records(registry)[uid].work is None)
    assert [kind for kind, _ in seen] == ['create', 'update']  # handled once each
