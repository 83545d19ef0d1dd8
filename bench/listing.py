"""The initial listing of N handled objects, nothing due, over HTTP, in-process: CPU µs (or instructions) per object.

    .venv/bin/python bench/listing.py --objects 20000 --repeats 3
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/ls.out \\
        .venv/bin/python bench/listing.py --objects 5000 --repeats 1 --callgrind   # then: totals / N
    PYTHONPATH=/path/to/another/checkout .venv/bin/python bench/listing.py ...     # that tree's kopf

The local cluster runs in its own process (not instrumented), resumed from bench/scale.py's state file of N
handled objects (bench/scale_state.py: our finalizer, the diff-base annotation, managedFields; cached). The
operator runs in this process (bench/operator.py without its resume handler, `BENCH_NO_RESUME=1`, all
namespaces, `chunk_size` 500 unless given): from its start to its "initial listing processed" signal, all of
it is counted — the HTTP reading, the pages decoded, the dispatch and the objects' first cycles: what
bench/scale.py's "listing processed" figure is made of at 100,000, without its start-up and its wall clock.
bench/first_sight.py is the same without the HTTP and the pages. Printed, never asserted.

`--resume`: the bench operator's resume handler on (no `BENCH_NO_RESUME`), so every object's first cycle
runs it and PATCHes its result: counted until every object is resumed (the dispatcher's "Resumed N objects"
moment: each first cycle's PATCH answered) and the watch events of those N PATCHes have come back and been
dispatched (each is processed too; or known as the awaited echo without parsing it: `Dispatcher.echoed`).
The logging is as `kopf run`'s (INFO, the full format, the object's prefix),
written to /dev/null: each object logs its handler's success and the resumption's end. What bench/scale.py's
resume phase costs per object on the operator's side (the cluster answering the PATCHes runs in its own
process, not counted).
"""
import argparse
import asyncio
import gc
import logging
import os
import pathlib
import subprocess
import sys
import time
from typing import Any

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
os.environ['BENCH_NO_RESUME'] = '1'  # unless --resume (set again in `once()`)

import first_sight  # noqa: E402
import harness as h  # noqa: E402
import scale_state  # noqa: E402

import kopf  # noqa: E402
from kopf._api import credentials  # noqa: E402
from kopf._engine import contexts, loggers, queueing  # noqa: E402


def callgrind(state: str, enabled: bool) -> None:
    if enabled:
        subprocess.run(['callgrind_control', '-i', state, str(os.getpid())], capture_output=True, check=False)


async def once(emu: Any, n: int, chunk_size: int, cg: bool, gc_threshold: int | None,
               resume: bool = False) -> tuple[float, float]:
    """One operator from its start to its initial listing processed (and the echoes of its N resume PATCHes)."""
    vault = credentials.Vault()
    vault.populate([kopf.ConnectionInfo(server=f'http://127.0.0.1:{emu.port}')])
    settings = kopf.OperatorSettings()
    settings.watching.chunk_size = chunk_size or None
    if gc_threshold is not None:
        settings.process.listing_gc_threshold = gc_threshold or None
    stop = asyncio.Event()
    listed = asyncio.Event()
    os.environ['BENCH_NO_RESUME'] = '0' if resume else '1'
    registry, _ = first_sight.load_registry()
    original, dispatch, echoed = queueing.Dispatcher._report, queueing.Dispatcher.dispatch, queueing.Dispatcher.echoed
    over, echoes = False, 0

    def report(self: queueing.Dispatcher, report: Any) -> None:  # the signal of "the initial listing is processed"
        nonlocal over
        original(self, report)
        if self.progress is None:
            over = True
            if not resume or echoes >= n:
                listed.set()

    def dispatched(self: queueing.Dispatcher, event: Any) -> None:  # the watch events of our PATCHes, counted
        nonlocal echoes
        dispatch(self, event)
        if event.get('type') == 'MODIFIED':
            echoes += 1
            if over and echoes >= n:
                listed.set()
    def echoed_unparsed(self: queueing.Dispatcher, uid: str, rv: str) -> None:  # those known without parsing them
        nonlocal echoes
        echoed(self, uid, rv)
        echoes += 1
        if over and echoes >= n:
            listed.set()
    queueing.Dispatcher._report = report  # type: ignore[method-assign]
    if resume:
        queueing.Dispatcher.dispatch = dispatched  # type: ignore[method-assign]
        queueing.Dispatcher.echoed = echoed_unparsed  # type: ignore[method-assign]
    gc.collect()
    callgrind('on', cg)
    started, cpu0 = time.monotonic(), time.process_time()
    task = asyncio.create_task(kopf.operator(registry=registry, vault=vault, standalone=True, settings=settings,
                                             clusterwide=True, stop_flag=stop))
    try:
        waiter = asyncio.create_task(listed.wait())
        await asyncio.wait([task, waiter], return_when=asyncio.FIRST_COMPLETED)
        cpu, wall = time.process_time() - cpu0, time.monotonic() - started
        if task.done():
            task.result()
            raise RuntimeError('the operator exited before its listing was processed')
    finally:
        callgrind('off', cg)
        queueing.Dispatcher._report, queueing.Dispatcher.dispatch = original, dispatch  # type: ignore[method-assign]
        queueing.Dispatcher.echoed = echoed  # type: ignore[method-assign]
        stop.set()
        await task
    ctx = next(iter(contexts.LIVE.values()), None)
    assert ctx is None or sum(len(rctx.records) for rctx in ctx.served.values()) >= n
    return cpu, wall


def logging_as_kopf_run() -> None:
    """The logging of `kopf run` with no options (INFO, the full format, the prefix), into /dev/null."""
    loggers.configure(log_prefix=None)
    handler = loggers._handler
    assert handler is not None and isinstance(handler, logging.StreamHandler)
    handler.setStream(open(os.devnull, 'w'))


async def main(args: argparse.Namespace) -> None:
    if args.resume:
        logging_as_kopf_run()
    state = scale_state.ensure(args.objects, args.namespaces)
    logdir = h.logs_dir('kopf-listing-')
    history = max(10_000, 2 * args.objects) if args.resume else 10_000  # the watch begins behind the PATCHes
    what = 'listed, resumed (a PATCH each) and their echoes processed' if args.resume else 'listed and processed'
    async with scale_state.cluster(sys.executable, state, logdir, 'listing', history) as emu:
        for i in range(args.repeats):
            cpu, wall = await once(emu, args.objects, args.chunk_size, args.callgrind, args.listing_gc_threshold,
                                   args.resume)
            h.log(f'run {i + 1}: {args.objects:,} {what}: {cpu:.2f} s of CPU '
                  f'({cpu / args.objects * 1e6:.1f} µs per object), {wall:.2f} s after start')


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--objects', type=int, default=20_000)
    parser.add_argument('--namespaces', type=int, default=4)
    parser.add_argument('--chunk-size', type=int, default=500, help='settings.watching.chunk_size (0: none)')
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--listing-gc-threshold', type=int, default=None,
                        help="settings.process.listing_gc_threshold (0: None, gc's own; default: the operator's)")
    parser.add_argument('--callgrind', action='store_true', help='instrument only the operator (under valgrind)')
    parser.add_argument('--resume', action='store_true',
                        help="the resume handler on: until all resumed and their PATCHes' watch events processed")
    asyncio.run(main(parser.parse_args()))
