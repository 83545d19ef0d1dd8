"""Indices side by side: `@kopf.index` over 10,000 ConfigMaps, ours vs upstream; and one 100,000-key result.

    .venv/bin/python bench/indexing.py --quick    # 1,000 ConfigMaps, 1 run
    .venv/bin/python bench/indexing.py            # 10,000 ConfigMaps, median of 3 runs

**Indexing** (per framework, object count and run, two operator processes, each in a fresh namespace
with N ConfigMaps (labels `app: app-00` … `app-99`) and one `kopfbenches` object ('probe') existing
before the start):

- baseline: `bench/operator.py` alone (its create handler runs on the probe; nothing watches ConfigMaps);
- index: the same plus a module (`INDEX_MODULE`, written to a temp dir) with
  `@kopf.index('configmaps')` returning `{labels['app']: name}` per object.

Both frameworks hold every handler of every resource until all indices are complete, so the figure is
the same external one for both: process spawn → the probe's create handler ran (its own `time.time()`,
seen in status by the harness's raw watch); indexing time = index - baseline. RSS (VmRSS) `--settle`
seconds after that first handler call; the index's memory cost = index - baseline (it includes listing
and watching the N ConfigMaps, which the baseline does not do: what an index costs a user). Our own log
line ("Indexing is complete: …") is shown too, but only the external figures are compared.

**100,000 keys** (per framework: one ConfigMap 'big' and the probe exist): `BIG_MODULE` indexes 'big'
with a dict of K keys, K = 1 (baseline) or 100,000, and has an `@kopf.on.event('configmaps')` handler
that appends its `time.time()` to a file in the operator's cwd for 'big' (event handlers run after the
object's indexing in the same cycle). Figures: spawn → the probe's create handler; a re-index cycle =
PATCH of 'big' sent → the event handler saw that change (median of `--cycles`); RSS after the cycles
and `--settle` seconds; the index function's own dict-building time; whether the operator is still
alive and how many tracebacks/ERROR lines its log has.

Figures are printed and written to bench/results/indexing-<UTC stamp>-<mode>.json, never asserted.
Upstream Kopf 1.45.2 runs from bench/run.py's throw-away venv (plain; `--upstream-clients` for the one
with kubernetes + pykube-ng), only as a black box. /proc/loadavg is printed and stored (a shared 2-core
host: other test suites may be running).
"""
import argparse
import asyncio
import json
import pathlib
import re
import statistics
import sys
import time
from typing import Any

import harness as h
import run
from harness import log

APPS = 100  # distinct label values, i.e. keys of the index

INDEX_MODULE = '''\
"""bench/indexing.py's index module, loaded next to bench/operator.py."""
import kopf


@kopf.index('configmaps')
def by_app(name, labels, **_):
    return {labels.get('app'): name}
'''

BIG_MODULE = '''\
"""bench/indexing.py's big-index module: %(keys)d key(s) from the ConfigMap 'big'; its event handler records."""
import json
import time

import kopf

KEYS = %(keys)d


@kopf.index('configmaps')
def big_index(name, **_):
    if name != 'big':
        return {name: name}
    t0 = time.monotonic()
    result = {f'k{i:06d}': name for i in range(KEYS)}
    with open('big-index.jsonl', 'a') as f:
        f.write(json.dumps({'build_s': time.monotonic() - t0}) + '\\n')
    return result


@kopf.on.event('configmaps')
def big_seen(name, body, **_):
    if name == 'big':
        with open('big-events.jsonl', 'a') as f:
            f.write(json.dumps({'t': time.time(), 'n': (body.get('data') or {}).get('n')}) + '\\n')
'''

INDEXING_LINE = re.compile(r'Indexing is complete: .*')


def configmaps_path(ns: str, name: str | None = None) -> str:
    return f'/api/v1/namespaces/{ns}/configmaps' + (f'/{name}' if name else '')


def configmap(name: str, n: int) -> dict[str, Any]:
    return {'apiVersion': 'v1', 'kind': 'ConfigMap',
            'metadata': {'name': name, 'labels': {'app': f'app-{n % APPS:02d}'}}, 'data': {'n': str(n)}}


def read_jsonl(path: pathlib.Path) -> list[dict[str, Any]]:
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except OSError:
        return []


async def remove_namespace(emu: h.EmulatorProcess, ns: str) -> None:
    """The probe's finalizer stripped (its operator is gone), then the namespace deleted and waited for."""
    async with h.Client(emu.port, connections=1) as client:
        await client.request('PATCH', h.objects_path(ns, 'probe'), {'metadata': {'finalizers': None}},
                             'application/merge-patch+json')
    await run.cleanup(emu, ns, 0)


async def operator_run(fw: h.Framework, emu: h.EmulatorProcess, ns: str, configmaps: list[dict[str, Any]],
                       module: pathlib.Path | None, args: argparse.Namespace, logdir: pathlib.Path,
                       cycles: int = 0) -> dict[str, Any]:
    """The ConfigMaps and the probe exist; the operator starts; its first handler call; settle; figures."""
    out: dict[str, Any] = {}
    async with h.Client(emu.port) as client:
        await client.ensure_namespace(ns)
        created = await client.bulk([('POST', configmaps_path(ns), cm, 'application/json') for cm in configmaps],
                                    ok=(201,))
        if created != len(configmaps):
            raise RuntimeError(f'created {created} of {len(configmaps)} ConfigMaps')
        tracker = run.Tracker()
        watch = h.Watch(emu.port, ns, await client.resource_version(ns), tracker)
        watch.start()
        await client.request('POST', h.objects_path(ns), {'apiVersion': h.API_VERSION, 'kind': h.KIND,
                                                          'metadata': {'name': 'probe'}, 'spec': {'n': 0}})
        profile = args.profile / f'{ns}.txt' if args.profile and fw.name == 'ours' else None
        op = h.Operator(fw, emu.kubeconfig, ns, logdir, extra_args=[str(module)] if module else [], profile=profile)
        try:  # the namespace goes in the end, whatever happened (after the operator and the watch stopped)
            async with h.running(op, watch):
                if not await h.wait_for(lambda: 'probe' in tracker.results.get('create_fn', {}) or not op.alive(),
                                        args.timeout):
                    if cycles:
                        raise RuntimeError(f'no first handler call in {args.timeout:.0f} s')
                    # Recorded, not raised: the figures become lower bounds ("≥"), taken at the timeout.
                    log(f'  {fw.name}: no first handler call in {args.timeout:.0f} s; recording lower bounds')
                    mem = op.memory()
                    out.update(first_handler_s=time.time() - op.spawned_at, incomplete=True, alive=op.alive(),
                               cpu_s_at_first_handler=op.cpu(), rss_mb_at_first_handler=mem['VmRSS'],
                               rss_mb=mem['VmRSS'], rss_mb_peak=mem['VmHWM'], cpu_s=op.cpu(), loadavg=h.loadavg(),
                               log_indexing_line=None)
                    return out
                if not op.alive():
                    raise RuntimeError('the operator exited')
                out['first_handler_s'] = tracker.results['create_fn']['probe']['t'] - op.spawned_at
                out['cpu_s_at_first_handler'] = op.cpu()
                out['rss_mb_at_first_handler'] = op.memory()['VmRSS']
                events = pathlib.Path(op.cwd) / 'big-events.jsonl'
                cycle_s: list[float] = []
                for k in range(1, cycles + 1):
                    await asyncio.sleep(0.5)
                    sent = time.time()
                    await client.request('PATCH', configmaps_path(ns, 'big'), {'data': {'n': f'cycle-{k}'}},
                                         'application/merge-patch+json')
                    if not await h.wait_for(lambda k=k: any(e['n'] == f'cycle-{k}' for e in read_jsonl(events))
                                            or not op.alive(), args.timeout, step=0.01):
                        raise RuntimeError(f're-index cycle {k}: the event handler did not run')
                    if not op.alive():
                        raise RuntimeError('the operator exited')
                    cycle_s.append(next(e['t'] for e in read_jsonl(events) if e['n'] == f'cycle-{k}') - sent)
                if cycles:
                    out['cycle_ms'] = statistics.median(cycle_s) * 1000
                    out['cycle_ms_all'] = [round(s * 1000, 1) for s in cycle_s]
                    builds = [e['build_s'] for e in read_jsonl(pathlib.Path(op.cwd) / 'big-index.jsonl')]
                    out['index_fn_build_ms'] = statistics.median(builds) * 1000 if builds else None
                    out['index_fn_calls'] = len(builds)
                await asyncio.sleep(args.settle)
                out['alive'] = op.alive()
                if not op.alive():
                    raise RuntimeError('the operator exited')
                mem = op.memory()
                out['rss_mb'] = mem['VmRSS']
                out['rss_mb_peak'] = mem['VmHWM']
                out['cpu_s'] = op.cpu()
                out['loadavg'] = h.loadavg()
                text = op.logfile.read_text(errors='replace')
                found = INDEXING_LINE.search(text)
                out['log_indexing_line'] = found.group(0) if found else None
                out['log_tracebacks'] = text.count('Traceback')
                out['log_errors'] = sum(1 for line in text.splitlines() if ' ERROR ' in line or 'ERROR:' in line)
        finally:
            await remove_namespace(emu, ns)
    return out


def paired(runs: list[tuple[dict[str, Any], dict[str, Any]]], key: str) -> float:
    """The median over runs of (second - first) for one figure."""
    return statistics.median(b[key] - a[key] for a, b in runs)


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    frameworks = run.frameworks(ours_only=args.ours_only, upstream_clients=args.upstream_clients)
    ours = frameworks[0]
    logdir = h.logs_dir('kopf-bench-indexing-')
    index_module = logdir / 'bench_index_module.py'
    index_module.write_text(INDEX_MODULE)
    big_modules = {}
    for keys in (1, args.keys):
        big_modules[keys] = logdir / f'bench_big_index_{keys}.py'
        big_modules[keys].write_text(BIG_MODULE % {'keys': keys})
    load_start = h.loadavg()
    report: dict[str, Any] = {fw.name: {} for fw in frameworks}
    n = args.objects
    cms = [configmap(f'cm-{i:06d}', i) for i in range(n)]
    async with h.local_cluster(ours.python, logdir) as emu:
        runs: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {fw.name: [] for fw in frameworks}
        for rep in range(args.repeats):
            for fw in frameworks:
                results = []
                for variant, module in (('baseline', None), ('index', index_module)):
                    ns = f'idx-{fw.name}-{variant}-{n}-{rep}'
                    log(f'run {rep + 1}/{args.repeats}: {fw.name}, {n} ConfigMaps, {variant}')
                    r = await operator_run(fw, emu, ns, cms, module, args, logdir)
                    extra = f'; {r["log_indexing_line"]}' if r['log_indexing_line'] else ''
                    log(f'  first handler {r["first_handler_s"]:.2f} s, RSS {r["rss_mb"]:.1f} MB '
                        f'(load {r["loadavg"][0]:.2f})' + extra)
                    results.append(r)
                runs[fw.name].append((results[0], results[1]))
        for fw in frameworks:
            pairs = runs[fw.name]
            report[fw.name]['indexing'] = {
                'objects': n,
                'first_handler_s_baseline': statistics.median(a['first_handler_s'] for a, _ in pairs),
                'first_handler_s_index': statistics.median(b['first_handler_s'] for _, b in pairs),
                'indexing_s': paired(pairs, 'first_handler_s'),
                'rss_mb_baseline': statistics.median(a['rss_mb'] for a, _ in pairs),
                'rss_mb_index': statistics.median(b['rss_mb'] for _, b in pairs),
                'rss_mb_increase': paired(pairs, 'rss_mb'),
                'cpu_s_increase_at_first_handler': paired(pairs, 'cpu_s_at_first_handler'),
                'log_indexing_line': pairs[-1][1]['log_indexing_line'],
                'incomplete': any(b.get('incomplete') for _, b in pairs),  # then index figures are lower bounds
                'runs': [{'baseline': a, 'index': b} for a, b in pairs],
            }
        if not args.no_big:
            for fw in frameworks:
                block: dict[str, Any] = {'keys': args.keys}
                for keys in (1, args.keys):
                    ns = f'big-{fw.name}-{keys}'
                    log(f'{fw.name}: one ConfigMap with {keys:,} index key(s), {args.cycles} re-index cycles')
                    try:
                        r = await operator_run(fw, emu, ns, [configmap('big', 0)], big_modules[keys], args, logdir,
                                               cycles=args.cycles)
                        log(f'  first handler {r["first_handler_s"]:.2f} s, cycle {r["cycle_ms"]:.0f} ms, '
                            f'RSS {r["rss_mb"]:.1f} MB, alive: {r["alive"]}, tracebacks: {r["log_tracebacks"]}')
                    except Exception as e:  # recorded, not raised: "no crash" is the figure here
                        log(f'  FAILED: {e!r}')
                        r = {'failed': repr(e), 'alive': False}
                        try:
                            await remove_namespace(emu, ns)
                        except Exception:
                            pass
                    block['keys_1' if keys == 1 else 'keys_big'] = r
                a, b = block['keys_1'], block['keys_big']
                if 'failed' not in a and 'failed' not in b:
                    block.update({
                        'first_handler_s_increase': b['first_handler_s'] - a['first_handler_s'],
                        'cycle_ms_increase': b['cycle_ms'] - a['cycle_ms'],
                        'rss_mb_increase': b['rss_mb'] - a['rss_mb'],
                    })
                block['ok'] = b.get('alive', False) and not b.get('log_tracebacks') and 'failed' not in b
                report[fw.name]['big'] = block
    if 'upstream' in report:
        report['ratio'] = {}
        for part, keys in (('indexing', ('indexing_s', 'rss_mb_increase', 'first_handler_s_index', 'rss_mb_index',
                                         'cpu_s_increase_at_first_handler')),
                           ('big', ('first_handler_s_increase', 'cycle_ms_increase', 'rss_mb_increase'))):
            report['ratio'][part] = h.ratios(report['ours'].get(part, {}), report['upstream'].get(part, {}), keys)
    report['meta'] = run.meta(args, logdir, objects=n, repeats=args.repeats, settle_s=args.settle,
                              timeout_s=args.timeout, keys=args.keys, cycles=args.cycles, loadavg_start=load_start)
    return report


ROWS_INDEXING = [
    ('first_handler_s_baseline', 'spawn → first handler, no index, s', '{:.2f}'),
    ('first_handler_s_index', '  … with the index, s', '{:.2f}'),
    ('indexing_s', '  … indexing time (difference), s', '{:.2f}'),
    ('cpu_s_increase_at_first_handler', 'operator CPU until then, increase, s', '{:.2f}'),
    ('rss_mb_baseline', 'RSS after settle, no index, MB', '{:.1f}'),
    ('rss_mb_index', '  … with the index, MB', '{:.1f}'),
    ('rss_mb_increase', "  … the index's memory cost, MB", '{:.1f}'),
]
ROWS_BIG = [
    ('first_handler_s', 'keys_1', 'spawn → first handler, 1 key, s', '{:.2f}'),
    ('first_handler_s', 'keys_big', '  … {keys} keys, s', '{:.2f}'),
    ('cycle_ms', 'keys_1', 're-index cycle (patch → event handler), 1 key, ms', '{:.0f}'),
    ('cycle_ms', 'keys_big', '  … {keys} keys, ms', '{:.0f}'),
    ('index_fn_build_ms', 'keys_big', "  … of which the index fn's own dict, ms", '{:.0f}'),
    ('rss_mb', 'keys_1', 'RSS after the cycles, 1 key, MB', '{:.1f}'),
    ('rss_mb', 'keys_big', '  … {keys} keys, MB', '{:.1f}'),
    ('rss_mb_increase', None, '  … increase, MB', '{:.1f}'),
    ('log_tracebacks', 'keys_big', 'tracebacks in the log ({keys} keys)', '{:.0f}'),
    ('alive', 'keys_big', 'operator alive at the end ({keys} keys)', '{}'),
]


def table(report: dict[str, Any]) -> str:
    meta = report['meta']
    fws = [fw for fw in ('ours', 'upstream') if fw in report]
    lines = [f"kopf bench indexing ({meta['mode']}: {meta['objects']:,} ConfigMaps, @kopf.index "
             f"{{labels['app']: name}} ({APPS} keys), median of {meta['repeats']}; RSS {meta['settle_s']:.0f} s after "
             f"the first handler) on {meta['machine']['cores']} cores; load average "
             f"{' '.join(map(str, meta['loadavg_start']))} at the start, {' '.join(map(str, meta['loadavg_end']))} "
             f"at the end",
             f"{format(meta['objects'], ',') + ' indexed objects':52} {'ours':>10} {'upstream':>10} {'ours/up':>8}"]

    def row(title: str, a: Any, b: Any, fmt: str) -> str:
        def show(v: Any) -> str:
            return '-' if v is None else fmt.format(v)
        ratio = (f'{a / b:.2f}x' if isinstance(a, (int, float)) and isinstance(b, (int, float))
                 and not isinstance(a, bool) and b else '-')
        return f'{title:52} {show(a):>10} {show(b):>10} {ratio:>8}'

    for key, title, fmt in ROWS_INDEXING:
        vals = [report[fw]['indexing'].get(key) for fw in fws] + [None]
        line = row(title, vals[0], vals[1], fmt)
        if key not in ('first_handler_s_baseline', 'rss_mb_baseline'):
            for fw in fws:  # an index run that timed out: its figures are lower bounds
                if report[fw]['indexing'].get('incomplete'):
                    line += f'  ({fw}: ≥, timed out)'
        lines.append(line)
    for fw in fws:
        line = report[fw]['indexing'].get('log_indexing_line')
        if line:
            lines.append(f'  {fw} logged: {line}')
    if 'upstream' in report:
        a, b = report['ours']['indexing'], report['upstream']['indexing']
        marks = []
        for key, title in (('indexing_s', 'time'), ('rss_mb_increase', 'memory')):
            ok = b[key] > 0 and a[key] <= b[key] / 2 and not a.get('incomplete')  # upstream's: lower bounds
            marks.append(f"{title} ≤ ½ of upstream's: {'met' if ok else 'not met'}")
        lines.append('targets (informative, not asserted): ' + '; '.join(marks))
    if all('big' in report[fw] for fw in fws):
        keys = f"{meta['keys']:,}"
        lines.append(f"{f'one object, {keys} index keys':52} {'ours':>10} {'upstream':>10} {'ours/up':>8}")
        for key, sub, title, fmt in ROWS_BIG:
            vals = []
            for fw in fws:
                block = report[fw]['big']
                vals.append((block.get(sub) or {}).get(key) if sub else block.get(key))
            vals.append(None)
            lines.append(row(title.format(keys=keys), vals[0], vals[1], fmt))
        for fw in fws:
            block = report[fw]['big']
            for sub in ('keys_1', 'keys_big'):
                if 'failed' in block.get(sub, {}):
                    lines.append(f"  {fw} {sub}: FAILED {block[sub]['failed']}")
                elif block.get(sub, {}).get('log_indexing_line'):
                    lines.append(f"  {fw} ({sub}) logged: {block[sub]['log_indexing_line']}")
    return '\n'.join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--quick', action='store_true', help='1,000 ConfigMaps, 1 run')
    parser.add_argument('--objects', type=int, default=None, help='indexed ConfigMaps (default 10,000; quick 1,000)')
    parser.add_argument('--repeats', type=int, default=None, help='runs per variant (median; default 3, quick 1)')
    parser.add_argument('--settle', type=float, default=5.0, help='after the first handler, before RSS, s (5)')
    parser.add_argument('--keys', type=int, default=100_000, help='keys from the one big object (100,000)')
    parser.add_argument('--cycles', type=int, default=3, help='re-index cycles of the big object (median; 3)')
    parser.add_argument('--no-big', action='store_true', help='skip the one-object many-keys case')
    parser.add_argument('--profile', type=pathlib.Path, default=None,
                        help="run our operator under py-spy; its raw stacks go to this directory (figures are off)")
    parser.add_argument('--timeout', type=float, default=1200.0,
                        help='seconds to wait for the first handler call (upstream at 10,000: minutes; 1200)')
    run.side_options(parser)
    args = parser.parse_args()
    args.objects = args.objects or (1000 if args.quick else 10000)
    args.repeats = args.repeats or (1 if args.quick else 3)
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
        args.no_write = True
    run.run_and_report('indexing', bench(args), table, write=not args.no_write)
    return 0


if __name__ == '__main__':
    sys.exit(main())
