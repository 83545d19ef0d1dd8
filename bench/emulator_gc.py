"""The emulator's deletions with many idle objects stored: garbage collection must not scan them all.

    .venv/bin/python bench/emulator_gc.py [--idle 10000] [--objects 1000] [--python PYTHON]

One emulator process (`python -m kopf cluster`), `--idle` handled objects in one namespace, then
`--objects` plain objects created and deleted (pipelined, no operator); prints deletions/s.
`--python` runs another interpreter/checkout's emulator (e.g. a wrapper that `cd`s into an older
`git archive` of `kopf/`) for a before/after comparison. Figures are printed, never asserted.
"""
import argparse
import asyncio
import pathlib
import tempfile
import time
from typing import Any

import harness as h
from run import populate


async def main(python: str, idle: int, count: int) -> float:
    logdir = pathlib.Path(tempfile.mkdtemp(prefix='kopf-bench-gc-'))
    emu = h.EmulatorProcess(python, logdir)
    emu.start()
    try:
        async with h.Client(emu.port) as client:
            status, _ = await client.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', h.CRD)
            assert status in (201, 409), status
            await asyncio.sleep(0.5)
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
    finally:
        emu.stop()


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--idle', type=int, default=10000)
    parser.add_argument('--objects', type=int, default=1000)
    parser.add_argument('--python', default=str(h.ROOT / '.venv' / 'bin' / 'python'))
    args = parser.parse_args()
    rate = asyncio.run(main(args.python, args.idle, args.objects))
    print(f'{args.idle} idle objects stored: {rate:.0f} deletions/s ({args.objects} objects)')
