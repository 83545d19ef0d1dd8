"""The effects of settings fields that had no test of their own (docs/settings.md maps every field to its test)."""
import asyncio
import datetime
from typing import Any

import pytest

import kopf
from kopf._api import client as client_
from kopf._api import credentials, events
from kopf._core.causes import Activity
from kopf._engine import activities, contexts, loggers

KEX: dict[str, Any] = {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
                       'metadata': {'name': 'ex1', 'namespace': 'default', 'uid': 'uid-1'}}


def test_event_bodies_follow_the_posting_settings() -> None:
    settings = kopf.OperatorSettings()
    settings.posting.reporting_component = 'my-operator'
    settings.posting.reporting_instance = 'pod-7'
    settings.posting.event_name_prefix = 'my-event-'
    body = events.build_event(events.object_reference(KEX), type='Normal', reason='R', message='m',
                              settings=settings, now=datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC))
    assert body['metadata']['generateName'] == 'my-event-'
    assert (body['reportingComponent'], body['reportingInstance'], body['source']) == (
        'my-operator', 'pod-7', {'component': 'my-operator'})


def test_logged_events_are_posted_with_the_logging_backoffs() -> None:
    settings = kopf.OperatorSettings()
    settings.posting.loggers = True
    settings.posting.logging_backoffs = (7, 8)
    posted: list[Any] = []

    class Poster:
        def enqueue(self, ref: Any, **kwargs: Any) -> None:
            posted.append(kwargs['backoffs'])

    token = events.poster_var.set(Poster())  # type: ignore[arg-type]
    try:
        loggers.ObjectLogger(body=KEX, settings=settings).info('hello')
    finally:
        events.poster_var.reset(token)
    assert posted == [(7, 8)]


class _SlowClient:
    """Posts nothing, but takes a second (loop time) per event, counting how many are posted at once."""

    def __init__(self, settings: kopf.OperatorSettings) -> None:
        self.settings = settings
        self.now = self.most = 0

    async def request(self, *_: Any, **__: Any) -> Any:
        self.now += 1
        self.most = max(self.most, self.now)
        await asyncio.sleep(1)
        self.now -= 1


@pytest.mark.looptime
@pytest.mark.parametrize('limit, most', [(1, 1), (2, 2), (None, 5)])
async def test_posting_worker_limit_bounds_the_events_posted_at_once(limit: int | None, most: int) -> None:
    settings = kopf.OperatorSettings()
    settings.posting.worker_limit = limit
    client = _SlowClient(settings)
    poster = events.EventPoster(client)  # type: ignore[arg-type]
    task = asyncio.create_task(poster.run())
    for i in range(5):  # five objects: five workers, bounded by the limit
        ref = {**events.object_reference(KEX), 'name': f'ex{i}', 'uid': f'u{i}'}
        poster.enqueue(ref, type='Normal', reason='R', message='m')
    await asyncio.sleep(10)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert client.most == most


@pytest.mark.looptime
@pytest.mark.parametrize('idle_timeout', [2.0, 30.0])
async def test_posting_idle_timeout_ends_idle_workers(idle_timeout: float) -> None:
    settings = kopf.OperatorSettings()
    settings.posting.idle_timeout = idle_timeout
    poster = events.EventPoster(_SlowClient(settings))  # type: ignore[arg-type]
    task = asyncio.create_task(poster.run())
    poster.enqueue(events.object_reference(KEX), type='Normal', reason='R', message='m')
    await asyncio.sleep(1 + idle_timeout - 0.5)  # the post takes 1 s; then the worker idles
    assert len(poster._workers) == 1
    await asyncio.sleep(1)
    assert len(poster._workers) == 0
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


@pytest.mark.parametrize('watching, expected', [(None, 3.0), (4.0, 4.0)])
async def test_connect_timeouts_reach_the_transport(monkeypatch: pytest.MonkeyPatch, watching: float | None,
                                                    expected: float) -> None:
    settings = kopf.OperatorSettings()
    settings.networking.connect_timeout = 3.0
    settings.watching.connect_timeout = watching  # watches: their own, else the networking one
    seen: list[tuple[str, float | None]] = []

    class Response:
        def close(self) -> None:
            pass

    class Transport:
        async def request(self, *_: Any, connect: float | None, **__: Any) -> bytes:
            seen.append(('request', connect))
            return b'{}'

        async def stream(self, *_: Any, connect: float | None, **__: Any) -> Response:
            seen.append(('stream', connect))
            return Response()

        async def close(self) -> None:
            pass

    vault = credentials.Vault()
    vault.populate([credentials.ConnectionInfo(server='http://api.invalid')])
    api = client_.APIClient(vault, settings)
    monkeypatch.setattr(client_.transports, 'DirectTransport', lambda *_, **__: Transport())
    try:
        await api.request('GET', '/version')
        async with api.stream('/api/v1/pods'):
            pass
    finally:
        await api.close()
    assert seen == [('request', 3.0), ('stream', expected)]


@pytest.mark.parametrize('default_backoff', [0.1, 1.0])  # real time: activities retry by the wall clock
async def test_default_backoff_delays_the_retry_of_arbitrary_errors(default_backoff: float) -> None:
    settings = kopf.OperatorSettings()
    settings.execution.default_backoff = default_backoff
    registry = kopf.OperatorRegistry()
    times: list[float] = []

    @kopf.on.startup(registry=registry)
    async def flaky(**_: Any) -> None:
        times.append(asyncio.get_running_loop().time())
        if len(times) < 2:
            raise ValueError('once')

    ctx = contexts.OperatorContext(settings=settings, registry=registry, client=None,  # type: ignore[arg-type]
                                   memo=kopf.Memo(), lifecycle=kopf.lifecycles.asap)
    await activities.run_activity(ctx, Activity.STARTUP)
    assert times[1] - times[0] >= default_backoff  # never sooner (no speed is asserted)


async def test_sync_handlers_run_in_the_executor_of_the_settings() -> None:
    import concurrent.futures
    import threading

    class Counting(concurrent.futures.ThreadPoolExecutor):
        submitted = 0

        def submit(self, *args: Any, **kwargs: Any) -> Any:
            type(self).submitted += 1
            return super().submit(*args, **kwargs)

    settings = kopf.OperatorSettings()
    settings.execution.executor = Counting(max_workers=1, thread_name_prefix='my-executor')
    registry = kopf.OperatorRegistry()
    threads: list[str] = []

    @kopf.on.startup(registry=registry)
    def sync_startup(**_: Any) -> None:
        threads.append(threading.current_thread().name)

    ctx = contexts.OperatorContext(settings=settings, registry=registry, client=None,  # type: ignore[arg-type]
                                   memo=kopf.Memo(), lifecycle=kopf.lifecycles.asap)
    try:
        await activities.run_activity(ctx, Activity.STARTUP)
    finally:
        settings.execution.executor.shutdown()
    assert Counting.submitted == 1 and threads[0].startswith('my-executor')
