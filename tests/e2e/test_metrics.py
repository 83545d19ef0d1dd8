"""`/metrics` end to end: scraped during a burst, its counters match the objects handled, the lag histogram
fills, prometheus_client's own parser reads the whole output; only GET; other paths 404; on the liveness
server too; watch (re)connections and 410s."""
import asyncio
import socket
import time
from collections.abc import Callable
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

import kopf
from kopf._engine import running

from .conftest import Kube, Starter, eventually, example, fast_settings, get_example, vault_for

KEX = 'kopfexamples.kopf.dev'
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return int(sock.getsockname()[1])


async def scrape(url: str) -> Samples:
    """The whole output, parsed by prometheus_client (it raises on anything it cannot read)."""
    async with aiohttp.ClientSession() as session:
        for _ in range(500):  # the endpoint starts with the operator's task group, soon after "ready"
            try:
                async with session.get(url) as response:
                    assert response.status == 200
                    assert response.headers['Content-Type'].startswith('text/plain; version=0.0.4')
                    text = await response.text()
                    break
            except aiohttp.ClientConnectionError:
                await asyncio.sleep(0.02)
        else:
            raise AssertionError(f'{url} never answered')
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


async def scrape_until(url: str, check: Callable[[Samples], Any], *, within: float = 40) -> Samples:
    """Scrape until the samples pass the check (a condition, polled in short steps); the last ones, passing or not."""
    deadline = time.monotonic() + within
    while True:
        found = await scrape(url)
        if check(found) or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.02)


def value(found: Samples, name: str, **labels: str) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


def summed(found: Samples, name: str, **labels: str) -> float:
    wanted = set(labels.items())
    return sum(v for (n, ls), v in found.items() if n == name and wanted <= ls)


async def test_a_burst_is_counted_and_its_lag_measured(registry: kopf.OperatorRegistry, start_operator: Starter,
                                                       kube: Kube, cluster: Any) -> None:
    count = 20

    @kopf.on.create('kopfexamples', id='created', registry=registry)
    async def created(**_: Any) -> str:
        await asyncio.sleep(0.01)
        return 'done'

    settings = fast_settings()
    port = free_port()
    settings.metrics.endpoint = f'127.0.0.1:{port}'
    await start_operator(settings=settings)
    url = f'http://127.0.0.1:{port}/metrics'
    await asyncio.gather(*(kube.create(example(f'burst-{i}')) for i in range(count)))
    during = await scrape(url)  # while the burst is handled (or just after): valid as a whole, counts so far
    assert value(during, 'kopf_handler_calls_total', resource=KEX, handler='created', outcome='success') <= count

    def handled() -> bool:
        return all(((get_example(cluster, f'burst-{i}') or {}).get('status') or {}).get('created') == 'done'
                   for i in range(count))
    await eventually(handled)

    found = await scrape_until(url, lambda f: value(f, 'kopf_convergence_lag_seconds_count', resource=KEX) >= count)
    assert value(found, 'kopf_convergence_lag_seconds_count', resource=KEX) >= count, 'the lag histogram did not fill'
    assert value(found, 'kopf_handler_calls_total', resource=KEX, handler='created', outcome='success') == count
    assert value(found, 'kopf_handler_duration_seconds_count', resource=KEX, handler='created') == count
    assert value(found, 'kopf_handler_retries_total', resource=KEX, handler='created') == 0
    assert value(found, 'kopf_patches_total', resource=KEX, result='sent') >= count
    assert value(found, 'kopf_convergence_lag_seconds_bucket', resource=KEX, le='+Inf') >= count
    assert value(found, 'kopf_convergence_lag_seconds_sum', resource=KEX) > 0
    assert value(found, 'kopf_objects', resource=KEX) >= count
    assert summed(found, 'kopf_api_requests_total', verb='PATCH') >= count
    assert value(found, 'kopf_api_request_duration_seconds_count', verb='WATCH') >= 1
    assert value(found, 'kopf_watch_connections_total', resource=KEX) >= 1
    assert not [labels for (name, labels) in found if any(v.startswith('burst-') for _, v in labels)]  # no names


async def test_only_get_on_metrics_and_other_paths_404(registry: kopf.OperatorRegistry,
                                                        start_operator: Starter) -> None:
    kopf.on.create('kopfexamples', registry=registry)(lambda **_: None)
    settings = fast_settings()
    port = free_port()
    settings.metrics.endpoint = f'127.0.0.1:{port}'
    await start_operator(settings=settings)
    await scrape(f'http://127.0.0.1:{port}/metrics')  # it listens
    async with aiohttp.ClientSession() as session:
        for method in ('POST', 'PUT', 'DELETE', 'HEAD'):
            async with session.request(method, f'http://127.0.0.1:{port}/metrics') as response:
                assert response.status == 405, method
        for path in ('/', '/metricsx', '/healthz', '/metrics/more'):
            async with session.get(f'http://127.0.0.1:{port}{path}') as response:
                assert response.status == 404, path


async def test_metrics_on_the_liveness_server_too(registry: kopf.OperatorRegistry, start_operator: Starter) -> None:
    kopf.on.probe(id='alive', registry=registry)(lambda **_: True)
    settings = fast_settings()
    settings.metrics.enabled = True  # no endpoint of its own: only on the liveness server
    port = free_port()
    await start_operator(settings=settings, liveness_endpoint=f'http://127.0.0.1:{port}/healthz')
    found = await scrape(f'http://127.0.0.1:{port}/metrics')
    assert summed(found, 'kopf_api_requests_total', verb='GET') >= 1
    async with aiohttp.ClientSession() as session:
        async with session.get(f'http://127.0.0.1:{port}/healthz') as response:
            assert await response.json() == {'alive': True}
        for method in ('POST', 'PUT', 'DELETE', 'HEAD'):  # the same rules as on the metrics' own server
            async with session.request(method, f'http://127.0.0.1:{port}/metrics') as response:
                assert response.status == 405, method
        for path in ('/', '/metricsx', '/metrics/more'):
            async with session.get(f'http://127.0.0.1:{port}{path}') as response:
                assert response.status == 404, path


def outward_address() -> str | None:
    """This machine's address on its default route (not a loopback one), if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(('192.0.2.1', 9))  # TEST-NET-1; a UDP "connection" sends nothing, it picks the route
        except OSError:
            return None
        address = str(sock.getsockname()[0])
    return None if address.startswith('127.') or address == '0.0.0.0' else address


async def test_a_port_alone_is_served_on_localhost_only(registry: kopf.OperatorRegistry, start_operator: Starter,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    kopf.on.create('kopfexamples', registry=registry)(lambda **_: None)
    port = free_port()
    await start_operator(metrics_endpoint=str(port))  # as `kopf run --metrics PORT`
    await scrape(f'http://127.0.0.1:{port}/metrics')
    assert f'Serving the metrics at http://localhost:{port}/metrics.' in caplog.messages
    outward = outward_address()
    if outward is not None:  # a machine with a network: not reachable there
        with pytest.raises(OSError):
            socket.create_connection((outward, port), timeout=5).close()


async def test_sub_handlers_are_counted_in_their_top_level_handler(registry: kopf.OperatorRegistry,
                                                                   start_operator: Starter, kube: Kube,
                                                                   cluster: Any) -> None:
    @kopf.on.create('kopfexamples', id='parent', registry=registry)
    def parent(spec: Any, **_: Any) -> None:
        for item in spec.get('items', []):
            @kopf.subhandler(id=f'item-{item}')
            def child(item: str = item, **_: Any) -> str:
                return item

    settings = fast_settings()
    port = free_port()
    settings.metrics.endpoint = f'127.0.0.1:{port}'
    await start_operator(settings=settings)
    await kube.create(example('with-children'))  # spec.items: item1, item2 (ids from user data)
    def children_done() -> Any:
        return ((get_example(cluster, 'with-children') or {}).get('status') or {}).get('parent/item-item2')
    await eventually(children_done)

    found = await scrape_until(f'http://127.0.0.1:{port}/metrics',
                               lambda f: value(f, 'kopf_convergence_lag_seconds_count', resource=KEX) >= 1)
    handlers = {dict(labels).get('handler') for (name, labels) in found if name.startswith('kopf_handler_')}
    assert handlers == {'parent'}
    assert value(found, 'kopf_handler_calls_total', resource=KEX, handler='parent', outcome='success') == 1


async def test_a_startup_handler_may_turn_metrics_on(registry: kopf.OperatorRegistry, start_operator: Starter) -> None:
    port = free_port()

    @kopf.on.startup(registry=registry)
    def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
        settings.metrics.endpoint = f'127.0.0.1:{port}'

    await start_operator()
    assert value(await scrape(f'http://127.0.0.1:{port}/metrics'), 'kopf_peering_shards_held') == 0


async def test_the_shards_held_are_set(registry: kopf.OperatorRegistry, start_operator: Starter) -> None:
    kopf.on.create('kopfexamples', registry=registry)(lambda **_: None)
    port = free_port()
    settings = fast_settings()
    settings.peering.lease.name = 'metrics-shards'
    settings.peering.lease.namespace = 'default'
    settings.peering.lease.shards = 3
    settings.peering.lease.lease_duration, settings.peering.lease.renew_deadline = 3, 2
    settings.peering.lease.retry_period = 0.5
    await start_operator(settings=settings, metrics_endpoint=f'127.0.0.1:{port}')
    url = f'http://127.0.0.1:{port}/metrics'
    found = await scrape_until(url, lambda f: value(f, 'kopf_peering_shards_held') == 3)  # acquired
    assert value(found, 'kopf_peering_shards_held') == 3  # alone: all of them
    assert value(found, 'kopf_peering_lease_held', lease='metrics-shards-0') == 1
    assert not summed(found, 'kopf_peering_paused')  # shards not held are not paused scopes


async def test_the_lease_held_is_a_gauge(registry: kopf.OperatorRegistry, start_operator: Starter) -> None:
    kopf.on.create('kopfexamples', registry=registry)(lambda **_: None)
    settings = fast_settings()
    port = free_port()
    settings.metrics.endpoint = f'127.0.0.1:{port}'
    settings.peering.lease.name = 'metrics-lease'
    settings.peering.lease.namespace = 'default'
    await start_operator(settings=settings)

    found = await scrape_until(f'http://127.0.0.1:{port}/metrics',  # acquired soon after the start: it is free
                               lambda f: value(f, 'kopf_peering_lease_held', lease='metrics-lease') == 1)
    assert value(found, 'kopf_peering_lease_held', lease='metrics-lease') == 1


async def test_a_bad_address_fails_the_start_clearly(registry: kopf.OperatorRegistry, start_operator: Starter) -> None:
    with pytest.raises(running.OperatorError, match="'nowhere'"):
        await start_operator(metrics_endpoint='nowhere')


@pytest.mark.emulator_only(reason="injects a 410 into the watch streams with the emulator's control API")
async def test_watch_reconnections_and_410s_are_counted(registry: kopf.OperatorRegistry, start_operator: Starter,
                                                        kube: Kube, cluster: Any) -> None:
    kopf.on.create('kopfexamples', id='created', registry=registry)(lambda **_: 'done')
    settings = fast_settings()
    port = free_port()
    settings.metrics.endpoint = f'127.0.0.1:{port}'
    await start_operator(settings=settings)
    url = f'http://127.0.0.1:{port}/metrics'
    await kube.create(example('before'))
    await eventually(lambda: ((get_example(cluster, 'before') or {}).get('status') or {}).get('created') == 'done')
    # The watch is open (counted at its response's headers, after the server took it): 'before' may have come in
    # the listing, before the watch (a loaded host), and a fault injected before the watch would hit nothing.
    opened = await scrape_until(url, lambda f: value(f, 'kopf_watch_connections_total', resource=KEX) >= 1)
    first = value(opened, 'kopf_watch_connections_total', resource=KEX)
    cluster.fail_watches(410)  # an ERROR event of 410 Expired in the streams: re-listed, reconnected
    found = await scrape_until(url, lambda f: value(f, 'kopf_watch_connections_total', resource=KEX) > first
                               and value(f, 'kopf_watch_expired_total', resource=KEX) >= 1)
    assert value(found, 'kopf_watch_connections_total', resource=KEX) > first
    assert value(found, 'kopf_watch_expired_total', resource=KEX) >= 1


async def test_event_handlers_daemons_timers_and_indices(registry: kopf.OperatorRegistry, start_operator: Starter,
                                                         kube: Kube) -> None:
    @kopf.on.event('kopfexamples', id='spy', registry=registry)
    def spy(**_: Any) -> None:
        pass

    @kopf.daemon('kopfexamples', id='watcher', registry=registry)
    async def daemon(stopped: Any, **_: Any) -> None:
        await stopped.wait()

    @kopf.timer('kopfexamples', id='tick', interval=0.1, registry=registry)
    def tick(**_: Any) -> None:
        pass

    @kopf.index('kopfexamples', id='by_name', registry=registry)
    def by_name(name: str, **_: Any) -> dict[str, str]:
        return {name: name}

    settings = fast_settings()
    port = free_port()
    settings.metrics.endpoint = f'127.0.0.1:{port}'
    await start_operator(settings=settings)
    await kube.create(example('one'))
    await kube.create(example('two'))
    url = f'http://127.0.0.1:{port}/metrics'
    found = await scrape_until(url, lambda f: value(f, 'kopf_handler_calls_total', resource=KEX, handler='tick',
                                                    outcome='success') >= 4)
    assert value(found, 'kopf_handler_calls_total', resource=KEX, handler='tick', outcome='success') >= 4
    assert value(found, 'kopf_handler_calls_total', resource=KEX, handler='spy', outcome='success') >= 2
    assert value(found, 'kopf_timer_lateness_seconds_count', resource=KEX) >= 4
    assert value(found, 'kopf_daemons_running', resource=KEX) == 2
    assert value(found, 'kopf_timers_running', resource=KEX) == 2
    assert value(found, 'kopf_index_keys', index='by_name') == 2


async def test_two_operators_in_one_process_keep_their_own_figures(cluster: Any, kube: Kube) -> None:
    import prometheus_client

    ports: dict[str, int] = {}
    operators: list[tuple[asyncio.Task[None], asyncio.Event]] = []
    try:
        for name in ('one', 'two'):
            registry = kopf.OperatorRegistry()
            kopf.on.create('kopfexamples', id=name, labels={'operator': name}, registry=registry)(lambda **_: 'done')
            settings = fast_settings()
            ports[name] = free_port()
            settings.metrics.endpoint = f'127.0.0.1:{ports[name]}'
            stop, ready = asyncio.Event(), asyncio.Event()
            task = asyncio.create_task(kopf.operator(registry=registry, vault=vault_for(cluster), settings=settings,
                                                     clusterwide=True, stop_flag=stop, ready_flag=ready))
            operators.append((task, stop))
            await asyncio.wait([task, asyncio.ensure_future(ready.wait())], return_when=asyncio.FIRST_COMPLETED)
        for idx, name in enumerate(['one', 'two', 'two']):
            obj = example(f'{name}-{idx}')
            obj['metadata']['labels'] = {'operator': name}
            await kube.create(obj)

        for name, expected in (('one', 1), ('two', 2)):
            def calls(found: Samples, name: str = name) -> float:
                return value(found, 'kopf_handler_calls_total', resource=KEX, handler=name, outcome='success')

            def enough(found: Samples, expected: int = expected) -> bool:
                return calls(found) >= expected
            found = await scrape_until(f'http://127.0.0.1:{ports[name]}/metrics', enough)
            assert calls(found) == expected, f'operator {name!r} did not count its {expected} object(s)'
            assert {dict(labels).get('handler') for (metric, labels) in found if metric.startswith('kopf_handler_')} \
                == {name}  # its own handler only: one registry per operator
        assert not [m.name for m in prometheus_client.REGISTRY.collect() if m.name.startswith('kopf_')]
    finally:
        for task, stop in operators:
            stop.set()
            await asyncio.wait_for(asyncio.shield(task), timeout=10)
