"""The local cluster's own cost of an operator's resume write, per object: CPU per PATCH, history per write.

    .venv/bin/python bench/emulator_patch.py [--objects 20000] [--watchers 1] [--rounds 1] [--spy FILE]
                                             [--callgrind FILE] [--profile FILE] [--uvloop]

The cluster (`Emulator`, no workloads; in asyncio's loop as `kopf cluster`; `--uvloop`: in uvloop's) runs in its
own process, restored from bench/scale.py's state file (bench/scale_state.py: format-2 objects with
`managedFields`, cached by N). This process sends, to each object once per round, the write that our operator makes
when its resume handler succeeds (captured from bench/operator.py): a merge PATCH of `/status` with the handler's
result, as `User-Agent: kopf/...` (field manager `kopf`), pipelined over a few connections, with `--watchers`
cluster-wide watches attached (as the operator's own). Printed: the cluster's CPU µs per PATCH (/proc; 10 ms ticks;
the kernel's share of it); the bytes that each write adds to what the cluster holds for the objects (the stored
objects, the history's changes of them, their field-ownership records: Python objects by `sys.getsizeof`, each
once, before and after the writes), and the cluster's RSS growth per write. `--spy FILE`: py-spy (the throwaway
venv in /work/tmp/spyenv, if present) records the cluster during the writes, in raw format. `--callgrind FILE`: the
cluster runs under valgrind's callgrind, instrumented from the first write until its last watch event is seen: its
instructions per PATCH (the host's load does not move them; aiohttp's C parts count, the kernel's do not), FILE
kept for callgrind_annotate. `--profile FILE`: cProfile of the cluster during the writes (pstats: where the
Python goes, not how much: its overhead inflates calls). Figures are printed, never asserted.
"""
import argparse
import asyncio
import gc
import json
import multiprocessing
import multiprocessing.connection
import os
import pathlib
import subprocess
import sys
import threading
import time
from typing import Any

import harness as h
import scale_state
from harness import Connection

SPACES = 4
SPY = pathlib.Path('/work/tmp/spyenv/bin/py-spy')
KEY = b'emulator_patch'


# -- the cluster process -----------------------------------------------------------------------

def serve(state_path: str, history: int, pipe: multiprocessing.connection.Connection, uvloop: bool) -> None:
    from kopf._cluster import jsoncodec
    from kopf._cluster.control import command
    from kopf._cluster.control.emulator import Emulator
    from kopf._kits import loops

    snapshot = jsoncodec.loads(pathlib.Path(state_path).read_bytes())

    async def main() -> None:
        emulator = Emulator(port=0, workloads=False, history_size=history, compaction_interval=0)
        emulator.state.restore(snapshot)
        await emulator.start()
        command.settle_gc()   # as `kopf cluster` does after its startup (the restored objects included)
        gc.callbacks.append(_collecting)
        loop = asyncio.get_running_loop()
        done = asyncio.Event()

        def commands() -> None:   # the parent's questions, answered in the loop (never concurrently with writes)
            while (command := pipe.recv()) != 'stop':
                answer = asyncio.run_coroutine_threadsafe(_answer(emulator, command), loop).result()
                pipe.send(answer)
            loop.call_soon_threadsafe(done.set)

        threading.Thread(target=commands, daemon=True).start()
        pipe.send(emulator.port)
        await done.wait()

    loops.run(main(), loops.loop_factory(True if uvloop else False))   # asyncio's, as `kopf cluster`; or uvloop


PROFILER: list[Any] = []


async def _answer(emulator: Any, command: str) -> Any:
    if command == 'size':
        return (*held_bytes(emulator.state, (h.GROUP, h.PLURAL)), COLLECTING[1])
    if command == 'profile':   # cProfile of the cluster's loop thread from now on
        import cProfile
        PROFILER.append(cProfile.Profile())
        PROFILER[0].enable()
        return None
    if command.startswith('profile-to '):
        PROFILER[0].disable()
        PROFILER[0].dump_stats(command.split(' ', 1)[1])
        return None
    raise ValueError(command)


COLLECTING = [0.0, 0.0]   # when the garbage collector's current run began, its CPU seconds so far


def _collecting(phase: str, info: dict[str, Any]) -> None:
    if phase == 'start':
        COLLECTING[0] = time.process_time()
    else:
        COLLECTING[1] += time.process_time() - COLLECTING[0]


def held_bytes(state: Any, key: tuple[str, str]) -> tuple[int, int]:
    """The changes of `key` in the history, and the bytes that the objects of `key`, the history's changes of
    them and their field-ownership records hold together (each Python object counted once)."""
    store, seen = state.store, set()
    total = sum(_size(obj, seen) for obj in store.objects[key].values())
    changes = [change for change in store.history if change.key == key]
    total += sum(_size(change, seen) for change in changes)
    total += sum(_size(managers.__dict__, seen) for managers in state.managers.values())
    return len(changes), total


def _size(value: Any, seen: set[int]) -> int:
    """The bytes of `value` and what it reaches (dicts, lists, tuples, a Change's slots), each object once."""
    stack, total = [value], 0
    while stack:
        item = stack.pop()
        if id(item) in seen or item is None or isinstance(item, bool):
            continue
        seen.add(id(item))
        total += sys.getsizeof(item)
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif hasattr(item, '__slots__'):
            stack.extend(getattr(item, slot, None) for slot in item.__slots__)
    return total


# -- the writes --------------------------------------------------------------------------------

async def watch(port: int, counted: list[int]) -> None:
    """A cluster-wide watch of the objects from now on; counts the events it receives."""
    conn = await Connection.open(port)
    _, listed = await conn.raw_request('GET', f'/apis/{h.GROUP}/{h.VERSION}/{h.PLURAL}?limit=1')
    rv = json.loads(listed)['metadata']['resourceVersion']
    path = f'/apis/{h.GROUP}/{h.VERSION}/{h.PLURAL}?watch=true&allowWatchBookmarks=true&resourceVersion={rv}'
    conn.writer.write(f'GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n'.encode())
    await conn.reader.readuntil(b'\r\n\r\n')
    try:
        while size := int((await conn.reader.readline()).strip(), 16):
            counted[0] += (await conn.reader.readexactly(size + 2)).count(b'\n') - 1
    finally:
        conn.close()


async def resume_writes(port: int, objects: int, connections: int = 8, depth: int = 16) -> None:
    """The operator's write per object: the resume handler's result into the status (a merge PATCH)."""
    async def worker(index: int) -> None:
        conn = await Connection.open(port)
        mine = list(range(index, objects, connections))
        for start in range(0, len(mine), depth):
            batch = mine[start:start + depth]
            for i in batch:
                path = h.objects_path(scale_state.namespace_of(i, SPACES), scale_state.object_name(i)) + '/status'
                data = json.dumps({'status': {'resume_fn': {'t': time.time(), 'by': 'ours'}}}).encode()
                conn.writer.write(f'PATCH {path} HTTP/1.1\r\nHost: localhost\r\nUser-Agent: kopf/bench (emulator_patch)'
                                  f'\r\nContent-Type: application/merge-patch+json\r\nContent-Length: {len(data)}'
                                  f'\r\n\r\n'.encode() + data)
            for _ in batch:
                status, answer = await conn.response()
                assert status == 200, (status, answer[:300])
        conn.close()

    await asyncio.gather(*(worker(index) for index in range(connections)))


async def measure(port: int, pid: int, args: argparse.Namespace, pipe: Any) -> None:
    counted = [0]
    watches = [asyncio.create_task(watch(port, counted)) for _ in range(args.watchers)]
    await asyncio.sleep(1.0)
    spy = None
    if args.spy:
        spy = await asyncio.create_subprocess_exec(str(SPY), 'record', '-r', '250', '-f', 'raw', '-o', args.spy,
                                                   '-p', str(pid), stdout=asyncio.subprocess.DEVNULL,
                                                   stderr=asyncio.subprocess.DEVNULL)
        await asyncio.sleep(1.0)
    pipe.send('size')
    _, held, collecting = pipe.recv()
    rss, cpu, started = h.memory_mb(pid)['VmRSS'], h.cpu_seconds(pid), time.monotonic()
    system, writes = _system_seconds(pid), args.objects * args.rounds
    if args.callgrind:
        await asyncio.to_thread(_instrument, pid, 'on')
    if args.profile:
        pipe.send('profile')
        pipe.recv()
    for _ in range(args.rounds):
        await resume_writes(port, args.objects)
    await h.wait_for(lambda: counted[0] >= writes * args.watchers, 600)
    if args.callgrind:
        await asyncio.to_thread(_instrument, pid, 'off')
    if args.profile:
        pipe.send(f'profile-to {args.profile}')
        pipe.recv()
    elapsed, cpu = time.monotonic() - started, h.cpu_seconds(pid) - cpu
    system = _system_seconds(pid) - system
    grown = h.memory_mb(pid)['VmRSS'] - rss
    if spy is not None:
        spy.send_signal(2)
        await spy.wait()
    for task in watches:
        task.cancel()
    pipe.send('size')
    changes, after, collected = pipe.recv()
    held, collecting = after - held, collected - collecting
    print(f'{writes:,} resume PATCHes of /status ({args.objects:,} objects, {args.watchers} watchers, '
          f'{counted[0]:,} events seen) in {elapsed:.1f} s: the cluster\'s CPU {cpu:.1f} s, '
          f'{cpu / writes * 1e6:.0f} us per PATCH (of which its garbage collector {collecting / writes * 1e6:.0f} us, '
          f'the kernel {system / writes * 1e6:.0f} us)')
    print(f'history: {changes:,} changes kept; the objects, their changes and ownership records hold '
          f'{held / writes:,.0f} bytes more per write (sys.getsizeof); the cluster\'s RSS grew '
          f'{grown * 2**20 / writes:,.0f} bytes per write')


def _instrument(pid: int, mode: str) -> None:
    """Callgrind's instrumentation of the cluster process `on` or `off`."""
    subprocess.run(['callgrind_control', '-i', mode, str(pid)], capture_output=True, check=True)


def _system_seconds(pid: int) -> float:
    """The system (kernel) CPU seconds of a live process so far: its socket reads and writes mostly."""
    fields = pathlib.Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return int(fields[12]) / os.sysconf('SC_CLK_TCK')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--objects', type=int, default=20000)
    parser.add_argument('--watchers', type=int, default=1)
    parser.add_argument('--rounds', type=int, default=1, help='writes per object (the history keeps them all)')
    parser.add_argument('--spy', default='', help='py-spy raw output file for the cluster during the writes')
    parser.add_argument('--callgrind', default='', help="the cluster under valgrind's callgrind, its output file")
    parser.add_argument('--profile', default='', help="cProfile of the cluster during the writes, its output file "
                        '(pstats; its overhead inflates the Python calls: for where, not how much)')
    parser.add_argument('--uvloop', action='store_true', help="the cluster in uvloop, not in asyncio's own loop "
                        '(which `kopf cluster` runs in)')
    parser.add_argument('--serve', nargs=3, help=argparse.SUPPRESS)   # the cluster process: PORT STATE HISTORY
    args = parser.parse_args()
    if args.serve:
        port, state_path, history = args.serve
        serve(state_path, int(history), multiprocessing.connection.Client(('127.0.0.1', int(port)), authkey=KEY),
              args.uvloop)
        return
    state = scale_state.ensure(args.objects, SPACES)
    args.profile = os.path.abspath(args.profile) if args.profile else ''   # the cluster runs elsewhere
    with multiprocessing.connection.Listener(('127.0.0.1', 0), authkey=KEY) as listener:
        prefix = ['valgrind', '--tool=callgrind', '--instr-atstart=no', f'--callgrind-out-file={args.callgrind}']
        server = subprocess.Popen([*(prefix if args.callgrind else []), sys.executable, __file__, '--serve',
                                   str(listener.address[1]), str(state), str(args.objects * args.rounds + 1000),
                                   *(['--uvloop'] if args.uvloop else [])])
        try:
            ours = listener.accept()
            if not ours.poll(600):
                raise RuntimeError('the cluster did not start')
            asyncio.run(measure(ours.recv(), server.pid, args, ours))
            ours.send('stop')
            server.wait(timeout=60)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
    if args.callgrind:
        totals = [int(line.split()[1]) for line in open(args.callgrind) if line.startswith('totals:')]
        print(f'callgrind: {max(totals) / (args.objects * args.rounds):,.0f} instructions of the cluster per PATCH '
              f'({args.callgrind})')


if __name__ == '__main__':
    sys.exit(main())
