"""EnvtestCluster's SIGTERM/SIGHUP handler and its lifeline, without the binaries: the handler stops the running
clusters, then chains; after a SIGKILL, the lifeline stops the processes and removes the directory."""
import os
import pathlib
import signal
import subprocess
import sys
from typing import Any

import pytest

from kopf._kits import envprocs

from ..waiting import wait_for


def test_the_handler_stops_every_running_cluster_then_calls_the_previous_one(monkeypatch: pytest.MonkeyPatch) -> None:
    stopped: list[str] = []
    chained: list[int] = []

    class Finalizer:
        def __init__(self, name: str) -> None:
            self.name = name

        def __call__(self) -> None:
            stopped.append(self.name)

    monkeypatch.setattr(envprocs, 'RUNNING', {Finalizer('a'), Finalizer('b')})
    monkeypatch.setattr(envprocs, 'PREVIOUS', {signal.SIGTERM: lambda signum, frame: chained.append(signum)})
    envprocs._on_stopping_signal(signal.SIGTERM, None)
    assert sorted(stopped) == ['a', 'b'] and chained == [signal.SIGTERM] and not envprocs.RUNNING


def test_handlers_are_installed_once_and_not_over_an_ignored_signal(monkeypatch: pytest.MonkeyPatch) -> None:
    installed: dict[int, Any] = {}
    current = {signal.SIGTERM: signal.SIG_DFL, signal.SIGHUP: signal.SIG_IGN}
    monkeypatch.setattr(envprocs, 'PREVIOUS', {})
    monkeypatch.setattr(signal, 'getsignal', lambda signum: current[signum])
    monkeypatch.setattr(signal, 'signal', lambda signum, handler: installed.setdefault(signum, handler) and
                        current[signum])
    envprocs.install_signal_handlers()
    envprocs.install_signal_handlers()
    assert installed == {signal.SIGTERM: envprocs._on_stopping_signal}
    assert envprocs.PREVIOUS == {signal.SIGTERM: signal.SIG_DFL}


KILLED = '''
import pathlib, sys, time
from kopf._kits import envprocs
directory = pathlib.Path(sys.argv[1])
lifeline = envprocs.Lifeline(directory)
child = envprocs.spawn(['sleep', '300'], None, lifeline)
print(child.pid, flush=True)
time.sleep(300)
'''


def _gone(pid: int) -> bool:
    try:
        state = pathlib.Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0]
    except OSError:
        return True
    return state == 'Z'  # a zombie of its dead parent, reaped by init soon: not running


def test_a_sigkilled_process_leaves_no_cluster_process_nor_directory(tmp_path: pathlib.Path) -> None:
    directory = tmp_path / 'cluster'
    directory.mkdir()
    parent = subprocess.Popen([sys.executable, '-c', KILLED, str(directory)], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    pid = int(parent.stdout.readline())
    assert not _gone(pid)
    parent.kill()  # SIGKILL: no handler, no atexit, no finalizer runs
    parent.wait()
    wait_for(lambda: _gone(pid), within=30)  # else: it outlived its SIGKILLed parent
    wait_for(lambda: not directory.exists(), within=30)


def test_a_disarmed_lifeline_leaves_the_processes_to_us(tmp_path: pathlib.Path) -> None:
    lifeline = envprocs.Lifeline(tmp_path)
    child = envprocs.spawn(['sleep', '300'], None, lifeline)
    try:
        lifeline.disarm()
        assert lifeline.process is None
        assert child.poll() is None and tmp_path.exists()  # `sh` was SIGKILLed in `read`: it did nothing
    finally:
        child.kill()
        child.wait()
    lifeline.disarm()  # idempotent


def test_a_forked_child_neither_stops_the_cluster_nor_removes_its_directory(tmp_path: pathlib.Path) -> None:
    lifeline = envprocs.Lifeline(tmp_path)
    child = envprocs.spawn(['sleep', '300'], None, lifeline)
    try:
        pid = os.fork()
        if pid == 0:  # the child: what its exit (atexit, finalizers) would run
            envprocs.kill_all({'sleep': child}, tmp_path, lifeline)
            os._exit(0)
        os.waitpid(pid, 0)
        assert child.poll() is None and tmp_path.exists() and lifeline.process is not None
    finally:
        envprocs.kill_all({'sleep': child}, tmp_path, lifeline)
    assert child.poll() is not None and not tmp_path.exists()


def test_a_dead_lifeline_does_not_lose_the_process(tmp_path: pathlib.Path) -> None:
    lifeline = envprocs.Lifeline(tmp_path)
    assert lifeline.process is not None
    lifeline.process.kill()
    lifeline.process.wait()
    child = envprocs.spawn(['sleep', '300'], None, lifeline)  # the pipe is broken: still spawned and returned
    envprocs.kill_all({'sleep': child}, tmp_path, lifeline)
    assert child.poll() is not None
