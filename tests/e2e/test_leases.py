"""Leader election on Leases end to end: three `kopf run --lease` processes on one cluster.

The operator (`operators/leases.py`) records the start and end of every handler call with its pid
and the monotonic time into one log file; the tests check that one replica acts at a time, that
the calls never overlap, and how fast another replica takes over (SIGKILL, clean exit, faults).
"""
import itertools
import os
import pathlib
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from .. import backends, waiting
from ..backends import Cluster
from .conftest import CRD, example

OPERATOR = pathlib.Path(__file__).parent / 'operators' / 'leases.py'
LEASE = 'e2e-lease'
DURATION, DEADLINE, RETRY = 3.0, 2.0, 0.5


def wait_for(check: Any, within: float = 40.0) -> Any:
    return waiting.wait_for(check, within=within, interval=0.02)


@pytest.fixture
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    with backends.cluster(request) as local:
        local.apply(str(CRD))
        yield local


class Replica:
    """One `kopf run --lease` process with its own output file and identity (`$POD_ID`)."""

    def __init__(self, cluster: Cluster, tmp_path: pathlib.Path, tag: str) -> None:
        self.tag = tag
        self.output = tmp_path / f'{tag}.out'
        env = {**os.environ, 'KUBECONFIG': str(cluster.kubeconfig), 'E2E_LOG': str(tmp_path / 'log'),
               'E2E_DURATIONS': f'{DURATION},{DEADLINE},{RETRY}', 'POD_ID': tag}
        with self.output.open('w') as out:
            self.proc = subprocess.Popen(
                [sys.executable, '-m', 'kopf', 'run', '-A', '--verbose', '--lease', LEASE,
                 '--lease-namespace', 'default', str(OPERATOR)],
                env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
        self.pid = str(self.proc.pid)

    def text(self) -> str:
        return self.output.read_text() if self.output.exists() else ''

    def stop(self, signum: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signum)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise


@pytest.fixture
def replicas(cluster: Cluster, tmp_path: pathlib.Path) -> Iterator[list[Replica]]:
    started = [Replica(cluster, tmp_path, tag) for tag in ('r1', 'r2', 'r3')]
    yield started
    for replica in started:
        if replica.proc.poll() is None:
            replica.proc.kill()
            replica.proc.wait(timeout=30)


def holder(cluster: Cluster) -> str | None:
    lease = cluster.get('coordination.k8s.io/v1', 'Lease', LEASE, namespace='default') or {}
    return (lease.get('spec') or {}).get('holderIdentity') or None


def calls(tmp_path: pathlib.Path) -> list[tuple[str, str, float, float]]:
    """(name, pid, start, end) of each handler call; end is infinite if it has not ended (yet)."""
    log = tmp_path / 'log'
    starts: dict[tuple[str, str], float] = {}
    found: list[tuple[str, str, float, float]] = []
    for line in (log.read_text().splitlines() if log.exists() else []):
        what, name, pid, moment = line.split()
        if what == 'start':
            starts[(name, pid)] = float(moment)
        elif (name, pid) in starts:
            found.append((name, pid, starts.pop((name, pid)), float(moment)))
    found.extend((name, pid, start, float('inf')) for (name, pid), start in starts.items())
    return sorted(found, key=lambda call: call[2])


def assert_no_overlap(tmp_path: pathlib.Path) -> None:
    found = calls(tmp_path)
    for earlier, later in itertools.combinations(found, 2):  # sorted by start
        if earlier[1] != later[1]:  # calls of one replica may overlap (different objects); of two: never
            assert earlier[3] <= later[2], f'overlapping calls: {earlier} and {later}'


def created_by(tmp_path: pathlib.Path, name: str) -> list[str]:
    return [pid for n, pid, _, end in calls(tmp_path) if n == name and end != float('inf')]


def handled(cluster: Cluster, name: str) -> bool:
    """The handler's completion is stored in the object (its result in the status): it never runs again."""
    obj = cluster.get('kopf.dev/v1', 'KopfExample', name, namespace='default') or {}
    return bool((obj.get('status') or {}).get('create_fn'))


def acting(replicas: list[Replica], cluster: Cluster) -> Replica:
    tag = wait_for(lambda: holder(cluster))
    return next(replica for replica in replicas if replica.tag == tag)


def test_one_acts_a_sigkill_and_a_clean_exit_hand_over(
        cluster: Cluster, tmp_path: pathlib.Path, replicas: list[Replica]) -> None:
    first = acting(replicas, cluster)
    wait_for(lambda: 'Resuming operations: the lease' in first.text())
    for i in range(3):
        cluster.apply(example(f'kex-a{i}'))
    wait_for(lambda: all(handled(cluster, f'kex-a{i}') for i in range(3)))
    assert {pid for i in range(3) for pid in created_by(tmp_path, f'kex-a{i}')} == {first.pid}

    first.stop(signal.SIGKILL)
    killed = time.monotonic()
    second = wait_for(lambda: holder(cluster) not in (None, first.tag) and acting(replicas, cluster))
    took = time.monotonic() - killed
    print(f'takeover after SIGKILL: {took:.2f} s')
    assert took < DURATION + RETRY + 2
    cluster.apply(example('kex-b'))
    wait_for(lambda: created_by(tmp_path, 'kex-b'))
    assert created_by(tmp_path, 'kex-b') == [second.pid]

    signalled = time.monotonic()
    assert second.stop() == 0  # a clean exit releases the Lease: the third one acquires it at once
    exited = time.monotonic()
    third = wait_for(lambda: holder(cluster) not in (None, first.tag, second.tag) and acting(replicas, cluster))
    handover = time.monotonic() - exited
    print(f'handover after a clean exit: {handover:.2f} s after the exit, {time.monotonic() - signalled:.2f} s '
          f'after SIGTERM')
    assert handover < 1.0  # the lease watch sees the release (not the next retry period, nor the expiry)
    cluster.apply(example('kex-c'))
    wait_for(lambda: created_by(tmp_path, 'kex-c'))
    assert created_by(tmp_path, 'kex-c') == [third.pid]

    assert_no_overlap(tmp_path)
    for i in range(3):  # completed handlers never re-run
        assert created_by(tmp_path, f'kex-a{i}') == [first.pid]
    assert 'released' in second.text()
    assert 'Traceback' not in second.text() + third.text()


@pytest.mark.emulator_only(reason='injects faults into one replica\'s requests')
def test_a_replica_whose_lease_requests_fail_pauses_before_its_lease_expires(
        cluster: Cluster, tmp_path: pathlib.Path, replicas: list[Replica]) -> None:
    first = acting(replicas, cluster)
    wait_for(lambda: 'Resuming operations: the lease' in first.text())
    cluster.apply(example('kex-1'))
    wait_for(lambda: handled(cluster, 'kex-1'))

    cluster.fail('*', '/apis/coordination.k8s.io/*', 500, count=None, agent=f'kopf/* ({first.tag})')
    wait_for(lambda: 'Pausing operations: the lease' in first.text())
    other = wait_for(lambda: holder(cluster) not in (None, first.tag) and acting(replicas, cluster))
    cluster.apply(example('kex-2'))
    wait_for(lambda: created_by(tmp_path, 'kex-2'))
    assert created_by(tmp_path, 'kex-2') == [other.pid]

    cluster.clear_faults()
    assert other.stop() == 0  # the faulty one is healthy again: it may reacquire now
    wait_for(lambda: holder(cluster) is not None and holder(cluster) != other.tag)
    cluster.apply(example('kex-3'))
    wait_for(lambda: created_by(tmp_path, 'kex-3'))
    assert_no_overlap(tmp_path)
    assert created_by(tmp_path, 'kex-1') == [first.pid]


def started_by(tmp_path: pathlib.Path, name: str) -> list[str]:
    return [pid for n, pid, _, _ in calls(tmp_path) if n == name]


@pytest.mark.emulator_only(reason='injects faults into one replica\'s requests')
def test_a_lost_lease_cancels_async_handlers_and_exits_with_a_sync_one_still_running(
        cluster: Cluster, tmp_path: pathlib.Path, replicas: list[Replica]) -> None:
    first = acting(replicas, cluster)
    wait_for(lambda: 'Resuming operations: the lease' in first.text())
    cluster.apply(example('async-slow-1'))
    cluster.apply(example('sync-slow-1'))
    wait_for(lambda: started_by(tmp_path, 'async-slow-1') and started_by(tmp_path, 'sync-slow-1'))

    cluster.fail('*', '/apis/coordination.k8s.io/*', 500, count=None, agent=f'kopf/* ({first.tag})')
    wait_for(lambda: created_by(tmp_path, 'async-slow-1'))  # cancelled at the renew deadline
    wait_for(lambda: first.proc.poll() is not None)  # the sync one cannot be: the process exits at the expiry
    assert 'still run; exiting, so that no two replicas act at once' in first.text()
    cluster.clear_faults()
    wait_for(lambda: len(started_by(tmp_path, 'async-slow-1')) == 2 and len(started_by(tmp_path, 'sync-slow-1')) == 2)
    assert started_by(tmp_path, 'async-slow-1')[0] == first.pid and started_by(tmp_path, 'sync-slow-1')[0] == first.pid
    [cancelled] = [call for call in calls(tmp_path) if call[0] == 'async-slow-1' and call[1] == first.pid]
    [rerun] = [call for call in calls(tmp_path) if call[0] == 'async-slow-1' and call[1] != first.pid]
    assert cancelled[3] <= rerun[2]  # the cancelled call ended before the next holder's began
