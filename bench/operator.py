"""The benchmark's operator: the same module runs on our kopf and on upstream Kopf 1.45.2.

Plain upstream-compatible API only. Every handler records when it started (`time.time()`) and which
framework ran it (`$BENCH_FRAMEWORK`) in its result, i.e. in `status.<handler id>`, so the harness
can verify N of N and measure latencies from the objects themselves.

Variables for bench/scale.py (unset: the module is as it always was, with no startup handler):
`BENCH_NO_RESUME=1`: no resume handler (a restart where no handler is due); `BENCH_CHUNK_SIZE=N`:
`settings.watching.chunk_size` (0: none, one unpaginated LIST), set by a startup handler.
"""
import os
import time
from typing import Any

import kopf

GROUP, VERSION, PLURAL = 'kopf.dev', 'v1', 'kopfbenches'
FRAMEWORK = os.environ.get('BENCH_FRAMEWORK', 'unknown')
CHUNK_SIZE = os.environ.get('BENCH_CHUNK_SIZE')


@kopf.on.create(GROUP, VERSION, PLURAL)
def create_fn(**_: Any) -> dict[str, Any]:
    return {'t': time.time(), 'by': FRAMEWORK}


@kopf.on.update(GROUP, VERSION, PLURAL)
def update_fn(spec: Any, **_: Any) -> dict[str, Any]:
    return {'t': time.time(), 'n': spec.get('n'), 'by': FRAMEWORK}


def resume_fn(**_: Any) -> dict[str, Any]:
    return {'t': time.time(), 'by': FRAMEWORK}


if os.environ.get('BENCH_NO_RESUME') != '1':
    kopf.on.resume(GROUP, VERSION, PLURAL)(resume_fn)


@kopf.on.delete(GROUP, VERSION, PLURAL)
def delete_fn(**_: Any) -> None:
    pass


def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.watching.chunk_size = int(CHUNK_SIZE or 0) or None


if CHUNK_SIZE is not None:
    kopf.on.startup()(configure)
