"""Side-by-side benchmark: our kopf vs upstream Kopf 1.45.2, the same operator on the same local cluster.

    .venv/bin/python bench/run.py            # full: 1,000 objects, 10,000 idle/restart, median of 3
    .venv/bin/python bench/run.py --quick    # 200 objects, 1,000 idle/restart, 1 run (< 3 minutes)
    .venv/bin/python bench/run.py --ours-only --uvloop both   # ours with uvloop vs without, side by side
    .venv/bin/python bench/run.py --ours-only --metrics both  # ours with `--metrics` vs without, side by side
    .venv/bin/python bench/run.py --ours-only --baseline /tree/.venv/bin/python  # A/B: another commit's kopf,
                                                              # alternating runs, the same emulator and harness

Upstream is installed by this script into throw-away virtualenvs under `bench/.venvs/` (git-ignored;
never into the project's `.venv`) and only run as a black box: `python -I -m kopf run ...`.
See bench/README.md for what each figure means.
"""
import argparse
import asyncio
import contextlib
import datetime
import hashlib
import json
import pathlib
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import harness as h
from harness import log

UPSTREAM_VERSION = '1.45.2'
RESULTS = h.HERE / 'results'


def ours_framework(uvloop: bool = False, metrics: bool = False) -> h.Framework:
    """Ours in the project's .venv, with asyncio's own loop (as upstream's venv has it) or with uvloop;
    with Prometheus metrics on (`--metrics`, on a free port; not scraped: a scrape costs per scrape, not per event)."""
    python = str(h.ROOT / '.venv' / 'bin' / 'python')
    extra = ('--metrics', '127.0.0.1:0') if metrics else ()
    if uvloop:
        return h.Framework('ours-uvloop' + '-metrics' * metrics, python, 'ours', run_args=('--uvloop', *extra))
    return h.Framework('ours' + '-metrics' * metrics, python, 'ours', run_args=('--no-uvloop', *extra))


def frameworks(*, ours_only: bool = False, upstream_clients: bool = False) -> list[h.Framework]:
    """Ours (the project's .venv), then upstream in its throw-away venv unless `ours_only`."""
    ours = ours_framework()
    if ours_only:
        return [ours]
    return [ours, h.Framework('upstream', upstream_venv(upstream_clients), 'upstream')]


async def wait_resumed(op: Any, tracker: Any, count: int, within: float, what: str) -> None:
    """Until the operator's resume handler has run for `count` objects since its spawn (or it died)."""
    t0 = op.spawned_at
    done = await h.wait_for(lambda: tracker.count('resume_fn', since=t0) >= count or not op.alive(), within)
    resumed = tracker.count('resume_fn', since=t0)
    if not done or resumed < count:
        raise RuntimeError(f'{what}: resumed {resumed} of {count}')


def meta(args: Any, logdir: pathlib.Path, **figures: Any) -> dict[str, Any]:
    """A side benchmark's `meta`: when, which mode (`args.quick`), which upstream, its settings, the command,
    the machine and its load at the end (pass `loadavg_start=` for the start), the logs, which code ours was."""
    clients = ' + kubernetes + pykube-ng' if getattr(args, 'upstream_clients', False) else ''
    return {'date': datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds'),
            'mode': 'quick' if args.quick else 'full', 'upstream': f'kopf=={UPSTREAM_VERSION}{clients}', **figures,
            'loadavg_end': h.loadavg(), 'command': ' '.join([pathlib.Path(sys.executable).name, *sys.argv]),
            'machine': h.machine(), 'logs': str(logdir), 'git': h.git_state()}


def side_options(parser: argparse.ArgumentParser, *, upstream_clients: bool = True) -> None:
    """The options every side benchmark has (after its own): --ours-only, --upstream-clients, --no-write."""
    parser.add_argument('--ours-only', action='store_true', help='skip upstream')
    if upstream_clients:
        parser.add_argument('--upstream-clients', action='store_true',
                            help='upstream in the venv with kubernetes + pykube-ng (default: the plain one)')
    parser.add_argument('--no-write', action='store_true', help='print only; do not write bench/results/')


def run_and_report(kind: str, bench: Any, table: Any, *, write: bool) -> dict[str, Any]:
    """Run a side benchmark's coroutine, print its table, and keep it as `results/<kind>-<stamp>-<mode>.json`."""
    started = time.monotonic()
    report: dict[str, Any] = asyncio.run(bench)
    report['meta']['elapsed_s'] = round(time.monotonic() - started, 1)
    print(table(report))
    print(f"(took {report['meta']['elapsed_s']:.0f} s)")
    if write:
        RESULTS.mkdir(exist_ok=True)
        stamp = datetime.datetime.now(datetime.UTC).strftime('%Y-%m-%dT%H%M')
        path = RESULTS / f'{kind}-{stamp}-{report["meta"]["mode"]}.json'
        path.write_text(json.dumps(report, indent=2) + '\n')
        log(f'wrote {path}')
    return report
VENVS = h.HERE / '.venvs'
KEYS = ['objects_per_s', 'cpu_s_per_1000', 'rss_mb_idle', 'p50_ms', 'p99_ms', 'writes_per_lifecycle',
        'resume_s', 'startup_s', 'import_rss_mb']
LOWER_IS_BETTER = {'cpu_s_per_1000', 'rss_mb_idle', 'p50_ms', 'p99_ms', 'writes_per_lifecycle', 'resume_s',
                   'startup_s', 'import_rss_mb', 'import_s', 'rss_mb_peak', 'steady_p50_ms', 'steady_p99_ms',
                   'steady_cpu_s_per_1000', 'idle_cpu_pct', 'resume_cpu_s', 'startup_s_with_clients',
                   'import_s_with_clients', 'import_rss_mb_with_clients', 'events_per_lifecycle'}


# -- setup ---------------------------------------------------------------------------------------------

def upstream_venv(with_clients: bool) -> str:
    """A throw-away venv with kopf==1.45.2 (and kubernetes + pykube-ng if asked); never the project's."""
    venv = VENVS / (f'upstream-{UPSTREAM_VERSION}' + ('-clients' if with_clients else ''))
    if venv.resolve() == (h.ROOT / '.venv').resolve():
        raise SystemExit("Refusing to install upstream kopf into the project's own .venv.")
    python = venv / 'bin' / 'python'
    stamp = venv / '.bench-installed'
    if not stamp.exists():
        log(f'installing kopf=={UPSTREAM_VERSION}{" + kubernetes + pykube-ng" if with_clients else ""} into {venv}')
        subprocess.run([sys.executable, '-m', 'venv', '--clear', str(venv)], check=True)
        packages = [f'kopf=={UPSTREAM_VERSION}'] + (['kubernetes', 'pykube-ng'] if with_clients else [])
        subprocess.run([str(python), '-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', *packages],
                       check=True)
        stamp.touch()
    return str(python)


def ours_plain_venv() -> str:
    """A throw-away venv with our kopf and none of the optional clients, for the startup/import figures.

    Installed editable in setuptools' "compat" mode: a plain path entry in a `.pth` file, as close to a
    user's (non-editable) install as an always-current checkout gets. The default editable mode imports
    a meta-path finder in `site` at every interpreter start (~10-15 ms), which no user's install pays.
    """
    venv = VENVS / 'ours-plain'
    python = venv / 'bin' / 'python'
    stamp = venv / '.bench-installed'
    wanted = 'compat ' + hashlib.sha256((h.ROOT / 'requirements.txt').read_bytes()).hexdigest()[:16]
    if not stamp.exists() or stamp.read_text().strip() != wanted:  # reinstalled when the requirements change
        log(f'installing our kopf (editable in compat mode: a plain path on sys.path; no extras) into {venv}')
        subprocess.run([sys.executable, '-m', 'venv', '--clear', str(venv)], check=True)
        subprocess.run([str(python), '-m', 'pip', 'install', '--quiet', '--disable-pip-version-check',
                        '--config-settings', 'editable_mode=compat', '-e', str(h.ROOT)], check=True)
        stamp.write_text(wanted + '\n')
    return str(python)


def prehandled(namespace: str, name: str, n: int) -> dict[str, Any]:
    """An object as if created and handled before: our finalizer and the diff-base annotation (same wire format)."""
    import kopf  # ours; its storages write upstream's format (tests/storage/test_upstream_compat.py)
    meta: dict[str, Any] = {'name': name, 'namespace': namespace}
    body = {'apiVersion': h.API_VERSION, 'kind': h.KIND, 'metadata': meta, 'spec': {'n': n}}
    storage = kopf.AnnotationsDiffBaseStorage()
    patch = kopf.Patch()
    storage.store(body=kopf.Body(body), patch=patch, essence=storage.build(body=kopf.Body(body)))
    meta['annotations'] = dict(patch['metadata']['annotations'])
    meta['finalizers'] = [h.FINALIZER]
    return body


class Tracker:
    """What the harness's own watch saw of the objects in one namespace."""

    def __init__(self) -> None:
        self.results: dict[str, dict[str, dict[str, Any]]] = {}  # handler id → name → latest result
        self.visible: dict[str, dict[str, float]] = {}  # handler id → name → when first seen in status
        self.updates: dict[tuple[str, Any], tuple[float, float]] = {}  # (name, n) → (handler t, seen at)
        self.gone: dict[str, float] = {}

    def __call__(self, etype: str, obj: dict[str, Any], now: float) -> None:
        name = obj['metadata']['name']
        if etype == 'DELETED':
            self.gone.setdefault(name, now)
            return
        for hid, result in (obj.get('status') or {}).items():
            if isinstance(result, dict) and 't' in result:
                previous = self.results.setdefault(hid, {}).get(name)
                if previous is None or previous.get('t') != result['t']:
                    self.results[hid][name] = result
                    self.visible.setdefault(hid, {})[name] = now
                    if hid == 'update_fn':
                        self.updates.setdefault((name, result.get('n')), (result['t'], now))

    def count(self, hid: str, since: float = 0.0, names: set[str] | None = None) -> int:
        return sum(1 for name, r in self.results.get(hid, {}).items()
                   if r['t'] >= since and (names is None or name in names))


def operator_writes(before: dict[str, int], after: dict[str, int], own: dict[str, int]) -> dict[str, int]:
    """Write requests between two counter snapshots, minus the harness's own (`own`)."""
    writes = {}
    for key in sorted(set(after) | set(before)):
        verb = key.split()[0]
        if verb in ('create', 'update', 'patch', 'delete', 'deletecollection'):
            n = after.get(key, 0) - before.get(key, 0) - own.get(key, 0)
            if n:
                writes[key] = n
    return writes


# -- scenarios -----------------------------------------------------------------------------------------

async def run_lifecycle(fw: h.Framework, emu: h.EmulatorProcess, args: argparse.Namespace, rep: int,
                        logdir: pathlib.Path) -> dict[str, Any]:
    """Startup (1 existing object) → burst (N created at once, then all deleted) → steady updates."""
    ns = f'life-{fw.name.replace("+", "-")}-{rep}'
    out: dict[str, Any] = {}
    profile = args.profile / f'{ns}.txt' if args.profile and fw.label == 'ours' else None
    async with h.Client(emu.port) as client, \
            started_on_a_probe(fw, emu, client, ns, logdir, profile) as (op, tracker, startup_s):
        out['startup_s_lifecycle'] = startup_s
        await asyncio.sleep(1.0)
        emu_cpu0, emu_t0 = h.cpu_seconds(emu.pid), time.monotonic()
        out.update(await burst(op, client, tracker, ns, args.objects, args.timeout))
        out['emulator_busy_pct'] = 100 * (h.cpu_seconds(emu.pid) - emu_cpu0) / (time.monotonic() - emu_t0)
        out.update(await steady(op, client, tracker, ns, args))
        mem = op.memory()
        out['rss_mb_peak'] = mem['VmHWM']
    return out


@contextlib.asynccontextmanager
async def started_on_a_probe(fw: h.Framework, emu: h.EmulatorProcess, client: h.Client, ns: str,
                             logdir: pathlib.Path, profile: pathlib.Path | None = None,
                             ) -> AsyncIterator[tuple[h.Operator, Tracker, float]]:
    """One existing object ('probe') and a watch on the namespace; the operator started and its first handler
    call seen: yields the operator, the tracker and the seconds from the spawn to that call (its own time).
    On a failure, the operator's log tail is printed; the operator and the watch are stopped at the end."""
    await client.ensure_namespace(ns)
    tracker = Tracker()
    watch = h.Watch(emu.port, ns, await client.resource_version(ns), tracker)
    watch.start()
    await client.request('POST', h.objects_path(ns), {'apiVersion': h.API_VERSION, 'kind': h.KIND,
                                                      'metadata': {'name': 'probe'}, 'spec': {'n': 0}})
    op = h.Operator(fw, emu.kubeconfig, ns, logdir, profile=profile)
    async with h.running(op, watch):
        if not await h.wait_for(lambda: 'probe' in tracker.results.get('create_fn', {}) or not op.alive(), 60):
            raise RuntimeError('no first handler call in 60 s')
        if not op.alive():
            raise RuntimeError('the operator exited')
        yield op, tracker, float(tracker.results['create_fn']['probe']['t'] - op.spawned_at)


async def burst(op: h.Operator, client: h.Client, tracker: Tracker, ns: str, n: int,
                limit: float) -> dict[str, Any]:
    names = [f'b-{i:05d}' for i in range(n)]
    name_set = set(names)
    sent: dict[int, float] = {}
    before, cpu0, threads0 = await client.counters(), op.cpu(), h.threads_cpu(op.pid)
    started = time.time()
    creates = [('POST', h.objects_path(ns), {'apiVersion': h.API_VERSION, 'kind': h.KIND,
                                               'metadata': {'name': name}, 'spec': {'n': i}}, 'application/json')
               for i, name in enumerate(names)]
    created = await client.bulk(creates, on_sent=sent.__setitem__)
    assert created == n, f'created {created} of {n}'
    done = await h.wait_for(lambda: tracker.count('create_fn', names=name_set) >= n or not op.alive(), limit)
    handled = tracker.count('create_fn', names=name_set)
    if not done or handled < n:
        raise RuntimeError(f'burst: handled {handled} of {n} creations')
    visible = tracker.visible['create_fn']
    create_s = max(visible[name] for name in names) - started
    cpu_created = op.cpu()
    latencies = [(tracker.results['create_fn'][name]['t'] - sent[i]) * 1000 for i, name in enumerate(names)]
    deleted_at = time.time()
    deletes = [('DELETE', h.objects_path(ns, name), None, 'application/json') for name in names]
    await client.bulk(deletes)
    done = await h.wait_for(lambda: len(name_set & tracker.gone.keys()) >= n or not op.alive(), limit)
    gone = len(name_set & tracker.gone.keys())
    if not done or gone < n:
        raise RuntimeError(f'burst: {gone} of {n} deletions handled (finalizer released)')
    delete_s = max(tracker.gone[name] for name in names) - deleted_at
    await asyncio.sleep(0.5)  # let trailing requests (events) land in the counters
    after, cpu1, threads1 = await client.counters(), op.cpu(), h.threads_cpu(op.pid)
    own = {f'create {h.PLURAL}': n, f'delete {h.PLURAL}': n}
    writes = operator_writes(before, after, own)
    object_writes = sum(v for k, v in writes.items() if k.split()[1].startswith(h.PLURAL))
    events = sum(v for k, v in writes.items() if k.split()[1] == 'events')
    return {
        'objects_per_s': n / create_s,
        'deletes_per_s': n / delete_s,
        'cpu_s_per_1000': (cpu1 - cpu0) / n * 1000,
        'cpu_s_per_1000_create': (cpu_created - cpu0) / n * 1000,
        'p50_ms': h.percentile(latencies, 50),
        'p99_ms': h.percentile(latencies, 99),
        'writes_per_lifecycle': object_writes / n,
        'events_per_lifecycle': events / n,
        'cpu_s_per_1000_by_thread': {k: round((v - threads0.get(k, 0.0)) / n * 1000, 3) for k, v in threads1.items()},
        'writes_by_verb': {k: round(v / n, 3) for k, v in writes.items()},
        'reads_by_verb': {k: after.get(k, 0) - before.get(k, 0) for k in sorted(after)
                          if k.split()[0] in ('get', 'list', 'watch') and after.get(k, 0) != before.get(k, 0)},
    }


async def steady(op: h.Operator, client: h.Client, tracker: Tracker, ns: str,
                 args: argparse.Namespace) -> dict[str, Any]:
    """M objects updated round-robin at a fixed total rate; update→handler latency and CPU per update."""
    m, rate, seconds = args.steady_objects, args.steady_rate, args.steady_seconds
    names = [f's-{i:04d}' for i in range(m)]
    creates = [('POST', h.objects_path(ns), {'apiVersion': h.API_VERSION, 'kind': h.KIND,
                                               'metadata': {'name': name}, 'spec': {'n': 0}}, 'application/json')
               for name in names]
    await client.bulk(creates)
    if not await h.wait_for(lambda: tracker.count('create_fn', names=set(names)) >= m, args.timeout):
        raise RuntimeError('steady: the objects were not all handled')
    await asyncio.sleep(0.5)
    conn = client.conns[1]
    sent: dict[tuple[str, int], float] = {}
    cpu0 = op.cpu()
    total = int(rate * seconds)
    started = time.monotonic()
    pending = 0
    for k in range(total):
        delay = started + k / rate - time.monotonic()
        if delay > 0:
            if pending:
                for _ in range(pending):
                    await conn.response()
                pending = 0
            await asyncio.sleep(delay)
        name, n = names[k % m], k // m + 1
        sent[(name, n)] = time.time()
        conn.writer.write(h.Connection.encode('PATCH', h.objects_path(ns, name), {'spec': {'n': n}},
                                              'application/merge-patch+json'))
        pending += 1
    for _ in range(pending):
        await conn.response()
    last = {(name, max(n for (nm, n) in sent if nm == name)) for name in names}
    await h.wait_for(lambda: all(key in tracker.updates for key in last) or not op.alive(), 30)
    cpu1 = op.cpu()
    latencies = [(tracker.updates[key][0] - at) * 1000 for key, at in sent.items() if key in tracker.updates]
    await client.bulk([('DELETE', h.objects_path(ns, name), None, 'application/json') for name in names])
    await h.wait_for(lambda: set(names) <= tracker.gone.keys() or not op.alive(), args.timeout)
    return {
        'steady_rate': rate,
        'steady_handled_pct': 100 * len(latencies) / total,
        'steady_p50_ms': h.percentile(latencies, 50),
        'steady_p99_ms': h.percentile(latencies, 99),
        'steady_cpu_s_per_1000': (cpu1 - cpu0) / total * 1000,
    }


async def populate(emu: h.EmulatorProcess, ns: str, count: int) -> None:
    async with h.Client(emu.port) as client:
        await client.ensure_namespace(ns)
        objs = [('POST', h.objects_path(ns), prehandled(ns, f'r-{i:05d}', i), 'application/json')
                for i in range(count)]
        created = await client.bulk(objs, ok=(201, 409))
        assert created == count, f'pre-created {created} of {count}'


async def cleanup(emu: h.EmulatorProcess, ns: str, count: int) -> None:
    """Remove the restart objects (finalizers stripped, the namespace deleted), so that later scenarios
    do not pay for them: the cluster's garbage collector scans every stored object after deletions."""
    async with h.Client(emu.port) as client:
        strip = {'metadata': {'finalizers': None}}
        await client.bulk([('PATCH', h.objects_path(ns, f'r-{i:05d}'), strip, 'application/merge-patch+json')
                           for i in range(count)])
        await client.request('DELETE', f'/api/v1/namespaces/{ns}')

        async def gone() -> bool:
            status, _ = await client.request('GET', f'/api/v1/namespaces/{ns}')
            return status == 404
        for _ in range(300):
            if await gone():
                return
            await asyncio.sleep(0.1)


async def run_restart(fw: h.Framework, emu: h.EmulatorProcess, args: argparse.Namespace, rep: int,
                      logdir: pathlib.Path) -> dict[str, Any]:
    """I existing handled objects; the operator starts; time until all resumed; then idle RSS and CPU."""
    ns = f'restart-{fw.name.replace("+", "-")}-{rep}'
    count = args.idle
    log(f'pre-creating {count} handled objects in {ns}')
    await populate(emu, ns, count)
    out: dict[str, Any] = {}
    profile = args.profile / f'{ns}.txt' if args.profile and fw.label == 'ours' else None
    async with h.Client(emu.port) as client:
        tracker = Tracker()
        watch = h.Watch(emu.port, ns, await client.resource_version(ns), tracker)
        watch.start()
        op = h.Operator(fw, emu.kubeconfig, ns, logdir, profile=profile)
        async with h.running(op, watch):
            t0 = op.spawned_at
            await wait_resumed(op, tracker, count, args.timeout, 'restart')
            ts = [r['t'] for r in tracker.results['resume_fn'].values()]
            out['resume_s'] = max(ts) - t0
            out['resume_visible_s'] = max(tracker.visible['resume_fn'].values()) - t0
            out['resume_cpu_s'] = op.cpu()
            await asyncio.sleep(args.settle)
            cpu0 = op.cpu()
            await asyncio.sleep(args.settle)
            out['idle_cpu_pct'] = 100 * (op.cpu() - cpu0) / args.settle
            out['rss_mb_idle'] = op.memory()['VmRSS']
            rerun = tracker.count('create_fn', since=t0) + tracker.count('update_fn', since=t0)
            if rerun:
                raise RuntimeError(f'restart: {rerun} create/update handlers re-ran on handled objects')
    await cleanup(emu, ns, count)
    return out


async def run_startup(fw: h.Framework, emu: h.EmulatorProcess, rep: int | str, logdir: pathlib.Path) -> float:
    """Process start (just before the spawn) → the first handler call (its own `time.time()`), one object existing."""
    ns = f'start-{fw.name.replace("+", "-")}-{rep}'
    async with h.Client(emu.port) as client, started_on_a_probe(fw, emu, client, ns, logdir) as (_, _, startup_s):
        return startup_s


async def emulator_capacity(emu: h.EmulatorProcess, seconds: float) -> float:
    import emulator as capacity  # bench/emulator.py: the emulator's own benchmark
    async with h.Client(emu.port, connections=1) as client:
        status, _ = await client.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
                                         capacity.CRD)
        assert status in (201, 409), status
    return await capacity.patches_per_second(emu.port, seconds, emu.pid)


# -- the whole run --------------------------------------------------------------------------------------

def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key in runs[0]:
        values = [r[key] for r in runs if key in r]
        if all(isinstance(v, (int, float)) for v in values):
            result[key] = statistics.median(values)
        else:
            result[key] = values[len(values) // 2]
    return result


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    ours = ours_framework(uvloop=args.uvloop == 'on', metrics=args.metrics == 'on')
    frameworks = [ours, ours_framework(uvloop=True)] if args.uvloop == 'both' else [ours]
    if args.metrics == 'both':
        frameworks.append(ours_framework(uvloop=args.uvloop == 'on', metrics=True))
    if args.baseline:  # another tree's kopf (its .venv's python), run alternately with ours, as it is
        frameworks.append(h.Framework('baseline', str(args.baseline), 'ours'))
    clients: h.Framework | None = None
    upstream_plain: h.Framework | None = None
    if not args.ours_only:
        # The scenarios run like for like: our project .venv has kubernetes + pykube-ng installed (both
        # frameworks then log in through them, as upstream does when they are present), so upstream's
        # scenarios run in the venv with them too. Startup/import figures are taken both ways below.
        upstream_plain = h.Framework('upstream-plain', upstream_venv(False), 'upstream')
        clients = h.Framework('upstream', upstream_venv(True), 'upstream')
        frameworks.append(clients)
    logdir = h.logs_dir('kopf-bench-logs-')
    report: dict[str, Any] = {}
    async with h.local_cluster(ours.python, logdir, crd=False) as emu:
        patch_per_s = None
        if not args.startup_only:
            log('emulator capacity (PATCH/s, trivial pipelined client, 2 watchers)')
            patch_per_s = await emulator_capacity(emu, args.capacity_seconds)
        await h.create_crd(emu)
        runs: dict[str, list[dict[str, Any]]] = {fw.name: [] for fw in frameworks}
        for rep in range(0 if args.startup_only else args.repeats):
            for fw in frameworks:
                log(f'run {rep + 1}/{args.repeats}: {fw.name}: startup, burst of {args.objects}, steady updates')
                result = await run_lifecycle(fw, emu, args, rep, logdir)
                log(f'run {rep + 1}/{args.repeats}: {fw.name}: restart with {args.idle} handled objects, idle')
                result.update(await run_restart(fw, emu, args, rep, logdir))
                runs[fw.name].append(result)
                log(f'  {fw.name}: {result["objects_per_s"]:.0f} obj/s, p99 {result["p99_ms"]:.0f} ms, '
                    f'resume {result["resume_s"]:.2f} s, idle RSS {result["rss_mb_idle"]:.1f} MB; burst CPU s '
                    f'per 1,000 by thread: {result["cpu_s_per_1000_by_thread"]}')
        for fw in frameworks:
            block = median_of(runs[fw.name]) if runs[fw.name] else {}
            block['runs'] = len(runs[fw.name])
            report[fw.name] = block
        # Startup and import: without the optional clients (plain venvs) and with them (kubernetes and
        # pykube-ng installed: the project's .venv for ours; a second throw-away venv for upstream).
        variants = {'ours': (h.Framework('ours-plain', ours_plain_venv(), 'ours'), ours)}
        if clients is not None and upstream_plain is not None:
            variants['upstream'] = (upstream_plain, clients)
        for name, (plain, with_clients) in variants.items():
            for suffix, fw in (('', plain), ('_with_clients', with_clients)):
                log(f'startup of {fw.name} (process start -> first handler): 1 warm-up + {args.startups} starts')
                await run_startup(fw, emu, 'warmup', logdir)  # bytecode compiled, files in page cache: not counted
                starts = [await run_startup(fw, emu, rep, logdir) for rep in range(args.startups)]
                log(f'  {fw.name}: median {statistics.median(starts):.3f} s; '
                    f'all: {", ".join(f"{s:.3f}" for s in sorted(starts))}')
                figures = h.import_figures(fw.python)
                report[name].update({f'startup_s{suffix}': statistics.median(starts),
                                     f'startup_s_best{suffix}': min(starts),
                                     f'import_s{suffix}': figures['import_s'],
                                     f'import_rss_mb{suffix}': figures['import_rss_mb'],
                                     f'optional_clients_imported{suffix}': figures['optional_clients_imported']})
        report['emulator'] = {'patch_per_s': patch_per_s}
        if clients is not None and not args.no_compat and not args.startup_only:
            import compat_run  # bench/compat_run.py: handled by one framework, then served by the other
            report['compat'] = await compat_run.compat(emu, ours, frameworks[1], 20, logdir)
    if 'upstream' in report:
        report['ratio'] = ratios(report['ours'], report['upstream'])
    if 'ours-uvloop' in report:
        report['uvloop_ratio'] = ratios(report['ours-uvloop'], report['ours'])
    if args.metrics == 'both':
        report['metrics_ratio'] = ratios(report[frameworks[-1].name], report[ours.name])
    if 'baseline' in report:
        report['baseline_ratio'] = ratios(report[ours.name], report['baseline'])
    report['meta'] = {'date': datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds'),
                      'mode': 'startup' if args.startup_only else 'quick' if args.quick else 'full',
                      'repeats': args.repeats, 'startups': args.startups,
                      'objects': args.objects, 'idle_objects': args.idle,
                      'steady': {'objects': args.steady_objects, 'rate': args.steady_rate,
                                 'seconds': args.steady_seconds},
                      'upstream': f'kopf=={UPSTREAM_VERSION}', 'machine': h.machine(), 'logs': str(logdir),
                      'uvloop': args.uvloop, 'metrics': args.metrics}
    return report


def ratios(a: dict[str, Any], b: dict[str, Any]) -> dict[str, float]:
    return {key: a[key] / b[key] for key in a if key in b and isinstance(a[key], (int, float)) and b[key]
            and key != 'runs'}


ROWS = [
    ('objects_per_s', 'burst: created objects handled per second', '{:.0f}'),
    ('deletes_per_s', 'burst: deletions handled per second', '{:.0f}'),
    ('cpu_s_per_1000', 'burst: operator CPU s per 1,000 lifecycles', '{:.2f}'),
    ('p50_ms', 'burst: creation → handler start, p50 ms', '{:.0f}'),
    ('p99_ms', 'burst: creation → handler start, p99 ms', '{:.0f}'),
    ('emulator_busy_pct', 'burst: the cluster process busy, % of a core', '{:.0f}'),
    ('writes_per_lifecycle', 'object PATCH/PUT per create→delete', '{:.2f}'),
    ('events_per_lifecycle', 'Events created per create→delete', '{:.2f}'),
    ('steady_p50_ms', 'steady: update → handler, p50 ms', '{:.0f}'),
    ('steady_p99_ms', 'steady: update → handler, p99 ms', '{:.0f}'),
    ('steady_cpu_s_per_1000', 'steady: CPU s per 1,000 updates', '{:.2f}'),
    ('steady_handled_pct', 'steady: updates seen by the handler, %', '{:.0f}'),
    ('rss_mb_peak', 'peak RSS after burst+steady, MB', '{:.1f}'),
    ('rss_mb_idle', 'idle RSS watching the restart objects, MB', '{:.1f}'),
    ('idle_cpu_pct', 'idle CPU, % of a core', '{:.1f}'),
    ('resume_s', 'restart: process start → all resumed, s', '{:.2f}'),
    ('startup_s', 'process start → first handler, s (median)', '{:.3f}'),
    ('startup_s_best', '  … best of the starts, s', '{:.3f}'),
    ('startup_s_with_clients', '  … with kubernetes+pykube-ng installed', '{:.3f}'),
    ('import_s', '`import kopf`, s', '{:.3f}'),
    ('import_rss_mb', 'RSS after `import kopf`, MB', '{:.1f}'),
    ('import_s_with_clients', '  … with kubernetes+pykube-ng installed, s', '{:.3f}'),
    ('import_rss_mb_with_clients', '  … with kubernetes+pykube-ng installed, MB', '{:.1f}'),
]


def table(report: dict[str, Any]) -> str:
    meta = report['meta']
    scope = (f"startup: median of {meta['startups']} starts" if meta['mode'] == 'startup' else
             f"{meta['mode']}: {meta['objects']} objects, {meta['idle_objects']} idle/restart, "
             f"median of {meta['repeats']}")
    lines = [f"kopf bench ({scope}) on {meta['machine']['cores']} cores, {meta['machine']['memory_gb']} GB",
             f"{'figure':48} {'ours':>10} {'upstream':>10} {'ours/up':>8}"]
    up = report.get('upstream', {})
    for key, title, fmt in ROWS:
        if key not in report.get('ours', {}):
            continue
        a = report['ours'][key]
        b = up.get(key)
        ratio = report.get('ratio', {}).get(key)
        lines.append(f"{title:48} {fmt.format(a):>10} {fmt.format(b) if b is not None else '-':>10} "
                     f"{f'{ratio:.2f}x' if ratio is not None else '-':>8}")
    metrics_on = next((name for name in report if name.endswith('-metrics')), None)
    for on, off, key_of_ratio, what in (('ours-uvloop', 'ours', 'uvloop_ratio', 'uvloop'),
                                        (metrics_on, metrics_on and metrics_on.removesuffix('-metrics'),
                                         'metrics_ratio', 'metrics'),
                                        ('ours', 'baseline', 'baseline_ratio', 'ours vs baseline')):
        if on is None or off is None or key_of_ratio not in report:
            continue
        if off == 'baseline':
            lines.append(f"{'ours vs baseline (--baseline)':48} {'ours':>10} {'baseline':>10} {'ratio':>8}")
        else:
            lines.append(f"{f'{what} on vs off ({off})':48} {'on':>10} {'off':>10} {'on/off':>8}")
        for key, title, fmt in ROWS:
            if key in report[on] and key in report[key_of_ratio]:
                a, b, ratio = report[on][key], report[off][key], report[key_of_ratio][key]
                lines.append(f"{title:48} {fmt.format(a):>10} {fmt.format(b):>10} {f'{ratio:.2f}x':>8}")
    if report['emulator']['patch_per_s'] is not None:
        lines.append(f"emulator capacity (the ceiling): {report['emulator']['patch_per_s']:,.0f} PATCH/s")
    for r in report.get('compat', []):
        lines.append(f"compat {r['first']} -> {r['second']}: {'OK' if r['ok'] else 'FAILED'} (resumed "
                     f"{r['resumed']}/{r['objects']}, completed handlers re-run: "
                     f"{r['creates_rerun'] + r['updates_rerun']}, deletions {r['deleted']}/{r['objects']})")
    return '\n'.join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--quick', action='store_true', help='200 objects, 1,000 idle, 1 run')
    parser.add_argument('--repeats', type=int, default=None)
    parser.add_argument('--objects', type=int, default=None)
    parser.add_argument('--idle', type=int, default=None)
    parser.add_argument('--ours-only', action='store_true', help='skip upstream (for profiling our side)')
    parser.add_argument('--profile', type=pathlib.Path, default=None,
                        help="run our operator under py-spy; its raw stacks go to this directory (figures are off)")
    parser.add_argument('--no-compat', action='store_true', help='skip the compatibility run')
    parser.add_argument('--startup-only', action='store_true',
                        help='only the startup and import figures (no burst, steady, restart, compat)')
    parser.add_argument('--startups', type=int, default=7,
                        help='operator starts per variant for the startup figure (median; default 7)')
    parser.add_argument('--no-write', action='store_true', help='print only; do not write bench/results/')
    parser.add_argument('--baseline', type=pathlib.Path, default=None, metavar='PYTHON',
                        help="another tree's .venv/bin/python: its kopf runs alternately with ours (A/B)")
    parser.add_argument('--uvloop', choices=['off', 'on', 'both'], default='off',
                        help="our operator's loop: asyncio's own (off, as upstream's venv has it), uvloop (on), "
                             "or both: the burst, steady and restart scenarios once each way, side by side")
    parser.add_argument('--metrics', choices=['off', 'on', 'both'], default='off',
                        help="our operator with Prometheus metrics off, on (`--metrics`), or both: the burst, "
                             "steady and restart scenarios once each way, side by side (the `metrics_ratio`)")
    args = parser.parse_args()
    args.repeats = args.repeats or (1 if args.quick else 3)
    args.objects = args.objects or (200 if args.quick else 1000)
    args.idle = args.idle or (1000 if args.quick else 10000)
    args.steady_objects = 20 if args.quick else 50
    args.steady_rate = 20.0 if args.quick else 50.0
    args.steady_seconds = 4.0 if args.quick else 8.0
    args.capacity_seconds = 2.0 if args.quick else 3.0
    args.settle = 1.0 if args.quick else 2.0
    args.timeout = 300.0
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
        args.no_write = True
    if args.startup_only:
        args.no_write = True  # a partial report: never replaces latest.json
    started = time.monotonic()
    report = asyncio.run(bench(args))
    report['meta']['elapsed_s'] = round(time.monotonic() - started, 1)
    print(table(report))
    print(f"(took {report['meta']['elapsed_s']:.0f} s)")
    side = 'uvloop' if args.uvloop == 'both' else 'metrics' if args.metrics != 'off' else None
    if not args.no_write and side is not None:  # a side figure: latest.json stays the reference run
        RESULTS.mkdir(exist_ok=True)
        stamp = datetime.datetime.now(datetime.UTC).strftime('%Y-%m-%dT%H%M')
        path = RESULTS / f'{side}-{stamp}-{report["meta"]["mode"]}.json'
        path.write_text(json.dumps(report, indent=2) + '\n')
        log(f'wrote {path}')
    elif not args.no_write:
        RESULTS.mkdir(exist_ok=True)
        text = json.dumps(report, indent=2, sort_keys=False) + '\n'
        (RESULTS / 'latest.json').write_text(text)
        stamp = datetime.datetime.now(datetime.UTC).strftime('%Y-%m-%dT%H%M')
        (RESULTS / f'{stamp}-{report["meta"]["mode"]}-{report["meta"]["machine"]["cores"]}cores.json').write_text(text)
        log(f'wrote {RESULTS / "latest.json"}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
