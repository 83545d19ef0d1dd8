"""Replicas of one operator sharing the objects: each handles the objects of the shards it holds.

    kopf run -A --lease example-operator --shards 6 examples/21-shards/example.py   # holds all 6 shards
    kopf run -A --lease example-operator --shards 6 examples/21-shards/example.py   # takes 3 of them over

An object belongs to shard `i` by the 64-bit FNV-1a hash of its uid (as Kubernetes' `shardSelector`);
each shard is a Lease `example-operator-<i>`, held by one replica at a time. A replica that joins
gets its fair share (surplus shards are released once their handlers finished); a dead replica's
shards are taken over once their Leases expire. On a takeover, resume handlers run and daemons and
timers start, as at the operator's start.
"""
import os
from typing import Any

import kopf

REPLICA = os.environ.get('POD_ID', 'this replica')


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.peering.lease.lease_duration = 6   # client-go's defaults: 15 / 10 / 2 s
    settings.peering.lease.renew_deadline = 4
    settings.peering.lease.retry_period = 1


@kopf.on.create('kopfexamples')
def create_fn(name: str, **_: Any) -> dict[str, Any]:
    return {'message': f'{name} is handled by {REPLICA}'}


@kopf.on.resume('kopfexamples')
def resume_fn(name: str, logger: kopf.Logger, **_: Any) -> None:
    logger.info(f'{name} is resumed by {REPLICA} (its shard is ours now)')
