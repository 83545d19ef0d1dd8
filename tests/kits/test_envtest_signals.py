"""EnvtestCluster's SIGTERM/SIGHUP handler, without the binaries: it stops the running clusters, then chains."""
import signal
from typing import Any

import pytest

from kopf._kits import envprocs


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
