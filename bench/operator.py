"""The benchmark's operator: the same module runs on our kopf and on upstream Kopf 1.45.2.

Plain upstream-compatible API only. Every handler records when it started (`time.time()`) and which
framework ran it (`$BENCH_FRAMEWORK`) in its result, i.e. in `status.<handler id>`, so the harness
can verify N of N and measure latencies from the objects themselves.
"""
import os
import time
from typing import Any

import kopf

GROUP, VERSION, PLURAL = 'kopf.dev', 'v1', 'kopfbenches'
FRAMEWORK = os.environ.get('BENCH_FRAMEWORK', 'unknown')


@kopf.on.create(GROUP, VERSION, PLURAL)
def create_fn(**_: Any) -> dict[str, Any]:
    return {'t': time.time(), 'by': FRAMEWORK}


@kopf.on.update(GROUP, VERSION, PLURAL)
def update_fn(spec: Any, **_: Any) -> dict[str, Any]:
    return {'t': time.time(), 'n': spec.get('n'), 'by': FRAMEWORK}


@kopf.on.resume(GROUP, VERSION, PLURAL)
def resume_fn(**_: Any) -> dict[str, Any]:
    return {'t': time.time(), 'by': FRAMEWORK}


@kopf.on.delete(GROUP, VERSION, PLURAL)
def delete_fn(**_: Any) -> None:
    pass
