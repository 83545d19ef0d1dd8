"""An operator with a create handler, a daemon and a timer, each writing a line to $E2E_LOG (for restarts)."""
import os
import time
from typing import Any

import kopf


def note(what: str) -> None:
    with open(os.environ['E2E_LOG'], 'a') as f:
        f.write(f'{what} {os.getpid()} {time.monotonic()}\n')


@kopf.on.create('kopfexamples')
def create_fn(name: str, **_: Any) -> None:
    note(f'create {name}')


@kopf.daemon('kopfexamples')
def daemon_fn(name: str, stopped: kopf.DaemonStopped, **_: Any) -> None:
    note(f'daemon {name}')
    while not stopped.wait(0.1):
        pass


@kopf.timer('kopfexamples', interval=0.2)
def timer_fn(name: str, **_: Any) -> None:
    note(f'timer {name}')
