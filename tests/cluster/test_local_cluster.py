"""`kopf.testing.LocalCluster` and the control API: async & sync modes, manifests, faults, counters."""
import asyncio
import http.client
import json
import pathlib
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import pytest

from kopf.testing import LocalCluster

CM = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'cm1'}, 'data': {'a': 'b'}}


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def _call(url: str, method: str, body: Any = None) -> tuple[int, Any]:
    parsed = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)
    conn.request(method, parsed.path, body=None if body is None else json.dumps(body),
                 headers={'Content-Type': 'application/json'})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, json.loads(data) if data else None


async def test_async_mode_runs_in_the_current_loop(local_cluster: LocalCluster) -> None:
    assert local_cluster.emulator._controller is not None
    assert local_cluster.emulator._controller.get_loop() is asyncio.get_running_loop()
    local_cluster.apply(CM)
    status, _, body = await asyncio.to_thread(_get, f'{local_cluster.url}/api/v1/namespaces/default/configmaps/cm1')
    assert status == 200 and json.loads(body)['data'] == {'a': 'b'}
    assert isinstance(local_cluster.kubeconfig, str)   # ready for KUBECONFIG as it is
    assert pathlib.Path(local_cluster.kubeconfig).exists()  # noqa: ASYNC240


def test_sync_mode_and_manifest_sources(tmp_path: pathlib.Path) -> None:
    (tmp_path / 'cm.yaml').write_text('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-file}\n')
    with LocalCluster(kubeconfig=tmp_path / 'kc') as cluster:
        assert (tmp_path / 'kc').read_text().count(cluster.url) == 1
        cluster.apply(str(tmp_path / 'cm.yaml'), tmp_path / 'cm.yaml')   # str path and Path; idempotent
        cluster.apply('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-text}\n---\n'
                      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: second}\n')
        cluster.apply([CM], {'apiVersion': 'v1', 'kind': 'List', 'items': [{**CM, 'data': {'a': 'c'}}]})
        names = [obj['metadata']['name'] for obj in cluster.list('v1', 'configmaps', 'default')]
        assert names == ['cm1', 'from-file', 'from-text', 'kube-root-ca.crt', 'second']   # + the namespace's own
        cm = cluster.get('v1', 'ConfigMap', 'cm1')
        assert cm is not None and cm['data'] == {'a': 'c'}
        assert cluster.get('v1', 'ConfigMap', 'absent') is None
    assert not pathlib.Path(cluster.url).exists()


@pytest.fixture(scope='module')
def cluster() -> Any:
    with LocalCluster() as running:
        yield running


def test_fail_with_status_body(cluster: LocalCluster) -> None:
    cluster.fail('GET', '/api/v1/namespaces/*/configmaps', 503, count=1, retry_after=2)
    status, headers, body = _get(f'{cluster.url}/api/v1/namespaces/default/configmaps')
    assert status == 503 and headers['Retry-After'] == '2'
    data = json.loads(body)
    assert data['kind'] == 'Status' and data['reason'] == 'ServiceUnavailable' and data['code'] == 503
    assert data['details']['retryAfterSeconds'] == 2
    assert _get(f'{cluster.url}/api/v1/namespaces/default/configmaps')[0] == 200   # count consumed


def test_throttle_is_plain_text(cluster: LocalCluster) -> None:
    cluster.throttle('GET', 're:/configmaps$', count=2)
    for _ in range(2):
        status, headers, body = _get(f'{cluster.url}/api/v1/namespaces/default/configmaps')
        assert status == 429 and headers['Retry-After'] == '1'
        assert headers['Content-Type'].startswith('text/plain')
        assert body == b'Too many requests, please try again later.\n'
    assert _get(f'{cluster.url}/api/v1/namespaces/default/configmaps')[0] == 200


def test_internal_error_and_delay(cluster: LocalCluster) -> None:
    cluster.fail('*', '/version', 500)
    status, _, body = _get(f'{cluster.url}/version')
    assert status == 500 and json.loads(body)['reason'] == 'InternalError'
    cluster.delay('GET', '/version', 0.3)
    started = time.monotonic()
    assert _get(f'{cluster.url}/version')[0] == 200
    assert time.monotonic() - started >= 0.3


def test_control_api_over_http(cluster: LocalCluster) -> None:
    base = f'{cluster.url}/_emulator'
    assert _call(f'{base}/faults', 'POST', {'method': 'GET', 'path': '/healthz', 'status': 500, 'count': 1})[0] == 201
    assert _get(f'{cluster.url}/healthz')[0] == 500
    assert _get(f'{cluster.url}/healthz')[0] == 200
    assert _call(f'{base}/faults', 'DELETE')[0] == 200
    assert _call(f'{base}/counters', 'DELETE')[0] == 200
    _get(f'{cluster.url}/api/v1/namespaces')
    _get(f'{cluster.url}/api/v1')
    status, counters = _call(f'{base}/counters', 'GET')
    assert counters == {'get discovery': 1, 'list namespaces': 1}
    assert _call(f'{base}/bookmark-interval', 'PUT', {'seconds': 5})[0] == 200
    assert cluster.emulator.hub.bookmark_interval == 5
    assert _call(f'{base}/history/compact', 'POST', {})[0] == 200
    status, events = _call(f'{base}/events', 'GET')
    assert status == 200 and all(len(entry) == 3 for entry in events)
    assert _call(f'{base}/nonsense', 'GET')[0] == 404


def test_close_watches_ends_streams(cluster: LocalCluster) -> None:
    parsed = urllib.parse.urlparse(cluster.url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)
    conn.request('GET', '/api/v1/namespaces/default/configmaps?watch=true')
    response = conn.getresponse()
    assert response.status == 200
    _status, closed = _call(f'{cluster.url}/_emulator/watches/close', 'POST')
    assert closed['closed'] == 1
    assert response.read() is not None   # the body ends (chunked terminator) instead of hanging
    conn.close()


def test_event_log_records_changes(cluster: LocalCluster) -> None:
    obj = cluster.apply({**CM, 'metadata': {'name': 'logged'}})[0]
    cluster.apply({**CM, 'metadata': {'name': 'logged'}, 'data': {'x': 'y'}})
    uid = obj['metadata']['uid']
    assert [kind for u, _, kind in cluster.event_log() if u == uid] == ['ADDED', 'MODIFIED']


async def _raw_get(port: int, path: str) -> bytes:
    reader, writer = await asyncio.open_connection('127.0.0.1', port)
    writer.write(f'GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'.encode())
    data = await reader.read()
    writer.close()
    return data


@pytest.mark.looptime
async def test_watch_timeouts_follow_the_test_loops_fake_time(local_cluster: LocalCluster) -> None:
    loop = asyncio.get_running_loop()
    started, real = loop.time(), time.monotonic()
    data = await _raw_get(local_cluster.emulator.port, '/api/v1/namespaces?watch=true&timeoutSeconds=30')
    assert data.count(b'"ADDED"') == 4
    assert 29 <= loop.time() - started <= 31
    assert time.monotonic() - real < 5


def test_stuck_watcher_is_cut_off_without_blocking_writers(cluster: LocalCluster) -> None:
    import socket
    cluster.emulator.hub.transport_limit = 64 * 1024
    try:
        stuck = socket.create_connection(('127.0.0.1', cluster.emulator.port))
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.sendall(b'GET /api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0 HTTP/1.1\r\n'
                      b'Host: localhost\r\n\r\n')
        time.sleep(0.2)
        assert cluster.emulator.hub.count() == 1
        payload = 'x' * 4096
        started = time.monotonic()
        for index in range(1500):   # ~6 MB of events that the stuck client never reads
            cluster.apply({**CM, 'metadata': {'name': 'flood'}, 'data': {'n': str(index), 'p': payload}})
        assert time.monotonic() - started < 30
        deadline = time.monotonic() + 5
        while cluster.emulator.hub.count() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cluster.emulator.hub.count() == 0    # the stuck stream was aborted and unsubscribed
        stuck.close()
    finally:
        cluster.emulator.hub.transport_limit = 64 * 1024 * 1024


def test_events_expire_after_their_ttl() -> None:
    with LocalCluster(event_ttl=1.0) as short:
        short.apply({'apiVersion': 'v1', 'kind': 'Event', 'metadata': {'name': 'e1'}, 'reason': 'Test',
                     'involvedObject': {'kind': 'ConfigMap', 'name': 'x', 'namespace': 'default'}})
        assert short.get('v1', 'Event', 'e1') is not None
        deadline = time.monotonic() + 6
        while short.get('v1', 'Event', 'e1') is not None:
            assert time.monotonic() < deadline, 'the event did not expire'
            time.sleep(0.1)


def test_dropped_connections_and_aborted_watches(cluster: LocalCluster) -> None:
    cluster.drop('GET', '/version')
    with pytest.raises((ConnectionError, http.client.RemoteDisconnected, urllib.error.URLError)):
        urllib.request.urlopen(f'{cluster.url}/version', timeout=10)
    assert _get(f'{cluster.url}/version')[0] == 200
    parsed = urllib.parse.urlparse(cluster.url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)
    conn.request('GET', '/api/v1/namespaces?watch=true')
    response = conn.getresponse()
    assert response.status == 200
    assert cluster.close_watches(abort=True) == 1
    with pytest.raises((http.client.IncompleteRead, ConnectionError, http.client.HTTPException)):
        response.read()
    conn.close()


def test_injected_latency_beyond_the_request_deadline_is_a_504(cluster: LocalCluster) -> None:
    cluster.delay('GET', '/api/v1/namespaces', 5.0)
    started = time.monotonic()
    status, _, body = _get(f'{cluster.url}/api/v1/namespaces?timeout=300ms')
    assert status == 504 and json.loads(body)['reason'] == 'Timeout'
    assert 0.25 < time.monotonic() - started < 5


def test_fail_watches_sends_an_error_event(cluster: LocalCluster) -> None:
    parsed = urllib.parse.urlparse(cluster.url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)
    conn.request('GET', f'/api/v1/namespaces?watch=true&resourceVersion={cluster.emulator.state.store.rv}')
    response = conn.getresponse()
    time.sleep(0.1)
    assert cluster.fail_watches(500) == 1
    events = [json.loads(line) for line in response.read().splitlines() if line.strip()]
    conn.close()
    assert [e['type'] for e in events] == ['ERROR']
    assert events[0]['object']['code'] == 500 and events[0]['object']['reason'] == 'InternalError'


def _raw(url: str, head: bytes, body: bytes = b'') -> tuple[bytes, bytes]:
    """Send a request head, read what comes before the body is sent (if any), then send the body."""
    import socket
    parsed = urllib.parse.urlparse(url)
    with socket.create_connection((parsed.hostname or '127.0.0.1', parsed.port or 80), timeout=10) as sock:
        sock.sendall(head)
        early = sock.recv(65536)
        sock.sendall(body)
        rest = b''
        while b'\r\n\r\n' not in rest:
            rest += sock.recv(65536)
        return early, rest


def test_expect_100_continue_is_answered_before_the_body(cluster: LocalCluster) -> None:
    body = json.dumps({**CM, 'metadata': {'name': 'expecting'}}).encode()
    head = (f'POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n'
            f'Content-Length: {len(body)}\r\nExpect: 100-continue\r\n\r\n').encode()
    early, rest = _raw(cluster.url, head, body)
    assert early.startswith(b'HTTP/1.1 100 Continue\r\n\r\n')
    answer = early[len(b'HTTP/1.1 100 Continue\r\n\r\n'):] + rest
    assert answer.startswith(b'HTTP/1.1 201 ')


def test_unknown_expectation_is_refused(cluster: LocalCluster) -> None:
    status, _, _ = _get(f'{cluster.url}/api/v1/namespaces/default/configmaps', {'Expect': 'something'})
    assert status == 417


def test_request_bodies_over_a_mebibyte_are_accepted(cluster: LocalCluster) -> None:
    status, body = _call(f'{cluster.url}/api/v1/namespaces/default/configmaps', 'POST',
                         {**CM, 'metadata': {'name': 'big'}, 'data': {'x': 'a' * 1_500_000}})
    assert status == 201, body
