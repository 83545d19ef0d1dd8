"""List + watch over real HTTP against the local cluster, with its faults injected."""
import asyncio
import contextlib
import json
import ssl
from typing import Any

import pytest

from kopf._api import client as client_
from kopf._api import watching, watchstate
from kopf._core import resources
from kopf._core.settings import OperatorSettings

from ..waiting import eventually
from .conftest import KOPFEXAMPLES as KEX
from .watchers import NS, Consumer, create, kex, patch, rv


def _watches(cluster: Any) -> list[dict[str, Any]]:
    return [r for r in cluster.request_log() if 'watch=true' in r['query']]


@pytest.mark.looptime
async def test_initial_listing_then_events(client: client_.APIClient, crd: resources.Resource,
                                           consumers: list[Consumer]) -> None:
    a = await create(client, 'a')
    b = await create(client, 'b')
    consumer = Consumer(client, crd, namespace='default')
    consumers.append(consumer)
    await consumer.wait_for(lambda c: watchstate.LISTED in c.items)
    assert [(e['type'], e['object']['metadata']['name']) for e in consumer.events] == [(None, 'a'), (None, 'b')]
    assert consumer.items[2] is watchstate.LISTED
    c = await create(client, 'c')
    a2 = await patch(client, 'a', x=1)
    await consumer.wait_for_rv(rv(a2))
    assert [(e['type'], e['object']['metadata']['name']) for e in consumer.events[2:]] == [
        ('ADDED', 'c'), ('MODIFIED', 'a')]
    assert consumer.seen() == [(o['metadata']['uid'], rv(o)) for o in [a, b, c, a2]]


@pytest.mark.looptime
async def test_chunked_listing(client: client_.APIClient, crd: resources.Resource, cluster: Any,
                               settings: OperatorSettings, consumers: list[Consumer]) -> None:
    settings.watching.chunk_size = 2
    for name in 'abcde':
        await create(client, name)
    consumer = Consumer(client, crd)
    consumers.append(consumer)
    await consumer.wait_for(lambda c: watchstate.LISTED in c.items)
    assert [e['object']['metadata']['name'] for e in consumer.events] == list('abcde')
    assert all(e['object']['kind'] == 'KopfExample' for e in consumer.events)
    lists = [r for r in cluster.request_log() if r['path'] == crd.get_url() and 'watch' not in r['query']]
    assert len(lists) == 3
    assert all('limit=2' in r['query'] for r in lists)


@pytest.mark.looptime
async def test_watch_asks_for_bookmarks_and_resumes_from_the_last_rv(
        client: client_.APIClient, crd: resources.Resource, cluster: Any, consumers: list[Consumer]) -> None:
    consumer = Consumer(client, crd, namespace='default')
    consumers.append(consumer)
    await consumer.wait_for(lambda c: watchstate.LISTED in c.items)
    a = await create(client, 'a')
    await consumer.wait_for_rv(rv(a))
    cluster.close_watches()
    b = await create(client, 'b')
    await consumer.wait_for_rv(rv(b))
    watches = [r['query'] for r in cluster.request_log() if 'watch=true' in r['query']]
    assert len(watches) == 2
    assert all('allowWatchBookmarks=true' in q for q in watches)
    assert f'resourceVersion={rv(a)}' in watches[1]
    assert consumer.seen() == [(a['metadata']['uid'], rv(a)), (b['metadata']['uid'], rv(b))]


@pytest.mark.looptime
async def test_bookmarks_are_never_yielded(client: client_.APIClient, crd: resources.Resource, cluster: Any,
                                           consumers: list[Consumer]) -> None:
    cluster.set_bookmark_interval(1)
    consumer = Consumer(client, crd)
    consumers.append(consumer)
    await consumer.wait_for(lambda c: watchstate.LISTED in c.items)
    await asyncio.sleep(10)
    a = await create(client, 'a')
    await consumer.wait_for_rv(rv(a))
    assert [e['type'] for e in consumer.events] == ['ADDED']


@pytest.mark.looptime
@pytest.mark.parametrize('keep', [False, True], ids=['stubs', 'bodies'])
async def test_410_relists_and_yields_only_the_differences(
        client: client_.APIClient, crd: resources.Resource, cluster: Any, consumers: list[Consumer],
        keep: bool) -> None:
    a = await create(client, 'a')
    await create(client, 'b')
    c = await create(client, 'c')
    consumer = Consumer(client, crd, namespace='default', keep_bodies=keep)
    consumers.append(consumer)
    await consumer.wait_for(lambda c: watchstate.LISTED in c.items)
    cluster.fail('GET', NS, 503, count=None)  # keep the watcher away while things change
    cluster.close_watches()
    await asyncio.sleep(0.5)
    b2 = await patch(client, 'b', x=2)
    await client.request('DELETE', f'{NS}/c')
    d = await create(client, 'd')
    cluster.compact_history()
    cluster.clear_faults()
    await consumer.wait_for_rv(rv(d))
    names = {e['object']['metadata']['uid']: e['object']['metadata']['name'] for e in consumer.events[:3]}
    after = [(e['type'], names.get(e['object']['metadata']['uid'], e['object']['metadata'].get('name')))
             for e in consumer.events[3:]]
    assert sorted(after) == [('ADDED', 'd'), ('DELETED', 'c'), ('MODIFIED', 'b')]
    deleted = next(e['object'] for e in consumer.events if e['type'] == 'DELETED')
    assert deleted == (c if keep else {'apiVersion': c['apiVersion'], 'kind': c['kind'],  # its last body, or a stub
                                       'metadata': {'uid': c['metadata']['uid'], 'resourceVersion': rv(c)}})
    assert rv(b2) in [rv(e['object']) for e in consumer.events]
    assert a and c  # listed once, never again
    assert [e['object']['metadata'].get('name') for e in consumer.events].count('a') == 1
    lists = [r for r in cluster.request_log() if r['path'] == NS and r['method'] == 'GET'
             and 'watch' not in r['query'] and r['code'] == 200]
    assert len(lists) == 2  # the initial one and the re-list


@pytest.mark.looptime
async def test_silent_stream_is_reconnected(client: client_.APIClient, crd: resources.Resource, cluster: Any,
                                            settings: OperatorSettings, consumers: list[Consumer]) -> None:
    settings.watching.inactivity_timeout = 5
    consumer = Consumer(client, crd)
    consumers.append(consumer)
    await consumer.wait_for(lambda c: watchstate.LISTED in c.items)
    await asyncio.sleep(12)  # no events, no bookmarks (60s by default): 2 reconnects
    await eventually(lambda: len(_watches(cluster)) >= 3)  # the 2nd reconnect's bytes may lag under load
    assert len(_watches(cluster)) == 3
    a = await create(client, 'a')
    await consumer.wait_for_rv(rv(a))
    assert consumer.seen() == [(a['metadata']['uid'], rv(a))]


@pytest.mark.looptime
async def test_server_timeout_is_sent_and_the_stream_reopened(
        client: client_.APIClient, crd: resources.Resource, cluster: Any,
        settings: OperatorSettings, consumers: list[Consumer]) -> None:
    settings.watching.server_timeout = 3
    consumer = Consumer(client, crd)
    consumers.append(consumer)
    await consumer.wait_for(lambda c: watchstate.LISTED in c.items)
    await asyncio.sleep(7)
    await eventually(lambda: len(_watches(cluster)) >= 3)  # the 2nd reopening's bytes may lag under load
    watches = _watches(cluster)
    assert all('timeoutSeconds=3' in r['query'] for r in watches)


@pytest.mark.looptime
async def test_watch_opening_is_retried_on_429_and_5xx(
        client: client_.APIClient, crd: resources.Resource, cluster: Any, consumers: list[Consumer]) -> None:
    cluster.throttle('GET', crd.get_url(), count=1, retry_after=3)
    cluster.fail('GET', crd.get_url(), 500, count=2)
    consumer = Consumer(client, crd)
    consumers.append(consumer)
    await consumer.wait_for(lambda c: watchstate.LISTED in c.items)
    a = await create(client, 'a')
    await consumer.wait_for_rv(rv(a))


@pytest.mark.looptime
async def test_consistency_under_dropped_streams_and_one_compaction(
        client: client_.APIClient, crd: resources.Resource, cluster: Any, consumers: list[Consumer]) -> None:
    consumer = Consumer(client, crd, namespace='default')
    consumers.append(consumer)
    await consumer.wait_for(lambda c: watchstate.LISTED in c.items)
    last = ''
    changes = 0
    dropped = 0
    compacted = False
    for i in range(200):
        for body in [await create(client, f'obj-{i}'), await patch(client, f'obj-{i}', step=1)]:
            last = rv(body)
            changes += 1
            if changes % 25 == 0:
                dropped += cluster.close_watches()
                await asyncio.sleep(0.5)  # the consumer reconnects meanwhile (and lags behind the writes)
            if changes == 210 and not compacted:  # compact once, after the consumer caught up
                await consumer.wait_for_rv(last)
                cluster.compact_history()
                cluster.close_watches()
                compacted = True
    await consumer.wait_for_rv(last)
    ours = {e['object']['metadata']['uid'] for e in consumer.events}
    log = [(uid, str(version)) for uid, version, _ in cluster.event_log() if uid in ours]
    assert len(log) == 400
    assert consumer.seen() == log
    assert compacted
    assert dropped >= 15


def test_server_side_selectors_from_settings() -> None:
    from kopf._api import watching
    from kopf._core.selectors import EVERYTHING
    settings = OperatorSettings()
    kex = resources.Resource('kopf.dev', 'v1', 'kopfexamples', kind='KopfExample')
    pods = resources.Resource('', 'v1', 'pods', kind='Pod')
    settings.watching.label_selectors['kopfexamples'] = 'b=2'
    settings.watching.label_selectors[('kopf.dev', 'kopfexamples')] = 'a=1'
    settings.watching.label_selectors[EVERYTHING] = 'a=1'
    settings.watching.field_selectors[('v1', 'pods')] = 'spec.nodeName=n1'
    settings.watching.shard_selectors[EVERYTHING] = 'first'
    settings.watching.shard_selectors['pods'] = 'second'
    assert watching.server_side_selectors(settings, kex) == {'labelSelector': 'a=1,b=2', 'shardSelector': 'first'}
    assert watching.server_side_selectors(settings, pods) == {
        'labelSelector': 'a=1', 'fieldSelector': 'spec.nodeName=n1', 'shardSelector': 'first'}


@pytest.mark.looptime
async def test_label_selectors_are_sent_and_honoured(
        client: client_.APIClient, crd: resources.Resource, cluster: Any, settings: OperatorSettings,
        consumers: list[Consumer]) -> None:
    settings.watching.label_selectors['kopfexamples'] = 'app=mine'
    await client.request('POST', NS, payload={**kex('other'), 'metadata': {'name': 'other'}})
    mine = await client.request('POST', NS, payload={**kex('mine'), 'metadata': {
        'name': 'mine', 'labels': {'app': 'mine'}}})
    consumer = Consumer(client, crd, namespace='default')
    consumers.append(consumer)
    await consumer.wait_for(lambda c: watchstate.LISTED in c.items)
    assert consumer.seen() == [(mine['metadata']['uid'], rv(mine))]
    queries = [r['query'] for r in cluster.request_log() if r['path'] == NS and r['method'] == 'GET']
    assert queries and all('labelSelector=app%3Dmine' in q for q in queries)


@pytest.mark.looptime
async def test_initial_streaming(client: client_.APIClient, crd: resources.Resource, cluster: Any,
                                 settings: OperatorSettings, consumers: list[Consumer]) -> None:
    settings.watching.initial_streaming = True
    a = await create(client, 'a')
    b = await create(client, 'b')
    consumer = Consumer(client, crd, namespace='default')
    consumers.append(consumer)
    await consumer.wait_for(lambda c: watchstate.LISTED in c.items)
    assert [(e['type'], e['object']['metadata']['name']) for e in consumer.events] == [(None, 'a'), (None, 'b')]
    c = await create(client, 'c')
    await consumer.wait_for_rv(rv(c))
    assert consumer.seen() == [(o['metadata']['uid'], rv(o)) for o in [a, b, c]]
    gets = [r['query'] for r in cluster.request_log() if r['path'] == NS and r['method'] == 'GET']
    assert all('watch=true' in q for q in gets)  # no LIST at all
    assert 'sendInitialEvents=true' in gets[0] and 'resourceVersionMatch=NotOlderThan' in gets[0]


@pytest.mark.looptime
async def test_an_unknown_resource_ends_the_iterator(client: client_.APIClient) -> None:
    from kopf._api import apierrors, watching
    missing = resources.Resource('kopf.dev', 'v1', 'nothings', namespaced=True)
    with pytest.raises(apierrors.APINotFoundError):
        async for _ in watching.watch_objs(client, missing):
            pass


@pytest.mark.looptime
async def test_client_timeout_reopens_the_stream(
        client: client_.APIClient, crd: resources.Resource, cluster: Any,
        settings: OperatorSettings, consumers: list[Consumer]) -> None:
    settings.watching.client_timeout = 4
    cluster.set_bookmark_interval(1)  # not silent: only the client-side total timeout cuts it
    consumer = Consumer(client, crd)
    consumers.append(consumer)
    await consumer.wait_for(lambda c: watchstate.LISTED in c.items)
    await asyncio.sleep(9)
    await eventually(lambda: len(_watches(cluster)) >= 3)  # the 2nd reopening's bytes may lag under load
    assert len(_watches(cluster)) == 3
    a = await create(client, 'a')
    await consumer.wait_for_rv(rv(a))
    assert consumer.seen() == [(a['metadata']['uid'], rv(a))]


class _BrokenInitialStream:
    """A fake client: the streamed initial listing breaks midway (after `a` and `b`); the LIST has only `b`."""

    def __init__(self, settings: OperatorSettings) -> None:
        self.settings = settings
        self.streams: list[Any] = []

    @staticmethod
    def _obj(name: str, rv: str) -> dict[str, Any]:
        return {'metadata': {'name': name, 'namespace': 'default', 'uid': f'uid-{name}', 'resourceVersion': rv}}

    async def request(self, method: str, path: str, *, params: Any = None, **kwargs: Any) -> Any:
        return {'kind': 'KopfExampleList', 'apiVersion': 'kopf.dev/v1', 'metadata': {'resourceVersion': '5'},
                'items': [self._obj('b', '2')]}

    @contextlib.asynccontextmanager
    async def stream(self, path: str, *, params: Any = None, **kwargs: Any) -> Any:
        self.streams.append(dict(params or {}))
        broken = len(self.streams) == 1
        objs = [self._obj('a', '1'), self._obj('b', '2')]

        class Response:
            def __init__(self) -> None:
                self.lines = [json.dumps({'type': 'ADDED', 'object': o}).encode() + b'\n' for o in objs]

            async def read_chunk(self) -> bytes:
                if broken and self.lines:
                    return self.lines.pop(0)
                if broken:
                    raise ConnectionResetError('the stream broke midway')
                await asyncio.sleep(1000)
                return b''

        yield Response()


@pytest.mark.looptime
async def test_a_list_after_a_broken_initial_stream_forgets_what_the_stream_listed(settings: OperatorSettings) -> None:
    from kopf._api import watching
    settings.watching.initial_streaming = True
    settings.watching.reconnect_backoff = 0.1
    fake = _BrokenInitialStream(settings)
    items: list[Any] = []
    async for item in watching.watch_objs(fake, KEX, namespace='default'):  # type: ignore[arg-type]
        items.append(item if item is watchstate.LISTED else (item['type'], item['object']['metadata']['uid']))
        if item is watchstate.LISTED:
            break
    assert 'sendInitialEvents' in fake.streams[0]
    assert items == [(None, 'uid-a'), (None, 'uid-b'), ('DELETED', 'uid-a'), watchstate.LISTED]  # gone by the LIST


class _FailingStream:
    """A fake client: the first stream yields one event, then fails with an error; later ones yield nothing new."""

    def __init__(self, settings: OperatorSettings, error: BaseException) -> None:
        self.settings = settings
        self.error = error
        self.streams: list[Any] = []

    async def request(self, method: str, path: str, *, params: Any = None, **kwargs: Any) -> Any:
        return {'kind': 'KopfExampleList', 'apiVersion': 'kopf.dev/v1', 'metadata': {'resourceVersion': '1'},
                'items': []}

    @contextlib.asynccontextmanager
    async def stream(self, path: str, *, params: Any = None, **kwargs: Any) -> Any:
        self.streams.append(dict(params or {}))
        first, error = len(self.streams) == 1, self.error
        obj = {'metadata': {'name': 'a', 'namespace': 'default', 'uid': 'uid-a', 'resourceVersion': '2'}}

        class Response:
            lines = [json.dumps({'type': 'ADDED', 'object': obj}).encode() + b'\n'] if first else []

            async def read_chunk(self) -> bytes:
                if self.lines:
                    return self.lines.pop(0)
                if first:
                    raise error
                await asyncio.sleep(1000)
                return b''

        yield Response()


@pytest.mark.looptime
@pytest.mark.parametrize('error', [
    OSError(113, 'No route to host'),  # EHOSTUNREACH: an OSError, not a ConnectionError
    ssl.SSLError(1, '[SSL: DECRYPTION_FAILED_OR_BAD_RECORD_MAC] decryption failed or bad record mac'),
], ids=['ehostunreach', 'ssl'])
async def test_an_os_error_in_the_stream_reconnects(settings: OperatorSettings, error: BaseException) -> None:
    from kopf._api import watching
    settings.watching.reconnect_backoff = 0.1
    fake = _FailingStream(settings, error)
    items: list[Any] = []

    async def consume() -> None:
        async for item in watching.watch_objs(fake, KEX, namespace='default'):  # type: ignore[arg-type]
            items.append(item if item is watchstate.LISTED else (item['type'], item['object']['metadata']['name']))

    task = asyncio.create_task(consume())
    await asyncio.sleep(10)
    assert not task.done()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert items == [watchstate.LISTED, ('ADDED', 'a')]
    assert [s['resourceVersion'] for s in fake.streams] == ['1', '2']  # reconnected from the last seen RV


@pytest.mark.looptime
@pytest.mark.parametrize('backoff, streams', [(1.0, 2), (20.0, 1)])
async def test_reconnect_backoff_is_the_pause_before_a_watch_reconnects(
        settings: OperatorSettings, backoff: float, streams: int) -> None:
    from kopf._api import watching
    settings.watching.reconnect_backoff = backoff
    fake = _FailingStream(settings, ConnectionResetError('reset'))

    async def consume() -> None:
        async for _ in watching.watch_objs(fake, KEX, namespace='default'):  # type: ignore[arg-type]
            pass

    task = asyncio.create_task(consume())
    await asyncio.sleep(10)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert len(fake.streams) == streams  # the broken stream, and its reconnect only after the backoff



class _Chunks:
    """A stream response whose chunks come when the test says; closing it ends the waiting read with an error."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes | BaseException] = asyncio.Queue()
        self.closed = False

    async def read_chunk(self) -> bytes:
        item = await self.queue.get()
        if isinstance(item, BaseException):
            raise item
        return item

    def close(self) -> None:
        self.closed = True
        self.queue.put_nowait(ConnectionResetError('closed'))


@pytest.mark.looptime
async def test_the_inactivity_timeout_counts_only_the_waits_for_chunks() -> None:
    response = _Chunks()
    lines = watching._lines(response, 5)  # type: ignore[arg-type]
    seen = []
    for n in range(3):
        asyncio.get_running_loop().call_later(4, response.queue.put_nowait, f'{n}\n'.encode())
        seen.append(await lines.__anext__())  # 4 s of silence each: within the limit
        await asyncio.sleep(4)  # the consumer's time between chunks: not silence
    assert seen == [b'0', b'1', b'2'] and not response.closed
    started = asyncio.get_running_loop().time()
    with pytest.raises(TimeoutError):
        await lines.__anext__()
    assert asyncio.get_running_loop().time() - started == pytest.approx(5)
    assert response.closed


@pytest.mark.looptime
async def test_a_stream_ending_or_failing_is_no_timeout() -> None:
    response = _Chunks()
    response.queue.put_nowait(b'a\nb')
    response.queue.put_nowait(b'\n')
    response.queue.put_nowait(b'')
    assert [line async for line in watching._lines(response, 5)] == [b'a', b'b']  # type: ignore[arg-type]
    response = _Chunks()
    response.queue.put_nowait(ConnectionResetError('broken'))
    with pytest.raises(ConnectionResetError):
        async for _ in watching._lines(response, 5):  # type: ignore[arg-type]
            pass
    assert not response.closed
