"""An operator for the peering end-to-end tests (run as `kopf run --peering ...` in a subprocess,
by ours and by upstream's kopf alike: it uses only the public API).

Env: E2E_LOG (the file to record calls to), E2E_LIFETIME (settings.peering.lifetime, seconds),
E2E_SHARD (if set: a shard selector for the examples, so that equal priorities do not pause).
"""
import os
import time
from typing import Any

import kopf


def note(what: str) -> None:
    with open(os.environ['E2E_LOG'], 'a') as f:
        f.write(f'{what} {os.getpid()} {time.monotonic()}\n')


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.peering.lifetime = int(os.environ.get('E2E_LIFETIME', '4'))
    settings.watching.reconnect_backoff = 0.1
    if os.environ.get('E2E_SHARD'):
        settings.watching.shard_selectors['kopfexamples'] = os.environ['E2E_SHARD']


@kopf.on.create('kopfexamples')
def create_fn(name: str, **_: Any) -> dict[str, Any]:
    note(f'create {name}')
    return {'pid': os.getpid()}


@kopf.daemon('kopfexamples')
def daemon_fn(name: str, stopped: kopf.DaemonStopped, **_: Any) -> None:
    note(f'daemon {name}')
    while not stopped.wait(0.1):
        pass
    note(f'daemon-stopped {name}')
