"""The benchmark's operator: the same module runs on our kopf and on upstream Kopf 1.45.2.

Plain upstream-compatible API only. Every handler records when it started (`time.time()`) and which
framework ran it (`$BENCH_FRAMEWORK`) in its result, i.e. in `status.<handler id>`, so the harness
can verify N of N and measure latencies from the objects themselves.

`BENCH_COUNT=1` (bench/sharding.py --count): counters of the loop's waits, the requests, the watch items and gc,
in the probe's report. `BENCH_LEASE_DURATION=SECONDS`: the Leases' durations (for replicas under callgrind).

Variables for bench/scale.py (unset: the module is as it always was, with no startup handler):
`BENCH_NO_RESUME=1`: no resume handler (a restart where no handler is due); `BENCH_CHUNK_SIZE=N`:
`settings.watching.chunk_size` (0: none, one unpaginated LIST), set by a startup handler.

`BENCH_PROBE=DIR` (bench/sharding.py --probe): on SIGUSR1 the process writes what it holds into
DIR/probe-<n>.json (RSS, glibc's heap by `mallinfo2`, Python's blocks, gc's objects by type, threads,
asyncio tasks); with `BENCH_TRACEMALLOC=FRAMES` it traces from its import on and dumps a snapshot too
(DIR/probe-<n>.tm; compare two with `tracemalloc.Snapshot.load(...).compare_to(...)`).
"""
import collections
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
                  'modules': len(sys.modules), 'counts': dict(COUNTS),
                  'traced': tracemalloc.get_traced_memory() if tracemalloc.is_tracing() else None}
        if tracemalloc.is_tracing():
            tracemalloc.take_snapshot().dump(path + '.tm')
        with open(path + '.json.tmp', 'w') as f:
            json.dump(report, f)
        os.rename(path + '.json.tmp', path + '.json')   # whole, when the bench sees it

    signal.signal(signal.SIGUSR1, dump)


if os.environ.get('BENCH_PROBE'):
    _probe(os.environ['BENCH_PROBE'])


COUNTS: collections.Counter[str] = collections.Counter()


def _count() -> None:
    """`BENCH_COUNT=1` (bench/sharding.py --count): counters of what the process does, in the probe's report.

    The loop's waits (`select` calls: blocking or not, the events each returns), the executor's wake-ups
    (`call_soon_threadsafe`), the API requests by verb and resource, the watch connections and the
    watch and list items by resource. Counts, not times: the host's noise does not move them much.
    """
    import selectors
    from asyncio import base_events

    from kopf._api import client, watching
    counts = COUNTS

    import gc
    started: list[float] = [0.0]

    def collecting(phase: str, info: dict[str, Any]) -> None:   # gc's collections and their CPU (µs)
        if phase == 'start':
            started[0] = time.thread_time()
        else:
            counts[f'gc gen{info["generation"]}'] += 1
            counts[f'gc gen{info["generation"]} us'] += int((time.thread_time() - started[0]) * 1e6)
    gc.callbacks.append(collecting)

    original_select = selectors.EpollSelector.select

    def select(self: Any, timeout: float | None = None) -> Any:
        ready = original_select(self, timeout)
        counts['select ' + ('poll' if timeout == 0 else 'wait')] += 1
        counts['select events'] += len(ready)
        return ready
    selectors.EpollSelector.select = select  # type: ignore[method-assign]

    original_threadsafe = base_events.BaseEventLoop.call_soon_threadsafe

    def call_soon_threadsafe(self: Any, *args: Any, **kwargs: Any) -> Any:
        counts['call_soon_threadsafe'] += 1
        return original_threadsafe(self, *args, **kwargs)
    base_events.BaseEventLoop.call_soon_threadsafe = call_soon_threadsafe  # type: ignore[method-assign]

    original_request = client.APIClient.request

    async def request(self: Any, method: str, path: str, **kwargs: Any) -> Any:
        parts = path.split('?')[0].strip('/').split('/')
        named = len(parts) % 2 == 0 if parts[0] == 'api' else len(parts) % 2 == 1   # .../plural/name
        kind = parts[-2] if named and len(parts) > 2 else parts[-1]
        kind = f'{parts[-3]}/{parts[-1]}' if kind in ('status',) or parts[-1] == 'status' else kind
        counts[f'request {method} {kind}'] += 1
        return await original_request(self, method, path, **kwargs)
    client.APIClient.request = request  # type: ignore[method-assign]

    def counted(original: Any, verb: str) -> Any:
        """A watch's or a list's stream of batches, its connections and items counted by resource."""
        async def wrapper(client_: Any, resource: Any, *args: Any, **kwargs: Any) -> Any:
            counts[f'{verb} {resource.plural}'] += 1
            async for batch in original(client_, resource, *args, **kwargs):
                counts[f'{verb.split()[0]} items {resource.plural}'] += len(batch)
                yield batch
        return wrapper

    watching._watched = counted(watching._watched, 'watch connect')  # type: ignore[assignment]
    watching._listed = counted(watching._listed, 'list')  # type: ignore[assignment]


if os.environ.get('BENCH_COUNT'):
    _count()


def _calls() -> None:
    """`BENCH_CALLS=1` (with BENCH_COUNT): every Python function call of the loop's thread, counted by function."""
    import sys
    counts = COUNTS
    who = set((os.environ.get('BENCH_CALLS_BY') or '').split(','))

    def profile(frame: Any, event: str, _: Any) -> None:
        if event == 'call':
            code = frame.f_code
            counts[f'call {code.co_filename.rsplit("/", 2)[-1]}:{code.co_name}'] += 1
            if code.co_name in who and frame.f_back is not None:   # and by whom, for a few
                back = frame.f_back.f_code
                counts[f'by {code.co_name} <- {back.co_filename.rsplit("/", 2)[-1]}:{back.co_name}'] += 1
    sys.setprofile(profile)


if os.environ.get('BENCH_CALLS'):
    _calls()



def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.watching.chunk_size = int(CHUNK_SIZE or 0) or None


if CHUNK_SIZE is not None:
    kopf.on.startup()(configure)


LEASE_DURATION = os.environ.get('BENCH_LEASE_DURATION')


def lease_durations(settings: kopf.OperatorSettings, **_: Any) -> None:
    """`BENCH_LEASE_DURATION=SECONDS`: longer Leases (e.g. replicas under callgrind renew too slowly for 15 s)."""
    duration = float(LEASE_DURATION or 15)
    settings.peering.lease.lease_duration = duration
    settings.peering.lease.renew_deadline = duration * 2 / 3
    settings.peering.lease.retry_period = duration * 2 / 15


if LEASE_DURATION is not None:
    kopf.on.startup()(lease_durations)
