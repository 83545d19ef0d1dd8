"""An unchanged object's first cycle after a restart, in-process: CPU µs (or instructions) per object.

    .venv/bin/python bench/first_sight.py --objects 5000 --repeats 5
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/fs.out \\
        .venv/bin/python bench/first_sight.py --objects 1000 --repeats 1 --callgrind   # then: totals / N
    PYTHONPATH=/path/to/another/checkout .venv/bin/python bench/first_sight.py ...    # that tree's kopf

N listed events of handled objects (our finalizer, the diff-base annotation, a realistic metadata with
managedFields) go through `Dispatcher.dispatch()` → the runners → `processing.process()`, the whole cycle of
the reactor with no HTTP: what a restart over N objects with no handler due costs per object besides reading
the listing. The operator is bench/operator.py with no resume handler (`BENCH_NO_RESUME=1`, set here), so
nothing is due. `--callgrind`: instrumentation only around the loop (`callgrind_control -i on/off`).
Printed, never asserted.
"""
import argparse
import asyncio
import gc
import importlib.util
import os
import pathlib
import subprocess
import sys
import time
from typing import Any

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
os.environ['BENCH_NO_RESUME'] = '1'

import run  # noqa: E402

import kopf  # noqa: E402
from kopf._engine import contexts, queueing  # noqa: E402


def load_registry() -> tuple[kopf.OperatorRegistry, Any]:
    registry = kopf.OperatorRegistry()
    previous = kopf.get_default_registry()
    kopf.set_default_registry(registry)
    try:
        spec = importlib.util.spec_from_file_location('bench_operator', HERE / 'operator.py')
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        kopf.set_default_registry(previous)
    return registry, module


def events(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        body = run.prehandled('ns', f'r-{i:05d}', i)
        body['metadata'].update(
            uid=f'uid-{i}', resourceVersion=str(1000 + i), generation=1, creationTimestamp='2026-12-07T00:00:00Z',
            managedFields=[{'manager': 'kubectl', 'operation': 'Update', 'apiVersion': 'kopf.dev/v1',
                            'time': '2026-12-07T00:00:00Z', 'fieldsType': 'FieldsV1',
                            'fieldsV1': {'f:spec': {'f:n': {}}}}])
        out.append({'type': None, 'object': body})
    return out


def callgrind(state: str, enabled: bool) -> None:
    if enabled:
        subprocess.run(['callgrind_control', '-i', state, str(os.getpid())], capture_output=True, check=False)


async def once(registry: kopf.OperatorRegistry, module: Any, n: int, cg: bool) -> float:
    settings = kopf.OperatorSettings()
    operator = contexts.OperatorContext(settings=settings, registry=registry, client=None,  # type: ignore[arg-type]
                                        memo=kopf.Memo(), lifecycle=kopf.lifecycles.asap)
    rctx = contexts.ResourceContext(operator=operator, resource=kopf.Resource(module.GROUP, module.VERSION,
                                                                              module.PLURAL),
                                    progress_storage=settings.persistence.progress_storage,
                                    diffbase_storage=settings.persistence.diffbase_storage)
    listed = events(n)
    gc.collect()
    callgrind('on', cg)
    started = time.process_time()
    async with asyncio.TaskGroup() as tg:
        dispatcher = queueing.Dispatcher(rctx, tg)
        for event in listed:
            dispatcher.dispatch(event)
            if len(dispatcher.ready) > dispatcher.backlog_limit:
                await dispatcher.backlog()
        while dispatcher.ready or dispatcher.tasks:  # noqa: ASYNC110  # polled: no event for all done
            await asyncio.sleep(0.001)
        spent = time.process_time() - started
        callgrind('off', cg)
        dispatcher.closed = True
        for waiter in list(dispatcher.waiters):
            if not waiter.done():
                waiter.set_result(None)
    assert all(not record.initial for record in rctx.records.values()), 'not all were handled'
    return spent / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--objects', type=int, default=5000)
    parser.add_argument('--repeats', type=int, default=5)
    parser.add_argument('--callgrind', action='store_true', help='instrument only the loop (under valgrind)')
    args = parser.parse_args()
    registry, module = load_registry()
    figures = [asyncio.run(once(registry, module, args.objects, args.callgrind)) for _ in range(args.repeats)]
    print(f'first sight of {args.objects:,} unchanged objects: CPU µs per object '
          f'{" ".join(f"{f:.1f}" for f in figures)} (min {min(figures):.1f}); kopf from {kopf.__file__}')


if __name__ == '__main__':
    main()
