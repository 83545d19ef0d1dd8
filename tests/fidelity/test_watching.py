"""Watches over raw HTTP and the `kubernetes` client's Watch: the starting point (from a list's resourceVersion, or
the current objects first), selector transitions, expired history, timeouts and bookmarks, initial events, paging."""
import time
from typing import Any

import kubernetes
import pytest

from kopf.testing import LocalCluster
from tests import backends
from tests.fidelity.conftest import Http

NS = '/apis/kopf.dev/v1/namespaces/default'
MERGE = 'application/merge-patch+json'


def _kex(name: str, **metadata: Any) -> dict[str, Any]:
    return {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': name, **metadata}}


def test_watch_from_list_rv(raw: Http) -> None:
    _, _, listed = raw.request('GET', f'{NS}/kopfexamples')
    list_rv = listed['metadata']['resourceVersion']
    _, _, created = raw.request('POST', f'{NS}/kopfexamples', _kex('w27'))
    _, _, patched = raw.request('PATCH', f'{NS}/kopfexamples/w27', {'spec': {'a': 1}}, MERGE)
    raw.request('DELETE', f'{NS}/kopfexamples/w27')
    watch = raw.watch(f'{NS}/kopfexamples?watch=true&resourceVersion={list_rv}&timeoutSeconds=1')
    events = watch.rest()
    watch.close()
    assert [e['type'] for e in events] == ['ADDED', 'MODIFIED', 'DELETED']
    rvs = [int(e['object']['metadata']['resourceVersion']) for e in events]
    assert rvs == sorted(rvs) and len(set(rvs)) == 3
    assert rvs[0] == int(created['metadata']['resourceVersion'])
    assert rvs[1] == int(patched['metadata']['resourceVersion'])
    assert rvs[2] > rvs[1]


def test_watch_without_rv_lists_first(raw: Http, cluster: LocalCluster) -> None:
    for ns in ('w28-b', 'w28-a'):
        cluster.apply({'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': ns}})
    cluster.apply(_kex('z', namespace='w28-a'), _kex('y', namespace='w28-b'), _kex('x', namespace='w28-a'))
    watch = raw.watch('/apis/kopf.dev/v1/kopfexamples?watch=true&timeoutSeconds=1&labelSelector=!nothing')
    events = [e for e in watch.rest() if e['object']['metadata']['namespace'].startswith('w28-')]
    watch.close()
    assert [e['type'] for e in events] == ['ADDED'] * 3
    assert [(e['object']['metadata']['namespace'], e['object']['metadata']['name']) for e in events] == [
        ('w28-a', 'x'), ('w28-a', 'z'), ('w28-b', 'y')]


def test_selector_transitions(raw: Http, cluster: LocalCluster) -> None:
    obj = cluster.apply(_kex('w29', labels={'app': 'yes'}))[0]
    rv = obj['metadata']['resourceVersion']
    raw.request('PATCH', f'{NS}/kopfexamples/w29', {'metadata': {'labels': {'app': 'no'}}}, MERGE)
    raw.request('PATCH', f'{NS}/kopfexamples/w29', {'metadata': {'labels': {'app': 'yes'}}}, MERGE)
    watch = raw.watch(f'{NS}/kopfexamples?watch=true&resourceVersion={rv}&labelSelector=app%3Dyes&timeoutSeconds=1')
    events = watch.rest()
    watch.close()
    assert [e['type'] for e in events] == ['DELETED', 'ADDED']
    assert events[0]['object']['metadata']['labels'] == {'app': 'yes'}   # old content, new RV
    assert int(events[0]['object']['metadata']['resourceVersion']) > int(rv)
    assert events[1]['object']['metadata']['labels'] == {'app': 'yes'}


@pytest.mark.emulator_only(reason="compacts the history with the emulator's control API")
def test_expired_history(raw: Http, cluster: LocalCluster, custom: Any) -> None:
    obj = cluster.apply(_kex('w30'))[0]
    cluster.apply(_kex('w30', labels={'x': 'y'}))
    cluster.compact_history()
    watch = raw.watch(f'{NS}/kopfexamples?watch=true&resourceVersion={obj["metadata"]["resourceVersion"]}')
    assert watch.response.status == 200
    events = watch.rest()
    watch.close()
    assert len(events) == 1 and events[0]['type'] == 'ERROR'
    assert events[0]['object']['code'] == 410 and events[0]['object']['reason'] == 'Expired'
    stream = kubernetes.watch.Watch().stream(custom.list_namespaced_custom_object, 'kopf.dev', 'v1', 'default',
                                             'kopfexamples', resource_version=obj['metadata']['resourceVersion'])
    with pytest.raises(kubernetes.client.ApiException) as exc:
        next(stream)
    assert exc.value.status == 410


def _current_rv(raw: Http) -> int:
    """The latest resourceVersion of the whole store (a paged list is read from it, not from a cache)."""
    return int(raw.request('GET', '/api/v1/namespaces?limit=1')[2]['metadata']['resourceVersion'])


def test_timeout_and_bookmarks(raw: Http, cluster: LocalCluster) -> None:
    started = time.monotonic()
    watch = raw.watch(f'{NS}/kopfexamples?watch=true&resourceVersion={_current_rv(raw)}&timeoutSeconds=1')
    assert watch.rest() == []
    watch.close()
    assert 0.9 < time.monotonic() - started < 5
    if backends.is_envtest(cluster):  # the bookmarks' interval is set with the emulator's control API
        return
    cluster.set_bookmark_interval(0.2)
    try:
        watch = raw.watch(f'{NS}/kopfexamples?watch=true&resourceVersion={cluster.emulator.state.store.rv}'
                          '&allowWatchBookmarks=true&timeoutSeconds=1')
        events = watch.rest()
        watch.close()
    finally:
        cluster.set_bookmark_interval(60)
    assert events and all(e['type'] == 'BOOKMARK' for e in events)
    assert set(events[0]['object']) == {'kind', 'apiVersion', 'metadata'}
    assert set(events[0]['object']['metadata']) == {'resourceVersion'}
    assert events[0]['object']['kind'] == 'KopfExample' and events[0]['object']['apiVersion'] == 'kopf.dev/v1'


def test_send_initial_events(raw: Http, cluster: LocalCluster) -> None:
    cluster.apply(_kex('w32a'), _kex('w32b'))
    watch = raw.watch(f'{NS}/kopfexamples?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan'
                      '&allowWatchBookmarks=true&timeoutSeconds=1')
    events = watch.rest()
    watch.close()
    kinds = [e['type'] for e in events]
    first_bookmark = kinds.index('BOOKMARK')
    assert set(kinds[:first_bookmark]) == {'ADDED'} and first_bookmark >= 2
    annotations = events[first_bookmark]['object']['metadata']['annotations']
    assert annotations == {'k8s.io/initial-events-end': 'true'}
    status, _, body = raw.request('GET', f'{NS}/kopfexamples?watch=true&sendInitialEvents=true'
                                         '&allowWatchBookmarks=true')
    assert status == 422 and body['reason'] == 'Invalid'


def test_list_paging(raw: Http, cluster: LocalCluster) -> None:
    cluster.apply({'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': 'w33'}})
    paged = {'paged': 'yes'}  # not kube-root-ca.crt, which kube-controller-manager puts in every namespace
    cluster.apply(*[{'apiVersion': 'v1', 'kind': 'ConfigMap',
                     'metadata': {'name': f'c{i}', 'namespace': 'w33', 'labels': paged}} for i in range(5)])
    sizes, rvs, token = [], set(), ''
    while True:
        suffix = f'&continue={token}' if token else ''
        _, _, page = raw.request('GET', f'/api/v1/namespaces/w33/configmaps?labelSelector=paged&limit=2{suffix}')
        sizes.append(len(page['items']))
        rvs.add(page['metadata']['resourceVersion'])
        token = page['metadata'].get('continue', '')
        if not token:
            break
        cluster.apply({'apiVersion': 'v1', 'kind': 'ConfigMap',
                       'metadata': {'name': 'a-before', 'namespace': 'w33', 'labels': paged}})
    assert sizes == [2, 2, 1] and len(rvs) == 1


def test_watch_python_client_stream(cluster: LocalCluster, custom: Any) -> None:
    cluster.apply(_kex('wpy'))
    stream = kubernetes.watch.Watch().stream(custom.list_namespaced_custom_object, 'kopf.dev', 'v1', 'default',
                                             'kopfexamples', field_selector='metadata.name=wpy', timeout_seconds=1)
    events = list(stream)
    assert [(e['type'], e['object']['metadata']['name']) for e in events] == [('ADDED', 'wpy')]


@pytest.mark.envtest_xfail(reason='a watch from a resourceVersion beyond the current one: kube-apiserver answers '
                                   '200 and streams nothing until the timeout (a list answers 504 "Too large '
                                   'resource version"), the emulator answers the watch with that 504')
def test_resource_version_from_the_future(raw: Http, cluster: LocalCluster) -> None:
    future = _current_rv(raw) + 1000
    started = time.monotonic()
    status, headers, body = raw.request('GET', f'{NS}/kopfexamples?watch=true&resourceVersion={future}'
                                               '&timeoutSeconds=10')
    assert 2.5 < time.monotonic() - started < 6
    assert status == 504 and body['reason'] == 'Timeout' and headers['Retry-After'] == '1'
    assert body['details']['causes'][0]['reason'] == 'ResourceVersionTooLarge'


@pytest.mark.emulator_only(reason="compacts the history with the emulator's control API")
def test_list_exact_and_expired_continue(raw: Http, cluster: LocalCluster) -> None:
    rv = cluster.emulator.state.store.rv
    status, _, _ = raw.request('GET', f'/api/v1/namespaces?resourceVersion={rv}&resourceVersionMatch=Exact')
    assert status == 200
    status, _, body = raw.request('GET', f'/api/v1/namespaces?resourceVersion={rv - 1}&resourceVersionMatch=Exact')
    assert status == 410 and body['reason'] == 'Expired'
    _, _, page = raw.request('GET', '/api/v1/namespaces?limit=1')
    cluster.apply({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'before-compaction'}})
    cluster.compact_history()
    status, _, body = raw.request('GET', f'/api/v1/namespaces?limit=1&continue={page["metadata"]["continue"]}')
    assert status == 410 and body['message'].startswith('The provided continue parameter is too old')
    status, _, rest = raw.request('GET', f'/api/v1/namespaces?limit=1&continue={body["metadata"]["continue"]}')
    assert status == 200 and rest['items']   # the inconsistent continuation, at the current resourceVersion


def test_legacy_watch_paths(raw: Http, cluster: LocalCluster) -> None:
    cluster.apply(_kex('legacy'))
    watch = raw.watch('/apis/kopf.dev/v1/watch/namespaces/default/kopfexamples/legacy?timeoutSeconds=1')
    events = watch.rest()
    watch.close()
    assert [(e['type'], e['object']['metadata']['name']) for e in events] == [('ADDED', 'legacy')]
