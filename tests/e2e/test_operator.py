"""The operator's own lifecycle: startup (retried, tuning settings and the memo) before watching,
cleanup last; namespaces; delays by in-memory wake-ups (no touch-dummy writes)."""
import asyncio
from typing import Any

import pytest

import kopf
from kopf.testing import LocalCluster

from .. import backends
from .conftest import Kube, Sightings, Starter, eventually, example, get_example, idle


async def test_startup_then_handlers_then_cleanup(cluster: LocalCluster, registry: kopf.OperatorRegistry,
                                                  start_operator: Starter, kube: Kube) -> None:
    calls: list[Any] = []

    @kopf.on.startup(registry=registry, backoff=0.1)
    def startup(retry: int, memo: kopf.Memo, settings: kopf.OperatorSettings, **_: Any) -> None:
        calls.append(('startup', retry))
        if retry == 0:
            raise Exception('not ready yet')
        memo.shared = 'from startup'
        settings.persistence.finalizer = 'my-op.example.com/finalizer'

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(memo: kopf.Memo, **_: Any) -> None:
        calls.append(('create', memo.shared))

    kopf.on.delete('kopfexamples', registry=registry)(lambda **_: None)
    kopf.on.cleanup(registry=registry)(lambda memo, **_: calls.append(('cleanup', memo.shared)))

    stop = asyncio.Event()
    task = await start_operator(stop_flag=stop)
    assert calls == [('startup', 0), ('startup', 1)]
    await kube.create(example())
    obj = await eventually(lambda: get_example(cluster) if calls[-1][0] == 'create' else None)
    assert obj['metadata']['finalizers'] == ['my-op.example.com/finalizer']
    stop.set()
    await task
    assert calls == [('startup', 0), ('startup', 1), ('create', 'from startup'), ('cleanup', 'from startup')]


async def test_only_the_given_namespaces_are_served(cluster: LocalCluster, registry: kopf.OperatorRegistry,
                                                    start_operator: Starter, kube: Kube,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    names: list[str] = []
    kopf.on.create('kopfexamples', registry=registry)(lambda namespace, **_: names.append(namespace))
    for ns in ('ns1', 'ns2', 'team-a', 'team-x'):
        cluster.apply({'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': ns}})
    await start_operator(clusterwide=False, namespaces=['ns1', 'team-*,!team-x'])
    for ns in ('ns1', 'ns2', 'team-a', 'team-x'):
        await kube.create(example(namespace=ns))
    await eventually(lambda: len(names) >= 2)
    cluster.apply({'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': 'team-b'}})
    await kube.create(example(namespace='team-b'))  # listed when its stream starts, if not seen by it
    await eventually(lambda: len(names) >= 3)
    # Nothing watches the other namespaces (so their objects are never handled), and the operator is idle
    # (so what it handled is all it will handle):
    assert watched(caplog, 'kopfexamples') == {'ns1', 'team-a', 'team-b'}
    await eventually(lambda: idle(registry))
    assert sorted(names) == ['ns1', 'team-a', 'team-b']


def watched(caplog: pytest.LogCaptureFixture, plural: str) -> set[str]:
    """The namespaces of the watch-streams started for the resource ('*' for a cluster-wide one)."""
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith('Starting the watch-stream for ')]
    return {line.rstrip('.').rpartition(' in ')[2] if ' in ' in line else '*'
            for line in lines if line.removeprefix('Starting the watch-stream for ').startswith(f'{plural}.')}


async def test_delays_wake_up_in_memory_without_touching(cluster: LocalCluster, registry: kopf.OperatorRegistry,
                                                         start_operator: Starter, kube: Kube) -> None:
    attempts: list[int] = []

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(retry: int, **_: Any) -> None:
        attempts.append(retry)
        if retry < 2:
            raise kopf.TemporaryError('later', delay=0.3)
    sightings = Sightings(registry)

    await start_operator()
    if not backends.is_envtest(cluster):  # the emulator's request counters
        cluster.reset_counters()
    await kube.create(example())
    await eventually(lambda: len(attempts) == 3)
    # The last attempt's patch (its result and the diff-base) follows the handler: waited for, not slept for.
    await eventually(lambda: 'last-handled-configuration' in str(get_example(cluster)))
    await sightings.barrier(kube)  # anything extra (a touch) came in the cycles before
    obj = get_example(cluster)
    assert obj is not None
    assert not [key for key in obj['metadata'].get('annotations', {}) if 'touch' in key or 'create_fn' in key]
    # One patch per attempt: the two delayed retries and the final one with the diff-base; no touches.
    if not backends.is_envtest(cluster):  # the emulator's request counters
        assert cluster.counters().get('patch kopfexamples') == 3, cluster.counters()


async def test_liveness_endpoint_serves_the_probes(registry: kopf.OperatorRegistry, start_operator: Starter) -> None:
    import socket

    import aiohttp

    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    runs: list[int] = []

    @kopf.on.probe(id='runs', registry=registry)
    def probe(**_: Any) -> int:
        runs.append(1)
        return len(runs)

    kopf.on.probe(id='nothing', registry=registry)(lambda **_: None)
    await start_operator(liveness_endpoint=f'http://127.0.0.1:{port}/healthz')
    async with aiohttp.ClientSession() as session:
        async def listening() -> bool:
            try:
                async with session.get(f'http://127.0.0.1:{port}/nowhere'):
                    return True
            except aiohttp.ClientConnectionError:
                return False
        for _ in range(100):
            if await listening():
                break
            await asyncio.sleep(0.02)
        for _ in range(2):  # cached: the probes run once per 10 seconds
            async with session.get(f'http://127.0.0.1:{port}/healthz') as response:
                assert response.status == 200
                assert await response.json() == {'runs': 1}


async def test_a_stop_during_startup_ends_the_operator(registry: kopf.OperatorRegistry, cluster: LocalCluster) -> None:
    from .conftest import fast_settings, vault_for
    calls: list[str] = []

    @kopf.on.startup(registry=registry)
    async def slow(**_: Any) -> None:
        calls.append('startup')
        await asyncio.Event().wait()

    kopf.on.cleanup(registry=registry)(lambda **_: calls.append('cleanup'))
    stop = asyncio.Event()
    task = asyncio.create_task(kopf.operator(registry=registry, vault=vault_for(cluster), clusterwide=True,
                                             settings=fast_settings(), stop_flag=stop))
    await eventually(lambda: calls)
    stop.set()
    await asyncio.wait_for(task, timeout=20)  # a generous guard against a hang, not a speed check
    assert calls == ['startup']  # no cleanup: nothing had started
