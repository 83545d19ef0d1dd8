"""The benchmark's operator: the same module runs on our kopf and on upstream Kopf 1.45.2.

Plain upstream-compatible API only. Every handler records when it started (`time.time()`) and which
framework ran it (`$BENCH_FRAMEWORK`) in its result, i.e. in `status.<handler id>`, so the harness
can verify N of N and measure latencies from the objects themselves.

Variables for bench/scale.py (unset: the module is as it always was, with no startup handler):
`BENCH_NO_RESUME=1`: no resume handler (a restart where no handler is due); `BENCH_CHUNK_SIZE=N`:
`settings.watching.chunk_size` (0: none, one unpaginated LIST), set by a startup handler.

`BENCH_PROBE=DIR` (bench/sharding.py --probe): on SIGUSR1 the process writes what it holds into
DIR/probe-<n>.json (RSS, glibc's heap by `mallinfo2`, Python's blocks, gc's objects by type, threads,
asyncio tasks); with `BENCH_TRACEMALLOC=FRAMES` it traces from its import on and dumps a snapshot too
(DIR/probe-<n>.tm; compare two with `tracemalloc.Snapshot.load(...).compare_to(...)`).
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


def _probe(directory: str) -> None:
    import collections
    import ctypes
    import gc
    import json
    import signal
    import sys
    import threading
    import tracemalloc

    frames = int(os.environ.get('BENCH_TRACEMALLOC') or 0)
    if frames:
        tracemalloc.start(frames)
    taken = [0]

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in ('arena', 'ordblks', 'smblks', 'hblks', 'hblkhd', 'usmblks',
                                                           'fsmblks', 'uordblks', 'fordblks', 'keepcost')]

    def mappings() -> dict[str, int]:
        """Resident kB by kind of mapping: the C heap, thread stacks and heaps, other anonymous ones, files."""
        kinds: dict[str, int] = collections.Counter()
        kind = ''
        for line in open('/proc/self/smaps'):
            head = line.split()
            if '-' in head[0] and not head[0].endswith(':'):
                start, end = (int(x, 16) for x in head[0].split('-'))
                size, name = (end - start) // 1024, head[5] if len(head) > 5 else ''
                kind = name if name.startswith('[') else 'file' if name else \
                    'thread heaps' if start % (64 << 20) == 0 else 'thread stacks' if size == 8192 else \
                    f'anon {"<1M" if size < 1024 else ">=1M"}'
            elif head[0] == 'Rss:':
                kinds[kind] += int(head[1])
        return dict(kinds)

    def dump(*_: Any) -> None:
        taken[0] += 1
        path = os.path.join(directory, f'probe-{taken[0]}')
        status = {k: v.strip() for k, _, v in (line.partition(':') for line in open('/proc/self/status'))}
        libc = ctypes.CDLL(None)
        libc.mallinfo2.restype = MallInfo2
        info = libc.mallinfo2()
        types = collections.Counter(type(o).__name__ for o in gc.get_objects())
        import asyncio.tasks
        report = {'t': time.time(), 'rss': status.get('VmRSS'), 'hwm': status.get('VmHWM'),
                  'anon': status.get('RssAnon'), 'mallinfo2': {f: getattr(info, f) for f, _ in MallInfo2._fields_},
                  'blocks': sys.getallocatedblocks(), 'mappings': mappings(), 'gc_objects': sum(types.values()),
                  'gc_types': dict(types.most_common(60)), 'gc_counts': gc.get_count(),
                  'threads': [t.name for t in threading.enumerate()],
                  'tasks': len(asyncio.tasks._all_tasks),  # type: ignore[attr-defined]
                  'modules': len(sys.modules),
                  'traced': tracemalloc.get_traced_memory() if tracemalloc.is_tracing() else None}
        if tracemalloc.is_tracing():
            tracemalloc.take_snapshot().dump(path + '.tm')
        with open(path + '.json', 'w') as f:
            json.dump(report, f)

    signal.signal(signal.SIGUSR1, dump)


if os.environ.get('BENCH_PROBE'):
    _probe(os.environ['BENCH_PROBE'])


def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.watching.chunk_size = int(CHUNK_SIZE or 0) or None


if CHUNK_SIZE is not None:
    kopf.on.startup()(configure)
