"""An operator for the Lease end-to-end tests (run as `kopf run --lease NAME` in a subprocess).

Every handler call records `start`/`end` lines with the name, the pid and the monotonic time (one
clock for all processes of the machine) into E2E_LOG, so that a test can check that no two calls
overlap. Env: E2E_LOG, E2E_DURATIONS ("lease_duration,renew_deadline,retry_period", seconds).
Objects named `async-slow-*` / `sync-slow-*` get a handler that takes a minute (async / sync).
"""
import asyncio
import os
import time
from typing import Any

import kopf


def note(what: str, name: str) -> None:
    with open(os.environ['E2E_LOG'], 'a') as f:
        f.write(f'{what} {name} {os.getpid()} {time.monotonic()}\n')


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    duration, deadline, retry = (float(s) for s in os.environ.get('E2E_DURATIONS', '3,2,0.5').split(','))
    settings.peering.lease.lease_duration = duration
    settings.peering.lease.renew_deadline = deadline
    settings.peering.lease.retry_period = retry
    settings.watching.reconnect_backoff = 0.1


def quick(name: str, **_: Any) -> bool:
    return '-slow-' not in name


@kopf.on.create('kopfexamples', when=quick)
async def create_fn(name: str, **_: Any) -> dict[str, Any]:
    note('start', name)
    await asyncio.sleep(0.2)
    note('end', name)
    return {'pid': os.getpid()}


@kopf.on.create('kopfexamples', when=lambda name, **_: name.startswith('async-slow-'))
async def async_slow_fn(name: str, **_: Any) -> None:
    note('start', name)
    try:
        await asyncio.sleep(60)
    finally:
        note('end', name)  # also when cancelled


@kopf.on.create('kopfexamples', when=lambda name, **_: name.startswith('sync-slow-'))
def sync_slow_fn(name: str, **_: Any) -> None:
    note('start', name)
    time.sleep(60)
    note('end', name)
