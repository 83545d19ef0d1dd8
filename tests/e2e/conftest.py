"""End-to-end fixtures: the cluster (the emulator in the test's loop, or the shared envtest cluster with
`--backend=envtest`: tests/backends.py), and an operator task against it."""
import asyncio
import dataclasses
import functools
import logging
import pathlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

import kopf
from kopf._api import credentials, kubeconfig
from kopf._engine import contexts
from kopf.testing import LocalCluster, cluster_vault

from .. import backends, waiting
from ..backends import Cluster
from ..relay import Relay

ROOT = pathlib.Path(__file__).parent.parent.parent
CRD = ROOT / 'examples' / 'crd.yaml'

Obj = dict[str, Any]


def example(name: str = 'kopf-example-1', namespace: str = 'default', **spec: Any) -> Obj:
    return {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
            'metadata': {'name': name, 'namespace': namespace, 'labels': {'somelabel': 'somevalue'}},
            'spec': spec or {'field': 'value', 'items': ['item1', 'item2']}}


def fast_settings() -> kopf.OperatorSettings:
    settings = kopf.OperatorSettings()
    settings.execution.default_backoff = 0.1
    settings.networking.error_backoffs = (0.1, 0.2)
    settings.queueing.idle_timeout = 0.5
    settings.watching.reconnect_backoff = 0.05
    return settings


def vault_for(cluster: Cluster, server: str | None = None) -> credentials.Vault:
    """The credentials of the cluster's admin; `server`: another URL to it (a `Relay`'s)."""
    if backends.is_envtest(cluster) and server is None:
        return cluster_vault(cluster)
    if backends.is_envtest(cluster):
        info = dataclasses.replace(kubeconfig.load([pathlib.Path(cluster.kubeconfig)]), server=server)
        vault = credentials.Vault()
        vault.populate([dataclasses.replace(info, default_namespace=info.default_namespace or 'default')])
        return vault
    vault = credentials.Vault()
    vault.populate([kopf.ConnectionInfo(server=server or cluster.url, default_namespace='default')])
    return vault


# The one `eventually()` (tests/waiting.py), polling more often: these tests wait on real I/O, in real time.
eventually = functools.partial(waiting.eventually, interval=0.02)


@pytest.fixture
async def cluster(request: pytest.FixtureRequest) -> AsyncIterator[Cluster]:
    if backends.backend(request.config) == 'envtest':
        with backends.cluster(request) as shared:
            shared.apply(str(CRD))
            yield shared
        return
    async with LocalCluster() as local:
        local.apply(str(CRD))
        yield local


@pytest.fixture
def registry() -> kopf.OperatorRegistry:
    return kopf.OperatorRegistry()


Starter = Callable[..., Awaitable[asyncio.Task[None]]]


@pytest.fixture
async def relay(cluster: Cluster) -> AsyncIterator[Relay]:
    """A relay to the cluster whose connections the test cuts (`vault=vault_for(cluster, relay.url)`).

    Requested before `start_operator`, it is set up before and torn down after the operator."""
    async with Relay(cluster.url) as running:
        yield running


@pytest.fixture
async def start_operator(cluster: Cluster, registry: kopf.OperatorRegistry,
                         caplog: pytest.LogCaptureFixture) -> AsyncIterator[Starter]:
    """Start the operator as a task in this loop; stopped (gracefully) at the end of the test."""
    caplog.set_level(logging.DEBUG, logger='kopf')
    running: list[tuple[asyncio.Task[None], asyncio.Event]] = []

    async def start(**kwargs: Any) -> asyncio.Task[None]:
        stop, ready = kwargs.pop('stop_flag', None) or asyncio.Event(), asyncio.Event()
        kwargs.setdefault('settings', fast_settings())
        kwargs.setdefault('clusterwide', not kwargs.get('namespaces'))
        vault = kwargs.pop('vault', None) or vault_for(cluster)
        task = asyncio.create_task(kopf.operator(registry=registry, vault=vault,
                                                 stop_flag=stop, ready_flag=ready, **kwargs))
        running.append((task, stop))
        await asyncio.wait([task, asyncio.ensure_future(ready.wait())], return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            task.result()
        return task

    yield start
    for task, stop in running:
        if task.done():  # stopped or failed within the test, and checked there
            continue
        stop.set()
        await asyncio.wait_for(asyncio.shield(task), timeout=10)


class Kube:
    """Actions on the cluster through the official `kubernetes` client (in a thread: it is blocking)."""

    def __init__(self, cluster: Cluster) -> None:
        import kubernetes
        self.api = kubernetes.config.new_client_from_config(config_file=str(cluster.kubeconfig))
        self.custom = kubernetes.client.CustomObjectsApi(self.api)
        self.core = kubernetes.client.CoreV1Api(self.api)

    async def create(self, obj: Obj) -> Obj:
        ns = obj['metadata'].get('namespace', 'default')
        if obj['apiVersion'] == 'v1':
            return (await asyncio.to_thread(self.core.create_namespaced_config_map, ns, obj)).to_dict()
        group, version = obj['apiVersion'].split('/')
        plural = obj['kind'].lower() + 's'
        result: Obj = await asyncio.to_thread(self.custom.create_namespaced_custom_object,
                                              group, version, ns, plural, obj)
        return result

    async def patch(self, name: str, patch: Obj, *, namespace: str = 'default') -> Obj:
        result: Obj = await asyncio.to_thread(self.custom.patch_namespaced_custom_object,
                                              'kopf.dev', 'v1', namespace, 'kopfexamples', name, patch)
        return result

    async def patch_status(self, name: str, patch: Obj, *, namespace: str = 'default') -> Obj:
        result: Obj = await asyncio.to_thread(self.custom.patch_namespaced_custom_object_status,
                                              'kopf.dev', 'v1', namespace, 'kopfexamples', name, patch)
        return result

    async def delete(self, name: str, *, namespace: str = 'default', plural: str = 'kopfexamples') -> None:
        if plural == 'configmaps':
            await asyncio.to_thread(self.core.delete_namespaced_config_map, name, namespace)
        else:
            await asyncio.to_thread(self.custom.delete_namespaced_custom_object,
                                    'kopf.dev', 'v1', namespace, plural, name)


@pytest.fixture
def kube(cluster: Cluster) -> Kube:
    return Kube(cluster)


BARRIER = 'e2e-barrier'  # the status field of the barrier's change


class Sightings:
    """A barrier before negative assertions ("nothing more was called or written"), instead of a sleep.

    An `on.event` handler (registered by this object) keeps the newest resourceVersion of the objects it
    saw. One object's cycles run one at a time, each ending with its patch. A status-only change (nothing
    to handle) is made and waited for, twice: the cycle that sees the first one may have taken in earlier
    bodies too (a record keeps only the newest) and runs its change handlers after the event handlers;
    the cycle that sees the second one starts after it has ended. So every cycle of the object's earlier
    events has ended: whatever they were going to call or write is called and written.
    """

    def __init__(self, registry: kopf.OperatorRegistry) -> None:
        self.newest = 0
        kopf.on.event('kopfexamples', id='e2e-sightings', registry=registry)(self._saw)

    def _saw(self, body: Any, **_: Any) -> None:
        self.newest = max(self.newest, int(body['metadata']['resourceVersion']))

    async def barrier(self, kube: Kube, name: str = 'kopf-example-1') -> None:
        for _ in range(2):
            obj = await kube.patch_status(name, {'status': {BARRIER: uuid.uuid4().hex}})
            seen = int(obj['metadata']['resourceVersion'])
            await eventually(lambda seen=seen: self.newest >= seen)


def operators(registry: kopf.OperatorRegistry) -> list[contexts.OperatorContext]:
    """The operators of this test (started with its registry) in this process."""
    return [ctx for ctx in list(contexts.LIVE.values()) if ctx.registry is registry]


def idle(registry: kopf.OperatorRegistry) -> bool:
    """The test's operators have no work: no object queued, running, or waiting for a due time or our write.

    With a condition that the operator has read its watch streams past the events of interest (a barrier's
    change seen, an object forgotten, the streams it watches), it is a barrier before negative assertions.
    """
    running = operators(registry)
    return bool(running) and all(ctx.idle() for ctx in running)


def forgotten(registry: kopf.OperatorRegistry, uid: str) -> bool:
    """The object's record is gone: its DELETED event's cycle has ended (no later event can come for it).

    Only meaningful for an object the operator has seen (else it was never remembered)."""
    return all(uid not in rctx.records for ctx in operators(registry) for rctx in ctx.served.values())


def get_example(cluster: Cluster, name: str = 'kopf-example-1') -> Obj | None:
    return cluster.get('kopf.dev/v1', 'KopfExample', name, 'default')
