"""The emulator's deletions with many idle objects stored: garbage collection must not scan them all.

    .venv/bin/python bench/emulator_gc.py [--idle 10000] [--objects 1000] [--python PYTHON]

One emulator process (`python -m kopf cluster`), `--idle` handled objects in one namespace, then
`--objects` plain objects created and deleted (pipelined, no operator); prints deletions/s.
`--python` runs another interpreter/checkout's emulator (e.g. a wrapper that `cd`s into an older
`git archive` of `kopf/`) for a before/after comparison. Figures are printed, never asserted.

    .venv/bin/python bench/emulator_gc.py --namespace-cpu [--idle 20000] [--objects 100]

In-process instead (no server, CPU by time.process_time): `--idle` configmaps in 20 other namespaces,
one namespace of `--objects` configmaps deleted; prints the CPU of the deletion plus the controller
sweeps until the namespace is gone, and of one sweep while a finalizer holds it (run with
PYTHONPATH=<an older checkout> for the before figure).
"""
import argparse
import asyncio
import time
from typing import Any

import harness as h
from run import populate


async def main(python: str, idle: int, count: int) -> float:
    logdir = h.logs_dir('kopf-bench-gc-')
    async with h.local_cluster(python, logdir) as emu:
        async with h.Client(emu.port) as client:
            if idle:
                await populate(emu, 'gc-idle', idle)
            await client.ensure_namespace('gc-burst')

            def body(i: int) -> dict[str, Any]:
                return {'apiVersion': h.API_VERSION, 'kind': h.KIND, 'metadata': {'name': f'b-{i}'}, 'spec': {'n': i}}
            await client.bulk([('POST', h.objects_path('gc-burst'), body(i), 'application/json')
                               for i in range(count)], ok=(201,))
            started = time.perf_counter()
            deleted = await client.bulk([('DELETE', h.objects_path('gc-burst', f'b-{i}'), None, 'application/json')
                                         for i in range(count)], ok=(200, 202))
            elapsed = time.perf_counter() - started
            assert deleted == count, f'deleted {deleted} of {count}'
            return count / elapsed


def namespace_cpu(idle: int, count: int) -> tuple[float, float]:
    """CPU seconds of one namespace's deletion until it is gone, and of one sweep while a finalizer holds it."""
    from kopf._cluster.apis.routing import Target
    from kopf._cluster.controllers import sweeping
    from kopf._cluster.pipeline import writing
    from kopf._cluster.pipeline.state import State
    from kopf._shared import resourcetable
    options = writing.Options()

    def doom(finalizers: list[str]) -> tuple[State, Target]:
        state = State()
        namespaces = state.catalog.by_key(resourcetable.NAMESPACES.key)
        configmaps = state.catalog.by_key(('', 'configmaps'))
        assert namespaces is not None and configmaps is not None
        for ns in [f'idle-{i}' for i in range(20)] + ['doomed']:
            writing.create(state, Target(namespaces, None, None),
                           {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': ns}}, options)
        for i in range(idle + count):
            ns, meta = (('doomed', {'name': f'd-{i}', 'finalizers': finalizers}) if i >= idle else
                        (f'idle-{i % 20}', {'name': f'i-{i}'}))
            writing.create(state, Target(configmaps, ns, None),
                           {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': meta}, options)
        sweeping.sweep(state)
        return state, Target(namespaces, None, 'doomed')

    state, target = doom([])
    started = time.process_time()
    writing.delete(state, target, options)
    while sweeping.sweep(state):
        pass
    full = time.process_time() - started
    assert state.store.get(resourcetable.NAMESPACES.key, '', 'doomed') is None
    state, target = doom(['example.com/hold'])
    writing.delete(state, target, options)
    sweeping.sweep(state)
    started = time.process_time()
    for _ in range(50):
        sweeping.sweep(state)
    return full, (time.process_time() - started) / 50


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--idle', type=int, default=None)
    parser.add_argument('--objects', type=int, default=None)
    parser.add_argument('--python', default=str(h.ROOT / '.venv' / 'bin' / 'python'))
    parser.add_argument('--namespace-cpu', action='store_true', help='in-process namespace deletion CPU instead')
    args = parser.parse_args()
    if args.namespace_cpu:
        idle, count = args.idle or 20000, args.objects or 100
        full, held = namespace_cpu(idle, count)
        print(f'{idle} objects in other namespaces, one namespace of {count} deleted: {full * 1000:.2f} ms CPU'
              f' until gone; {held * 1000:.3f} ms CPU per sweep while a finalizer holds it')
        raise SystemExit(0)
    args.idle = 10000 if args.idle is None else args.idle
    args.objects = args.objects or 1000
    rate = asyncio.run(main(args.python, args.idle, args.objects))
    print(f'{args.idle} idle objects stored: {rate:.0f} deletions/s ({args.objects} objects)')
