"""Both backends at once: one LocalCluster of the suite's own and the run's shared EnvtestCluster.

Without `--backend=envtest` the whole directory is skipped (one line): it needs the real server.
"""
import json
import os
import pathlib
import ssl
import time
from collections.abc import Iterator

import pytest

from kopf._kits.envtest import free_port
from kopf.testing import EnvtestCluster, LocalCluster

from ... import backends
from ...backends import Cluster
from ..conftest import Http
from . import steps, steps_cel
from .harness import Backend, Tally
from .webhook import NAMESPACE, Webhook

TALLIES: dict[str, Tally] = {}


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not TALLIES:
        return
    write = terminalreporter.write_line
    write('differential fidelity: category  compared  exact  known  failures  (messages differing)')
    for name, t in TALLIES.items():
        write(f'  {name:<14} {t.compared:>8} {t.exact:>6} {t.known:>6} {len(t.failures):>9}  ({len(t.messages)})')
    total = [sum(getattr(t, k) for t in TALLIES.values()) for k in ('compared', 'exact', 'known')]
    failures = sum(len(t.failures) for t in TALLIES.values())
    messages = sum(len(t.messages) for t in TALLIES.values())
    write(f'  {"total":<14} {total[0]:>8} {total[1]:>6} {total[2]:>6} {failures:>9}  ({messages})')
    write('differential bytes: category  compared  equal  known  failures  (answers equal in value, not picked)')
    for name, t in TALLIES.items():
        write(f'  {name:<14} {t.bytewise:>8} {t.bytes_equal:>6} {t.bytes_known:>6} {len(t.bytes_failures):>9}')
    total = [sum(getattr(t, k) for t in TALLIES.values()) for k in ('bytewise', 'bytes_equal', 'bytes_known')]
    write(f'  {"total":<14} {total[0]:>8} {total[1]:>6} {total[2]:>6} '
          f'{sum(len(t.bytes_failures) for t in TALLIES.values()):>9}')
    for name, t in TALLIES.items():
        for line in t.messages:
            write(f'  message differs [{name}] {line}')
        for line in t.bytes_failures:
            write(f'  bytes differ [{name}] {line}')
    if os.environ.get('KOPF_DIFFERENTIAL_DETAILS'):  # both answers of every failure, for a closer look
        details = {name: t.details for name, t in TALLIES.items() if t.details}
        pathlib.Path(os.environ['KOPF_DIFFERENTIAL_DETAILS']).write_text(json.dumps(details, indent=1))


@pytest.fixture(scope='module')
def emulator() -> Iterator[LocalCluster]:
    with LocalCluster() as local:
        local.apply(steps.CRD)
        yield local


@pytest.fixture(scope='module')
def envtest(envtest_cluster: Cluster) -> Iterator[Cluster]:
    with backends.cluster_cleaned(envtest_cluster) as shared:  # type: ignore[arg-type]
        shared.apply(steps.CRD)
        yield shared


@pytest.fixture(scope='module')
def pair(emulator: LocalCluster, envtest: Cluster) -> tuple[Backend, Backend]:
    local = Backend('emulator', Http(emulator.url), {})
    real = Backend('envtest', Http(envtest.url, envtest.ssl_context), {})  # type: ignore[union-attr]
    return local, real


@pytest.fixture(scope='module')
def ruled(emulator: LocalCluster, envtest: Cluster, pair: tuple[Backend, Backend]) -> tuple[Backend, Backend]:
    """Both backends with the CEL category's CRD (its rules compiled by each)."""
    emulator.apply(steps_cel.RULED_CRD)
    envtest.apply(steps_cel.RULED_CRD)
    return pair


@pytest.fixture(scope='module')
def policed(emulator: LocalCluster, envtest: Cluster,
            pair: tuple[Backend, Backend]) -> Iterator[tuple[Backend, Backend]]:
    """Both backends with the CEL category's admission policies and bindings, once a real server applies them."""
    for cluster in (emulator, envtest):
        cluster.apply(steps_cel.NAMESPACE, steps_cel.PARAMS, *steps_cel.POLICIES)
    probe = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'forbidden-probe'}}
    path = f'/api/v1/namespaces/{steps_cel.VAP_NS}/configmaps?dryRun=All'
    for side in pair:
        deadline = time.monotonic() + 60   # a real server takes its policies in a while
        over = {**probe, 'metadata': {'name': 'probe'}, 'data': {'limit': '9'}}   # denied by one policy only
        while side.http.request('POST', path, probe)[0] != 403 or side.http.request('POST', path, over)[0] != 422:
            assert time.monotonic() < deadline, f'{side.name}: the policies do not act in 60 s'
            time.sleep(0.5)
    yield pair
    for side in pair:
        for obj in steps_cel.POLICIES:
            plural = 'validatingadmissionpolicybindings' if obj['kind'].endswith('Binding') else \
                'validatingadmissionpolicies'
            side.http.request('DELETE', f'{steps_cel.ADMISSION}/{plural}/{obj["metadata"]["name"]}')


@pytest.fixture(scope='module')
def sharding_pair(sharding_envtest: EnvtestCluster) -> Iterator[tuple[Backend, Backend]]:
    """The emulator (shardSelector= served by default) and kube-apiserver 1.37.2 with ShardedListAndWatch."""
    with LocalCluster() as local:
        for cluster in (local, sharding_envtest):
            cluster.apply(steps.CRD)
        yield (Backend('emulator', Http(local.url), {}),
               Backend('envtest', Http(sharding_envtest.url, sharding_envtest.ssl_context), {}))


@pytest.fixture(scope='module')
def expiring(emulator: LocalCluster, envtest: Cluster) -> Iterator[tuple[Backend, Backend]]:
    """The emulator and a kube-apiserver without its watch cache: a compaction of etcd is seen by watches."""
    with EnvtestCluster(controller_manager=False, apiserver_flags=['--watch-cache=false']) as nocache:
        local = Http(emulator.url)
        real = Http(nocache.url, nocache.ssl_context)
        yield (Backend('emulator', local, {'compact': lambda saved: local.request(
                   'POST', '/_emulator/history/compact', {'keep': 0})[0] == 200}),
               Backend('envtest', real, {'compact': lambda saved: nocache.compact_history(saved['new']) > 0}))


@pytest.fixture(scope='module')
def admitting(emulator: LocalCluster, envtest: Cluster) -> Iterator[tuple[Backend, Backend]]:
    """Both backends with the same webhooks configured (each calling its own path), once they call them."""
    with Webhook() as hook:
        pair = []
        for name, cluster in (('emulator', emulator), ('envtest', envtest)):
            http = Http(cluster.url, cluster.ssl_context if backends.is_envtest(cluster) else None)
            cluster.apply(*hook.configurations(name, free_port()), {
                'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': NAMESPACE, 'labels': {'admit': 'yes'}}})
            probe = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'probe'}}
            path = f'/api/v1/namespaces/{NAMESPACE}/configmaps?dryRun=All'
            deadline = time.monotonic() + 60  # a real server takes its webhook configurations in a while
            while 'mutated' not in ((http.request('POST', path, probe)[2] or {}).get('metadata') or {}).get(
                    'labels', {}):
                assert time.monotonic() < deadline, f'{name}: the webhooks are not called in 60 s'
                time.sleep(0.2)
            hook.take(name)
            pair.append(Backend(name, http, {'reviews': lambda saved, name=name: hook.take(name)}))
        yield pair[0], pair[1]
        for side in pair:
            for kind, name in (('mutating', 'diff-mutate'), ('validating', 'diff-validate')):
                side.http.request('DELETE', f'/apis/admissionregistration.k8s.io/v1/{kind}webhookconfigurations/{name}')


@pytest.fixture(scope='module')
def authorizing(emulator: LocalCluster, envtest: Cluster) -> Iterator[tuple[Backend, Backend]]:
    """Both backends, and for envtest also a connection without the admin's certificate (for bearer tokens)."""
    assert isinstance(envtest, EnvtestCluster)
    bare = Http(envtest.url, ssl.create_default_context(cafile=str(envtest.pki / 'ca.crt')))
    real = Http(envtest.url, envtest.ssl_context)
    yield Backend('emulator', Http(emulator.url), {}), Backend('envtest', real, {}, bare=bare)
    for plural, name in CLUSTER_SCOPED:   # what the RBAC category leaves outside its namespace
        real.request('DELETE', f'/apis/rbac.authorization.k8s.io/v1/{plural}/{name}')


CLUSTER_SCOPED = [('clusterroles', name) for name in ('diff-secrets-lister', 'diff-agg', 'diff-agg-part',
                                                      'diff-to-view', 'diff-impersonator')] + \
                 [('clusterrolebindings', name) for name in ('diff-auditors', 'diff-robot-impersonates')]


def tally(name: str) -> Tally:
    return TALLIES.setdefault(name, Tally())
