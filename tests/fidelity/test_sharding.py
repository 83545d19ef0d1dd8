"""`shardSelector=`: what a server with ShardedListAndWatch does, on the local cluster and on kube-apiserver 1.37.2.

With `--backend=envtest`, the cluster is the run's 1.37.2 with the gate (`sharding_cluster`); a server
without the feature (the run's 1.34.4; the local cluster with the gate off, or posing as 1.35) ignores it.
The hash: a range one hash wide, computed by `kopf._shards.assignment` (the framework's own code), returns
exactly its object, and a bisection that asks only the server finds the same 64 bits.
"""
import urllib.parse
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kopf._shards import assignment as shards
from kopf.testing import LocalCluster

from .. import backends
from ..backends import Cluster
from .conftest import Http

UID = 'object.metadata.uid'


def between(start: int, end: int, key: str = UID) -> str:
    return f"shardRange({key}, '{shards.hex_bound(start)}', '{shards.hex_bound(end)}')"


@pytest.fixture
def sharded(sharding_cluster: Cluster) -> Iterator[tuple[Cluster, Http, str]]:
    """The cluster, raw HTTP to it, and a namespace of this test's own (never reused: see backends.SHARDING_VERSION)."""
    name = f'sharding-{uuid.uuid4().hex[:8]}'
    sharding_cluster.apply({'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': name}})
    http = Http(sharding_cluster.url, sharding_cluster.ssl_context if backends.is_envtest(sharding_cluster) else None)
    yield sharding_cluster, http, name


def made(cluster: Cluster, namespace: str, count: int) -> dict[str, str]:
    """`count` labelled ConfigMaps: name -> uid."""
    objs = [cluster.apply({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {
        'name': f'cm-{i}', 'namespace': namespace, 'labels': {'sharded': 'yes'}}})[0] for i in range(count)]
    return {obj['metadata']['name']: obj['metadata']['uid'] for obj in objs}


def listing(http: Http, namespace: str, selector: str, **query: Any) -> dict[str, Any]:
    params = urllib.parse.urlencode({'labelSelector': 'sharded=yes', 'shardSelector': selector, **query})
    code, _, body = http.request('GET', f'/api/v1/namespaces/{namespace}/configmaps?{params}')
    assert code == 200, body
    return body  # type: ignore[no-any-return]


def names(body: dict[str, Any]) -> set[str]:
    return {item['metadata']['name'] for item in body['items']}


def test_a_range_one_hash_wide_returns_exactly_its_object(sharded: tuple[Cluster, Http, str]) -> None:
    cluster, http, namespace = sharded
    for name, uid in made(cluster, namespace, 6).items():
        h = shards.fnv1a64(uid)
        assert names(listing(http, namespace, between(h, h + 1))) == {name}
        assert name not in names(listing(http, namespace, between(0, h) + ' || ' + between(h + 1, shards.SPACE)))


def test_the_server_alone_finds_the_same_hash(sharded: tuple[Cluster, Http, str]) -> None:
    """A bisection over [0, 2**64) with the server's answers only: 64 lists per object."""
    cluster, http, namespace = sharded
    for name, uid in list(made(cluster, namespace, 2).items()):
        low, high = 0, shards.SPACE
        while high - low > 1:
            middle = (low + high) // 2
            below = name in names(listing(http, namespace, between(low, middle)))
            low, high = (low, middle) if below else (middle, high)
        assert low == shards.fnv1a64(uid), (uid, hex(low))


def test_the_shards_of_a_split_are_disjoint_and_cover_everything(sharded: tuple[Cluster, Http, str]) -> None:
    cluster, http, namespace = sharded
    every = set(made(cluster, namespace, 24))
    parts = [names(listing(http, namespace, shards.selector([i], 6))) for i in range(6)]
    assert sum(len(p) for p in parts) == len(every) and set().union(*parts) == every


def test_paging_collects_the_shard_without_remaining_counts(sharded: tuple[Cluster, Http, str]) -> None:
    cluster, http, namespace = sharded
    made(cluster, namespace, 20)
    selector = shards.selector([0, 2], 4)
    whole = listing(http, namespace, selector)
    assert whole['metadata']['shardInfo'] == {'selector': selector}
    collected: list[str] = []
    token = ''
    while True:
        page = listing(http, namespace, selector, limit=3, **({'continue': token} if token else {}))
        assert 'remainingItemCount' not in page['metadata'] and len(page['items']) <= 3
        assert page['metadata']['shardInfo'] == {'selector': selector}
        collected += [item['metadata']['name'] for item in page['items']]
        token = page['metadata'].get('continue', '')
        if not token:
            break
    assert sorted(collected) == sorted(names(whole))


def test_shard_info_holds_the_normal_form(sharded: tuple[Cluster, Http, str]) -> None:
    _, http, namespace = sharded
    given = "  ( shardRange( object.metadata.uid ,\"0x0000000000000000\", '0x8000000000000000' ) )  "
    expected = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
    assert listing(http, namespace, given)['metadata']['shardInfo'] == {'selector': expected}


def test_a_watch_sends_only_its_shards_objects(sharded: tuple[Cluster, Http, str]) -> None:
    cluster, http, namespace = sharded
    start = listing(http, namespace, shards.selector([0], 2))['metadata']['resourceVersion']
    uids = made(cluster, namespace, 12)
    query = urllib.parse.urlencode({'watch': '1', 'timeoutSeconds': '2', 'resourceVersion': start,
                                    'labelSelector': 'sharded=yes', 'shardSelector': shards.selector([0], 2)})
    stream = http.watch(f'/api/v1/namespaces/{namespace}/configmaps?{query}')
    try:
        seen = {event['object']['metadata']['name'] for event in stream.rest()}
    finally:
        stream.close()
    assert seen == {name for name, uid in uids.items() if shards.shard_of(uid, 2) == 0}


def test_a_bad_selector_is_the_servers_500(sharded: tuple[Cluster, Http, str]) -> None:
    _, http, namespace = sharded
    query = urllib.parse.urlencode({'shardSelector': "shardRange(object.metadata.uid, '0x0', '0x1')"})
    code, _, body = http.request('GET', f'/api/v1/namespaces/{namespace}/configmaps?{query}')
    assert code == 500 and not body.get('reason')
    assert body['message'] == ('invalid shard selector: hexStart must be a 0x-prefixed 16-digit hex value, got '
                               '"0x0" (did you mean "0x0000000000000000"?)')


@pytest.fixture
def unsharded(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """A server without the feature: the run's 1.34.4 (envtest), or local clusters without it (gate off, 1.35)."""
    if backends.backend(request.config) == 'envtest':
        with backends.cluster(request) as shared:
            yield shared
        return
    with LocalCluster(**request.param) as local:
        yield local


@pytest.mark.parametrize('unsharded', [{'feature_gates': {'ShardedListAndWatch': False}},
                                       {'git_version': 'v1.35.3'}], indirect=True, ids=['gate-off', 'v1.35'])
def test_a_server_without_the_feature_ignores_the_selector(unsharded: Cluster) -> None:
    namespace = f'unsharded-{uuid.uuid4().hex[:8]}'
    unsharded.apply({'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': namespace}})
    made(unsharded, namespace, 6)
    http = Http(unsharded.url, unsharded.ssl_context if backends.is_envtest(unsharded) else None)
    body = listing(http, namespace, "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000001')")
    assert len(body['items']) == 6 and 'shardInfo' not in body['metadata']
    bad = listing(http, namespace, 'not a selector at all')
    assert len(bad['items']) == 6
