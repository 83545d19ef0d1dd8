"""Peering end to end: two or three `kopf run --peering` processes (and `kopf freeze`/`resume`) on one cluster.

The operator (`operators/peering.py`) records every create and daemon call with its pid and the
monotonic time (the same clock for all processes of the machine) into one log file; each
process's own output goes to a file of its own, for the peering's log lines.
"""
import datetime
import os
import pathlib
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from kopf.testing import LocalCluster

from .. import backends, waiting
from ..backends import Cluster
from .conftest import CRD, ROOT, example

OPERATOR = pathlib.Path(__file__).parent / 'operators' / 'peering.py'
PEERING_CRDS = ROOT / 'kopf' / 'peering.yaml'
UPSTREAM = ROOT / 'bench' / '.venvs' / 'upstream-1.45.2' / 'bin' / 'kopf'
NAME = 'e2e'
PEERING = {'apiVersion': 'kopf.dev/v1', 'kind': 'ClusterKopfPeering', 'metadata': {'name': NAME}}


def wait_for(check: Any, within: float = 40.0) -> Any:
    return waiting.wait_for(check, within=within, interval=0.05)


@pytest.fixture
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    with backends.cluster(request) as local:
        local.apply(str(CRD))
        local.apply(peering_crds())
        wait_for(lambda: applied(local, PEERING))
        yield local


def peering_crds() -> list[dict[str, Any]]:
    """The CRDs of the shipped manifest, not its `default` objects."""
    return [doc for doc in yaml.safe_load_all(PEERING_CRDS.read_text()) if doc['kind'] == 'CustomResourceDefinition']


def legacy_crds() -> list[dict[str, Any]]:
    """The shipped CRDs in the legacy `zalando.org` group, as old deployments installed them."""
    return [{**crd, 'metadata': {'name': crd['metadata']['name'].replace('kopf.dev', 'zalando.org')},
             'spec': {**crd['spec'], 'group': 'zalando.org'}} for crd in peering_crds()]


def applied(cluster: Cluster, *sources: Any) -> bool:
    """Apply, unless a CRD is not established yet (a real API server): then False, to be tried again."""
    try:
        cluster.apply(*sources)
    except Exception:
        return False
    return True


class Operator:
    """One `kopf run` process with its own output file."""

    def __init__(self, cluster: Cluster, tmp_path: pathlib.Path, *args: str, tag: str,
                 kopf: pathlib.Path | None = None, **env: str) -> None:
        self.output = tmp_path / f'{tag}.out'
        command = [str(kopf), 'run'] if kopf is not None else [sys.executable, '-m', 'kopf', 'run']
        environ = {**os.environ, 'KUBECONFIG': str(cluster.kubeconfig), 'E2E_LOG': str(tmp_path / 'log'), **env}
        environ.pop('POD_ID', None)
        with self.output.open('w') as out:
            where = [] if '-n' in args else ['-A']
            self.proc = subprocess.Popen([*command, *where, '--verbose', *args, str(OPERATOR)], env=environ,
                                         stdout=out, stderr=subprocess.STDOUT, text=True)
        self.pid = str(self.proc.pid)

    def text(self) -> str:
        return self.output.read_text() if self.output.exists() else ''

    def says(self, what: str) -> bool:
        return what in self.text()

    def stop(self, signum: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signum)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise


@pytest.fixture
def operators() -> Iterator[list[Operator]]:
    started: list[Operator] = []
    yield started
    for operator in started:
        if operator.proc.poll() is None:
            operator.proc.kill()
            operator.proc.wait(timeout=30)


def calls(tmp_path: pathlib.Path, what: str) -> list[tuple[str, float]]:
    """(pid, monotonic time) of each recorded call that starts with `what`."""
    log = tmp_path / 'log'
    found = []
    for line in (log.read_text().splitlines() if log.exists() else []):
        *words, pid, moment = line.split()
        if ' '.join(words) == what:
            found.append((pid, float(moment)))
    return found


def entries(cluster: Cluster) -> dict[str, Any]:
    obj = cluster.get('kopf.dev/v1', 'ClusterKopfPeering', NAME) or {}
    return dict(obj.get('status') or {})


def priorities(cluster: Cluster) -> list[int]:
    return sorted(int(entry['priority']) for entry in entries(cluster).values() if isinstance(entry, dict))


def kopf_cli(cluster: Cluster, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, 'KUBECONFIG': str(cluster.kubeconfig)}
    return subprocess.run([sys.executable, '-m', 'kopf', *args], env=env, capture_output=True, text=True,
                          timeout=60, check=True)


def _handled(cluster: Cluster, name: str) -> bool:
    obj = cluster.get('kopf.dev/v1', 'KopfExample', name, 'default') or {}
    return 'kopf.zalando.org/last-handled-configuration' in (obj.get('metadata', {}).get('annotations') or {})


def test_the_higher_priority_acts_and_the_lower_one_takes_over_after_a_sigkill(
        cluster: Cluster, tmp_path: pathlib.Path, operators: list[Operator]) -> None:
    high = Operator(cluster, tmp_path, '--peering', NAME, '--priority', '100', tag='high')
    operators.append(high)
    wait_for(lambda: priorities(cluster) == [100])
    low = Operator(cluster, tmp_path, '--peering', NAME, '--priority', '0', tag='low')
    operators.append(low)
    wait_for(lambda: low.says('Pausing operations in favour of [<Peer '))  # from its first look, maybe before
    wait_for(lambda: priorities(cluster) == [0, 100])                       # its own entry is written

    cluster.apply(example('kex-1'))
    wait_for(lambda: calls(tmp_path, 'create kex-1') and calls(tmp_path, 'daemon kex-1'))
    assert [pid for pid, _ in calls(tmp_path, 'create kex-1')] == [high.pid]
    wait_for(lambda: _handled(cluster, 'kex-1'))  # its outcome stored: a kill before that re-runs it (at least once)

    high.stop(signal.SIGKILL)
    killed = time.monotonic()
    cluster.apply(example('kex-2'))
    wait_for(lambda: calls(tmp_path, 'create kex-2'))
    assert [pid for pid, _ in calls(tmp_path, 'create kex-2')] == [low.pid]
    assert [pid for pid, _ in calls(tmp_path, 'create kex-1')] == [high.pid]  # completed: not re-run
    wait_for(lambda: [pid for pid, at in calls(tmp_path, 'daemon kex-1') if pid == low.pid and at > killed])
    assert low.says('Resuming operations after the pause.')
    wait_for(lambda: priorities(cluster) == [0])  # the dead entry of the killed one is cleaned
    assert low.stop() == 0
    wait_for(lambda: priorities(cluster) == [])   # its own entry is removed on exit
    assert 'Traceback' not in low.text()


def test_freeze_pauses_the_operator_and_resume_or_the_expiry_resumes_it(
        cluster: Cluster, tmp_path: pathlib.Path, operators: list[Operator]) -> None:
    operator = Operator(cluster, tmp_path, '--peering', NAME, tag='operator')
    operators.append(operator)
    wait_for(lambda: priorities(cluster) == [0])
    cluster.apply(example('kex-1'))
    wait_for(lambda: calls(tmp_path, 'daemon kex-1'))

    kopf_cli(cluster, 'freeze', '-A', '-P', NAME, '--lifetime', '10', '--priority', '1000', '-i', 'freezer')
    wait_for(lambda: operator.says("Pausing operations in favour of [<Peer freezer: priority=1000, lifetime=10"))
    wait_for(lambda: calls(tmp_path, 'daemon-stopped kex-1'))  # daemons stop while paused
    cluster.apply(example('kex-2'))
    frozen = entries(cluster)['freezer']
    assert frozen['priority'] == 1000 and frozen['lifetime'] == 10
    before = time.monotonic()
    assert not calls(tmp_path, 'create kex-2')
    kopf_cli(cluster, 'resume', '-A', '-P', NAME, '-i', 'freezer')
    wait_for(lambda: calls(tmp_path, 'create kex-2'))
    assert all(at > before for _, at in calls(tmp_path, 'create kex-2'))  # not while frozen
    wait_for(lambda: len(calls(tmp_path, 'daemon kex-1')) == 2)  # restarted on resuming
    assert 'freezer' not in entries(cluster)

    kopf_cli(cluster, 'freeze', '-A', '-P', NAME, '--lifetime', '2', '--priority', '1000', '-i', 'freezer')
    wait_for(lambda: operator.text().count('Pausing operations in favour of') == 2)
    wait_for(lambda: operator.text().count('Resuming operations after the pause.') == 3)  # start, resume, expiry
    wait_for(lambda: 'freezer' not in entries(cluster))  # the expired entry is cleaned (its patch follows the line)
    assert operator.stop() == 0
    assert [pid for pid, _ in calls(tmp_path, 'create kex-1')] == [operator.pid]


def test_equal_priorities_both_pause_and_exit_cleanly_on_sigterm(
        cluster: Cluster, tmp_path: pathlib.Path, operators: list[Operator]) -> None:
    first = Operator(cluster, tmp_path, '--peering', NAME, tag='first')
    second = Operator(cluster, tmp_path, '--peering', NAME, tag='second')
    operators.extend([first, second])
    for operator in [first, second]:
        wait_for(lambda op=operator: op.says('Possibly conflicting operators with the same priority: [<Peer '))
    cluster.apply(example('kex-1'))
    resumed = second.text().count('Resuming operations after the pause.')  # 0 or 1: at the start, if first
    assert first.stop() == 0  # while paused
    wait_for(lambda: second.text().count('Resuming operations after the pause.') == resumed + 1)  # the other gone
    wait_for(lambda: calls(tmp_path, 'create kex-1'))
    assert [pid for pid, _ in calls(tmp_path, 'create kex-1')] == [second.pid]
    assert second.stop() == 0
    assert 'Traceback' not in first.text() + second.text()


def test_equal_priorities_with_shard_selectors_do_not_pause(
        cluster: Cluster, tmp_path: pathlib.Path, operators: list[Operator]) -> None:
    shard = 'shardRange(object.metadata.uid, "0x0000000000000000", "0xffffffffffffffff")'
    first = Operator(cluster, tmp_path, '--peering', NAME, tag='first', E2E_SHARD=shard)
    second = Operator(cluster, tmp_path, '--peering', NAME, tag='second', E2E_SHARD=shard)
    operators.extend([first, second])
    for operator in [first, second]:
        wait_for(lambda op=operator: op.says('Operators with the same priority share the work'))
    cluster.apply(example('kex-1'))
    wait_for(lambda: calls(tmp_path, 'create kex-1'))
    for operator in [first, second]:
        assert operator.stop() == 0
        assert 'Pausing operations' not in operator.text()
        assert 'Possibly conflicting' not in operator.text()


def test_mandatory_peering_waits_for_its_object_with_a_warning(
        cluster: Cluster, tmp_path: pathlib.Path, operators: list[Operator]) -> None:
    operator = Operator(cluster, tmp_path, '--peering', 'absent', tag='operator')
    operators.append(operator)
    wait_for(lambda: operator.says("The peering object 'absent' cluster-wide is not found"))
    cluster.apply(example('kex-1'))
    assert not calls(tmp_path, 'create kex-1')
    cluster.apply({**PEERING, 'metadata': {'name': 'absent'}})
    wait_for(lambda: calls(tmp_path, 'create kex-1'))
    assert operator.says('Resuming operations after the pause.')
    assert operator.stop() == 0


def test_mandatory_peering_without_its_crds_warns_repeatedly_and_waits_for_them(
        tmp_path: pathlib.Path, operators: list[Operator], request: pytest.FixtureRequest) -> None:
    with backends.cluster(request) as bare:  # no peering CRDs: only the examples' one
        if backends.is_envtest(bare):
            pytest.skip('the shared envtest cluster keeps the peering CRDs of the other tests')
        bare.apply(str(CRD))
        operator = Operator(bare, tmp_path, '--peering', NAME, tag='operator')
        operators.append(operator)
        absent = f"The peering object '{NAME}' cluster-wide is not found (neither KopfPeering nor the legacy"
        wait_for(lambda: operator.text().count(absent) >= 2)  # repeated, every 10 s (ABSENT_RECHECK)
        bare.apply(example('kex-1'))
        assert not calls(tmp_path, 'create kex-1')
        bare.apply(peering_crds())
        wait_for(lambda: applied(bare, PEERING))
        wait_for(lambda: calls(tmp_path, 'create kex-1'))  # at the next look (within 10 s)
        assert operator.says('Resuming operations after the pause.')
        assert operator.stop() == 0
        assert "The peering 'e2e' cluster-wide failed" not in operator.text()  # absent, not an error


def test_auto_mode_joins_the_default_peering_if_it_exists(
        cluster: Cluster, tmp_path: pathlib.Path, operators: list[Operator]) -> None:
    cluster.apply({**PEERING, 'metadata': {'name': 'default'}})
    operator = Operator(cluster, tmp_path, tag='operator')
    operators.append(operator)
    wait_for(lambda: (cluster.get('kopf.dev/v1', 'ClusterKopfPeering', 'default') or {}).get('status'))
    cluster.apply(example('kex-1'))
    wait_for(lambda: calls(tmp_path, 'create kex-1'))
    assert operator.stop() == 0
    assert 'standalone' not in operator.text()


@pytest.mark.parametrize('forbidden, says', [
    (False, 'Default peering object is not found, falling back to the standalone mode.'),
    pytest.param(True, 'The peering objects cannot be read', marks=pytest.mark.emulator_only(
        reason="forbids requests through the emulator's control API")),
])
def test_auto_mode_without_the_default_peering_or_permissions_runs_standalone(
        cluster: Cluster, tmp_path: pathlib.Path, operators: list[Operator], forbidden: bool, says: str) -> None:
    if forbidden:
        cluster.apply({**PEERING, 'metadata': {'name': 'default'}})
        assert isinstance(cluster, LocalCluster)
        cluster.forbid(verb='*', resource='clusterkopfpeerings')
    operator = Operator(cluster, tmp_path, tag='operator')
    operators.append(operator)
    wait_for(lambda: operator.says(says))
    cluster.apply(example('kex-1'))
    wait_for(lambda: calls(tmp_path, 'create kex-1'))
    assert operator.stop() == 0


@pytest.mark.skipif(not UPSTREAM.exists(), reason='upstream kopf is not installed in bench/.venvs')
@pytest.mark.parametrize('upstream_priority, ours_priority', [(100, 0), (0, 100)])
def test_upstream_and_ours_on_one_peering_the_lower_priority_pauses(
        cluster: Cluster, tmp_path: pathlib.Path, operators: list[Operator],
        upstream_priority: int, ours_priority: int) -> None:
    upstream = Operator(cluster, tmp_path, '--peering', NAME, '--priority', str(upstream_priority), tag='upstream',
                        kopf=UPSTREAM)
    operators.append(upstream)
    wait_for(lambda: priorities(cluster) == [upstream_priority])
    ours = Operator(cluster, tmp_path, '--peering', NAME, '--priority', str(ours_priority), tag='ours')
    operators.append(ours)
    low, high = (ours, upstream) if ours_priority < upstream_priority else (upstream, ours)
    wait_for(lambda: low.says('Pausing operations in favour of [<Peer '))
    wait_for(lambda: sorted(priorities(cluster)) == [0, 100])  # the low one's own entry may come just after
    cluster.apply(example('kex-1'))
    wait_for(lambda: calls(tmp_path, 'create kex-1'))
    assert [pid for pid, _ in calls(tmp_path, 'create kex-1')] == [high.pid]
    assert 'Pausing operations' not in high.text()
    for operator in [low, high]:
        assert operator.stop() == 0


def namespaced_peering(namespace: str) -> dict[str, Any]:
    return {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfPeering', 'metadata': {'name': NAME, 'namespace': namespace}}


def test_namespaced_peering_per_served_namespace_found_through_globs(
        cluster: Cluster, tmp_path: pathlib.Path, operators: list[Operator]) -> None:
    for namespace in ['team-a', 'team-b']:
        cluster.apply({'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': namespace}})
    cluster.apply(namespaced_peering('team-a'))
    operator = Operator(cluster, tmp_path, '-n', 'team-*', '--peering', NAME, tag='operator')
    operators.append(operator)
    wait_for(lambda: operator.says(f"The peering object '{NAME}' in 'team-b' is not found"))
    cluster.apply(example('kex-a', namespace='team-a'), example('kex-b', namespace='team-b'))
    wait_for(lambda: calls(tmp_path, 'create kex-a'))
    peering = cluster.get('kopf.dev/v1', 'KopfPeering', NAME, 'team-a') or {}
    assert len(peering.get('status') or {}) == 1  # our entry
    assert not calls(tmp_path, 'create kex-b')    # paused there: no peering object yet
    cluster.apply(namespaced_peering('team-b'))
    wait_for(lambda: calls(tmp_path, 'create kex-b'))
    assert operator.stop() == 0


def test_a_malformed_entry_is_ignored_with_one_warning(
        cluster: Cluster, tmp_path: pathlib.Path, operators: list[Operator]) -> None:
    lastseen = datetime.datetime.now(datetime.UTC).isoformat()
    cluster.apply({**PEERING, 'status': {'broken': 'not a mapping',
                                         'old': {'priority': 1000, 'lifetime': 60, 'lastseen': 'yesterday'},
                                         'negative': {'priority': 1000, 'lifetime': -5, 'lastseen': lastseen}}})
    operator = Operator(cluster, tmp_path, '--peering', NAME, tag='operator')
    operators.append(operator)
    cluster.apply(example('kex-1'))
    wait_for(lambda: calls(tmp_path, 'create kex-1'))  # not paused by the malformed entries
    wait_for(lambda: operator.text().count('Keep-alive in') >= 3)  # ... and the keep-alives look again
    text = operator.text()
    assert text.count("the entry 'broken' is ignored: not a mapping") == 1
    assert text.count("the entry 'old' is ignored: lastseen is not an ISO-8601 time") == 1
    assert text.count("the entry 'negative' is ignored: lifetime is not a non-negative number: -5") == 1
    assert operator.stop() == 0


def test_the_shipped_peering_crds_are_upstreams() -> None:
    import importlib.resources
    shipped = importlib.resources.files('kopf').joinpath('peering.yaml').read_text()
    assert (ROOT / 'docs' / 'peering.yaml').read_text() == shipped
    docs = list(yaml.safe_load_all(shipped))
    crds = {doc['metadata']['name']: doc['spec'] for doc in docs if doc['kind'] == 'CustomResourceDefinition'}
    assert set(crds) == {'clusterkopfpeerings.kopf.dev', 'kopfpeerings.kopf.dev'}
    assert crds['clusterkopfpeerings.kopf.dev']['scope'] == 'Cluster'
    assert crds['kopfpeerings.kopf.dev']['scope'] == 'Namespaced'
    for spec in crds.values():
        assert spec['group'] == 'kopf.dev' and [v['name'] for v in spec['versions']] == ['v1']
        status = spec['versions'][0]['schema']['openAPIV3Schema']['properties']['status']
        assert status == {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True}
        assert 'subresources' not in spec['versions'][0]  # no status subresource: patched as a whole
    defaults = {(doc['kind'], doc['metadata'].get('namespace')) for doc in docs if doc['metadata']['name'] == 'default'}
    assert defaults == {('ClusterKopfPeering', None), ('KopfPeering', 'default')}


def test_the_legacy_zalando_org_peering_is_used_if_the_kopf_dev_one_does_not_exist(
        cluster: Cluster, tmp_path: pathlib.Path, operators: list[Operator]) -> None:
    cluster.apply(legacy_crds())
    obj = {'apiVersion': 'zalando.org/v1', 'kind': 'ClusterKopfPeering', 'metadata': {'name': 'legacy'}}
    wait_for(lambda: applied(cluster, obj))
    operator = Operator(cluster, tmp_path, '--peering', 'legacy', '--priority', '5', tag='operator')
    operators.append(operator)
    wait_for(lambda: (cluster.get('zalando.org/v1', 'ClusterKopfPeering', 'legacy') or {}).get('status'))
    entry, = (cluster.get('zalando.org/v1', 'ClusterKopfPeering', 'legacy') or {})['status'].values()
    assert entry['priority'] == 5 and entry['lifetime'] == 4
    cluster.apply(example('kex-1'))
    wait_for(lambda: calls(tmp_path, 'create kex-1'))
    assert operator.stop() == 0


def test_both_the_kopf_dev_and_the_legacy_peering_are_kept_alive_and_a_peer_in_either_pauses_us(
        cluster: Cluster, tmp_path: pathlib.Path, operators: list[Operator]) -> None:
    # As upstream: with both objects of the name, the operator keeps alive in both and watches both; one
    # merged view of their peers decides (an old operator that knows only zalando.org pauses us too).
    cluster.apply(legacy_crds())
    legacy = {'apiVersion': 'zalando.org/v1', 'kind': 'ClusterKopfPeering', 'metadata': {'name': NAME}}
    wait_for(lambda: applied(cluster, legacy))
    operator = Operator(cluster, tmp_path, '--peering', NAME, '--priority', '5', tag='operator')
    operators.append(operator)

    def legacy_entries() -> dict[str, Any]:
        return dict((cluster.get('zalando.org/v1', 'ClusterKopfPeering', NAME) or {}).get('status') or {})
    wait_for(lambda: priorities(cluster) == [5] and [e.get('priority') for e in legacy_entries().values()] == [5])
    assert set(entries(cluster)) == set(legacy_entries())  # one identity in both

    now = time.time()
    lastseen = time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(now)) + f'.{int(now % 1 * 1e6):06d}+00:00'
    cluster.apply({**legacy, 'status': {'old-operator': {'priority': 100, 'lifetime': 60, 'lastseen': lastseen}}})
    wait_for(lambda: operator.says("Pausing operations in favour of [<Peer old-operator: priority=100"))
    cluster.apply(example('kex-1'))  # paused: handled only after the legacy-only peer is gone
    wait_for(lambda: (cluster.get('kopf.dev/v1', 'KopfExample', 'kex-1', 'default') or {}).get('metadata'))
    removed = time.monotonic()
    cluster.apply({**legacy, 'status': {'old-operator': None}})
    wait_for(lambda: calls(tmp_path, 'create kex-1'))
    [(_, started)] = calls(tmp_path, 'create kex-1')
    assert started >= removed
    assert operator.says('Resuming operations after the pause.')

    assert operator.stop() == 0
    assert not entries(cluster) and 'old-operator' not in legacy_entries() and not legacy_entries()  # both cleaned
    assert 'Traceback' not in operator.text()


@pytest.mark.emulator_only(reason='injects 403s into the legacy group\'s requests')
def test_a_403_on_the_legacy_peerings_counts_as_absent(
        cluster: Cluster, tmp_path: pathlib.Path, operators: list[Operator]) -> None:
    cluster.apply(legacy_crds())
    legacy = {'apiVersion': 'zalando.org/v1', 'kind': 'ClusterKopfPeering', 'metadata': {'name': NAME}}
    wait_for(lambda: applied(cluster, legacy))
    # RBAC that names only kopf.dev (the discovery of /apis/zalando.org/v1 is open to all, as in Kubernetes).
    cluster.fail('*', '/apis/zalando.org/v1/clusterkopfpeerings*', 403, count=None)
    operator = Operator(cluster, tmp_path, '--peering', NAME, '--priority', '5', tag='operator')
    operators.append(operator)
    cluster.apply(example('kex-1'))
    wait_for(lambda: calls(tmp_path, 'create kex-1'))
    wait_for(lambda: operator.text().count("Keep-alive in 'e2e' cluster-wide: ok.") >= 2)  # and it goes on
    assert priorities(cluster) == [5]
    assert operator.stop() == 0
    text = operator.text()
    assert "The peering 'e2e' cluster-wide failed" not in text and 'Traceback' not in text  # no error loop
    assert 'zalando.org/v1/clusterkopfpeerings/e2e failed' not in text  # not retried either: absent at once


@pytest.mark.skipif(not UPSTREAM.exists(), reason='upstream kopf is not installed in bench/.venvs')
def test_upstream_and_ours_keep_alive_in_both_the_kopf_dev_and_the_legacy_peering(
        cluster: Cluster, tmp_path: pathlib.Path, operators: list[Operator]) -> None:
    # What ours does with both objects is what upstream does: an entry in each, for each operator.
    cluster.apply(legacy_crds())
    legacy = {'apiVersion': 'zalando.org/v1', 'kind': 'ClusterKopfPeering', 'metadata': {'name': NAME}}
    wait_for(lambda: applied(cluster, legacy))

    def legacy_priorities() -> list[int]:
        status = (cluster.get('zalando.org/v1', 'ClusterKopfPeering', NAME) or {}).get('status') or {}
        return sorted(int(entry['priority']) for entry in status.values() if isinstance(entry, dict))
    upstream = Operator(cluster, tmp_path, '--peering', NAME, '--priority', '100', tag='upstream', kopf=UPSTREAM)
    operators.append(upstream)
    wait_for(lambda: priorities(cluster) == [100] and legacy_priorities() == [100])
    ours = Operator(cluster, tmp_path, '--peering', NAME, '--priority', '0', tag='ours')
    operators.append(ours)
    wait_for(lambda: ours.says('Pausing operations in favour of [<Peer '))
    wait_for(lambda: priorities(cluster) == [0, 100] and legacy_priorities() == [0, 100])
    for operator in [ours, upstream]:
        assert operator.stop() == 0
