"""Daemons and timers of existing objects run again after the operator is SIGKILLed and restarted;
the create handler does not (`kopf run` subprocesses against one local cluster in a thread)."""
import os
import pathlib
import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from kopf.testing import LocalCluster

from .. import waiting
from .conftest import CRD, example

OPERATOR = pathlib.Path(__file__).parent / 'operators' / 'background.py'


@pytest.fixture
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster() as local:
        local.apply(str(CRD))
        yield local


def lines(log: pathlib.Path, what: str) -> list[str]:
    return [line for line in (log.read_text().splitlines() if log.exists() else []) if line.startswith(what)]


def start(cluster: LocalCluster, log: pathlib.Path) -> subprocess.Popen[str]:
    env = {**os.environ, 'KUBECONFIG': str(cluster.kubeconfig), 'E2E_LOG': str(log)}
    return subprocess.Popen([sys.executable, '-m', 'kopf', 'run', '-A', '--standalone', str(OPERATOR)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)


def test_daemons_and_timers_run_again_after_a_sigkill_and_no_create_reruns(
        cluster: LocalCluster, tmp_path: pathlib.Path) -> None:
    log = tmp_path / 'log'
    first = start(cluster, log)
    try:
        cluster.apply(example())
        waiting.wait_for(lambda: lines(log, 'daemon kopf-example-1') and len(lines(log, 'timer kopf-example-1')) >= 2)
        assert len(lines(log, 'create kopf-example-1')) == 1
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=20)
    obj = cluster.get('kopf.dev/v1', 'KopfExample', 'kopf-example-1', 'default')
    assert obj is not None and 'kopf.zalando.org/KopfFinalizerMarker' in obj['metadata']['finalizers']

    second = start(cluster, log)
    try:
        pid = str(second.pid)
        waiting.wait_for(lambda: [line for line in lines(log, 'daemon kopf-example-1') if f' {pid} ' in line])
        waiting.wait_for(lambda: [line for line in lines(log, 'timer kopf-example-1') if f' {pid} ' in line])
        assert len(lines(log, 'create kopf-example-1')) == 1  # resumed, not created again
    finally:
        second.send_signal(signal.SIGTERM)
        assert second.wait(timeout=30) == 0
