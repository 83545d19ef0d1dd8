"""Replicas of one operator with leader election on a Lease: only the Lease's holder handles objects.

    kopf run -A --lease example-operator examples/20-leases/example.py   # acquires the Lease, acts
    kopf run -A --lease example-operator examples/20-leases/example.py   # waits: it takes over when
                                                                         # the first one exits or dies

A clean exit releases the Lease (the next replica acquires it at once); a killed replica is
replaced once its Lease expires by the others' clocks: `lease_duration` (+ one `retry_period`).
"""
from typing import Any

import kopf


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.peering.lease.lease_duration = 6   # client-go's defaults: 15 / 10 / 2 s
    settings.peering.lease.renew_deadline = 4
    settings.peering.lease.retry_period = 1


@kopf.on.create('kopfexamples')
def create_fn(name: str, **_: Any) -> dict[str, Any]:
    return {'message': f'{name} is handled by the Lease holder'}
