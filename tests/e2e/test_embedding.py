"""Embedding: `kopf.run()` in a thread with thread-safe flags, a login handler pointing at a local
cluster (no environment variables), a blocking client call inside a handler, and Events posting."""
import asyncio
import threading
from typing import Any

import pytest

import kopf
from kopf.testing import LocalCluster

from .. import backends
from .conftest import CRD, Kube, Starter, eventually, example, fast_settings, get_example


def test_run_in_a_thread_with_flags_and_a_login_handler(request: pytest.FixtureRequest) -> None:
    registry = kopf.OperatorRegistry()
    seen: list[Any] = []
    with backends.cluster(request) as cluster:
        cluster.apply(str(CRD))

        @kopf.on.login(registry=registry)
        def login(**_: Any) -> kopf.ConnectionInfo:
            if backends.is_envtest(cluster):  # a real server: the admin's client certificate
                return cluster.connection_info(default_namespace='default')  # type: ignore[union-attr]
            return kopf.ConnectionInfo(server=cluster.url, default_namespace='default')

        @kopf.on.create('kopfexamples', id='create_fn', registry=registry)
        def create_fn(name: str, namespace: str, **_: Any) -> Any:
            # A blocking call of the official client inside a sync handler: the cluster's own thread serves it.
            obj = Kube(cluster).custom.get_namespaced_custom_object('kopf.dev', 'v1', namespace, 'kopfexamples', name)
            seen.append(obj['metadata']['name'])
            return {'seen': True}

        stop, ready = threading.Event(), threading.Event()
        thread = threading.Thread(target=kopf.run, kwargs=dict(
            registry=registry, settings=fast_settings(), clusterwide=True, stop_flag=stop, ready_flag=ready))
        thread.start()
        try:
            assert ready.wait(timeout=20)
            cluster.apply(example())
            asyncio.run(eventually(lambda: (get_example(cluster) or {}).get('status', {}).get('create_fn')))
        finally:
            stop.set()
            thread.join(timeout=20)
        assert not thread.is_alive()
        assert seen == ['kopf-example-1']


async def test_events_are_posted(cluster: LocalCluster, registry: kopf.OperatorRegistry,
                                 start_operator: Starter, kube: Kube) -> None:
    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(body: Any, logger: Any, **_: Any) -> None:
        kopf.info(body, reason='Hello', message='explicit event')
        logger.info('a log line as an event')

    settings = fast_settings()
    settings.posting.loggers = True
    await start_operator(settings=settings)
    await kube.create(example())

    def messages() -> list[str]:
        return [e.get('message', '') for e in cluster.list('v1', 'Event', 'default')]
    # The handler's "succeeded" is posted a moment after its own two events: waited for too.
    await eventually(lambda: {'explicit event', 'a log line as an event'} <= set(messages())
                     and any('succeeded' in message for message in messages()))
    events = cluster.list('v1', 'Event', 'default')
    logged = [e for e in events if e.get('reason') == 'Logging']
    assert any('succeeded' in e['message'] for e in logged)
    assert all(e['involvedObject']['name'] == 'kopf-example-1' for e in events)
