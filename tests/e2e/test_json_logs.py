"""`kopf run --log-format=json` lines are field for field those of upstream Kopf 1.45.2 (modulo timestamps).

The same operator runs as a process against the cluster; the lines of its handler (its own logs with
`extra=` fields, each severity, a traceback, a plain logger) and of the framework about it are
compared with upstream's lines, recorded below from a run of upstream 1.45.2 (its throw-away venv,
as a black box) on this very operator; where that venv is present, upstream runs live too. At the
default level, every line of the run (from the start to the exit on SIGINT) is compared; with `-v`,
the handler's and the framework's lines about it (the debug lines of the internals differ).
"""
import json
import pathlib
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from .. import backends
from ..backends import Cluster
from ..waiting import wait_for
from .conftest import CRD, ROOT, example

UPSTREAM = ROOT / 'bench' / '.venvs' / 'upstream-1.45.2' / 'bin' / 'kopf'
TIMESTAMP = re.compile(r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$')

OPERATOR = '''
import logging
import kopf

@kopf.on.create('kopfexamples')
def create_fn(spec, logger, **_):
    logger.info('Hello from the handler', extra={'custom': 'field', 'number': 42})
    logger.debug('A debug line')
    logger.warning('A warning')
    logger.error('An error %s', 'arg')
    logger.critical('A critical one')
    try:
        raise ValueError('boom')
    except ValueError:
        logger.exception('An exception')
    logging.getLogger('plain').info('A plain logger line', extra={'x': [1, 2]})
    logging.getLogger('plain').warning('A plain warning')
    return {'message': 'hello world'}
'''

REF = {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'name': 'kopf-example-1', 'uid': 'UID',
       'namespace': 'default'}
TRACEBACK = ('Traceback (most recent call last):\n  File "PATH", line 13, in create_fn\n'
             "    raise ValueError('boom')\nValueError: boom")
# Upstream 1.45.2's lines for this operator (`--log-refkey=k8s -v`), timestamps as TS, the uid as UID.
UPSTREAM_LINES: list[dict[str, Any]] = [
    {'message': 'Hello from the handler', 'custom': 'field', 'number': 42, 'timestamp': 'TS', 'k8s': REF,
     'severity': 'info'},
    {'message': 'A debug line', 'timestamp': 'TS', 'k8s': REF, 'severity': 'debug'},
    {'message': 'A warning', 'timestamp': 'TS', 'k8s': REF, 'severity': 'warn'},
    {'message': 'An error arg', 'timestamp': 'TS', 'k8s': REF, 'severity': 'error'},
    {'message': 'A critical one', 'timestamp': 'TS', 'k8s': REF, 'severity': 'fatal'},
    {'message': 'An exception', 'exc_info': TRACEBACK, 'timestamp': 'TS', 'k8s': REF, 'severity': 'error'},
    {'message': 'A plain logger line', 'x': [1, 2], 'timestamp': 'TS', 'severity': 'info'},
    {'message': 'A plain warning', 'timestamp': 'TS', 'severity': 'warn'},
    {'message': "Handler 'create_fn' succeeded.", 'timestamp': 'TS', 'k8s': REF, 'severity': 'info'},
    {'message': 'Creation is processed: 1 succeeded; 0 failed.', 'timestamp': 'TS', 'k8s': REF, 'severity': 'info'},
]
COMPARED = {line['message'] for line in UPSTREAM_LINES}
# Every line of upstream's run at the default level (no `-v`): the start, the handler's, the exit.
UPSTREAM_RUN: list[dict[str, Any]] = [
    {'message': 'Initial authentication has been initiated.', 'timestamp': 'TS', 'severity': 'info'},
    {'message': "Activity 'login_with_kubeconfig' succeeded.", 'timestamp': 'TS', 'severity': 'info'},
    {'message': 'Initial authentication has finished.', 'timestamp': 'TS', 'severity': 'info'},
    *[line for line in UPSTREAM_LINES if line['severity'] != 'debug'],
    {'message': 'Signal SIGINT is received. Operator is stopping.', 'timestamp': 'TS', 'severity': 'info'},
]


def run_operator(kopf: list[str], cluster: Cluster, tmp_path: pathlib.Path, *, verbose: bool = True) -> list[str]:
    """Run the operator as a process until the object is processed; its stderr lines."""
    path = tmp_path / 'operator.py'
    path.write_text(OPERATOR)
    log = tmp_path / 'stderr.log'
    env = {'KUBECONFIG': str(cluster.kubeconfig), 'PATH': '/usr/bin:/bin'}
    with open(log, 'wb') as stderr:
        process = subprocess.Popen([*kopf, 'run', '--standalone', '-A', *(['-v'] if verbose else []),
                                    '--log-format=json', '--log-refkey=k8s', str(path)],
                                   stderr=stderr, stdout=stderr, env=env)
    try:
        # Watching (a debug line) or, at the default level, logged in (the object is listed or watched then).
        started = 'watch-stream for kopfexamples' if verbose else 'Initial authentication has finished.'
        wait_for(lambda: started in log.read_text(), within=60)
        cluster.apply(example(field='value'))
        wait_for(lambda: 'Creation is processed' in log.read_text(), within=60)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    return log.read_text().splitlines()


def normalized(lines: list[str], path: pathlib.Path, *, every: bool = False) -> list[dict[str, Any]]:
    result = []
    for line in lines:
        record = json.loads(line)  # every line is one JSON object
        if not every and record['message'] not in COMPARED:
            continue
        assert TIMESTAMP.match(record['timestamp']), record
        record['timestamp'] = 'TS'
        if 'k8s' in record:
            record['k8s']['uid'] = 'UID'
        if 'exc_info' in record:
            record['exc_info'] = record['exc_info'].replace(str(path), 'PATH')
        result.append(record)
    return result


@pytest.fixture
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:  # in its own thread: reachable by a process
    with backends.cluster(request) as running:
        running.apply(str(CRD))
        yield running


def test_our_json_lines_are_upstreams(cluster: Cluster, tmp_path: pathlib.Path) -> None:
    lines = run_operator([sys.executable, '-m', 'kopf'], cluster, tmp_path)
    assert normalized(lines, tmp_path / 'operator.py') == UPSTREAM_LINES


@pytest.mark.skipif(not UPSTREAM.exists(), reason='no throw-away venv of upstream Kopf 1.45.2 (bench/.venvs)')
def test_upstream_still_writes_the_recorded_lines(cluster: Cluster, tmp_path: pathlib.Path) -> None:
    lines = run_operator([str(UPSTREAM)], cluster, tmp_path)
    assert normalized(lines, tmp_path / 'operator.py') == UPSTREAM_LINES


def test_every_line_at_the_default_level_is_upstreams(cluster: Cluster, tmp_path: pathlib.Path) -> None:
    lines = run_operator([sys.executable, '-m', 'kopf'], cluster, tmp_path, verbose=False)
    assert normalized(lines, tmp_path / 'operator.py', every=True) == UPSTREAM_RUN


@pytest.mark.skipif(not UPSTREAM.exists(), reason='no throw-away venv of upstream Kopf 1.45.2 (bench/.venvs)')
def test_upstream_still_writes_the_recorded_run(cluster: Cluster, tmp_path: pathlib.Path) -> None:
    lines = run_operator([str(UPSTREAM)], cluster, tmp_path, verbose=False)
    assert normalized(lines, tmp_path / 'operator.py', every=True) == UPSTREAM_RUN
