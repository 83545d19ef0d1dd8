"""A big idle operator: N handled objects, ours side by side with upstream Kopf 1.45.2 (opt-in).

    .venv/bin/python bench/scale.py --objects 100000 [--chunk-size 500] [--churn 200] [--churn-seconds 30] [--upstream]

1. N handled objects across a few namespaces in a `kopf cluster --state` file (bench/scale_state.py,
   cached by N); the local cluster resumes from it, in its own process, for each phase below.
2. Ours, no handler due (the usual restart): process start → our DEBUG line "The initial listing of ...
   is processed"; RSS idle and peak; requests to the cluster per object (its counters).
3. Ours, then upstream (never beside ours), with the resume handler on every object: start → all
   resumed (in the objects' status); RSS idle and peak; then a churn: PATCH `spec.n` of random objects
   at `--churn`/s for `--churn-seconds`: CPU per watch event, RSS after it.
Both operators watch all namespaces (`-A`) with `settings.watching.chunk_size` = `--chunk-size`.
"""
import argparse
import asyncio
import contextlib
import pathlib
import random
import sys
import time
from collections.abc import AsyncIterator, Iterable
from typing import Any

import harness as h
import run
import scale_state
from harness import log

LISTED = b'The initial listing of kopfbenches.kopf.dev is processed'
RESUMED = b'objects (kopfbenches.kopf.dev) in'   # our INFO line "Resumed N objects (...) in S s.": the same moment
PHASES = ('idle', 'resume', 'churn')
PROGRESS = (b'Resuming kopfbenches', b'Resumed ')   # our INFO lines while resuming: echoed as progress


class Seen:
    """The handlers' results that the harness's watches saw, newer than `since`: per handler id, the
    latest `t` per object, the calls counted (a new `t`), the newest `t`, when the last one was seen.
    (Not `run.Tracker`: at a million objects its per-poll count of every result is too slow.)"""

    def __init__(self, since: float = 0.0) -> None:
        self.since = since
        self.latest: dict[str, dict[str, float]] = {}
        self.calls: dict[str, int] = {}
        self.newest: dict[str, float] = {}
        self.seen_at: dict[str, float] = {}

    def __call__(self, etype: str, obj: dict[str, Any], now: float) -> None:
        for hid, result in (obj.get('status') or {}).items():
            t = result.get('t') if isinstance(result, dict) else None
            if not isinstance(t, float) or t < self.since:
                continue
            latest = self.latest.setdefault(hid, {})
            if latest.get(obj['metadata']['name']) != t:
                latest[obj['metadata']['name']] = t
                self.calls[hid] = self.calls.get(hid, 0) + 1
                self.newest[hid] = max(self.newest.get(hid, t), t)
                self.seen_at[hid] = now

    def objects(self, hid: str) -> int:
        return len(self.latest.get(hid, ()))


def operator(fw: h.Framework, emu: h.EmulatorProcess, logdir: pathlib.Path, args: argparse.Namespace, *,
             resume: bool, verbose: bool = True) -> h.Operator:
    """The bench operator over all namespaces with `chunk_size`; with no resume handler: `--verbose` (DEBUG,
    for our "initial listing is processed" line; nothing is logged per object when no handler is due),
    unless not `verbose` (a churn: DEBUG lines per event would be counted in its CPU)."""
    env = {'BENCH_CHUNK_SIZE': str(args.chunk_size)}
    extra, env = ([], env) if resume else (['--verbose'] if verbose else [], {**env, 'BENCH_NO_RESUME': '1'})
    tag = 'resume' if resume else 'idle' if verbose else 'churn'
    return h.Operator(fw, emu.kubeconfig, f'scale-{tag}', logdir, extra, all_namespaces=True, env=env)


async def counters(emu: h.EmulatorProcess) -> dict[str, int]:
    async with h.Client(emu.port, connections=1) as client:
        return await client.counters()


async def cluster_figures(emu: h.EmulatorProcess, empty_mb: float, objects: int) -> dict[str, float]:
    await asyncio.sleep(1.0)
    rss = h.memory_mb(emu.pid)['VmRSS']
    log(f'cluster RSS {rss:,.0f} MB after loading ({empty_mb:,.0f} MB empty): '
        f'{(rss - empty_mb) * 1024 / objects:.2f} KB per object')
    return {'cluster_rss_mb': rss, 'cluster_empty_rss_mb': empty_mb,
            'cluster_kb_per_object': (rss - empty_mb) * 1024 / objects}


async def empty_cluster_rss(python: str, logdir: pathlib.Path) -> float:
    workdir = logdir / 'cluster-empty'
    workdir.mkdir()
    async with h.local_cluster(python, workdir) as emu:
        await asyncio.sleep(1.0)
        return h.memory_mb(emu.pid)['VmRSS']


def read_from(path: pathlib.Path, offset: int) -> bytes:
    with open(path, 'rb') as f:
        f.seek(offset)
        return f.read()


async def wait_listed(op: h.Operator, within: float, marker: bytes = LISTED) -> float:
    """Seconds from the operator's spawn to our line "The initial listing ... is processed" in its log
    (or another `marker`); our progress lines meanwhile are echoed."""
    offset, rest = 0, b''
    deadline = time.monotonic() + within
    while op.alive() and time.monotonic() < deadline:
        data = read_from(op.logfile, offset)
        now = time.time()
        offset += len(data)
        *lines, rest = (rest + data).split(b'\n')
        for line in lines:
            if marker in line:
                log(f'  {line.decode(errors="replace").strip()}')
                return now - op.spawned_at
            if any(progressing in line for progressing in PROGRESS):
                log(f'  {line.decode(errors="replace").strip()}')
        await asyncio.sleep(0.05)
    raise RuntimeError(f'no "initial listing is processed" line in {within:.0f} s (alive: {op.alive()})')


async def no_handler_due(args: argparse.Namespace, state: pathlib.Path, logdir: pathlib.Path) -> dict[str, Any]:
    """Ours restarts over N handled objects with no handler due: until the listing is processed; RSS; requests.
    With the churn but not the resume phase: then the churn, by another operator in the same cluster."""
    ours = run.ours_framework()
    empty = await empty_cluster_rss(ours.python, logdir)
    async with scale_state.cluster(ours.python, state, logdir, 'idle', args.history) as emu:
        out: dict[str, Any] = await cluster_figures(emu, empty, args.objects)
        before, cluster_cpu = await counters(emu), h.cpu_seconds(emu.pid)
        op = operator(ours, emu, logdir, args, resume=False)
        log(f'ours, no handler due: {args.objects:,} objects, chunk_size={args.chunk_size}')
        async with h.running(op):
            out['listed_s'] = await wait_listed(op, args.timeout)
            out['listed_cpu_s'] = op.cpu()
            out['listed_cluster_cpu_s'] = h.cpu_seconds(emu.pid) - cluster_cpu
            await quiet(op, args.settle, args.timeout)
            memory = op.memory()
        out.update(idle_requests(before, await counters(emu), args.objects))
        out.update(idle_rss_mb=memory['VmRSS'], idle_peak_mb=memory['VmHWM'])
        log(f'  ours: listing processed {out["listed_s"]:.1f} s after start; RSS {memory["VmRSS"]:.0f} MB '
            f'(peak {memory["VmHWM"]:.0f} MB); requests: {out["requests"]}')
        if 'churn' in args.phases and 'resume' not in args.phases:
            out.update(await churn_alone(emu, args, logdir))
    return out


def idle_requests(before: dict[str, int], after: dict[str, int], total: int) -> dict[str, Any]:
    """The requests to the cluster while ours restarted with no handler due; per object, and its writes."""
    requests = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
    requests.pop('get counters', None)
    writes = sum(n for k, n in requests.items() if k.split()[0] in ('create', 'update', 'patch', 'delete'))
    return {'requests': requests, 'requests_per_object': sum(requests.values()) / total,
            'writes_per_object': writes / total}


async def churn_alone(emu: h.EmulatorProcess, args: argparse.Namespace, logdir: pathlib.Path) -> dict[str, Any]:
    """The churn without the resume phase: ours with no handler due and no DEBUG lines (counted in the CPU
    otherwise), restarted over the N objects in the cluster given; after its listing and once quiet, the churn."""
    op = operator(run.ours_framework(), emu, logdir, args, resume=False, verbose=False)
    log(f'ours, no handler due, for the churn: {args.objects:,} objects, chunk_size={args.chunk_size}')
    async with watching(emu, (seen := Seen(since=time.time())), args.namespaces), h.running(op):
        out: dict[str, Any] = {'churn_listed_s': await wait_listed(op, args.timeout, RESUMED)}
        await quiet(op, args.settle, args.timeout)
        out['churn_rss_before_mb'] = op.memory()['VmRSS']
        out.update(await churn(op, emu, seen, args))
        out['churn_peak_mb'] = op.memory()['VmHWM']
    out['cluster_rss_end_mb'] = h.memory_mb(emu.pid)['VmRSS']   # its history included
    return out


async def progress(op: h.Operator, seen: Seen, total: int, every: float, port: int | None = None,
                   spaces: int = 0) -> None:
    """A line every `every` seconds while resuming: how many, how fast, the operator's RSS. With `port`: after
    three lines without progress short of `total`, the namespaces are listed once and the results found there
    are counted too, named if the watches had missed them (a harness check: the operator's writes are what is
    measured, not the harness's stream)."""
    started, last, still = time.monotonic(), 0, 0
    while True:
        await asyncio.sleep(every)
        count = seen.objects('resume_fn')
        rss = op.memory()['VmRSS'] if op.alive() else float('nan')
        log(f'  {op.framework.name}: resumed {count:,} of {total:,} ({(count - last) / every:,.0f}/s), '
            f'{time.monotonic() - started:.0f} s, RSS {rss:,.0f} MB')
        still = still + 1 if 0 < count == last < total else 0
        if port is not None and still == 3:
            await recount(port, seen, spaces)
        last = count


async def recount(port: int, seen: Seen, spaces: int) -> None:
    """List the namespaces and feed `seen` what the watches had not delivered; log those objects."""
    known = set(seen.latest.get('resume_fn', {}))
    async with h.Client(port, connections=1) as client:
        for namespace in scale_state.namespaces(spaces):
            status, data = await client.request('GET', h.objects_path(namespace))
            assert status == 200, (status, data)
            now = time.time()
            for item in data.get('items') or []:
                seen('MODIFIED', item, now)
    missed = sorted(set(seen.latest.get('resume_fn', {})) - known)
    log(f'  the harness re-listed the namespaces: {len(missed)} results its watches had not delivered'
        f'{": " + ", ".join(missed[:10]) if missed else ""}')


async def wait_resumed(op: h.Operator, seen: Seen, total: int, within: float, port: int | None = None,
                       spaces: int = 0) -> bool:
    """Until the resume handler has run for every object (True), or `within` seconds passed / it died."""
    ticker = asyncio.create_task(progress(op, seen, total, 10.0, port, spaces))
    try:
        return await h.wait_for(lambda: seen.objects('resume_fn') >= total or not op.alive(), within, step=0.2) \
            and seen.objects('resume_fn') >= total
    finally:
        ticker.cancel()


@contextlib.asynccontextmanager
async def watching(emu: h.EmulatorProcess, seen: Seen, spaces: int) -> AsyncIterator[list[h.Watch]]:
    """The harness's own watch of each namespace, feeding `seen`; stopped after the block."""
    watches = []
    async with h.Client(emu.port, connections=1) as client:
        for namespace in scale_state.namespaces(spaces):
            watches.append(h.Watch(emu.port, namespace, await client.resource_version(namespace), seen))
    for watch in watches:
        watch.start()
    try:
        yield watches
    finally:
        for watch in watches:
            await watch.stop()


async def with_resume(fw: h.Framework, args: argparse.Namespace, state: pathlib.Path, logdir: pathlib.Path,
                      limit: float) -> dict[str, Any]:
    """The operator with a resume handler on each object: until all resumed; RSS idle and peak; the churn."""
    out: dict[str, Any] = {}
    async with scale_state.cluster(run.ours_framework().python, state, logdir, fw.name, args.history) as emu, \
            watching(emu, (seen := Seen(since=time.time())), args.namespaces):
        op = operator(fw, emu, logdir, args, resume=True)
        log(f'{fw.name}, a resume handler on each of {args.objects:,} objects, chunk_size={args.chunk_size}')
        before, cluster_cpu = await counters(emu), h.cpu_seconds(emu.pid)
        async with h.running(op):
            if not await wait_resumed(op, seen, args.objects, limit, emu.port, args.namespaces):
                return incomplete(op, seen, args.objects, limit)
            out.update(resume_s=seen.newest['resume_fn'] - op.spawned_at, resume_cpu_s=op.cpu(),
                       resumed=seen.objects('resume_fn'), resume_cluster_cpu_s=h.cpu_seconds(emu.pid) - cluster_cpu)
            out.update(resume_requests(before, await counters(emu), args.objects))
            out['resume_quiet_s'] = await quiet(op, args.settle, limit) - op.spawned_at
            memory = op.memory()
            out.update(resume_rss_mb=memory['VmRSS'], resume_peak_mb=memory['VmHWM'])
            log(f'  {fw.name}: all resumed {out["resume_s"]:.1f} s after start; RSS {memory["VmRSS"]:.0f} MB '
                f'(peak {memory["VmHWM"]:.0f} MB)')
            if 'churn' in args.phases:
                out.update(await churn(op, emu, seen, args))
        out['cluster_rss_end_mb'] = h.memory_mb(emu.pid)['VmRSS']   # its history included
    return out


async def quiet(op: h.Operator, settle: float, within: float) -> float:
    """When the operator is quiet: less than 5% of a core over `settle` seconds (e.g. the echoes of its
    own patches are read through); `within` seconds at most."""
    deadline = time.monotonic() + within
    while op.alive() and time.monotonic() < deadline:
        cpu0, t0 = op.cpu(), time.time()
        await asyncio.sleep(settle)
        if op.cpu() - cpu0 < 0.05 * settle:
            return t0
    return time.time()


def incomplete(op: h.Operator, seen: Seen, total: int, limit: float) -> dict[str, Any]:
    """How far an operator got when it did not resume every object in time (or died): RSS and CPU then."""
    elapsed, alive = time.time() - op.spawned_at, op.alive()
    memory = op.memory() if alive else {}
    log(f'  {op.framework.name}: resumed {seen.objects("resume_fn"):,} of {total:,} in {elapsed:.0f} s '
        f'(limit {limit:.0f} s, alive: {alive}); RSS {memory}')
    return {'resumed': seen.objects('resume_fn'), 'resume_incomplete_after_s': elapsed,
            **({'resume_cap_rss_mb': memory['VmRSS'], 'resume_cap_peak_mb': memory['VmHWM'],
                'resume_cap_cpu_s': op.cpu()} if memory else {})}


def resume_requests(before: dict[str, int], after: dict[str, int], total: int) -> dict[str, Any]:
    """The LIST requests of the objects (pages: `chunk_size` at work?) and writes per object while resuming."""
    delta = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
    writes = sum(n for k, n in delta.items() if k.split()[0] in ('create', 'update', 'patch', 'delete')
                 and k.split()[1].startswith(h.PLURAL))
    return {'resume_lists': delta.get(f'list {h.PLURAL}', 0), 'resume_writes_per_object': writes / total}


def patches(args: argparse.Namespace, total: int) -> Iterable[tuple[str, str, Any, str]]:
    """`total` merge-patches of `spec.n` to random objects, each to a value no object had before."""
    rng = random.Random(43)
    for k in range(total):
        i = rng.randrange(args.objects)
        path = h.objects_path(scale_state.namespace_of(i, args.namespaces), scale_state.object_name(i))
        yield 'PATCH', path, {'spec': {'n': args.objects + k}}, 'application/merge-patch+json'


async def paced(port: int, requests: Iterable[tuple[str, str, Any, str]], rate: float) -> int:
    """Send the requests at `rate` per second over one pipelined connection; how many answered 200."""
    conn = await h.Connection.open(port)
    ok, pending, started = 0, 0, time.monotonic()
    try:
        for k, request in enumerate(requests):
            delay = started + k / rate - time.monotonic()
            if delay > 0:
                for _ in range(pending):
                    ok += (await conn.response())[0] == 200
                pending = 0
                await asyncio.sleep(delay)
            conn.writer.write(h.Connection.encode(*request))
            pending += 1
        for _ in range(pending):
            ok += (await conn.response())[0] == 200
    finally:
        conn.close()
    return ok


async def churn(op: h.Operator, emu: h.EmulatorProcess, seen: Seen, args: argparse.Namespace) -> dict[str, Any]:
    """PATCHes at a steady rate; the operator's CPU from the first one until its update results stop coming."""
    total = int(args.churn * args.churn_seconds)
    log(f'  {op.framework.name}: churn: {total:,} PATCHes of spec.n at {args.churn:g}/s over {args.objects:,} objects')
    seen.since = time.time()
    calls0, cpu0 = seen.calls.get('update_fn', 0), op.cpu()
    sent = await paced(emu.port, patches(args, total), args.churn)
    await quiet(op, args.settle, 600)
    cpu, calls = op.cpu() - cpu0, seen.calls.get('update_fn', 0) - calls0
    rss = op.memory()['VmRSS']
    log(f'  {op.framework.name}: churn: {sent:,} events, {calls:,} update handler calls; '
        f'{cpu * 1000 / max(sent, 1):.2f} ms CPU per event; RSS {rss:.0f} MB after')
    return {'churn_events': sent, 'churn_update_calls': calls, 'churn_cpu_s': cpu,
            'churn_cpu_ms_per_event': cpu * 1000 / max(sent, 1), 'churn_rss_mb': rss}


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    loadavg_start = h.loadavg()
    state = await asyncio.to_thread(scale_state.ensure, args.objects, args.namespaces, args.state)
    logdir = h.logs_dir('kopf-bench-scale-')
    report: dict[str, Any] = {'ours': {}, 'cluster': {}}
    if 'idle' in args.phases:
        report['ours'] = await no_handler_due(args, state, logdir)
        report['cluster'] = {k: report['ours'].pop(k) for k in list(report['ours'])
                             if k.startswith('cluster_') and k != 'cluster_rss_end_mb'}
    if 'resume' in args.phases:
        report['ours'].update(await with_resume(run.ours_framework(), args, state, logdir, args.timeout))
    if args.upstream and 'resume' in args.phases:
        upstream = h.Framework('upstream', run.upstream_venv(False), 'upstream')
        report['upstream'] = await with_resume(upstream, args, state, logdir, args.upstream_timeout)
        report['ratio'] = h.ratios(report['ours'], report['upstream'], RATIOS)
    report['meta'] = run.meta(args, logdir, loadavg_start=loadavg_start, objects=args.objects,
                              namespaces=args.namespaces, chunk_size=args.chunk_size, state=str(state),
                              churn={'rate': args.churn, 'seconds': args.churn_seconds}, history=args.history,
                              phases=list(args.phases), skipped=[p for p in PHASES if p not in args.phases],
                              skip_reason=args.skip_reason)
    report['meta']['mode'] = str(args.objects)
    return report


ROWS = [
    ('listed_s', 'no handler due: start → initial listing processed, s', '{:.1f}'),
    ('listed_cpu_s', 'no handler due: CPU s until then', '{:.1f}'),
    ('listed_cluster_cpu_s', "no handler due: the cluster's CPU s meanwhile", '{:.1f}'),
    ('idle_rss_mb', 'no handler due: RSS idle, MB', '{:.0f}'),
    ('idle_peak_mb', 'no handler due: RSS peak, MB', '{:.0f}'),
    ('requests_per_object', 'no handler due: requests per object', '{:.4f}'),
    ('writes_per_object', 'no handler due: writes (PATCH...) per object', '{:.4f}'),
    ('resume_s', 'resume handler each: start → all resumed, s', '{:.1f}'),
    ('resume_cpu_s', 'resume handler each: CPU s until then', '{:.1f}'),
    ('resume_cluster_cpu_s', "resume handler each: the cluster's CPU s meanwhile", '{:.1f}'),
    ('resume_lists', 'resume handler each: LIST requests (pages)', '{:,}'),
    ('resume_writes_per_object', 'resume handler each: PATCHes per object', '{:.2f}'),
    ('resume_quiet_s', 'resume handler each: start → quiet (< 5% CPU), s', '{:.1f}'),
    ('resume_rss_mb', 'resume handler each: RSS idle, MB', '{:.0f}'),
    ('resume_peak_mb', 'resume handler each: RSS peak, MB', '{:.0f}'),
    ('resumed', 'resume handler each: objects resumed', '{:,}'),
    ('resume_cap_cpu_s', 'resume handler each, not all in time: CPU s then', '{:.1f}'),
    ('resume_cap_rss_mb', 'resume handler each, not all in time: RSS then, MB', '{:.0f}'),
    ('resume_cap_peak_mb', 'resume handler each, not all in time: RSS peak, MB', '{:.0f}'),
    ('churn_listed_s', 'churn alone: start → listing processed, s', '{:.1f}'),
    ('churn_rss_before_mb', 'churn alone: RSS before it, MB', '{:.0f}'),
    ('churn_cpu_ms_per_event', 'churn: CPU ms per watch event', '{:.2f}'),
    ('churn_update_calls', 'churn: update handler calls', '{:,}'),
    ('churn_rss_mb', 'churn: RSS after, MB', '{:.0f}'),
    ('churn_peak_mb', 'churn alone: RSS peak (its listing included), MB', '{:.0f}'),
    ('cluster_rss_end_mb', "the cluster's RSS at the end, MB", '{:,.0f}'),
]
RATIOS = [key for key, *_ in ROWS if key not in ('resumed', 'resume_lists', 'churn_update_calls',
                                                 'resume_cluster_cpu_s', 'cluster_rss_end_mb')
          and not key.startswith('resume_cap_')]


def table(report: dict[str, Any]) -> str:
    meta, cluster = report['meta'], report['cluster']
    lines = [f"kopf bench scale: {meta['objects']:,} objects in {meta['namespaces']} namespaces, chunk_size "
             f"{meta['chunk_size']}, churn {meta['churn']['rate']:g}/s for {meta['churn']['seconds']:g} s, "
             f"cluster history {meta['history']:,}; "
             f"{meta['machine']['cores']} cores, {meta['machine']['memory_gb']} GB, load {meta['loadavg_start']} → "
             f"{meta['loadavg_end']}",
             f"local cluster: {cluster['cluster_rss_mb']:,.0f} MB RSS after loading "
             f"({cluster['cluster_kb_per_object']:.2f} KB per object above its "
             f"{cluster['cluster_empty_rss_mb']:.0f} MB when empty)" if cluster else 'local cluster: not measured',
             f"{'figure':52} {'ours':>10} {'upstream':>10} {'ratio':>8}"]
    up = report.get('upstream', {})
    for key, title, fmt in ROWS:
        a, b, ratio = report['ours'].get(key), up.get(key), report.get('ratio', {}).get(key)
        lines.append(f"{title:52} {fmt.format(a) if a is not None else '-':>10} "
                     f"{fmt.format(b) if b is not None else '-':>10} {f'{ratio:.2f}x' if ratio else '-':>8}")
    if meta.get('skipped'):
        lines.append(f"phases run: {', '.join(meta['phases'])}; skipped: {', '.join(meta['skipped'])}"
                     + (f" ({meta['skip_reason']})" if meta.get('skip_reason') else ''))
    for side, figures in (('ours', report['ours']), ('upstream', up)):
        if 'resume_incomplete_after_s' in figures:
            lines.append(f"{side} did not resume all in {figures['resume_incomplete_after_s']:.0f} s: "
                         f"{figures['resumed']:,} of {meta['objects']:,}")
    return '\n'.join(lines)


def phases_arg(text: str) -> tuple[str, ...]:
    chosen = {p.strip() for p in text.split(',') if p.strip()}
    if not chosen or chosen - set(PHASES):
        raise argparse.ArgumentTypeError(f'phases: some of {", ".join(PHASES)}; got {text!r}')
    return tuple(p for p in PHASES if p in chosen)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--objects', type=int, required=True, help='handled objects in the cluster')
    parser.add_argument('--namespaces', type=int, default=4, help='spread over this many namespaces (default 4)')
    parser.add_argument('--chunk-size', type=int, default=500, help='settings.watching.chunk_size on both sides '
                        '(0: none, one unpaginated LIST; default 500)')
    parser.add_argument('--churn', type=float, default=200.0, help='PATCHes per second in the churn (0: none)')
    parser.add_argument('--churn-seconds', type=float, default=30.0)
    parser.add_argument('--upstream', action='store_true', help='upstream Kopf 1.45.2 too, after ours')
    parser.add_argument('--upstream-timeout', type=float, default=1800.0,
                        help="seconds for upstream's resume of all objects; then, how far it got (default 1800)")
    parser.add_argument('--timeout', type=float, default=7200.0,
                        help="seconds for ours' listing, and for its resume of all objects (default 7200)")
    parser.add_argument('--settle', type=float, default=5.0,
                        help="an operator is idle after this many seconds below 5%% of a core: its RSS is read "
                             "then, and a churn's CPU counted until then (default 5)")
    parser.add_argument('--history', type=int, default=0,
                        help="the cluster's --history-size (default: enough that no continue token expires in the "
                             "run: 2 x objects + 3 x churn + 10,000; 10000: the cluster's own default)")
    parser.add_argument('--state', type=pathlib.Path, default=None,
                        help=f'the state file (written if missing; default: cached by N in {scale_state.CACHE})')
    parser.add_argument('--phases', type=phases_arg, default=PHASES,
                        help='which phases, comma-separated (default: idle,resume,churn): idle (no handler due), '
                             'resume (a resume handler each; upstream too with --upstream), churn (after the '
                             'resume; without it, by a second operator in the idle phase\'s cluster, idle implied)')
    parser.add_argument('--skip-reason', default='', help='why phases are skipped: recorded and printed')
    parser.add_argument('--no-write', action='store_true', help='print only; do not write bench/results/')
    args = parser.parse_args()
    args.quick = False
    if args.churn <= 0 or args.churn_seconds <= 0:
        args.phases = tuple(p for p in args.phases if p != 'churn')
    if 'churn' in args.phases and 'resume' not in args.phases and 'idle' not in args.phases:
        args.phases = ('idle', *args.phases)
    # Enough history that no continue token expires: the resume writes each object (1-2 changes each).
    args.history = args.history or ((2 * args.objects if 'resume' in args.phases else 0)
                                    + 3 * int(args.churn * args.churn_seconds) + 10_000)
    run.run_and_report('scale', bench(args), table, write=not args.no_write)
    return 0


if __name__ == '__main__':
    sys.exit(main())
