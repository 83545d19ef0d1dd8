"""The cluster backend of the cluster-facing suites (tests/e2e, tests/fidelity, the examples).

`--backend=emulator` (the default; `$KOPF_TEST_BACKEND` too) gives every cluster fixture a fresh
`LocalCluster`; `--backend=envtest` gives them all ONE `EnvtestCluster` (a real etcd, kube-apiserver
and kube-controller-manager: see `make envtest`) per pytest run, emptied when each fixture ends.

Tests that need what a real server does not offer (the emulator's fault injection, request log,
counters, direct store access) are marked `@pytest.mark.emulator_only(reason=...)`: skipped on envtest,
their count printed; `--run-emulator-only` runs them there anyway, to check that each reason still holds
(2026-12-02: of tests/fidelity's 20, the 8 that pass start a LocalCluster of their own and test it, not
the backend; the 12 others fail for their stated reasons).
"""
import asyncio
import contextlib
import pathlib
import time
from collections.abc import Iterator
from typing import Any

import pytest

from kopf.testing import EnvtestCluster, LocalCluster

Cluster = LocalCluster | EnvtestCluster
ROOT = pathlib.Path(__file__).parent.parent
#: The suites' common CRDs stay between tests (their objects go): a CRD made anew is unknown to the
#: garbage collector of kube-controller-manager until its next discovery resync (every 30 s).
KEPT_CRDS = {'kopfexamples.kopf.dev', 'stricts.kopf.dev', 'plains.kopf.dev', 'globals.kopf.dev'}
#: The server of the sharding tests (`sharding_cluster`): the first minor with `shardSelector=` is 1.36; no
#: kube-controller-manager is built for it, so its namespaces are never emptied: tests there use their own names.
SHARDING_VERSION = '1.37.2'
SHARDING_GATES = {'ShardedListAndWatch': True}
SYSTEM_NAMESPACES = {'default', 'kube-system', 'kube-public', 'kube-node-lease'}
KEPT_IN_DEFAULT = {('ConfigMap', 'kube-root-ca.crt'), ('Service', 'kubernetes'), ('ServiceAccount', 'default')}
CLEANED_IN_DEFAULT = [('v1', 'ConfigMap'), ('v1', 'Secret'), ('v1', 'Pod'), ('v1', 'Service'), ('v1', 'Event'),
                      ('apps/v1', 'Deployment'), ('apps/v1', 'ReplicaSet'), ('batch/v1', 'Job'),
                      ('v1', 'ServiceAccount'), ('coordination.k8s.io/v1', 'Lease')]


async def expire_history(cluster: Cluster, crd: str = 'kopfexamples.kopf.dev') -> None:
    """What the cluster served until now is too old: a watch or a `continue` token from then gets 410 Expired.

    A write first (a ConfigMap in `default`), so that even the newest resourceVersion handed out is older than
    the compaction. The emulator: its history compacted. Envtest: etcd compacted, and the CRD's watch cache
    started anew, which a compaction alone is not (kube-apiserver 1.34 serves watches and `continue` tokens
    from its cache: `kopf._kits.envhistory`); the other resources' watches are served as before.
    """
    marker = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'history-expired', 'namespace': 'default'},
              'data': {'at': str(time.monotonic_ns())}}
    if isinstance(cluster, EnvtestCluster):
        await asyncio.to_thread(cluster.apply, marker)
        await asyncio.to_thread(cluster.compact_history)
        await asyncio.to_thread(cluster.restart_watch_cache, crd)
    else:
        cluster.apply(marker)
        cluster.compact_history()


def backend(config: pytest.Config) -> str:
    return str(config.getoption('--backend'))


def is_envtest(cluster: Any) -> bool:
    return isinstance(cluster, EnvtestCluster)


@contextlib.contextmanager
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """A cluster for one fixture: a fresh emulator, or the shared envtest cluster (emptied afterwards)."""
    if backend(request.config) != 'envtest':
        with LocalCluster() as local:
            yield local
        return
    shared: EnvtestCluster = request.getfixturevalue('envtest_cluster')
    try:
        yield shared
    finally:
        clean(shared)


def prime(cluster: EnvtestCluster) -> None:
    """Wait until the garbage collector knows the examples' CRD (a child of a deleted owner goes)."""
    cluster.apply(str(ROOT / 'examples' / 'crd.yaml'))
    owner = cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': 'gc-probe'}})[0]
    ref = {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'name': 'gc-probe', 'uid': owner['metadata']['uid']}
    cluster.apply({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'gc-probe', 'ownerReferences': [ref]}})
    cluster.delete('kopf.dev/v1', 'KopfExample', 'gc-probe', 'default')
    deadline = time.monotonic() + 90
    while cluster.get('v1', 'ConfigMap', 'gc-probe', 'default') is not None:
        if time.monotonic() > deadline:
            raise RuntimeError('the garbage collector of kube-controller-manager did not act in 90 s')
        time.sleep(0.2)


def clean(cluster: EnvtestCluster) -> None:
    """Remove what tests made: custom resources and CRDs, namespaces, objects in `default`."""
    crds = cluster.list('apiextensions.k8s.io/v1', 'CustomResourceDefinition')
    for crd in crds:
        group, plural = crd['spec']['group'], crd['spec']['names']['plural']
        version = next(v['name'] for v in crd['spec']['versions'] if v.get('storage'))
        status, found = cluster.request('GET', f'/apis/{group}/{version}/{plural}', check=False)
        for obj in (found or {}).get('items', []) if status == 200 else []:
            meta = obj['metadata']
            cluster.delete(f'{group}/{version}', plural, meta['name'], meta.get('namespace'), force=True)
        if crd['metadata']['name'] not in KEPT_CRDS:
            cluster.delete('apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd['metadata']['name'], force=True)
    namespaces = [ns['metadata']['name'] for ns in cluster.list('v1', 'Namespace')
                  if ns['metadata']['name'] not in SYSTEM_NAMESPACES]
    for name in namespaces:
        cluster.delete('v1', 'Namespace', name)
    for api_version, kind in CLEANED_IN_DEFAULT:
        for obj in cluster.list(api_version, kind, 'default'):
            if (kind, obj['metadata']['name']) not in KEPT_IN_DEFAULT:
                cluster.delete(api_version, kind, obj['metadata']['name'], 'default', force=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        left = [c['metadata']['name'] for c in crds if c['metadata']['name'] not in KEPT_CRDS
                and cluster.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', c['metadata']['name'])]
        left += [n for n in namespaces if cluster.get('v1', 'Namespace', n)]
        if not left:
            return
        time.sleep(0.1)
    raise RuntimeError(f'envtest cleanup: still present after 60 s: {left}')


@pytest.fixture
def kopf_local_cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """`kopf.testing.kopf_local_cluster` (a `LocalCluster` in its own thread), or the shared envtest cluster."""
    with cluster(request) as running:
        yield running


@contextlib.contextmanager
def cluster_cleaned(shared: EnvtestCluster) -> Iterator[EnvtestCluster]:
    try:
        yield shared
    finally:
        clean(shared)
