"""The observer against the local cluster: what a CRD event makes discovery re-read."""
import asyncio
import pathlib
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

import kopf
from kopf._api import credentials
from kopf.testing import LocalCluster

CRD = pathlib.Path(__file__).parent.parent.parent / 'examples' / 'crd.yaml'
OTHER_CRD = {
    'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
    'metadata': {'name': 'others.other.dev'},
    'spec': {'group': 'other.dev', 'scope': 'Namespaced',
             'names': {'plural': 'others', 'singular': 'other', 'kind': 'Other'},
             'versions': [{'name': 'v1', 'served': True, 'storage': True,
                           'schema': {'openAPIV3Schema': {'type': 'object',
                                                          'x-kubernetes-preserve-unknown-fields': True}}}]},
}
EXAMPLE = {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
           'metadata': {'name': 'kex-1', 'namespace': 'default'}, 'spec': {}}
DISCOVERY_PATH = re.compile(r'/apis?|/api/[^/?]+|/apis/[^/?]+(/[^/?]+)?')  # not the resources' own paths


Operate = Callable[[kopf.OperatorRegistry], Any]


@pytest.fixture
async def operate(local_cluster: LocalCluster) -> AsyncIterator[Operate]:
    """Start an operator with a registry; stopped at the end of the test."""
    stop = asyncio.Event()
    tasks: list[asyncio.Task[None]] = []

    async def start(registry: kopf.OperatorRegistry) -> None:
        vault = credentials.Vault()
        vault.populate([kopf.ConnectionInfo(server=local_cluster.url, default_namespace='default')])
        ready = asyncio.Event()
        tasks.append(asyncio.create_task(kopf.operator(registry=registry, vault=vault, clusterwide=True,
                                                       stop_flag=stop, ready_flag=ready)))
        await ready.wait()

    yield start
    stop.set()
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=10)


def _discovery_gets(cluster: LocalCluster, since: int) -> list[str]:
    return [r['path'] for r in cluster.request_log()[since:]
            if r['method'] == 'GET' and DISCOVERY_PATH.fullmatch(r['path'])]


async def _run(cluster: LocalCluster, operate: Operate, *selector: str) -> list[str]:
    """The discovery requests made for the CRD events after the operator's start, until it serves the CRD."""
    registry = kopf.OperatorRegistry()
    seen = asyncio.Event()

    @kopf.on.event(*selector, registry=registry)
    async def fn(**_: Any) -> None:
        seen.set()

    await operate(registry)
    await asyncio.sleep(0.2)  # the startup's own discovery and the CRDs' initial listing are done
    since = len(cluster.request_log())
    cluster.apply(OTHER_CRD)  # a group that no selector names
    cluster.apply(str(CRD))   # the events of the CRDs are handled in order: this one after the other
    cluster.apply(EXAMPLE)
    await asyncio.wait_for(seen.wait(), timeout=10)
    return _discovery_gets(cluster, since)


async def test_crd_events_refresh_only_the_named_groups(local_cluster: LocalCluster, operate: Operate) -> None:
    paths = await _run(local_cluster, operate, 'kopf.dev', 'v1', 'kopfexamples')
    assert '/apis/kopf.dev/v1' in paths  # the group was re-read for its CRD's events
    assert set(paths) <= {'/apis/kopf.dev', '/apis/kopf.dev/v1'}  # no full scan; not other.dev


@pytest.mark.parametrize('selector', [('kopfexamples',), ('kopfexamples.kopf.dev',)])
async def test_crd_events_refresh_everything_for_selectors_without_a_group(
        local_cluster: LocalCluster, operate: Operate, selector: tuple[str, ...]) -> None:
    paths = await _run(local_cluster, operate, *selector)
    if selector == ('kopfexamples.kopf.dev',):  # the group is parsed from the name: per-group
        assert set(paths) <= {'/apis/kopf.dev', '/apis/kopf.dev/v1'}
    else:
        assert '/apis' in paths and '/api' in paths and '/apis/apps/v1' in paths
