"""Where an idle operator's bytes go: N handled objects watched after a restart, counted by structure.

    .venv/bin/python bench/census.py --objects 10000            # tracemalloc by line, a gc census by type
    .venv/bin/python bench/census.py --objects 100000 --no-trace  # RSS and the gc census only (faster)

The local cluster runs in its own process (its memory is not counted); the operator runs in this process,
with the bench operator's handlers (bench/operator.py: create, update, resume, delete), so that the
figures can be taken from inside: VmRSS after `import kopf` and at idle, tracemalloc's top lines (bytes and
blocks per object), and a census of the objects the garbage collector tracks (count and `sys.getsizeof`
per type, per object; strings and ints are not tracked by the gc: tracemalloc counts them by line).
"""
import argparse
import asyncio
import collections
import contextlib
import cProfile
import gc
import importlib.util
import pathlib
import sys
import time
import tracemalloc
from collections.abc import AsyncIterator
from typing import Any

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))

import harness as h  # noqa: E402
import run  # noqa: E402


def vm(name: str) -> float:
    for line in pathlib.Path('/proc/self/status').read_text().splitlines():
        if line.startswith(name + ':'):
            return int(line.split()[1]) / 1024
    return 0.0


def census(n: int, top: int) -> list[tuple[str, int, int]]:
    """(type, count, bytes) of the gc-tracked objects, biggest first."""
    counts: collections.Counter[str] = collections.Counter()
    sizes: collections.Counter[str] = collections.Counter()
    for obj in gc.get_objects():
        name = f'{type(obj).__module__}.{type(obj).__qualname__}'
        counts[name] += 1
        sizes[name] += sys.getsizeof(obj)
    return [(name, counts[name], size) for name, size in sizes.most_common(top)]


def where_rss() -> str:
    """The process's RSS by kind of mapping (MB): the main heap (brk), anonymous maps (pymalloc's 1 MiB arenas,
    glibc's thread arenas, big blocks), files (code and libraries), the stacks."""
    sizes: collections.Counter[str] = collections.Counter()
    kind = 'file'
    for line in pathlib.Path('/proc/self/smaps').read_text().splitlines():
        fields = line.split()
        if '-' in fields[0] and len(fields) >= 5:
            name = fields[5] if len(fields) > 5 else ''
            kind = ('heap' if name == '[heap]' else 'stack' if name.startswith('[stack') else
                    'anon' if not name else 'other' if name.startswith('[') else 'file')
        elif fields[0] == 'Rss:':
            sizes[kind] += int(fields[1])
    return ', '.join(f'{k} {v / 1024:.1f}' for k, v in sizes.most_common())


def pymalloc() -> str:
    """pymalloc's arenas now and at their highwater mark, and how full they are (`sys._debugmallocstats`)."""
    import contextlib
    import os
    import tempfile
    with tempfile.TemporaryFile('w+') as f:  # it writes to the C stderr
        saved = os.dup(2)
        try:
            os.dup2(f.fileno(), 2)
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        text = f.read()
    stats = {}
    free = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 5 and all(f.isdigit() for f in fields):  # class size pools in-use available
            size, pools, used, avail = (int(f) for f in fields[1:])
            free.append((avail * size, size, pools, used))
        if line.startswith('#') and '=' in line:
            key, _, value = line[1:].partition('=')
            with contextlib.suppress(ValueError):
                stats[key.strip()] = int(value.strip().replace(',', ''))
    return (f"arenas {stats.get('arenas allocated current')} (highwater {stats.get('arenas highwater mark')}), "
            f"in use {stats.get('bytes in allocated blocks', 0) / 1e6:.1f} MB, "
            f"free blocks {stats.get('bytes in available blocks', 0) / 1e6:.1f} MB; the most free by size class "
            f"(size: pools, MB used/free): "
            + ', '.join(f'{size}: {pools}, {used * size / 1e6:.1f}/{nfree / 1e6:.1f}'
                        for nfree, size, pools, used in sorted(free, reverse=True)[:6]))


async def main(args: argparse.Namespace) -> None:
    logdir = h.logs_dir('kopf-census-')
    async with _cluster(args, logdir) as (emu, ns):
        import kopf  # after the population: its own imports are not the operator's
        from kopf._engine import contexts
        base_rss = vm('VmRSS')
        base_modules = set(sys.modules)
        h.log(f'after import kopf: RSS {base_rss:.1f} MB; {where_rss()}; pymalloc: {pymalloc()}')
        spec = importlib.util.spec_from_file_location('bench_operator', HERE / 'operator.py')
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        registry = kopf.OperatorRegistry()
        with _as_default(registry):
            spec.loader.exec_module(module)
        if args.trace:
            tracemalloc.start(args.frames)
        from kopf._api import credentials
        vault = credentials.Vault()
        vault.populate([kopf.ConnectionInfo(server=f'http://127.0.0.1:{emu.port}', default_namespace=ns)])
        stop = asyncio.Event()
        settings = kopf.OperatorSettings()
        if args.chunk_size is not None:
            settings.watching.chunk_size = args.chunk_size or None  # 0: one unpaginated LIST
        profile = cProfile.Profile() if args.profile else None
        if profile is not None:
            profile.enable()  # the operator's resumption only: not the population nor the census
        started, cpu0 = time.monotonic(), time.process_time()
        where: dict[str, Any] = {'clusterwide': True} if ns is None else {'namespaces': [ns]}
        task = asyncio.create_task(kopf.operator(registry=registry, vault=vault, standalone=True, settings=settings,
                                                 stop_flag=stop, **where))
        ctx = await _context(contexts)
        while sum(len(r.records) for r in ctx.served.values()) < args.objects or not ctx.idle():
            await asyncio.sleep(0.5)
            if task.done():
                task.result()
        resumed, resume_cpu = time.monotonic() - started, time.process_time() - cpu0
        if profile is not None:
            profile.disable()
            profile.dump_stats(args.profile)
        await _echoed(ctx, 300.0)
        await asyncio.sleep(args.settle)
        gc.collect()
        rss = vm('VmRSS')
        h.log(f'resumed {args.objects:,} in {resumed:.1f} s ({resume_cpu:.2f} s of CPU); '
              f'RSS {rss:.1f} MB (peak {vm("VmHWM"):.1f} MB), '
              f'after import {base_rss:.1f} MB: {(rss - base_rss) * 1024 * 1024 / args.objects:,.0f} B per object')
        if args.trace:
            snapshot = tracemalloc.take_snapshot()
            traced, peak = tracemalloc.get_traced_memory()
            print(f'\ntracemalloc: {traced / 1e6:.1f} MB traced now, peak {peak / 1e6:.1f} MB; '
                  f'{traced / args.objects:,.0f} B per object')
            print(f'{"bytes/obj":>10} {"blocks/obj":>10}  line')
            for stat in snapshot.statistics('traceback' if args.frames > 1 else 'lineno')[:args.top]:
                where = ' <- '.join(f'{pathlib.Path(f.filename).name}:{f.lineno}' for f in stat.traceback)
                print(f'{stat.size / args.objects:10.1f} {stat.count / args.objects:10.2f}  {where}')
        print(f'\nwhere the RSS is: {where_rss()}')
        print(f'pymalloc: {pymalloc()}')
        if args.trim:
            from kopf._engine import memory
            memory.release()
            print(f'after malloc_trim(0): RSS {vm("VmRSS"):.1f} MB; where: {where_rss()}')
        print(f'modules imported since `import kopf`: {", ".join(sorted(set(sys.modules) - base_modules))}')
        print(f'\ngc census: {len(gc.get_objects()):,} tracked objects')
        print(f'{"bytes/obj":>10} {"count/obj":>10}  type')
        for name, count, size in census(args.objects, args.top):
            print(f'{size / args.objects:10.1f} {count / args.objects:10.2f}  {name}')
        stop.set()
        await task


@contextlib.asynccontextmanager
async def _cluster(args: argparse.Namespace, logdir: pathlib.Path) -> AsyncIterator[tuple[Any, str | None]]:
    """The local cluster with N handled objects: made over HTTP in one namespace, or (`--state`) resumed
    from bench/scale.py's cached state file (over 4 namespaces, watched cluster-wide): much faster."""
    if args.state:
        import scale_state
        state = await asyncio.to_thread(scale_state.ensure, args.objects, 4)
        async with scale_state.cluster(sys.executable, state, logdir, 'census', 2 * args.objects + 10_000) as emu:
            yield emu, None
        return
    async with h.local_cluster(sys.executable, logdir) as emu:
        ns = 'census'
        h.log(f'pre-creating {args.objects:,} handled objects in {ns}')
        await run.populate(emu, ns, args.objects)
        yield emu, ns


def _as_default(registry: Any) -> Any:
    import contextlib

    import kopf

    @contextlib.contextmanager
    def manager() -> Any:
        previous = kopf.get_default_registry()
        kopf.set_default_registry(registry)
        try:
            yield
        finally:
            kopf.set_default_registry(previous)
    return manager()


async def _echoed(ctx: Any, within: float) -> None:
    """Until no record has work (e.g. awaits the echo of our own patch: the watch is read through), or `within` s."""
    deadline = time.monotonic() + within
    while (busy := sum(r.work is not None for rctx in ctx.served.values() for r in rctx.records.values())) and \
            time.monotonic() < deadline:
        h.log(f'  {busy:,} records still have work (our patches\' echoes not read yet?)')
        await asyncio.sleep(5.0)


async def _context(contexts: Any) -> Any:
    for _ in range(600):
        if contexts.LIVE:
            return next(iter(contexts.LIVE.values()))
        await asyncio.sleep(0.1)
    raise RuntimeError('no operator context appeared')


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--objects', type=int, default=10_000)
    parser.add_argument('--settle', type=float, default=3.0, help='seconds idle before counting')
    parser.add_argument('--top', type=int, default=25)
    parser.add_argument('--frames', type=int, default=1, help="tracemalloc's traceback depth")
    parser.add_argument('--state', action='store_true',
                        help="the cluster from bench/scale.py's state file (4 namespaces, cluster-wide): no population")
    parser.add_argument('--trim', action='store_true', help='then malloc_trim(0): the RSS after it')
    parser.add_argument('--no-trace', dest='trace', action='store_false', help='no tracemalloc (faster)')
    parser.add_argument('--profile', type=pathlib.Path, default=None,
                        help='cProfile the resumption into this file (pstats; the population and census excluded)')
    parser.add_argument('--chunk-size', type=int, default=None,
                        help="settings.watching.chunk_size (0: none, one LIST; default: the operator's default)")
    asyncio.run(main(parser.parse_args()))
