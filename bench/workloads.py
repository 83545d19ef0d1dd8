"""Workloads in the local cluster: N Deployments x R replicas created at once, until all are available.

    .venv/bin/python bench/workloads.py --quick      # 100 Deployments x 3 replicas
    .venv/bin/python bench/workloads.py              # 1,000 Deployments x 3 replicas (3,000 Pods)

One emulator process (`python -m kopf cluster`); all Deployments are POSTed at once (pipelined over
8 connections); then the Deployments are listed every 0.5 s until every one reports
`availableReplicas == R`. Printed and written to bench/results/workloads-<timestamp>-<mode>.json:
the time to create them, the time until all are available, the emulator's CPU time (user+sys) over
the whole run, the writes (the resourceVersion counter's growth) and the number of Pods. The polling
lists are part of the emulator's CPU (one LIST of N Deployments per 0.5 s). Figures, never asserted.
"""
import argparse
import asyncio
import json
import pathlib
import tempfile
import time
from typing import Any

import harness as h
from harness import log

NAMESPACE = 'workloads'


def deployment(index: int, replicas: int) -> dict[str, Any]:
    labels = {'app': f'w-{index}'}
    return {'apiVersion': 'apps/v1', 'kind': 'Deployment', 'metadata': {'name': f'w-{index}', 'labels': labels},
            'spec': {'replicas': replicas, 'selector': {'matchLabels': labels},
                     'template': {'metadata': {'labels': labels},
                                  'spec': {'containers': [{'name': 'main', 'image': 'nginx:1.27'}]}}}}


async def _available(client: h.Client, replicas: int) -> int:
    status, data = await client.request('GET', f'/apis/apps/v1/namespaces/{NAMESPACE}/deployments')
    assert status == 200, (status, data)
    return sum(1 for d in data['items'] if (d.get('status') or {}).get('availableReplicas') == replicas)


async def _rv(client: h.Client) -> int:
    status, data = await client.request('GET', '/api/v1/namespaces?limit=1')
    assert status == 200, status
    return int(data['metadata']['resourceVersion'])


async def run_once(count: int, replicas: int, limit: float) -> dict[str, Any]:
    logdir = pathlib.Path(tempfile.mkdtemp(prefix='kopf-bench-workloads-'))
    emu = h.EmulatorProcess('.venv/bin/python', logdir)
    emu.start()
    try:
        async with h.Client(emu.port) as client:
            await client.ensure_namespace(NAMESPACE)
            await asyncio.sleep(0.5)
            rv0, cpu0 = await _rv(client), h.cpu_seconds(emu.pid)
            started = time.perf_counter()
            path = f'/apis/apps/v1/namespaces/{NAMESPACE}/deployments'
            created = await client.bulk([('POST', path, deployment(i, replicas), 'application/json')
                                         for i in range(count)], ok=(201,))
            assert created == count, f'created {created} of {count}'
            creating = time.perf_counter() - started
            available = 0
            while available < count and time.perf_counter() - started < limit:
                await asyncio.sleep(0.5)
                available = await _available(client, replicas)
            elapsed = time.perf_counter() - started
            cpu = h.cpu_seconds(emu.pid) - cpu0
            writes = await _rv(client) - rv0
            status, pods = await client.request('GET', f'/api/v1/namespaces/{NAMESPACE}/pods')
            assert status == 200, status
            return {'deployments': count, 'replicas': replicas, 'available': available,
                    'create_seconds': round(creating, 2), 'all_available_seconds': round(elapsed, 2),
                    'emulator_cpu_seconds': round(cpu, 2), 'writes': writes, 'pods': len(pods['items'])}
    finally:
        emu.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='100 Deployments instead of 1,000')
    parser.add_argument('--deployments', type=int, default=None)
    parser.add_argument('--replicas', type=int, default=3)
    parser.add_argument('--repeats', type=int, default=1)
    parser.add_argument('--timeout', type=float, default=600.0)
    args = parser.parse_args()
    count = args.deployments or (100 if args.quick else 1000)
    runs = []
    for index in range(args.repeats):
        log(f'run {index + 1}/{args.repeats}: {count} Deployments x {args.replicas} replicas')
        figures = asyncio.run(run_once(count, args.replicas, args.timeout))
        log(json.dumps(figures))
        runs.append(figures)
    mode = 'quick' if args.quick else 'full'
    result = {'machine': h.machine(), 'mode': mode, 'runs': runs}
    stamp = time.strftime('%Y-%m-%dT%H%M', time.gmtime())
    out = h.ROOT / 'bench' / 'results' / f'workloads-{stamp}-{mode}.json'
    out.write_text(json.dumps(result, indent=2) + '\n')
    for figures in runs:
        print(f"{figures['deployments']} Deployments x {figures['replicas']}: {figures['available']} available "
              f"after {figures['all_available_seconds']} s (created in {figures['create_seconds']} s); "
              f"emulator CPU {figures['emulator_cpu_seconds']} s; {figures['writes']} writes; {figures['pods']} Pods")
    print(f'written to {out.relative_to(h.ROOT)}')


if __name__ == '__main__':
    main()
