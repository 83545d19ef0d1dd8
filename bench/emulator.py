"""Capacity of the local cluster (the emulator): PATCH/s with watchers attached, an operator's writes per
object (server CPU per request), list latency, watch fan-out.

    .venv/bin/python bench/emulator.py [--seconds 5] [--lifecycles 3000] [--objects 10000] [--profile]

The emulator runs in its own process (one core); the load comes from a raw asyncio-streams
HTTP/1.1 client in this process, so that no client library is what gets measured. Figures are
printed, never asserted.
"""
import argparse
import asyncio
import json
import multiprocessing
import statistics
import time
from typing import Any

from harness import Connection  # bench/harness.py: the raw HTTP/1.1 client (bench/ is on sys.path)

CRD = {
    'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
    'metadata': {'name': 'benches.kopf.dev'},
    'spec': {'group': 'kopf.dev', 'scope': 'Namespaced',
             'names': {'plural': 'benches', 'singular': 'bench', 'kind': 'Bench'},
             'versions': [{'name': 'v1', 'served': True, 'storage': True, 'subresources': {'status': {}},
                           'schema': {'openAPIV3Schema': {'type': 'object', 'properties': {
                               'spec': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True},
                               'status': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True}}}}}]},
}
BENCHES = '/apis/kopf.dev/v1/namespaces/default/benches'
CONFIGMAPS = '/api/v1/namespaces/bench/configmaps'


# -- the server process ------------------------------------------------------------------------

def serve(port_queue: 'multiprocessing.Queue[int]', profile: bool) -> None:
    import cProfile
    import pstats
    import signal

    from kopf._cluster.control.emulator import Emulator

    async def main() -> None:
        emulator = Emulator(port=0)
        await emulator.start()
        port_queue.put(emulator.port)
        stopped = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stopped.set)
        await stopped.wait()
        await emulator.stop()

    if profile:
        profiler = cProfile.Profile()
        profiler.runcall(asyncio.run, main())
        pstats.Stats(profiler).sort_stats('tottime').print_stats(30)
    else:
        asyncio.run(main())


class Watch:
    """Counts the lines of one watch stream (chunked framing parsed minimally)."""

    def __init__(self) -> None:
        self.events = 0
        self.done = asyncio.Event()
        self.target = 0

    async def run(self, port: int, path: str) -> None:
        conn = await Connection.open(port)
        conn.writer.write(f'GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n'.encode())
        await conn.reader.readuntil(b'\r\n\r\n')
        try:
            while True:
                size = int((await conn.reader.readline()).strip(), 16)
                if size == 0:
                    break
                chunk = await conn.reader.readexactly(size + 2)
                self.events += chunk.count(b'\n') - 1
                if self.target and self.events >= self.target:
                    self.done.set()
        finally:
            conn.close()


# -- the measurements --------------------------------------------------------------------------

def cpu_seconds(pid: int) -> float:
    """User+system CPU time of a process so far (Linux /proc), to normalise rates to one busy core."""
    import os
    fields = open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


async def patches_per_second(port: int, seconds: float, pid: int, connections: int = 8, depth: int = 8) -> float:
    setup = await Connection.open(port)
    await setup.raw_request('POST', BENCHES, {'apiVersion': 'kopf.dev/v1', 'kind': 'Bench', 'metadata': {'name': 'b'}})
    _, listed = await setup.raw_request('GET', BENCHES)
    rv = json.loads(listed)['metadata']['resourceVersion']
    watches = [Watch() for _ in range(2)]
    tasks = [asyncio.create_task(w.run(port, f'{BENCHES}?watch=true&resourceVersion={rv}')) for w in watches]
    count = 0
    deadline = time.monotonic() + seconds

    async def worker(index: int) -> None:
        # Pipelined: `depth` requests in flight per connection, so the client is not what limits the rate.
        nonlocal count
        conn = await Connection.open(port)
        n = 0
        while time.monotonic() < deadline:
            batch = []
            for _ in range(depth):
                n += 1
                data = b'{"spec":{"w%d":%d}}' % (index, n)
                batch.append(b'PATCH %b/b HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/merge-patch+json\r\n'
                             b'Content-Length: %d\r\n\r\n%b' % (BENCHES.encode(), len(data), data))
            conn.writer.write(b''.join(batch))
            for _ in range(depth):
                status, _ = await conn.response()
                assert status == 200, status
                count += 1
        conn.close()

    started, cpu = time.monotonic(), cpu_seconds(pid)
    await asyncio.gather(*(worker(i) for i in range(connections)))
    elapsed, cpu = time.monotonic() - started, cpu_seconds(pid) - cpu
    print(f'  server CPU busy {cpu / elapsed:.0%} of one core; per busy core: {count / cpu:,.0f} PATCH/s')
    await asyncio.sleep(0.5)
    received = min(w.events for w in watches)
    for task in tasks:
        task.cancel()
    setup.close()
    print(f'  watchers received {received} of {count} events each')
    return count / elapsed


LIFECYCLE_STEPS = ('create', 'finalizer', 'status', 'diff-base', 'delete', 'release')


async def lifecycles(port: int, pid: int, objects: int, connections: int = 8, depth: int = 16) -> dict[str, float]:
    """An operator's writes per object, step by step for all objects (pipelined), with 2 watchers attached.

    create (POST); finalizer (JSON-patch with a resourceVersion test); status (merge-patch of /status);
    diff-base (merge-patch of an annotation); delete (DELETE, held by the finalizer); release (JSON-patch).
    Returns the server's CPU microseconds per request of each step (/proc; 10 ms ticks).
    """
    path = '/apis/kopf.dev/v1/namespaces/default/lives'
    setup = await Connection.open(port)
    crd = json.loads(json.dumps(CRD).replace('benches', 'lives').replace('"bench"', '"life"').replace('Bench', 'Life'))
    status, _ = await setup.raw_request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)
    assert status == 201, status
    await asyncio.sleep(0.2)
    watches = [Watch() for _ in range(2)]
    tasks = [asyncio.create_task(w.run(port, f'{path}?watch=true')) for w in watches]
    conns = [await Connection.open(port) for _ in range(connections)]
    names = [f'life-{i:05d}' for i in range(objects)]
    rvs: list[str] = [''] * objects
    mark = {'kopf.zalando.org/last-handled-configuration': '{"spec":{"n":0}}'}
    merge, jsonpatch = 'application/merge-patch+json', 'application/json-patch+json'

    def request(step: str, i: int) -> tuple[str, str, Any, str]:
        one = f'{path}/{names[i]}'
        test = {'op': 'test', 'path': '/metadata/resourceVersion', 'value': rvs[i]}
        if step == 'create':
            return 'POST', path, {'apiVersion': 'kopf.dev/v1', 'kind': 'Life', 'metadata': {'name': names[i]},
                                  'spec': {'n': i}}, 'application/json'
        if step == 'finalizer':
            return 'PATCH', one, [test, {'op': 'add', 'path': '/metadata/finalizers', 'value': ['kopf/x']}], jsonpatch
        if step == 'status':
            return 'PATCH', f'{one}/status', {'status': {'create_fn': {'message': 'done', 'n': i}}}, merge
        if step == 'diff-base':
            return 'PATCH', one, {'metadata': {'annotations': mark}}, merge
        if step == 'delete':
            return 'DELETE', one, None, 'application/json'
        return 'PATCH', one, [test, {'op': 'remove', 'path': '/metadata/finalizers'}], jsonpatch

    async def worker(step: str, index: int) -> None:
        conn = conns[index]
        mine = list(range(index, objects, connections))
        for start in range(0, len(mine), depth):
            batch = mine[start:start + depth]
            for i in batch:
                method, url, body, content_type = request(step, i)
                data = b'' if body is None else json.dumps(body).encode()
                head = (f'{method} {url} HTTP/1.1\r\nHost: localhost\r\nUser-Agent: kopf/bench\r\n'
                        f'Content-Type: {content_type}\r\nContent-Length: {len(data)}\r\n\r\n')
                conn.writer.write(head.encode() + data)
            for i in batch:
                status, answer = await conn.response()
                assert status in (200, 201), (step, status, answer[:200])
                rvs[i] = json.loads(answer)['metadata']['resourceVersion']

    costs: dict[str, float] = {}
    for step in LIFECYCLE_STEPS:
        cpu = cpu_seconds(pid)
        await asyncio.gather(*(worker(step, index) for index in range(connections)))
        costs[step] = (cpu_seconds(pid) - cpu) / objects * 1e6
    await asyncio.sleep(0.5)
    for task in tasks:
        task.cancel()
    for conn in [setup, *conns]:
        conn.close()
    return costs


async def list_latency(port: int, objects: int) -> tuple[float, float]:
    conn = await Connection.open(port)
    await conn.raw_request('POST', '/api/v1/namespaces', {'metadata': {'name': 'bench'}})
    conns = [await Connection.open(port) for _ in range(8)]

    async def create(conn: Connection, start: int) -> None:
        for i in range(start, objects, len(conns)):
            body = {'metadata': {'name': f'cm-{i:05d}', 'labels': {'n': str(i % 10)}}, 'data': {'key': 'v' * 64}}
            status, _ = await conn.raw_request('POST', CONFIGMAPS, body)
            assert status == 201, status

    started = time.monotonic()
    await asyncio.gather(*(create(c, i) for i, c in enumerate(conns)))
    print(f'  created {objects} ConfigMaps at {objects / (time.monotonic() - started):.0f}/s')
    timings = []
    for _ in range(5):
        started = time.monotonic()
        status, body = await conn.raw_request('GET', CONFIGMAPS)
        timings.append(time.monotonic() - started)
        assert status == 200 and len(json.loads(body)['items']) == objects
    selected = []
    for _ in range(5):
        started = time.monotonic()
        await conn.raw_request('GET', f'{CONFIGMAPS}?labelSelector=n%3D3')
        selected.append(time.monotonic() - started)
    for c in [conn, *conns]:
        c.close()
    return statistics.median(timings), statistics.median(selected)


async def fan_out(port: int, watchers: int = 20, events: int = 2000) -> float:
    conn = await Connection.open(port)
    await conn.raw_request('POST', BENCHES, {'apiVersion': 'kopf.dev/v1', 'kind': 'Bench', 'metadata': {'name': 'fan'}})
    _, listed = await conn.raw_request('GET', BENCHES)
    rv = json.loads(listed)['metadata']['resourceVersion']
    streams = [Watch() for _ in range(watchers)]
    for stream in streams:
        stream.target = events
    tasks = [asyncio.create_task(s.run(port, f'{BENCHES}?watch=true&resourceVersion={rv}&fieldSelector='
                                             'metadata.name%3Dfan')) for s in streams]
    await asyncio.sleep(0.3)
    started = time.monotonic()
    conns = [await Connection.open(port) for _ in range(8)]

    async def writer(c: Connection, index: int) -> None:
        for n in range(index, events, len(conns)):
            await c.raw_request('PATCH', f'{BENCHES}/fan', {'spec': {'n': n}}, 'application/merge-patch+json')

    await asyncio.gather(*(writer(c, i) for i, c in enumerate(conns)))
    await asyncio.wait_for(asyncio.gather(*(s.done.wait() for s in streams)), timeout=60)
    elapsed = time.monotonic() - started
    for task in tasks:
        task.cancel()
    for c in [conn, *conns]:
        c.close()
    return watchers * events / elapsed


async def run(port: int, pid: int, args: argparse.Namespace) -> None:
    conn = await Connection.open(port)
    status, _ = await conn.raw_request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', CRD)
    assert status == 201, status
    conn.close()
    print(f'PATCH/s with 2 watchers attached: {await patches_per_second(port, args.seconds, pid):,.0f}')
    costs = await lifecycles(port, pid, args.lifecycles)
    print(f'Lifecycles of {args.lifecycles:,} objects, 2 watchers: {sum(costs.values()) / len(costs):.0f} us of server '
          f'CPU per request (' + ', '.join(f'{step} {us:.0f}' for step, us in costs.items()) + ')')
    full, selected = await list_latency(port, args.objects)
    print(f'LIST of {args.objects:,} objects: {full * 1000:.1f} ms (median of 5); '
          f'with a label selector (1/10 match): {selected * 1000:.1f} ms')
    print(f'Watch fan-out to 20 watchers: {await fan_out(port):,.0f} events/s delivered')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, default=5.0)
    parser.add_argument('--objects', type=int, default=10000)
    parser.add_argument('--lifecycles', type=int, default=3000, help='objects taken through an operator\'s writes')
    parser.add_argument('--profile', action='store_true', help='cProfile the server and print its top functions')
    args = parser.parse_args()
    queue: multiprocessing.Queue[int] = multiprocessing.Queue()
    server = multiprocessing.Process(target=serve, args=(queue, args.profile))
    server.start()
    try:
        asyncio.run(run(queue.get(timeout=30), server.pid or 0, args))
    finally:
        server.terminate()
        server.join(timeout=30)


if __name__ == '__main__':
    main()
