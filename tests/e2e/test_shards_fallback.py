"""Sharding on a server that ignores `shardSelector=`: the replicas filter on the client, and say so once.

The server: the local cluster with `--feature-gates ShardedListAndWatch=false`, or (envtest) the run's
kube-apiserver 1.34.4, which has no such feature. Two `kopf run --lease NAME --shards 6` replicas: every
object is handled once, by its shard's holder, as with a server that filters; each replica logs one line
per resource that the server ignored the selector (objects of shards it does not hold came).
"""
import collections
import pathlib
from collections.abc import Iterator

import pytest

from kopf._shards import assignment as shards
from kopf.testing import LocalCluster

from .. import backends
from ..backends import Cluster
from . import test_peering, test_shards
from .conftest import CRD, example

started = pytest.fixture(test_peering.operators.__wrapped__, name='started')  # killed at the end
OBJECTS = 40


@pytest.fixture
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    if backends.backend(request.config) == 'envtest':
        with backends.cluster(request) as shared:   # 1.34.4: no ShardedListAndWatch at all
            shared.apply(str(CRD))
            yield shared
        return
    with LocalCluster(feature_gates={'ShardedListAndWatch': False}) as local:
        local.apply(str(CRD))
        yield local


def test_a_server_without_sharded_lists_and_the_replicas_filter(
        cluster: Cluster, tmp_path: pathlib.Path, started: list[test_shards.Replica]) -> None:
    started.extend(test_shards.Replica(cluster, tmp_path, tag) for tag in ('r1', 'r2'))
    test_shards.wait_for(lambda: test_shards.spread(cluster, {'r1', 'r2'}))
    owners = test_shards.holders(cluster)
    names = {f'kex-{i}' for i in range(OBJECTS)}
    created = cluster.apply(*(example(name) for name in sorted(names)))
    shard_of = {obj['metadata']['name']: shards.shard_of(obj['metadata']['uid'], test_shards.SHARDS)
                for obj in created}
    done = test_shards.wait_for(lambda: (found := test_shards.handled(cluster, names)) and len(found) == OBJECTS
                                and found)
    assert all(done[name] == owners[shard_of[name]] for name in names)
    creates = collections.Counter(name for kind, name, *_ in test_shards.calls(tmp_path, {}) if kind == 'create')
    assert set(creates) == names and set(creates.values()) == {1}
    for replica in started:
        lines = [line for line in replica.output.read_text().splitlines() if 'ignored the shard selector' in line]
        assert len(lines) == 1 and 'kopfexamples' in lines[0], lines
