"""The burst under write faults: ours vs upstream Kopf 1.45.2, the same operator on the same local cluster.

    .venv/bin/python bench/faults.py              # 600 objects, 3 runs per side (alternating), median
    .venv/bin/python bench/faults.py --quick      # 200 objects, 1 run per side
    .venv/bin/python bench/faults.py --ours-only --runs 1 --objects 600

While the objects are created and deleted, the local cluster (ours, in its own process) fails the operators'
requests as a troubled API server does, by its fault injection with seeded ratios (`LocalCluster.fail(ratio=,
seed=)`; the same seeds for both sides and every run):

- 10% of the operator's requests are throttled: the plain-text 429 with `Retry-After: 1`;
- 20% of the rest of its writes (PATCH, POST, PUT, DELETE) fail with a 500 `InternalError`;
- every second, all watch streams end (cleanly), and every 2 s the history is compacted, so that a watch
  resumed from an older resourceVersion gets 410 Expired and its client must list again.

Only the operators' requests are failed (their User-Agent is `kopf/...`); the harness's own creations,
deletions and watch are not (the harness's watch resumes after each close, and lists again after a 410).

Figures per run: `create_s` (the first creation sent → the last create handler's result visible in status),
`delete_s` (the first deletion sent → the last object gone, its finalizer released), `duplicates` (create
handler calls beyond one per object, from the operator's log), the operator's CPU seconds for each phase, and
the injected faults by kind (the cluster's counters of the rules' hits). Written to
`bench/results/faults-<UTC stamp>-<mode>.json`; `bench/plot.py` draws `faults.svg` from it.
"""
import argparse
import asyncio
import collections
import contextlib
import json
import pathlib
import re
import statistics
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import harness as h
import run
from harness import log

WRITES = ('PATCH', 'POST', 'PUT', 'DELETE')
AGENT = 'kopf/*'   # both frameworks' User-Agent; the harness sends none


class Tracker(run.Tracker):
    """The harness's view of one namespace, kept across watch restarts and re-lists."""

    def __init__(self, names: set[str]) -> None:
        super().__init__()
        self.names = names
        self.rv = ''

    def relisted(self, items: list[dict[str, Any]], now: float) -> None:
        present = set()
        for obj in items:
            present.add(obj['metadata']['name'])
            self('ADDED', obj, now)
        for name in self.names - present:
            if name in self.results.get('create_fn', {}):   # created and seen before: gone while not watched
                self.gone.setdefault(name, now)


class ResilientWatch:
    """A raw watch of one namespace that resumes after every close and lists again after a 410."""

    def __init__(self, port: int, namespace: str, tracker: Tracker) -> None:
        self.port, self.namespace, self.tracker = port, namespace, tracker
        self.task: asyncio.Task[None] | None = None
        self.restarts = self.relists = 0

    def start(self) -> None:
        self.task = asyncio.create_task(self.run())

    async def relist(self) -> None:
        conn = await h.Connection.open(self.port)
        try:
            status, data = await conn.request('GET', h.objects_path(self.namespace))
        finally:
            conn.close()
        assert status == 200, (status, data)
        self.tracker.relisted(data['items'], time.time())
        self.tracker.rv = data['metadata']['resourceVersion']
        self.relists += 1

    async def run(self) -> None:
        expired = True
        while True:
            try:
                if expired:
                    await self.relist()
                expired = await self.watch_once()
            except Exception:   # a reset in the middle of a chunk or a list: list again
                expired = True
                await asyncio.sleep(0.05)
            self.restarts += 1

    async def watch_once(self) -> bool:
        """One watch request until the stream ends; True if the history was compacted past our resourceVersion."""
        conn = await h.Connection.open(self.port)
        path = f'{h.objects_path(self.namespace)}?watch=true&allowWatchBookmarks=true&resourceVersion={self.tracker.rv}'
        try:
            conn.writer.write(f'GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n'.encode())
            head = await conn.reader.readuntil(b'\r\n\r\n')
            if int(head[9:12]) == 410:
                return True
            buffer = b''
            while True:
                size = int((await conn.reader.readline()).strip(), 16)
                if size == 0:
                    return False
                buffer += await conn.reader.readexactly(size)
                await conn.reader.readexactly(2)
                *lines, buffer = buffer.split(b'\n')
                now = time.time()
                for line in filter(None, (line.strip() for line in lines)):
                    event = json.loads(line)
                    if event['type'] == 'ERROR':
                        return event['object'].get('code') == 410
                    self.tracker.rv = event['object']['metadata']['resourceVersion']
                    if event['type'] != 'BOOKMARK':
                        self.tracker(event['type'], event['object'], now)
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):   # a reset: resume from the last one
            return False
        finally:
            conn.close()

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task


@contextlib.asynccontextmanager
async def faults(port: int, seed: int, abort: bool) -> AsyncIterator[None]:
    """The fault rules and the watch-closing/compacting loop for the block; all cleared afterwards."""
    async with h.Client(port, connections=1) as control:
        rules = [{'method': '*', 'status': 429, 'text': True, 'retryAfter': 1, 'ratio': 0.1, 'seed': seed}]
        rules += [{'method': verb, 'status': 500, 'ratio': 0.2, 'seed': seed + i + 1} for i, verb in enumerate(WRITES)]
        for rule in rules:
            status, answer = await control.request('POST', '/_emulator/faults', {'agent': AGENT, **rule})
            assert status == 201, (status, answer)

        async def churn() -> None:
            for tick in range(1, 1_000_000):
                await asyncio.sleep(1.0)
                await control.request('POST', '/_emulator/watches/close', {'abort': abort})
                if tick % 2 == 0:
                    await control.request('POST', '/_emulator/history/compact', {})

        task = asyncio.create_task(churn())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await control.request('DELETE', '/_emulator/faults')


def handler_calls(logfile: pathlib.Path, namespace: str, handler: str) -> collections.Counter[str]:
    """How often the handler succeeded per object, by the operator's log (`[ns/name] Handler 'x' succeeded.`)."""
    pattern = re.compile(rf"\[{re.escape(namespace)}/([\w.-]+)\] Handler '{handler}' succeeded")
    return collections.Counter(match[1] for match in pattern.finditer(logfile.read_text(errors='replace')))


_STAMP = r'^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] '
_OURS_RETRY = re.compile(_STAMP + r'kopf\._api\s+\[WARNING \] \w+ \S*?/kopfbenches/([\w.-]+)(?:/status)? failed '
                                   r'.*; retrying in', re.M)
_UPSTREAM_RETRY = re.compile(_STAMP + r'kopf\.objects\s+\[ERROR\s+\] \[[\w.-]+/([\w.-]+)\] '
                                      r'Request attempt #\d+/\d+ failed', re.M)


def failed_attempts(logfile: pathlib.Path, since: float, until: float) -> collections.Counter[str]:
    """Failed (and retried) requests per object between two times, by the operator's log (both frameworks log
    each retried attempt: ours "... failed (...); retrying in Ns.", upstream's "Request attempt #k/9 failed")."""
    import datetime
    text = logfile.read_text(errors='replace')
    found: collections.Counter[str] = collections.Counter()
    for pattern in (_OURS_RETRY, _UPSTREAM_RETRY):
        for stamp, name in pattern.findall(text):
            when = datetime.datetime.strptime(stamp, '%Y-%m-%d %H:%M:%S,%f').timestamp()   # local time, as logged
            if since <= when <= until:
                found[name] += 1
    return found


async def one_run(fw: h.Framework, emu: h.EmulatorProcess, args: argparse.Namespace, rep: int,
                  logdir: pathlib.Path) -> dict[str, Any]:
    ns = f'faults-{fw.name}-{rep}'
    names = [f'f-{i:05d}' for i in range(args.objects)]
    name_set = set(names)
    async with h.Client(emu.port) as client:
        await client.ensure_namespace(ns)
        tracker = Tracker(name_set | {'probe'})
        watch = ResilientWatch(emu.port, ns, tracker)
        watch.start()
        await client.request('POST', h.objects_path(ns), {'apiVersion': h.API_VERSION, 'kind': h.KIND,
                                                          'metadata': {'name': 'probe'}, 'spec': {'n': 0}})
        op = h.Operator(fw, emu.kubeconfig, ns, logdir, extra_args=['--verbose'] if args.verbose else [])
        async with h.running(op, watch):
            if not await h.wait_for(lambda: 'probe' in tracker.results.get('create_fn', {}) or not op.alive(), 60):
                raise RuntimeError('no first handler call in 60 s')
            before, cpu0 = await client.counters(), op.cpu()
            async with faults(emu.port, args.seed, args.abort):
                started = time.time()
                creates = [('POST', h.objects_path(ns), {'apiVersion': h.API_VERSION, 'kind': h.KIND,
                                                           'metadata': {'name': name}, 'spec': {'n': i}},
                            'application/json') for i, name in enumerate(names)]
                assert await client.bulk(creates) == args.objects
                done = await h.wait_for(lambda: tracker.count('create_fn', names=name_set) >= args.objects
                                        or not op.alive(), args.timeout)
                if not done:
                    raise RuntimeError(f'created: {tracker.count("create_fn", names=name_set)} of {args.objects} '
                                       f'handled in {args.timeout} s')
                create_s = max(tracker.visible['create_fn'][name] for name in names) - started
                cpu1 = op.cpu()
                deleted = time.time()
                assert await client.bulk([('DELETE', h.objects_path(ns, name), None, 'application/json')
                                          for name in names]) == args.objects
                done = await h.wait_for(lambda: len(name_set & tracker.gone.keys()) >= args.objects
                                        or not op.alive(), args.timeout)
                if not done:
                    raise RuntimeError(f'deleted: {len(name_set & tracker.gone.keys())} of {args.objects} gone '
                                       f'in {args.timeout} s')
                delete_s = max(tracker.gone[name] for name in names) - deleted
                cpu2 = op.cpu()
            after = await client.counters()
    calls = handler_calls(op.logfile, ns, 'create_fn')
    failed_creating = failed_attempts(op.logfile, started, deleted)
    failed_deleting = failed_attempts(op.logfile, deleted, deleted + delete_s + 1)
    slowest = sorted(names, key=lambda name: tracker.gone[name], reverse=True)[:5]
    created_slowest = sorted(names, key=lambda name: tracker.visible['create_fn'][name], reverse=True)[:5]
    result = {'create_s': create_s, 'delete_s': delete_s,
              'duplicates': sum(max(0, calls[name] - 1) for name in names),
              'create_calls_logged': sum(calls[name] for name in names),
              'cpu_s_create': round(cpu1 - cpu0, 2), 'cpu_s_delete': round(cpu2 - cpu1, 2),
              'watch_restarts': watch.restarts, 'watch_relists': watch.relists,
              'requests': {key: after.get(key, 0) - before.get(key, 0) for key in sorted(after)
                           if after.get(key, 0) != before.get(key, 0)},
              'failed_attempts_creating': sum(failed_creating.values()),
              'failed_attempts_deleting': sum(failed_deleting.values()),
              'slowest_deletions': {name: [round(tracker.gone[name] - deleted, 2), failed_deleting[name]]
                                    for name in slowest},   # seconds, failed attempts of that object
              'slowest_creations': {name: [round(tracker.visible['create_fn'][name] - started, 2),
                                           failed_creating[name]] for name in created_slowest},
              'loadavg': h.loadavg()}
    log(f'  {fw.name} run {rep + 1}: created in {create_s:.1f} s, deleted in {delete_s:.1f} s, '
        f'{result["duplicates"]} duplicates, CPU {result["cpu_s_create"]} + {result["cpu_s_delete"]} s, '
        f'load {result["loadavg"]}; slowest deletions {result["slowest_deletions"]}, '
        f'creations {result["slowest_creations"]}')
    return result


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    frameworks = run.frameworks(ours_only=args.ours_only, upstream_clients=args.upstream_clients)
    logdir = h.logs_dir('kopf-bench-faults-')
    loadavg_start = h.loadavg()
    runs: dict[str, list[dict[str, Any]]] = {fw.label: [] for fw in frameworks}
    async with h.local_cluster(frameworks[0].python, logdir) as emu:
        for rep in range(args.runs):
            for fw in frameworks if rep % 2 == 0 else list(reversed(frameworks)):   # alternating who goes first
                log(f'run {rep + 1}/{args.runs}: {fw.name}: {args.objects} objects under faults')
                runs[fw.label].append(await one_run(fw, emu, args, rep, logdir))
    report: dict[str, Any] = {}
    for label, results in runs.items():
        report[label] = {key: statistics.median(r[key] for r in results)
                         for key in ('create_s', 'delete_s', 'duplicates', 'cpu_s_create', 'cpu_s_delete')}
        report[label]['runs'] = results
    report['meta'] = run.meta(args, logdir, objects=args.objects, runs=args.runs, seed=args.seed,
                              faults='10% throttled (429), 20% of writes 500, watches '
                                     f'{"reset" if args.abort else "closed"} every 1 s, history compacted every 2 s',
                              loadavg_start=loadavg_start)
    return report


def table(report: dict[str, Any]) -> str:
    sides = [side for side in ('ours', 'upstream') if side in report]
    lines = [f'{"figure (median)":<20}' + ''.join(f'{side:>12}' for side in sides)]
    for key in ('create_s', 'delete_s', 'duplicates', 'cpu_s_create', 'cpu_s_delete'):
        lines.append(f'{key:<20}' + ''.join(f'{report[side][key]:>12.2f}' for side in sides))
    if 'ours' in report:
        ours = report['ours']
        verdict = 'met' if ours['delete_s'] <= ours['create_s'] else 'NOT met'
        lines.append(f'ours: deletions no slower than creations: {verdict}')
        if 'upstream' in report:
            verdict = 'met' if ours['delete_s'] <= report['upstream']['delete_s'] else 'NOT met'
            lines.append(f'ours: deletions no slower than upstream\'s: {verdict}')
    return '\n'.join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--quick', action='store_true', help='200 objects, 1 run per side')
    parser.add_argument('--objects', type=int, default=None, help='objects per run (600; quick: 200)')
    parser.add_argument('--runs', type=int, default=None, help='runs per side (3; quick: 1)')
    parser.add_argument('--seed', type=int, default=42, help='the fault rules\' seed (the same for every run)')
    parser.add_argument('--timeout', type=float, default=300.0, help='per phase, s')
    parser.add_argument('--abort', action='store_true', help='watches end by a connection reset, not cleanly')
    parser.add_argument('--verbose', action='store_true', help='the operators log at DEBUG (to find where time goes)')
    run.side_options(parser)
    args = parser.parse_args()
    args.objects = args.objects or (200 if args.quick else 600)
    args.runs = args.runs or (1 if args.quick else 3)
    run.run_and_report('faults', bench(args), table, write=not args.no_write)
    return 0


if __name__ == '__main__':
    sys.exit(main())
