"""The burst on a real API server: our operator against `kopf.testing.EnvtestCluster` (etcd + kube-apiserver).

    .venv/bin/python bench/envtest.py               # 500 objects
    .venv/bin/python bench/envtest.py --objects 200
    .venv/bin/python bench/envtest.py --frameworks ours,upstream --objects 200   # and upstream Kopf 1.45.2

Needs the envtest binaries (`make envtest`, or `$KUBEBUILDER_ASSETS`). The operator is the benchmark's
operator (bench/operator.py) as a separate process (`python -I -m kopf run --standalone -n NS`), as in
bench/run.py; the objects are created over HTTPS with the admin's client certificate by a few threads,
and the figures are read from the objects themselves (each handler records `time.time()` in its
status). Figures only, nothing asserted: the emulator's equivalents are in bench/run.py. On 2 cores
the apiserver and etcd share the CPU with the operator and the creating threads (one TLS connection
per request), so `create_requests_s` shows how fast the objects could come at all. With
`--frameworks ours,upstream`, each framework gets a fresh cluster of its own (upstream Kopf from
bench/run.py's throw-away venv); the figures go to bench/results/envtest-<timestamp>.json.
"""
import argparse
import concurrent.futures
import json
import pathlib
import statistics
import tempfile
import time
from typing import Any

import harness as h
from harness import log

from kopf.testing import EnvtestCluster


def handled(cluster: EnvtestCluster, ns: str) -> dict[str, float]:
    """name -> the time its create_fn ran (from status), for the objects handled so far."""
    found = cluster.list(h.API_VERSION, h.PLURAL, ns)
    return {obj['metadata']['name']: obj['status']['create_fn']['t']
            for obj in found if ((obj.get('status') or {}).get('create_fn') or {}).get('t')}


def wait_until(predicate: Any, seconds: float, step: float = 0.1) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return bool(predicate())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--objects', type=int, default=500)
    parser.add_argument('--threads', type=int, default=8)
    parser.add_argument('--timeout', type=float, default=300)
    parser.add_argument('--frameworks', default='ours', help="comma-separated: 'ours', 'upstream'")
    args = parser.parse_args()
    runs = {}
    for name in args.frameworks.split(','):
        if name == 'upstream':
            import run  # bench/run.py: the throw-away venv with upstream kopf
            framework = h.Framework('upstream', run.upstream_venv(False), 'upstream')
        else:
            framework = h.Framework('ours', str(h.ROOT / '.venv' / 'bin' / 'python'), 'ours')
        runs[name] = measure(framework, args)
        log(f'{name}: {json.dumps(runs[name])}')
    result = {'machine': h.machine(), 'scenario': 'burst on kube-apiserver (EnvtestCluster)', 'runs': runs}
    stamp = time.strftime('%Y-%m-%dT%H%M', time.gmtime())
    out = h.ROOT / 'bench' / 'results' / f'envtest-{stamp}.json'
    out.write_text(json.dumps(result, indent=2) + '\n')
    print(json.dumps(runs, indent=2))
    log(f'written to {out}')


def measure(framework: h.Framework, args: argparse.Namespace) -> dict[str, Any]:
    """One framework's burst on a fresh cluster: startup, N creations, N deletions."""
    ns = 'bench-envtest'
    logdir = pathlib.Path(tempfile.mkdtemp(prefix='kopf-bench-envtest-'))
    started = time.monotonic()
    with EnvtestCluster(controller_manager=False) as cluster:
        log(f'envtest cluster {cluster.version["gitVersion"]} started in {time.monotonic() - started:.1f} s')
        cluster.apply(h.CRD, {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': ns}})
        path = f'/apis/{h.API_VERSION}/namespaces/{ns}/{h.PLURAL}'

        def body(name: str, n: int) -> dict[str, Any]:
            return {'apiVersion': h.API_VERSION, 'kind': h.KIND, 'metadata': {'name': name}, 'spec': {'n': n}}

        cluster.request('POST', path, body('probe', 0))
        op = h.Operator(framework, cluster.kubeconfig, ns, logdir)
        op.start()
        try:
            if not wait_until(lambda: 'probe' in handled(cluster, ns) or not op.alive(), 60):
                raise RuntimeError(f'no first handler call in 60 s:\n{op.tail()}')
            startup_s = handled(cluster, ns)['probe'] - op.spawned_at
            names = [f'b-{i:05d}' for i in range(args.objects)]
            sent: dict[str, float] = {}

            def create(index: int) -> None:
                sent[names[index]] = time.time()
                cluster.request('POST', path, body(names[index], index))

            cpu0, burst_started = op.cpu(), time.time()
            with concurrent.futures.ThreadPoolExecutor(args.threads) as pool:
                list(pool.map(create, range(args.objects)))
            created_s = time.time() - burst_started
            if not wait_until(lambda: len(handled(cluster, ns).keys() & set(names)) >= args.objects or not op.alive(),
                              args.timeout, step=0.25):
                raise RuntimeError(f'handled {len(handled(cluster, ns))} of {args.objects}:\n{op.tail()}')
            times = handled(cluster, ns)
            burst_s = max(times[name] for name in names) - burst_started
            cpu_created = op.cpu() - cpu0
            latencies = sorted((times[name] - sent[name]) * 1000 for name in names)

            deleted_at = time.time()
            with concurrent.futures.ThreadPoolExecutor(args.threads) as pool:
                list(pool.map(lambda name: cluster.delete(h.API_VERSION, h.PLURAL, name, ns), names))
            if not wait_until(lambda: not (set(names) & {o['metadata']['name']
                                                          for o in cluster.list(h.API_VERSION, h.PLURAL, ns)}),
                              args.timeout, step=0.25):
                raise RuntimeError(f'deletions not handled in {args.timeout} s:\n{op.tail()}')
            delete_s = time.time() - deleted_at
            figures = {
                'framework': framework.name, 'server': cluster.version['gitVersion'], 'objects': args.objects,
                'startup_s': round(startup_s, 3),
                'create_requests_s': round(created_s, 2),
                'objects_per_s': round(args.objects / burst_s, 1),
                'p50_ms': round(statistics.median(latencies), 1),
                'p99_ms': round(h.percentile(latencies, 99), 1),
                'cpu_s_per_1000': round(cpu_created * 1000 / args.objects, 2),
                'deletions_per_s': round(args.objects / delete_s, 1),
                'rss_mb_peak': op.memory().get('VmHWM'),
            }
        finally:
            op.stop()
    return figures




if __name__ == '__main__':
    main()
