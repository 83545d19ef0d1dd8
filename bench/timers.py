"""Timers side by side: the cost of `@kopf.timer(interval=10)` on 1,000 and 10,000 objects, ours vs upstream.

    .venv/bin/python bench/timers.py --quick      # 1,000 objects, 20 s window (~3 minutes)
    .venv/bin/python bench/timers.py              # 1,000 and 10,000 objects, 60 s window (~20-25 minutes)

Per framework and object count, two operator processes, one after the other, each in a fresh namespace
with N objects that look handled already (as bench/run.py's restart scenario: our finalizer and the
diff-base annotation, in upstream's format):

- baseline: `bench/operator.py` alone (its resume handler runs once per object; nothing else happens);
- timers: the same module plus a second one (written to a temp dir, `TIMER_MODULE` below) with
  `@kopf.timer('kopf.dev', 'v1', 'kopfbenches', interval=10)` and a trivial async body that returns
  None (no patch: the cluster is not the bottleneck) and records its own lateness.

Each run: the objects exist; the operator starts; all N resume handlers run (seen in status by the
harness's raw watch); `--settle` seconds pass (every timer has fired at least once); then a window of
`--window` seconds: operator CPU (user+sys from /proc) / wall seconds, VmRSS at its end. Increases =
with timers - baseline. Lateness, per call in the window: call start - (previous call's end + 10 s),
both `time.monotonic()` taken inside the body (a non-sharp timer sleeps `interval` after each call's
end); the window's start and end are marked by SIGUSR1 to the operator, whose second one also makes the
module write its figures (a histogram, 0.1 ms resolution below 100 ms) to the operator's cwd.

Figures are printed and written to bench/results/timers-<timestamp>.json, never asserted.
Upstream Kopf 1.45.2 is installed by bench/run.py's `upstream_venv()` into bench/.venvs/ (never into the
project's .venv) and only run as a black box.
"""
import argparse
import asyncio
import json
import os
import pathlib
import signal
import sys
import time
from typing import Any

import harness as h
import run
from harness import log

INTERVAL = 10.0
STATS_FILE = 'timer-stats.json'  # written by the timer module into the operator's cwd

TIMER_MODULE = '''\
"""bench/timers.py's timer module, loaded next to bench/operator.py: a trivial timer that records its lateness."""
import json
import os
import signal
import sys
import time

import kopf

INTERVAL = %(interval)r
LAST = {}   # object name -> when its previous call ended (time.monotonic())
HIST = {}   # quantised lateness in ms -> calls (in the window only)
STATE = {'w0': None, 'w1': None, 'calls': 0, 'calls_all': 0, 'min': None, 'max': None}


def _bucket(ms):
    if -100 < ms < 100:
        return round(ms, 1)
    if -1000 < ms < 1000:
        return float(round(ms))
    if -10000 < ms < 10000:
        return float(round(ms, -1))
    return float(round(ms, -2))


@kopf.timer('kopf.dev', 'v1', 'kopfbenches', interval=INTERVAL)
async def bench_tick(name, **_):
    now = time.monotonic()
    state = STATE
    state['calls_all'] += 1
    prev = LAST.get(name)
    if prev is not None and state['w0'] is not None and state['w1'] is None:
        late = (now - prev - INTERVAL) * 1000
        key = _bucket(late)
        HIST[key] = HIST.get(key, 0) + 1
        state['calls'] += 1
        if state['min'] is None or late < state['min']:
            state['min'] = late
        if state['max'] is None or late > state['max']:
            state['max'] = late
    LAST[name] = time.monotonic()


def _mark(signum, frame):
    now = time.monotonic()
    if STATE['w0'] is None:
        STATE['w0'] = now
        return
    STATE['w1'] = now
    floats = sys.getsizeof(1.0) * len(LAST)
    data = dict(STATE, objects_called=len(LAST),
                objects_called_in_window=sum(1 for t in LAST.values() if t >= STATE['w0']),
                recorder_bytes=sys.getsizeof(LAST) + floats + sys.getsizeof(HIST) + 64 * len(HIST),
                hist=sorted(HIST.items()))
    path = os.path.join(os.getcwd(), %(stats)r)
    with open(path + '.tmp', 'w') as f:
        json.dump(data, f)
    os.replace(path + '.tmp', path)


signal.signal(signal.SIGUSR1, _mark)
'''


def hist_percentile(hist: list[list[float]], q: float) -> float | None:
    total = sum(n for _, n in hist)
    if not total:
        return None
    rank = q / 100 * (total - 1)
    seen = 0
    for value, n in hist:  # sorted by value
        seen += n
        if seen > rank:
            return float(value)
    return float(hist[-1][0])


async def one_run(fw: h.Framework, emu: h.EmulatorProcess, n: int, timers: bool, args: argparse.Namespace,
                  logdir: pathlib.Path, module: pathlib.Path) -> dict[str, Any]:
    """N handled objects; the operator (with or without the timer module) starts; all resumed; settle; window."""
    kind = 'timers' if timers else 'baseline'
    ns = namespace(fw, n, timers)
    log(f'{fw.name}, {n} objects, {kind}: pre-creating the objects in {ns}')
    await run.populate(emu, ns, n)
    out: dict[str, Any] = {}
    async with h.Client(emu.port) as client:
        tracker = run.Tracker()
        watch = h.Watch(emu.port, ns, await client.resource_version(ns), tracker)
        watch.start()
        op = h.Operator(fw, emu.kubeconfig, ns, logdir, extra_args=[str(module)] if timers else [])
        async with h.running(op, watch):
            t0 = op.spawned_at
            await run.wait_resumed(op, tracker, n, args.timeout, kind)
            out['resume_s'] = max(r['t'] for r in tracker.results['resume_fn'].values()) - t0
            log(f'  all {n} resumed in {out["resume_s"]:.1f} s; settling {args.settle:.0f} s, '
                f'then a {args.window:.0f} s window')
            await asyncio.sleep(args.settle)
            if not op.alive():
                raise RuntimeError('the operator exited')
            before = await client.counters()
            cpu0, emu0, wall0 = op.cpu(), h.cpu_seconds(emu.pid), time.monotonic()
            if timers:
                os.kill(op.pid, signal.SIGUSR1)  # the window starts
            await asyncio.sleep(args.window)
            if timers:
                os.kill(op.pid, signal.SIGUSR1)  # the window ends; the module writes its figures
            cpu1, emu1, wall1 = op.cpu(), h.cpu_seconds(emu.pid), time.monotonic()
            mem = op.memory()
            after = await client.counters()
            out['loadavg'] = h.loadavg()
            wall = wall1 - wall0
            out['cpu_pct'] = 100 * (cpu1 - cpu0) / wall
            out['emulator_cpu_pct'] = 100 * (emu1 - emu0) / wall
            out['rss_mb'] = mem['VmRSS']
            out['rss_mb_peak'] = mem['VmHWM']
            writes = run.operator_writes(before, after, {})
            out['object_writes_in_window'] = sum(v for k, v in writes.items() if k.split()[1].startswith(h.PLURAL))
            out['writes_in_window'] = writes
            if timers:
                path = pathlib.Path(op.cwd) / STATS_FILE
                if not await h.wait_for(path.exists, 10, step=0.05):
                    raise RuntimeError(f'the timer module wrote no {path}')
                stats = json.loads(path.read_text())
                hist = stats.pop('hist')
                span = stats['w1'] - stats['w0']
                out.update({
                    'lateness_p50_ms': hist_percentile(hist, 50),
                    'lateness_p99_ms': hist_percentile(hist, 99),
                    'lateness_min_ms': stats['min'],
                    'lateness_max_ms': stats['max'],
                    'calls_in_window': stats['calls'],
                    'calls_per_s': stats['calls'] / span,
                    'expected_calls_per_s': n / INTERVAL,
                    'objects_called': stats['objects_called'],
                    'objects_called_in_window': stats['objects_called_in_window'],
                    'recorder_mb': stats['recorder_bytes'] / 2**20,
                })
            log(f'  {fw.name} {kind}: CPU {out["cpu_pct"]:.1f} %, RSS {out["rss_mb"]:.1f} MB'
                + (f', lateness p50 {out["lateness_p50_ms"]} ms, p99 {out["lateness_p99_ms"]} ms, '
                   f'{out["calls_per_s"]:.0f} calls/s' if timers else '')
                + f' (load {out["loadavg"][0]:.2f})')
    await run.cleanup(emu, ns, n)
    return out


async def safe_run(fw: h.Framework, emu: h.EmulatorProcess, n: int, timers: bool, args: argparse.Namespace,
                   logdir: pathlib.Path, module: pathlib.Path) -> dict[str, Any]:
    """One run; a failure (e.g. not all resumed within --timeout) is recorded as `error`, the others go on."""
    try:
        return await one_run(fw, emu, n, timers, args, logdir, module)
    except RuntimeError as e:
        log(f'{fw.name}, {n} objects, {"timers" if timers else "baseline"}: FAILED: {e}')
        await run.cleanup(emu, namespace(fw, n, timers), n)
        return {'error': str(e)}


def namespace(fw: h.Framework, n: int, timers: bool) -> str:
    return f'timers-{fw.name.replace("+", "-")}-{n}-{"timers" if timers else "baseline"}'


def increase(base: dict[str, Any], with_timers: dict[str, Any], key: str) -> float | None:
    return with_timers[key] - base[key] if key in base and key in with_timers else None


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    frameworks = run.frameworks(ours_only=args.ours_only, upstream_clients=args.upstream_clients)
    ours = frameworks[0]
    logdir = h.logs_dir('kopf-bench-timers-')
    module = logdir / 'bench_timer_module.py'
    module.write_text(TIMER_MODULE % {'interval': INTERVAL, 'stats': STATS_FILE})
    report: dict[str, Any] = {fw.name: {} for fw in frameworks}
    load_start = h.loadavg()
    async with h.local_cluster(ours.python, logdir) as emu:
        for n in args.sizes:
            for fw in frameworks:
                base = await safe_run(fw, emu, n, False, args, logdir, module)
                with_timers = await safe_run(fw, emu, n, True, args, logdir, module)
                report[fw.name][str(n)] = {
                    'cpu_pct_increase': increase(base, with_timers, 'cpu_pct'),
                    'rss_mb_increase': increase(base, with_timers, 'rss_mb'),
                    'lateness_p50_ms': with_timers.get('lateness_p50_ms'),
                    'lateness_p99_ms': with_timers.get('lateness_p99_ms'),
                    'baseline': base, 'timers': with_timers,
                }
    if 'upstream' in report:
        report['ratio'] = {n: h.ratios(report['ours'][n], report['upstream'][n],
                                       ('cpu_pct_increase', 'rss_mb_increase', 'lateness_p50_ms', 'lateness_p99_ms'))
                           for n in map(str, args.sizes)}
    report['meta'] = run.meta(args, logdir, sizes=args.sizes, interval_s=INTERVAL, window_s=args.window,
                              settle_s=args.settle, loadavg_start=load_start)
    return report


ROWS = [
    ('cpu_pct', 'baseline', 'CPU, % of a core: baseline', '{:.1f}'),
    ('cpu_pct', 'timers', '  … with timers', '{:.1f}'),
    ('cpu_pct_increase', None, '  … increase', '{:.1f}'),
    ('rss_mb', 'baseline', 'RSS at the window end, MB: baseline', '{:.1f}'),
    ('rss_mb', 'timers', '  … with timers', '{:.1f}'),
    ('rss_mb_increase', None, '  … increase', '{:.1f}'),
    ('lateness_p50_ms', None, 'lateness p50, ms', '{:.1f}'),
    ('lateness_p99_ms', None, 'lateness p99, ms', '{:.1f}'),
    ('lateness_max_ms', 'timers', 'lateness max, ms', '{:.1f}'),
    ('calls_per_s', 'timers', 'timer calls/s in the window', '{:.0f}'),
    ('expected_calls_per_s', 'timers', '  … expected (N / interval)', '{:.0f}'),
    ('objects_called_in_window', 'timers', 'objects whose timer ran in the window', '{:.0f}'),
    ('object_writes_in_window', 'timers', 'object writes in the window (timers)', '{:.0f}'),
    ('emulator_cpu_pct', 'timers', 'the cluster process busy (timers), %', '{:.1f}'),
    ('resume_s', 'timers', 'start → all resumed (timers run), s', '{:.1f}'),
    ('loadavg', 'timers', 'load average (1 min) at the window end', '{:.2f}'),
]


def cell(block: dict[str, Any], key: str, sub: str | None) -> Any:
    value = (block[sub] if sub else block).get(key)
    return value[0] if isinstance(value, list) else value  # loadavg: the 1-minute one


def table(report: dict[str, Any]) -> str:
    meta = report['meta']
    lines = [f"kopf bench timers ({meta['mode']}: interval={meta['interval_s']:.0f} s, trivial async body, "
             f"window {meta['window_s']:.0f} s after {meta['settle_s']:.0f} s settle) on "
             f"{meta['machine']['cores']} cores; load average {' '.join(map(str, meta['loadavg_start']))} at "
             f"the start, {' '.join(map(str, meta['loadavg_end']))} at the end"]
    up = report.get('upstream')
    for n in map(str, meta['sizes']):
        lines.append(f"{f'{int(n):,} objects':48} {'ours':>10} {'upstream':>10} {'ours/up':>8}")
        for key, sub, title, fmt in ROWS:
            a = cell(report['ours'][n], key, sub)
            b = cell(report['upstream'][n], key, sub) if up else None
            ratio = f'{a / b:.2f}x' if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b else '-'
            shown = ['-' if v is None else fmt.format(v) for v in (a, b)]
            lines.append(f'{title:48} {shown[0]:>10} {shown[1]:>10} {ratio:>8}')
    big = str(max(meta['sizes']))
    if up:
        a, b = report['ours'][big], report['upstream'][big]
        marks = []
        for key, title in (('cpu_pct_increase', 'CPU increase'), ('rss_mb_increase', 'RSS increase')):
            if a[key] is None or b[key] is None:
                marks.append(f"{title} ≤ ⅓ of upstream's: n/a")
                continue
            ok = b[key] > 0 and a[key] <= b[key] / 3
            marks.append(f"{title} ≤ ⅓ of upstream's: {'met' if ok else 'not met'}")
        p99 = a['lateness_p99_ms']
        marks.append(f"lateness p99 ≤ 100 ms: {'met' if p99 is not None and p99 <= 100 else 'not met'}")
        lines.append(f"targets at {int(big):,} (informative, not asserted): " + '; '.join(marks))
    for fw in report:
        for n, block in report[fw].items() if fw in ('ours', 'upstream') else ():
            for kind in ('baseline', 'timers'):
                if 'error' in block[kind]:
                    lines.append(f"{fw}, {int(n):,} objects, {kind}: FAILED: {block[kind]['error']}")
    return '\n'.join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--quick', action='store_true', help='1,000 objects only, a 20 s window')
    parser.add_argument('--sizes', type=int, nargs='+', default=None, help='object counts (default 1000 10000)')
    parser.add_argument('--window', type=float, default=None, help='the measured window, s (default 60; quick 20)')
    parser.add_argument('--settle', type=float, default=None,
                        help='after all resumed, before the window, s (default 15; quick 12): > the interval')
    parser.add_argument('--timeout', type=float, default=600.0,
                        help='for all N resume handlers to run, s (default 600: upstream, 10,000 timers, a busy host)')
    run.side_options(parser)
    args = parser.parse_args()
    args.sizes = args.sizes or ([1000] if args.quick else [1000, 10000])
    args.window = args.window or (20.0 if args.quick else 60.0)
    args.settle = args.settle or (12.0 if args.quick else 15.0)
    run.run_and_report('timers', bench(args), table, write=not args.no_write)
    return 0


if __name__ == '__main__':
    sys.exit(main())
