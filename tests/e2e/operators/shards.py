"""An operator for the sharding end-to-end tests (run as `kopf run --lease NAME --shards N` in a subprocess).

Every handler and timer call records `start`/`end` lines with what it is, the object's name, the
replica's tag ($POD_ID), the pid and the monotonic time (one clock for all processes of the
machine) into E2E_LOG, so that a test can check that no object is handled by two replicas at
overlapping times. Env: E2E_LOG, E2E_DURATIONS ("lease_duration,renew_deadline,retry_period").
Objects whose name ends with `-t` get a timer (every 0.5 s).
"""
import asyncio
import os
import time
from typing import Any

import kopf

TAG = os.environ.get('POD_ID', '?')


def note(what: str, kind: str, name: str) -> None:
    with open(os.environ['E2E_LOG'], 'a') as f:
        f.write(f'{what} {kind} {name} {TAG} {os.getpid()} {time.monotonic()}\n')


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    duration, deadline, retry = (float(s) for s in os.environ.get('E2E_DURATIONS', '3,2,0.5').split(','))
    settings.peering.lease.lease_duration = duration
    settings.peering.lease.renew_deadline = deadline
    settings.peering.lease.retry_period = retry
    settings.watching.reconnect_backoff = 0.1
    settings.posting.enabled = False  # fewer requests: 4 processes share 2 cores


async def recorded(kind: str, name: str, seconds: float) -> None:
    note('start', kind, name)
    try:
        await asyncio.sleep(seconds)
    finally:
        note('end', kind, name)  # also when cancelled (its shard's Lease lost)


@kopf.on.create('kopfexamples')
async def create_fn(name: str, **_: Any) -> dict[str, Any]:
    await recorded('create', name, 0.05)
    return {'by': TAG}


@kopf.on.resume('kopfexamples')
async def resume_fn(name: str, **_: Any) -> None:
    await recorded('resume', name, 0.01)


@kopf.timer('kopfexamples', interval=0.5, when=lambda name, **_: name.endswith('-t'))
async def timer_fn(name: str, **_: Any) -> None:
    await recorded('timer', name, 0.02)
