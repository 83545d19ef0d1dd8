"""Calls per cycle of the reactor, counted with cProfile: N objects created, updated and deleted.

    .venv/bin/python bench/calls_per_cycle.py [--objects 300]
    PYTHONPATH=/path/to/another/checkout .venv/bin/python bench/calls_per_cycle.py   # that tree's kopf

The local cluster runs in a thread of its own (`with LocalCluster()`: not profiled); the operator runs
in the main thread under cProfile from its readiness to the last object's deletion, with a create, an
update and a delete handler (sync: the executor's threads are not profiled either). Counted: the calls
made by the framework's own functions (in kopf/, the emulator's kopf/_cluster/ left out), builtins
included, divided by the cycles (`plans.decide` calls). The count is deterministic but for the event
loop's batching (about ±2 calls per cycle); compare commits by running this file against each of them.
Printed, never asserted.
"""
import argparse
import asyncio
import cProfile
import logging
import os
import pathlib
import pstats
import sys
import urllib.request
from typing import Any, Protocol

import kopf
from kopf.testing import LocalCluster, cluster_vault

ROOT = pathlib.Path(__file__).resolve().parent.parent
PLURAL = 'kopfexamples'


def registry(typed: bool = False) -> kopf.OperatorRegistry:
    registry = kopf.OperatorRegistry()
    if typed:   # the same handlers, their `spec` parsed into a realistic model (bench/typed_parsing.py)
        import typed_parsing

        class BenchSpec(typed_parsing.WideSpec):
            n: int = 0

        def create_fn(spec: BenchSpec, **_: Any) -> Any:
            return {'done': True}

        def update_fn(spec: BenchSpec, **_: Any) -> Any:
            return {'n': spec.n}

        def delete_fn(spec: BenchSpec, **_: Any) -> Any:
            return None

        for decorator, fn in ((kopf.on.create, create_fn), (kopf.on.update, update_fn), (kopf.on.delete, delete_fn)):
            decorator('kopf.dev', 'v1', PLURAL, registry=registry)(fn)
        return registry
    kopf.on.create('kopf.dev', 'v1', PLURAL, registry=registry)(lambda **_: {'done': True})
    kopf.on.update('kopf.dev', 'v1', PLURAL, registry=registry)(lambda spec, **_: {'n': spec.get('n')})
    kopf.on.delete('kopf.dev', 'v1', PLURAL, registry=registry)(lambda **_: None)
    return registry


WIDE: dict[str, Any] = {}   # `--wide`: every object's spec is a realistic one (20 fields, 2 levels) besides `n`


def example(i: int, n: int = 0) -> dict[str, Any]:
    return {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
            'metadata': {'name': f'kex-{i:05d}', 'namespace': 'default'}, 'spec': {**WIDE, 'n': n}}


async def until(check: Any, what: str, within: float = 300) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not await asyncio.to_thread(check):
        if loop.time() > deadline:
            raise RuntimeError(f'Timed out: {what}')
        await asyncio.sleep(0.2)


class Switch(Protocol):
    """What the scenario switches on at the operator's readiness and off after the last deletion."""

    def enable(self) -> None: ...
    def disable(self) -> None: ...


def run(count: int, profiler: Switch, *, logs: bool = False, burst: bool = False, wide: bool = False,
        typed: bool = False) -> None:
    """The scenario on a local cluster of its own with the bench CRD (also `instructions.py`'s).

    `logs`: the operator's INFO lines formatted as `kopf run` does (`kopf.configure()`), written to
    /dev/null (else nothing is logged: the root logger's WARNING level drops them before formatting).
    `burst`: each step's N requests are sent from one thread, one after another, while the operator
    works (as `bench/run.py`'s burst: many objects in flight), not one `to_thread` call per object.
    `wide`: the objects' specs are realistic (bench/typed_parsing.py's 20 fields); `typed`: the handlers'
    `spec` is annotated with that model, so each call parses it (docs/models.md), and `wide` is implied.
    """
    if wide or typed:
        import typed_parsing
        WIDE.update(typed_parsing.SPEC)
    if logs:
        kopf.configure(verbose=False)
        devnull = open(os.devnull, 'w')  # for the whole process
        for handler in logging.getLogger().handlers:
            if isinstance(handler, logging.StreamHandler):
                handler.setStream(devnull)
    with LocalCluster() as cluster:
        cluster.apply(str(ROOT / 'examples' / 'crd.yaml'))
        asyncio.run(scenario(cluster, count, profiler, burst=burst, typed=typed))


async def scenario(cluster: LocalCluster, count: int, profiler: Switch, *, burst: bool = False,
                   typed: bool = False) -> None:
    def objects() -> list[dict[str, Any]]:
        return cluster.list('kopf.dev/v1', PLURAL, 'default')

    def delete(i: int) -> None:
        url = f'{cluster.url}/apis/kopf.dev/v1/namespaces/default/{PLURAL}/kex-{i:05d}'
        urllib.request.urlopen(urllib.request.Request(url, method='DELETE'), timeout=30).read()

    settings = kopf.OperatorSettings()
    vault = cluster_vault(cluster)
    stop, ready = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(kopf.operator(registry=registry(typed), vault=vault, settings=settings,
                                             namespaces=['default'], stop_flag=stop, ready_flag=ready))
    await ready.wait()
    async def each(fn: Any) -> None:
        if burst:
            await asyncio.to_thread(lambda: [fn(i) for i in range(count)])
        else:
            for i in range(count):
                await asyncio.to_thread(fn, i)

    profiler.enable()
    await each(lambda i: cluster.apply(example(i)))
    await until(lambda: sum("'done': True" in str(o.get('status')) for o in objects()) >= count, 'created')
    await each(lambda i: cluster.apply(example(i, n=1)))
    await until(lambda: sum("'n': 1" in str(o.get('status')) for o in objects()) >= count, 'updated')
    await each(delete)
    await until(lambda: not objects(), 'deleted')
    profiler.disable()
    stop.set()
    await task


def own(path: str) -> bool:
    return '/kopf/' in path and '/kopf/_cluster/' not in path and 'calls_per_cycle' not in path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--objects', type=int, default=300)
    parser.add_argument('--dump', metavar='FILE', help="also write the profile (pstats) to this file")
    parser.add_argument('--logs', action='store_true', help="log INFO lines as `kopf run` does (to /dev/null)")
    parser.add_argument('--burst', action='store_true', help="each step's requests from one thread at once")
    parser.add_argument('--wide', action='store_true', help='realistic specs (bench/typed_parsing.py: 20 fields)')
    parser.add_argument('--typed', action='store_true', help="the handlers' spec parsed into that model (--wide)")
    args = parser.parse_args()
    profiler = cProfile.Profile()
    run(args.objects, profiler, logs=args.logs, burst=args.burst, wide=args.wide, typed=args.typed)
    if args.dump:
        profiler.dump_stats(args.dump)
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    total = made = cycles = 0
    for (path, _, name), (_, calls, _, _, callers) in stats.items():
        total += calls
        made += sum(counts[1] for caller, counts in callers.items() if own(caller[0]))
        if name == 'decide' and path.endswith('/kopf/_core/plans.py'):
            cycles = calls
    print(f'kopf: {kopf.__file__}')
    print(f'{args.objects} objects: {cycles} cycles; calls made by kopf (not the emulator): {made:,} '
          f'= {made / max(cycles, 1):.1f} per cycle; all calls in the thread: {total:,} '
          f'= {total / max(cycles, 1):.1f} per cycle')


if __name__ == '__main__':
    sys.exit(main())
