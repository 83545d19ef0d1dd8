"""The log lines of every outcome, through `kopf run` as a process: word for word as upstream Kopf 1.45.2.

The operator (tests/e2e/operators/log_lines.py) was run by upstream 1.45.2 (its throw-away venv, as a
black box) and by ours, against our local cluster; the lines below are those both printed (with
`--verbose --log-format plain`), except the two marked as ours. The pure table of the same lines is
tests/core/test_outcomes_log_lines.py.
"""
import pathlib
import queue
import re
import signal
import subprocess
import sys
import threading
import time

import kopf

from .conftest import CRD, ROOT

OPERATOR = pathlib.Path(__file__).parent / 'operators' / 'log_lines.py'
OBJ = '[default/kopf-example-1] '

BEFORE_EXIT = [
    OBJ + "Indexer 'idx_ok' succeeded.",
    OBJ + "Indexer 'idx_fail' failed with an exception and will ignore it: index-boom",
    OBJ + "Handler 'ev_ok' is invoked.",
    OBJ + "Handler 'ev_ok' succeeded.",
    OBJ + "Handler 'ev_fail' is invoked.",
    OBJ + "Handler 'ev_fail' failed with an exception and will ignore it: event-boom",
    OBJ + "Handler 'fld_fn/spec.field' is invoked.",
    OBJ + "Handler 'fld_fn/spec.field' succeeded.",
    "Activity 'startup_arbitrary' failed with an exception and will try again in 0.5 seconds: boom in startup",
    "Activity 'startup_arbitrary' is invoked.",
    "Activity 'startup_arbitrary' succeeded.",
    "Activity 'startup_ok' is invoked.",
    "Activity 'startup_ok' succeeded.",
    "Activity 'startup_retry' failed temporarily: not yet",
    "Activity 'startup_retry' is invoked.",
    "Activity 'startup_retry' succeeded.",
    'Starting the watch-stream for customresourcedefinitions.v1.apiextensions.k8s.io cluster-wide.',
    'Starting the watch-stream for kopfexamples.v1.kopf.dev cluster-wide.',
    OBJ + 'Adding the finalizer, thus preventing the actual deletion.',
    OBJ + 'Creation is processed: 4 succeeded; 7 failed.',
    OBJ + "Daemon 'dmn' failed temporarily: daemon-temp",
    OBJ + "Daemon 'dmn' failed with an exception and will try again in 0.5 seconds: daemon-boom",
    OBJ + "Daemon 'dmn' is invoked.",
    OBJ + "Daemon 'dmn_exit' has exited on its own and will not be retried or restarted.",
    OBJ + "Daemon 'dmn_exit' is invoked.",
    OBJ + "Daemon 'dmn_exit' succeeded.",
    OBJ + "Daemon 'dmn_perm' failed permanently: daemon-perm",
    OBJ + "Daemon 'dmn_perm' has exited on its own and will not be retried or restarted.",
    OBJ + "Daemon 'dmn_perm' is invoked.",
    OBJ + "Daemon 'dmn_retries' failed with an exception and will stop now"
    " (it would exceed 2 retries on the next attempt): daemon-always",
    OBJ + "Daemon 'dmn_retries' failed with an exception and will try again in 0.3 seconds: daemon-always",
    OBJ + "Daemon 'dmn_retries' has exited on its own and will not be retried or restarted.",
    OBJ + "Daemon 'dmn_retries' is invoked.",
    OBJ + "Handler 'c_arb_perm' failed with an exception and will stop now: arb-perm-fail",
    OBJ + "Handler 'c_arb_perm' is invoked.",
    OBJ + "Handler 'c_ignored' failed with an exception and will ignore it: ignored-fail",
    OBJ + "Handler 'c_ignored' is invoked.",
    OBJ + "Handler 'c_perm' failed permanently: perm-fail",
    OBJ + "Handler 'c_perm' is invoked.",
    OBJ + "Handler 'c_retries' failed with an exception and will stop now"
    " (it would exceed 3 retries on the next attempt): always fails",
    OBJ + "Handler 'c_retries' failed with an exception and will try again in 0.5 seconds: always fails",
    OBJ + "Handler 'c_retries' is invoked.",
    OBJ + "Handler 'c_sub' has unfinished sub-handlers. Will retry soon.",
    OBJ + "Handler 'c_sub' is invoked.",
    OBJ + "Handler 'c_sub' succeeded.",
    OBJ + "Handler 'c_sub/sub1' is invoked.",
    OBJ + "Handler 'c_sub/sub1' succeeded.",
    OBJ + "Handler 'c_sub/sub2' failed temporarily: sub-temp",
    OBJ + "Handler 'c_sub/sub2' is invoked.",
    OBJ + "Handler 'c_sub/sub2' succeeded.",
    OBJ + "Handler 'c_temp' failed temporarily: temp-fail",
    OBJ + "Handler 'c_temp' is invoked.",
    OBJ + "Handler 'c_temp' succeeded.",
    OBJ + "Handler 'c_temp_exceed' failed temporarily but will exceed 2 retries: temp-always",
    OBJ + "Handler 'c_temp_exceed' failed temporarily: temp-always",
    OBJ + "Handler 'c_temp_exceed' is invoked.",
    OBJ + "Handler 'c_timeout' failed temporarily but will time out after 30 seconds: slow",
    OBJ + "Handler 'c_timeout' is invoked.",
    OBJ + "Handler 'c_timeout_arb' failed with an exception and will stop now"
    " (it would time out in 30 seconds on the next attempt): slow-arb",
    OBJ + "Handler 'c_timeout_arb' is invoked.",
    OBJ + "Handler 'c_unstorable' failed permanently: its result cannot be stored: set",
    OBJ + "Handler 'c_unstorable' is invoked.",
    OBJ + "Timer 'tmr' failed permanently: timer-perm",
    OBJ + "Timer 'tmr' failed temporarily: timer-temp",
    OBJ + "Timer 'tmr' failed with an exception and will try again in 0.3 seconds: timer-boom",
    OBJ + "Timer 'tmr' is invoked.",
]
AT_EXIT = [
    "Activity 'cleanup_fn' is invoked.",
    "Activity 'cleanup_fn' succeeded.",
    'Signal SIGINT is received. Operator is stopping.',
    'Stopping the watch-stream for customresourcedefinitions.v1.apiextensions.k8s.io cluster-wide.',
    'Stopping the watch-stream for kopfexamples.v1.kopf.dev cluster-wide.',
    OBJ + "Daemon 'dmn' has exited gracefully.",
    OBJ + "Daemon 'dmn' has exited on request and will not be retried or restarted.",
    OBJ + "Daemon 'dmn' succeeded.",
    OBJ + "Timer 'tmr' has exited gracefully.",
    'Poster of events is cancelled.',  # the shutdown's debug lines (as upstream 1.45.2 names these tasks)
    'Resource observer is cancelled.',
    'Root tasks are stopped: finishing normally; tasks left: set()',
    'Hung tasks stopping is skipped: no tasks given.',
]
SLEEPING = [  # the values vary: as upstream prints them (seconds to the next due handler, to the microsecond)
    re.compile(re.escape(OBJ) + r'Sleeping was skipped because of the patch, \d+\.\d+ seconds left\.'),
    re.compile(re.escape(OBJ) + r'Sleeping for \d+\.\d+ seconds for the delayed handlers\.'),
]
OURS = [  # upstream: "Handler 'c_unstorable' succeeded." and a retry every second (docs/design/decisions.md #11)
    OBJ + "Handler 'c_unstorable' failed permanently: its result cannot be stored: set",
    OBJ + 'Creation is processed: 4 succeeded; 7 failed.',
]


def test_every_outcome_line_reads_as_upstream() -> None:
    operator = subprocess.Popen(
        [sys.executable, '-m', 'kopf', 'run', '-A', '--standalone', '--verbose', '--log-format', 'plain',
         '--local-cluster', '--apply', str(CRD), '--apply', str(ROOT / 'examples' / 'obj.yaml'), str(OPERATOR)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert operator.stdout is not None
        for line in operator.stdout:
            lines.put(line.rstrip('\n'))
        lines.put(None)
    threading.Thread(target=read, daemon=True).start()
    seen: list[str] = []
    try:
        deadline = time.monotonic() + 120  # a bound for a broken operator only; it takes a few seconds
        def ready() -> bool:  # all lines before the exit; and 'dmn' in its third attempt: waiting for the stop
            return set(BEFORE_EXIT + OURS) <= set(seen) and seen.count(OBJ + "Daemon 'dmn' is invoked.") >= 3

        while not ready() and time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                break
            seen.append(line)
        operator.send_signal(signal.SIGINT)
        while (line := lines.get(timeout=60)) is not None:
            seen.append(line)
        assert operator.wait(timeout=60) == 0
    finally:
        if operator.poll() is None:
            operator.kill()
    missing = [line for line in BEFORE_EXIT + AT_EXIT + OURS if line not in seen]
    assert not missing, '\n'.join(seen)
    assert f'Starting Kopf {kopf.__version__}.' in seen[:3]  # first, after --local-cluster's line (upstream: 1.45.2)
    assert all(any(pattern.fullmatch(line) for line in seen) for pattern in SLEEPING), '\n'.join(seen)
    # never re-run in a loop: one attempt, however long the operator runs
    assert seen.count(OBJ + "Handler 'c_unstorable' is invoked.") == 1
