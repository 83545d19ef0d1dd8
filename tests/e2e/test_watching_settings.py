"""Upstream Kopf 1.45's watching settings on a server: the requests it received, the objects the operator got.

`settings.watching.label_selectors`, `field_selectors`, `chunk_size`, `initial_streaming` (and the static
`shard_selectors`): an operator watches ConfigMaps in a namespace of the test's own with one setting;
the requests are read from the server's side: kube-apiserver 1.37.2's audit log (`--backend=envtest`,
`sharding_cluster`), or the local cluster's request log. The objects are those its handler was given.
"""
import asyncio
import urllib.parse
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

import kopf
from kopf._shards import assignment as shards
from kopf.testing import cluster_vault

from .. import backends
from ..backends import Cluster
from .conftest import eventually, fast_settings

COUNT = 8
FURNITURE = 'kube-root-ca.crt'   # the local cluster's controllers put it into every namespace


def received(cluster: Cluster, namespace: str) -> list[tuple[str, dict[str, str]]]:
    """The server's record of the requests for ConfigMaps in the namespace: (verb, query), oldest first."""
    path = f'/api/v1/namespaces/{namespace}/configmaps'
    if backends.is_envtest(cluster):
        seen: set[str] = set()   # a request's first stage (a watch logs when it starts, and when it ends)
        firsts = [e for e in cluster.audit_events() if e['auditID'] not in seen and not seen.add(e['auditID'])]
        found = [(e['verb'], e['requestURI']) for e in firsts   # the operator's requests, not the test's own
                 if e['requestURI'].split('?')[0] == path and e['verb'] in ('list', 'watch')
                 and str(e.get('userAgent', '')).startswith('kopf/')]
    else:
        found = [('watch' if 'watch=' in r['query'] else 'list', f'{r["path"]}?{r["query"]}')
                 for r in cluster.request_log() if r['path'] == path and r['method'] == 'GET']
    return [(verb, dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(uri).query))) for verb, uri in found]


@pytest.fixture
async def watched(sharding_cluster: Cluster) -> AsyncIterator[Callable[..., Any]]:
    """Run an operator on the namespace's ConfigMaps with a setting; the names its handler got, once settled."""
    stops: list[tuple[asyncio.Event, asyncio.Task[None]]] = []

    async def run(namespace: str, expected: int, configure: Callable[[kopf.OperatorSettings], None]) -> set[str]:
        registry, seen = kopf.OperatorRegistry(), set[str]()
        kopf.on.event('configmaps', registry=registry)(lambda name, **_: seen.add(name))
        settings = fast_settings()
        configure(settings)
        stop = asyncio.Event()
        task = asyncio.create_task(kopf.operator(registry=registry, settings=settings, stop_flag=stop,
                                                 vault=cluster_vault(sharding_cluster),
                                                 namespaces=[namespace], standalone=True))
        stops.append((stop, task))
        await eventually(lambda: len(seen - {FURNITURE}) >= expected)
        return seen

    yield run
    for stop, task in stops:
        stop.set()
        await asyncio.wait_for(task, timeout=20)


def objects(cluster: Cluster) -> str:
    """A namespace of the test's own with COUNT ConfigMaps: cm-0 ... (labels team=a for even, b for odd)."""
    namespace = f'watching-{uuid.uuid4().hex[:8]}'
    cluster.apply({'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': namespace}})
    for i in range(COUNT):
        cluster.apply({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {
            'name': f'cm-{i}', 'namespace': namespace, 'labels': {'team': 'ab'[i % 2]}}})
    return namespace


async def test_label_selectors(sharding_cluster: Cluster, watched: Callable[..., Any]) -> None:
    namespace = objects(sharding_cluster)
    seen = await watched(namespace, COUNT // 2,
                         lambda s: s.watching.label_selectors.update({'configmaps': 'team=a'}))
    await eventually(lambda: 'watch' in {verb for verb, _ in received(sharding_cluster, namespace)})   # after the list
    requests = received(sharding_cluster, namespace)
    assert requests and all(query.get('labelSelector') == 'team=a' for _, query in requests)
    assert {verb for verb, _ in requests} >= {'list', 'watch'}
    assert seen == {f'cm-{i}' for i in range(0, COUNT, 2)}


async def test_field_selectors(sharding_cluster: Cluster, watched: Callable[..., Any]) -> None:
    namespace = objects(sharding_cluster)
    seen = await watched(namespace, 1,
                         lambda s: s.watching.field_selectors.update({'configmaps': 'metadata.name=cm-3'}))
    requests = received(sharding_cluster, namespace)
    assert requests and all(query.get('fieldSelector') == 'metadata.name=cm-3' for _, query in requests)
    assert seen == {'cm-3'}


async def test_chunk_size(sharding_cluster: Cluster, watched: Callable[..., Any]) -> None:
    namespace = objects(sharding_cluster)
    seen = await watched(namespace, COUNT, lambda s: setattr(s.watching, 'chunk_size', 3))
    lists = [query for verb, query in received(sharding_cluster, namespace) if verb == 'list']
    assert [query.get('limit') for query in lists] == ['3'] * 3   # 8 or 9 objects: 3 pages
    assert 'continue' not in lists[0] and all(query.get('continue') for query in lists[1:])
    assert seen - {FURNITURE} == {f'cm-{i}' for i in range(COUNT)}


async def test_initial_streaming(sharding_cluster: Cluster, watched: Callable[..., Any]) -> None:
    namespace = objects(sharding_cluster)
    seen = await watched(namespace, COUNT, lambda s: setattr(s.watching, 'initial_streaming', True))
    requests = received(sharding_cluster, namespace)
    assert [verb for verb, _ in requests][:1] == ['watch'] and 'list' not in {verb for verb, _ in requests}
    first = requests[0][1]
    assert (first.get('sendInitialEvents'), first.get('resourceVersionMatch')) == ('true', 'NotOlderThan')
    assert seen - {FURNITURE} == {f'cm-{i}' for i in range(COUNT)}


async def test_static_shard_selectors(sharding_cluster: Cluster, watched: Callable[..., Any]) -> None:
    namespace = objects(sharding_cluster)
    uids = {obj['metadata']['name']: obj['metadata']['uid']
            for obj in sharding_cluster.list('v1', 'ConfigMap', namespace) if obj['metadata']['name'] != FURNITURE}
    mine = {name for name, uid in uids.items() if shards.shard_of(uid, 2) == 1}
    selector = shards.selector([1], 2)
    seen = await watched(namespace, len(mine), lambda s: s.watching.shard_selectors.update({'configmaps': selector}))
    requests = received(sharding_cluster, namespace)
    assert requests and all(query.get('shardSelector') == selector for _, query in requests)
    assert seen - {FURNITURE} == mine
