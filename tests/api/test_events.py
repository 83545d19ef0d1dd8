"""Kubernetes Events: the body as upstream posts it, the background poster, the public functions."""
import asyncio
import contextlib
import datetime
import logging
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest

import kopf
from kopf._api import client as client_
from kopf._api import credentials, events
from kopf._core.settings import OperatorSettings

KEX: dict[str, Any] = {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
                       'metadata': {'name': 'ex1', 'namespace': 'default', 'uid': 'uid-1'}}


@pytest.mark.parametrize('length', [0, 10, 1024])
def test_short_messages_are_kept(length: int) -> None:
    assert events.truncate('x' * length) == 'x' * length


def test_long_messages_are_cut_in_the_middle() -> None:
    message = 'A' * 600 + 'B' * 600
    cut = events.truncate(message)
    assert len(cut) == 1024
    assert cut.startswith('A' * 500) and cut.endswith('B' * 500)
    assert '...' in cut
    assert cut == 'A' * 511 + '...' + 'B' * 510


def test_event_body() -> None:
    now = datetime.datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=datetime.UTC)
    body = events.build_event(events.object_reference(KEX), type='Normal', reason='Logging', message='hi',
                              settings=OperatorSettings(), now=now)
    assert body == {
        'metadata': {'namespace': 'default', 'generateName': 'kopf-event-'},
        'action': 'Action?', 'type': 'Normal', 'reason': 'Logging', 'message': 'hi',
        'reportingComponent': 'kopf', 'reportingInstance': 'dev', 'source': {'component': 'kopf'},
        'involvedObject': {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'name': 'ex1', 'uid': 'uid-1',
                           'namespace': 'default'},
        'firstTimestamp': '2024-05-01T12:00:00.123456+00:00',
        'lastTimestamp': '2024-05-01T12:00:00.123456+00:00',
        'eventTime': '2024-05-01T12:00:00.123456+00:00',
    }


def test_event_body_of_a_cluster_scoped_object() -> None:
    ref = {'apiVersion': 'v1', 'kind': 'Namespace', 'name': 'n', 'uid': 'u'}
    now = datetime.datetime.now(datetime.UTC)
    settings = OperatorSettings()
    assert events.build_event(ref, type='Normal', reason='R', message='', settings=settings, now=now,
                              default_namespace='ctx')['metadata']['namespace'] == 'ctx'
    assert events.build_event(ref, type='Normal', reason='R', message='', settings=settings,
                              now=now)['metadata']['namespace'] == 'default'


def test_outside_of_an_operator() -> None:
    with pytest.raises(RuntimeError, match='running operator'):
        kopf.info(KEX, reason='R')


@pytest.fixture
async def poster(client: client_.APIClient) -> AsyncIterator[events.EventPoster]:
    poster = events.EventPoster(client)
    task = asyncio.create_task(poster.run())
    token = events.poster_var.set(poster)
    try:
        yield poster
    finally:
        events.poster_var.reset(token)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def posted(cluster: Any, namespace: str = 'default') -> list[dict[str, Any]]:
    return sorted(cluster.list('v1', 'events', namespace), key=lambda e: int(e['metadata']['resourceVersion']))


async def test_public_functions_post_events(poster: events.EventPoster, cluster: Any) -> None:
    kopf.event(KEX, type='SomeType', reason='SomeReason', message='Some message')
    kopf.info(KEX, reason='SomeReason', message='Some message')
    kopf.warn(KEX, reason='SomeReason', message='Some message')
    try:
        raise Exception('Exception text.')
    except Exception:
        kopf.exception(KEX, reason='SomeReason', message='Some exception:')
    await poster.flush()
    found = posted(cluster)
    assert [(e['type'], e['reason'], e['message']) for e in found] == [
        ('SomeType', 'SomeReason', 'Some message'),
        ('Normal', 'SomeReason', 'Some message'),
        ('Warning', 'SomeReason', 'Some message'),
        ('Error', 'SomeReason', 'Some exception: Exception text.'),
    ]
    assert all(e['metadata']['name'].startswith('kopf-event-') for e in found)
    assert all(e['involvedObject']['uid'] == 'uid-1' for e in found)


async def test_levels_and_enabled(poster: events.EventPoster, cluster: Any, settings: OperatorSettings) -> None:
    settings.posting.level = logging.WARNING
    kopf.info(KEX, reason='dropped-by-level')
    kopf.warn(KEX, reason='kept')
    settings.posting.enabled = False
    kopf.event(KEX, type='Normal', reason='dropped-by-enabled')
    kopf.warn(KEX, reason='kept-anyway')  # as upstream: warn() ignores the enabled flag
    await poster.flush()
    assert [e['reason'] for e in posted(cluster)] == ['kept', 'kept-anyway']


async def test_many_objects_and_nested_iterables(poster: events.EventPoster, cluster: Any) -> None:
    objs = [dict(KEX, metadata=dict(KEX['metadata'], uid=f'u{i}', name=f'n{i}')) for i in range(3)]
    kopf.info([objs[0], [objs[1], (objs[2],)]], reason='R')
    await poster.flush()
    assert sorted(e['involvedObject']['name'] for e in posted(cluster)) == ['n0', 'n1', 'n2']


async def test_events_about_events_are_dropped(poster: events.EventPoster, cluster: Any) -> None:
    kopf.info({'apiVersion': 'v1', 'kind': 'Event', 'metadata': {'name': 'e', 'namespace': 'default'}}, reason='R')
    await poster.flush()
    assert posted(cluster) == []


async def test_long_message_is_truncated(poster: events.EventPoster, cluster: Any) -> None:
    kopf.info(KEX, reason='R', message='x' * 5000)
    await poster.flush()
    [event] = posted(cluster)
    assert len(event['message']) == 1024


async def test_from_a_thread(poster: events.EventPoster, cluster: Any) -> None:
    thread = threading.Thread(target=poster.enqueue, args=(events.object_reference(KEX),),
                              kwargs=dict(type='Normal', reason='threaded'))
    thread.start()
    await asyncio.to_thread(thread.join)
    await asyncio.sleep(0.1)
    await poster.flush()
    assert [e['reason'] for e in posted(cluster)] == ['threaded']


async def test_per_object_order(poster: events.EventPoster, cluster: Any) -> None:
    for i in range(20):
        kopf.info(KEX, reason=f'r{i}')
    await poster.flush()
    assert [e['reason'] for e in posted(cluster)] == [f'r{i}' for i in range(20)]


async def test_vanished_namespace_is_dropped_quietly(poster: events.EventPoster, cluster: Any,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    gone = dict(KEX, metadata=dict(KEX['metadata'], namespace='gone'))
    with caplog.at_level(logging.DEBUG, logger='kopf._api'):
        kopf.info(gone, reason='R')
        await poster.flush()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert any('namespace is gone' in r.getMessage() for r in caplog.records)


@pytest.mark.looptime
async def test_errors_are_retried_with_posting_backoffs_then_logged(
        poster: events.EventPoster, cluster: Any, settings: OperatorSettings,
        caplog: pytest.LogCaptureFixture) -> None:
    settings.posting.default_backoffs = [1, 1]
    cluster.fail('POST', '/api/v1/namespaces/default/events', 500, count=None)
    with caplog.at_level(logging.WARNING, logger='kopf._api'):
        kopf.info(KEX, reason='R')
        await poster.flush()
    assert len([r for r in cluster.request_log() if r['method'] == 'POST']) == 3
    assert any('Failed to post an event' in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize('namespace, expected', [('kube-system', 'kube-system'), ('kube-public', 'default')])
async def test_cluster_scoped_objects_go_to_the_credentials_namespace(
        cluster: Any, settings: OperatorSettings, namespace: str, expected: str) -> None:
    vault = credentials.Vault()
    vault.populate([credentials.ConnectionInfo(server=cluster.url, default_namespace=namespace)])
    api = client_.APIClient(vault, settings)
    try:
        await events.post_event(api, {'apiVersion': 'v1', 'kind': 'Namespace', 'name': 'n', 'uid': 'u'},
                                type='Normal', reason='R')
    finally:
        await api.close()
    assert [e['reason'] for e in posted(cluster, expected)] == ['R']
