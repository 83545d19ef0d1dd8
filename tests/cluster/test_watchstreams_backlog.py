"""A watch's initial lines (a replay of the history after its resourceVersion) at the client's pace.

At a scale of 100,000 objects, an operator that resumed them all (one PATCH each) during its paged listing
watches from the listing's resourceVersion: the replay of its own 100,000 writes (~100 MB) was written as
one chunk, beyond the hub's transport limit, so the stream was cut off before its first event, and the
client, retrying from the same point, never got past it.
"""
import asyncio
import http.client
import json
import socket
import time
import urllib.parse

from kopf._cluster.store import fanout
from kopf.testing import LocalCluster

CM = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'replayed'}}


def _watch(cluster: LocalCluster, rv: str, slow: bool = False) -> list[dict[str, object]]:
    """The events of one watch from `rv` that ends after a second; if `slow`: a small receive buffer, and
    nothing read for half a second (the server's writes are then buffered in its transport)."""
    parsed = urllib.parse.urlparse(cluster.url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    sock = socket.socket()
    if slow:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((parsed.hostname, parsed.port))
    conn.sock = sock
    conn.request('GET', f'/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv}&timeoutSeconds=1')
    if slow:
        time.sleep(0.5)
    response = conn.getresponse()
    assert response.status == 200
    data = response.read()
    conn.close()
    return [json.loads(line) for line in data.splitlines() if line]


def test_a_replay_beyond_the_transport_limit_reaches_the_client_whole() -> None:
    with LocalCluster() as cluster:
        cluster.emulator.hub.transport_limit = 64 * 1024
        rv = cluster.apply(CM)[0]['metadata']['resourceVersion']
        payload = 'x' * 32768
        for index in range(100):   # ~3.2 MB of changes: 50 times the transport limit, beyond the socket's buffers
            cluster.apply({**CM, 'data': {'n': str(index), 'p': payload}})
        events = _watch(cluster, rv, slow=True)
    assert [event['object']['data']['n'] for event in events] == [str(index) for index in range(100)]  # type: ignore[index]


def test_a_replay_of_more_changes_than_a_stream_buffers_is_410_expired() -> None:
    with LocalCluster() as cluster:
        cluster.emulator.hub.buffer_limit = 10
        rv = cluster.apply(CM)[0]['metadata']['resourceVersion']
        for index in range(20):
            cluster.apply({**CM, 'data': {'n': str(index)}})
        events = _watch(cluster, rv)
        assert [(event['type'], event['object']['code']) for event in events] == [('ERROR', 410)]  # type: ignore[index]
        rv = cluster.get('v1', 'ConfigMap', 'replayed', 'default')['metadata']['resourceVersion']  # type: ignore[index]
        cluster.apply({**CM, 'data': {'n': 'after'}})
        assert [event['object']['data']['n'] for event in _watch(cluster, rv)] == ['after']  # type: ignore[index]


def test_take_with_a_limit_gives_the_first_lines_and_one_at_least() -> None:
    async def main() -> None:
        watcher = fanout.Watcher(('', 'configmaps'), None, lambda obj: True, False, 100)
        watcher.buffer.extend([b'aaaa', b'bbbb', b'cccc', b'dddddddddd'])
        assert watcher.take(9) == b'aaaabbbb'
        assert watcher.take(3) == b'cccc'
        assert watcher.take(100) == b'dddddddddd'
        assert watcher.take(100) == b''
        watcher.buffer.extend([b'x', b'y'])
        assert watcher.take() == b'xy' and watcher.buffer == []
    asyncio.run(main())


def test_an_error_for_a_stream_not_live_yet_follows_its_initial_lines_and_ends_it() -> None:
    """`fail_watches()` while a stream still sends its initial lines (a client of a loaded host): the ERROR is
    sent after them, then the stream ends; before, it was dropped (a clean end: the client resumed, no re-list)."""
    async def main() -> None:
        hub = fanout.Hub()
        watcher = hub.subscribe(('', 'configmaps'), None, lambda obj: True, False)
        watcher.buffer.append(b'initial\n')
        assert hub.error_all({'kind': 'Status', 'code': 410}) == 1
        watcher.push(b'later\n')   # a change after the ERROR: not sent
        assert not watcher.closed and watcher.buffer[0] == b'initial\n'
        sent: list[bytes] = []
        watcher.go_live(sent.append)
        assert watcher.closed
        lines = b''.join(sent).splitlines()
        assert lines[0] == b'initial' and json.loads(lines[1])['type'] == 'ERROR' and len(lines) == 2
        assert json.loads(lines[1])['object']['code'] == 410

        hub.unsubscribe(watcher)   # as its request's end does
        live = hub.subscribe(('', 'configmaps'), None, lambda obj: True, False)
        live.go_live(sent.append)
        sent.clear()
        assert hub.error_all({'kind': 'Status', 'code': 500}) == 1
        assert live.closed and [json.loads(line)['object']['code'] for line in sent] == [500]
    asyncio.run(main())
