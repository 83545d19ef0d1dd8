"""Sharding: 3 replicas x 6 shards (`kopf run --lease NAME --shards 6`) against one replica, on the burst.

    .venv/bin/python bench/sharding.py --quick   # 500 objects, 3 rounds (~2 minutes)
    .venv/bin/python bench/sharding.py           # 2,000 objects, 3 rounds, on the local cluster
    .venv/bin/python bench/sharding.py --objects 20000 --scenarios single,3x6
    .venv/bin/python bench/sharding.py --gate off            # the server ignores shardSelector=
    .venv/bin/python bench/sharding.py --backend envtest     # kube-apiserver 1.37.2 (build.sh 1.37.2)
    .venv/bin/python bench/sharding.py --objects 0 --idle 60 --rounds 3 --scenarios single-lease,single-sharded
    .venv/bin/python bench/sharding.py --scenarios single,3x6 --matched 60   # also at 60 objects/s per replica

The server: the local cluster in its own process (`kopf cluster`, which serves `shardSelector=`), or a
real kube-apiserver 1.37.2 (`--backend envtest`); either with the feature gate ShardedListAndWatch on
(the default; the replicas' watches then carry their shards' ranges and the server sends each replica
only its objects) or off (`--gate off`: the server ignores the parameter, the replicas filter).

Per round, in a fresh namespace each, one after the other (alternating, so that the machine's noise
hits all alike), with `bench/operator.py` (the create handler records its time in the status):

- `single`: one replica, no Lease (`--standalone`): the baseline;
- `single-lease`: one replica with `--lease` alone (one Lease, no shards; for `--idle`);
- `single-sharded`: one replica with `--lease --shards 6` (it holds all six shards);
- `3x6`: three replicas with `--lease --shards 6` (two shards each, checked before the burst);
- `single+2-filtering`: the baseline, plus two replicas with `--lease --shards 6` whose six shard
  Leases are held by someone else (written by the bench, valid for an hour): they only watch,
  decode and filter every event; their CPU over the burst is the client-side filtering's cost.

The burst: N objects created at once (pipelined); the time until all N creations are handled (seen
in the objects' status by the harness's own watch) gives objects/s; every replica's CPU (user+sys
from /proc) over the burst, per 1,000 objects, and the local cluster's (it sends every event to every
replica: on 2 cores, the cluster and the replicas share the CPU, which bounds objects/s). The
client-side filtering's overhead: every replica decodes every event; `(CPU of 3x6, all replicas) -
(CPU of single)` is spent on the 2·N objects of other replicas' shards, plus the Leases, three
processes' own costs and less batching per process (an upper bound); `single+2-filtering` measures
the filtering alone. Then the objects are deleted (not measured).
Each replica's RSS after the burst, above the post-import baseline (`import kopf` in a fresh interpreter,
before any connection: the issue's figure), and also its RSS just before the burst (idle, its shards
spread) and its growth over the burst: the post-import figure includes what every replica holds whatever
its share (the running operator's own fixed memory, its connections, its Leases), the growth is what the
burst's objects and working set added. Medians of the rounds (per column); printed and written to
bench/results/sharding-<timestamp>-<mode>.json, never asserted. `--profile DIR` attaches py-spy ($PY_SPY) to
every replica for the burst (raw stacks; bench/profile_summary.py); its sampling costs the replicas CPU.

`--idle SECONDS`: before the burst (the shards spread, then 3 s to settle), each replica's CPU over that
many seconds of idleness, in ms per second: what its Leases cost (the renewals, the watches of them);
`--objects 0` measures only that (no burst).

`--count`: each replica counts, over the burst, its loop's waits (`select` calls, blocking or not, and the
events they return), its executor's wake-ups, its API requests by verb and resource, its watch connections,
LISTs and items by resource (Leases included), and gc's collections and their CPU (bench/operator.py's
`BENCH_COUNT`); printed per object of the burst. Counts move little with the host's noise.
`BENCH_CALLGRIND=DIR` (env): every replica runs under valgrind's callgrind, instrumented over the burst only
(`callgrind_control`; files DIR/cg.<pid>.1-<thread>: the burst's instructions, the loop's thread is -01); with
`BENCH_LEASE_DURATION=150` (replicas under callgrind cannot renew 15-second Leases in time) and
`--objects 1000 --timeout 1200`. Under callgrind every replica is far behind, so all batch alike: the counts are
instructions per object without the batching (or the host) that separates the scenarios in CPU seconds.

`--rate R`: the burst's creations paced at R objects/s (a slice every 10 ms) instead of all at once;
`--rate-per-replica R`: at R per replica holding shards (single R/s, 3x6 3R/s). `--matched R`: every scenario
runs twice per round, as the burst and paced at R/s per replica, both printed; the matched ratios on a line of
their own. A replica's CPU per object follows its blocking waits per object (each wake-up costs, on the hosts
of bench/results/NOTES.md, 0.1-0.3 ms of CPU: bench/wakecost.py): in a burst the unsharded replica gets three
times the events per second of a sharded one and finds several per wake-up, so the burst's ratios mix the
sharding with the event rate; at the same rate per replica they measure the sharding alone. `--pin A/B`: every
replica's threads on CPU A, the server's and the bench's on CPU B (`os.sched_setaffinity`), before the burst.
`BENCH_CALLS=1` (env, with `--count`): each replica counts its loop thread's Python calls and coroutine resumptions
by function (in the JSON only; `BENCH_CALLS_BY=f,g`: by caller too). `BENCH_SPY_RATE`: `--profile`'s samples/s.

The harness's own watch of the objects resumes whenever the server ends it (kube-apiserver ends a watcher
that falls behind: the bench's loop is busy sending the burst): each restart is logged and counted.
"""
import argparse
import asyncio
import collections
import contextlib
import json
import os
import pathlib
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from typing import Any

import harness as h
import run
from harness import log

SHARDS = 6
PY_SPY = os.environ.get('PY_SPY', 'py-spy')   # `--profile`: e.g. a throwaway venv's (pip install py-spy)


async def holders(client: h.Client, namespace: str, lease: str) -> dict[int, str]:
    found = {}
    for i in range(SHARDS):
        status, body = await client.request('GET', f'/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/'
                                                   f'{lease}-{i}')
        if status == 200:
            found[i] = (body.get('spec') or {}).get('holderIdentity') or ''
    return found


async def members(client: h.Client, namespace: str) -> list[Any]:
    status, body = await client.request('GET', f'/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases'
                                               f'?labelSelector=kopf.dev%2Fshards-of')
    return list(body.get('items') or []) if status == 200 else []


async def spread(client: h.Client, namespace: str, lease: str, replicas: int) -> bool:
    found = await holders(client, namespace, lease)
    counts = collections.Counter(v for v in found.values() if v)
    return len(found) == SHARDS and all(found.values()) and len(counts) == replicas and \
        all(SHARDS // replicas <= n <= -(-SHARDS // replicas) for n in counts.values())


def spying(ops: list[h.Operator], profile: pathlib.Path | None, scenario: str, round_: int) -> list[Any]:
    """py-spy attached to every replica for the burst (`--profile DIR`: raw stacks, per replica, 100 Hz)."""
    if profile is None:
        return []
    profile.mkdir(parents=True, exist_ok=True)
    rate = os.environ.get('BENCH_SPY_RATE', '100')   # samples per second
    return [subprocess.Popen([PY_SPY, 'record', '--pid', str(op.pid), '--format', 'raw', '--rate', rate,
                              '--nonblocking', '-o', str(profile / f'{scenario}-{round_}-{i}.txt')],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for i, op in enumerate(ops)]


def probe_env(args: argparse.Namespace, scenario: str, round_: str, i: int) -> dict[str, str]:
    """`--probe DIR`: the replica's own probe (bench/operator.py) writes into DIR/<scenario>-<round>-<i>/."""
    if args.probe is None:
        return {'BENCH_LEASE_DURATION': os.environ['BENCH_LEASE_DURATION']} if os.environ.get('BENCH_LEASE_DURATION') \
            else {}
    where = args.probe / f'{scenario}-{round_}-{i}'
    where.mkdir(parents=True, exist_ok=True)
    env = {'BENCH_PROBE': str(where)}
    if args.count:
        env['BENCH_COUNT'] = '1'
    if os.environ.get('BENCH_CALLS'):
        env['BENCH_CALLS'] = '1'
    if os.environ.get('BENCH_LEASE_DURATION'):
        env['BENCH_LEASE_DURATION'] = os.environ['BENCH_LEASE_DURATION']
    if args.tracemalloc:
        env['BENCH_TRACEMALLOC'] = str(args.tracemalloc)
    return env


async def probe(ops: list[h.Operator], args: argparse.Namespace, taken: int) -> None:
    """Each replica writes what it holds (`--probe`: its probe-<taken>.json, its tracemalloc snapshot), in turn."""
    if args.probe is None:
        return
    for op in ops:
        os.kill(op.pid, signal.SIGUSR1)
        where = pathlib.Path(op.env['BENCH_PROBE']) / f'probe-{taken}.json'
        if not await h.wait_for(where.exists, 120):
            raise RuntimeError(f'no {where}')


def unspy(spies: list[Any]) -> None:
    for spy in spies:
        spy.send_signal(signal.SIGINT)
    for spy in spies:
        spy.wait(timeout=30)


async def held(client: h.Client, namespace: str, lease: str) -> bool:
    status, body = await client.request('GET', f'/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{lease}')
    return status == 200 and bool((body.get('spec') or {}).get('holderIdentity'))


async def settled(client: h.Client, scenario: str, ns: str, lease: str, ops: list[h.Operator], replicas: int) -> None:
    """Until the replicas are ready for the burst: the shards spread, the Lease held, the watches up."""
    loop_deadline = time.monotonic() + (600 if os.environ.get('BENCH_CALLGRIND') else 60)
    if scenario == 'single+2-filtering':  # started (their membership Leases), watching; they hold nothing
        while len(await members(client, ns)) < 2:
            if time.monotonic() > loop_deadline or not all(op.alive() for op in ops):
                raise RuntimeError(f'{scenario}: the filtering replicas did not start')
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.0)  # their watch streams are open (listed: nothing yet)
    elif scenario in ('single-sharded', '3x6'):
        while not await spread(client, ns, lease, replicas):
            if time.monotonic() > loop_deadline or not all(op.alive() for op in ops):
                raise RuntimeError(f'{scenario}: the shards are not spread over {replicas} replicas')
            await asyncio.sleep(0.1)
    elif scenario == 'single-lease':
        while not await held(client, ns, lease):
            if time.monotonic() > loop_deadline or not all(op.alive() for op in ops):
                raise RuntimeError(f'{scenario}: the lease is not held')
            await asyncio.sleep(0.1)
    else:
        await asyncio.sleep(1.0)  # the operator's watch is up (as the others' wait for their shards)
    await quiet(ops, loop_deadline)


QUIET_WINDOW = 0.5   # seconds
# CPU seconds per replica within the window: its start is over (a sharded replica's Leases: ~0.002; under callgrind
# an idle replica spends more)
QUIET_CPU = 0.2 if os.environ.get('BENCH_CALLGRIND') else 0.02


async def quiet(ops: list[h.Operator], deadline: float) -> None:
    """Until every replica's start is over (its CPU quiet for a moment): the burst must not measure `import kopf`.

    A fixed sleep did not suffice on a loaded host: the unsharded replica was still importing and starting
    when its burst began, its start counted in its burst's CPU (py-spy: ~9% of its samples) and its RSS
    "before the burst" taken mid-import.
    """
    while True:
        cpu0 = [op.cpu() for op in ops]
        await asyncio.sleep(QUIET_WINDOW)
        if all(op.cpu() - c < QUIET_CPU for op, c in zip(ops, cpu0, strict=True)):
            return
        if time.monotonic() > deadline or not all(op.alive() for op in ops):
            raise RuntimeError('the replicas did not settle (their CPU stays busy)')


IDLE_SETTLE = 3.0


async def idle_cpu(ops: list[h.Operator], seconds: float, which: tuple[str, int],
                   profile: pathlib.Path | None) -> dict[str, Any]:
    """Each replica's CPU at idle, in ms per second (after a short settle: the first renewals, the listings)."""
    if not seconds:
        return {}
    await asyncio.sleep(IDLE_SETTLE)
    spies = spying(ops, profile, f'{which[0]}-idle', which[1])
    cpu0, t0 = [op.cpu() for op in ops], time.monotonic()
    await asyncio.sleep(seconds)
    elapsed = time.monotonic() - t0
    unspy(spies)
    return {'idle_cpu_ms_per_s_by_replica': sorted((op.cpu() - c) / elapsed * 1000
                                                   for op, c in zip(ops, cpu0, strict=True))}


async def one(emu: Any, client: h.Client, scenario: str, replicas: int, which: tuple[int, float | None],
              logdir: pathlib.Path, baseline_mb: float, args: argparse.Namespace) -> dict[str, Any]:
    round_, pace = which   # pace: objects/s per replica holding shards (`--matched`), else as --rate says
    suffix = f'{round_}' if pace is None else f'{round_}-paced'
    ns = f'shards-{scenario.replace("+", "-")}-{suffix}'
    lease = f'bench-{scenario.replace("+", "-")}-{suffix}'
    await client.ensure_namespace(ns)
    tracker = run.Tracker()
    watch = h.Watch(emu.port, ns, await client.resource_version(ns), tracker, tls=emu.tls)
    watch.start()
    sharded = ['--lease', lease, '--lease-namespace', ns, '--shards', str(SHARDS)]
    extra = sharded if scenario in ('single-sharded', '3x6') else []
    extra = ['--lease', lease, '--lease-namespace', ns] if scenario == 'single-lease' else extra
    ops = [h.Operator(run.ours_framework(uvloop=args.uvloop), emu.kubeconfig, ns, logdir, extra_args=extra,
                      env=probe_env(args, scenario, suffix, i))
           for i in range(replicas)]
    if scenario == 'single+2-filtering':  # two more replicas whose shards are all held by someone else
        for i in range(SHARDS):
            status, _ = await client.request('POST', f'/apis/coordination.k8s.io/v1/namespaces/{ns}/leases', {
                'apiVersion': 'coordination.k8s.io/v1', 'kind': 'Lease', 'metadata': {'name': f'{lease}-{i}'},
                'spec': {'holderIdentity': 'bench-holder', 'leaseDurationSeconds': 3600,
                         'renewTime': '2026-01-01T00:00:00.000000Z'}})
            assert status == 201, status
        ops += [h.Operator(run.ours_framework(uvloop=args.uvloop), emu.kubeconfig, ns, logdir, extra_args=sharded)
                for _ in range(2)]
    for i, op in enumerate(ops):
        op.logfile = op.logfile.with_name(f'{op.logfile.stem}-{i}.log')   # one log per replica
        op.start()
    try:
        await settled(client, scenario, ns, lease, ops, replicas)
        pin(ops, emu, args.pin)
        result = await idle_cpu(ops, args.idle, (scenario, round_), args.profile)
        if args.objects:
            result.update(await burst(emu, client, ns, ops, tracker, (scenario, round_, pace), baseline_mb, args))
    except Exception:
        for op in ops:
            log(f'{scenario}: an operator log ends with:\n{op.tail()}')
        raise
    finally:
        for op in ops:
            op.stop()
        await watch.stop()
    result['watch_restarts'] = watch.restarts
    return result


def where_cpu(pid: int) -> dict[str, float]:
    """The process's CPU so far by thread (the loop's main thread, user and system; the others: executor
    threads) and its context switches: voluntary (a wait: the loop's epoll with nothing ready) and not (preempted)."""
    out = collections.Counter[str]()
    tick = os.sysconf('SC_CLK_TCK')
    for task in pathlib.Path(f'/proc/{pid}/task').iterdir():
        try:
            fields = (task / 'stat').read_text().rsplit(')', 1)[1].split()
            status = (task / 'status').read_text()
        except OSError:
            continue  # the thread ended meanwhile
        main = task.name == str(pid)
        out['main user' if main else 'threads'] += int(fields[11]) / tick
        out['main sys' if main else 'threads'] += int(fields[12]) / tick
        for line in status.splitlines():
            key, _, value = line.partition(':')
            if key in ('voluntary_ctxt_switches', 'nonvoluntary_ctxt_switches'):
                out[key.split('_')[0] + (' (main)' if main else '')] += int(value)
    return dict(out)


async def burst(emu: Any, client: h.Client, ns: str, ops: list[h.Operator], tracker: Any,
                which: tuple[str, int, float | None],
                baseline_mb: float, args: argparse.Namespace) -> dict[str, Any]:
    """N objects created at once; until all are handled: objects/s, CPU and RSS of each replica, the server's CPU."""
    (scenario, round_, pace), n, within = which, args.objects, args.timeout
    names = {f'b-{i:05d}' for i in range(n)}
    rss0 = [op.memory()['VmRSS'] for op in ops]
    await probe(ops, args, 1)
    counters0 = await client.counters() if args.backend == 'local' else {}
    spies = spying(ops, args.profile, scenario + ('-paced' if pace else ''), round_)
    instrument(ops, 'on')
    cpu0, emu0 = [op.cpu() for op in ops], h.cpu_seconds(emu.pid)
    where0 = [where_cpu(op.pid) for op in ops]
    started = time.time()
    creates = [('POST', h.objects_path(ns), {'apiVersion': h.API_VERSION, 'kind': h.KIND,
                                               'metadata': {'name': name}, 'spec': {'n': 0}}, 'application/json')
               for name in sorted(names)]
    per_replica = pace or args.rate_per_replica   # every replica holding shards sees R objects/s
    rate = per_replica * SCENARIOS[scenario] if per_replica else args.rate
    assert await create(client, creates, rate) == n
    if not await h.wait_for(lambda: tracker.count('create_fn', names=names) >= n, within):
        raise RuntimeError(f'{scenario}: handled {tracker.count("create_fn", names=names)} of {n}')
    unspy(spies)
    instrument(ops, 'off')
    burst_s = max(tracker.visible['create_fn'][name] for name in names) - started
    cpu = [op.cpu() - c for op, c in zip(ops, cpu0, strict=True)]
    spent = [{key: (value - before.get(key, 0)) / n * 1000 for key, value in where_cpu(op.pid).items()}
             for op, before in zip(ops, where0, strict=True)]   # per 1,000 objects of the burst
    emu_cpu = h.cpu_seconds(emu.pid) - emu0
    rss_after = [op.memory()['VmRSS'] for op in ops]
    rss = [mb - baseline_mb for mb in rss_after]
    rss_idle = [after - before for after, before in zip(rss_after, rss0, strict=True)]
    counters = await client.counters() if args.backend == 'local' else {}
    requests = {key: (count - counters0.get(key, 0)) / n for key, count in counters.items()
                if count != counters0.get(key, 0)}   # all clients' (the bench's creations and its watch too)
    await probe(ops, args, 2)
    counted = counts(ops, n) if args.count else []
    if args.probe is not None:   # and once the burst's transients are gone
        await asyncio.sleep(args.probe_settle)
        await probe(ops, args, 3)
    if not args.keep:   # else the objects stay in their namespace (their operators stopped): a shorter run
        await client.bulk([('DELETE', h.objects_path(ns, name), None, 'application/json') for name in names])
        await h.wait_for(lambda: len(names & tracker.gone.keys()) >= n, within)
    return {'objects_per_s': n / burst_s, 'cpu_s_per_1000_total': sum(cpu) / n * 1000,
            'cpu_s_per_1000_by_replica': sorted(c / n * 1000 for c in cpu),
            'rss_mb_above_import_by_replica': sorted(rss),
            'rss_mb_before_burst_by_replica': sorted(rss0),
            'rss_mb_above_idle_by_replica': sorted(rss_idle),
            'emulator_cpu_s_per_1000': emu_cpu / n * 1000, 'requests_per_object': requests,
            'per_1000_by_replica': spent, 'counts_per_object_by_replica': counted}


PACE = 0.01   # seconds between two paced sends (`--rate`)


async def create(client: h.Client, creates: list[Any], rate: float) -> int:
    """All at once (pipelined), or `--rate` objects per second: a slice every PACE seconds, on schedule."""
    if not rate:
        return await client.bulk(creates)
    good, sent, t0 = 0, 0, time.monotonic()
    while sent < len(creates):
        due = min(len(creates), int((time.monotonic() - t0) * rate) + 1)
        if due > sent:
            good += await client.bulk(creates[sent:due])
            sent = due
        await asyncio.sleep(PACE)
    return good


def pin(ops: list[h.Operator], emu: Any, cpus: tuple[set[int], set[int]] | None) -> None:
    """`--pin`: every thread of the replicas on one CPU, the server's and the bench's on the other."""
    if cpus is None:
        return
    for pid, where in [*((op.pid, cpus[0]) for op in ops), (emu.pid, cpus[1]), (os.getpid(), cpus[1])]:
        for task in pathlib.Path(f'/proc/{pid}/task').iterdir():
            with contextlib.suppress(OSError):
                os.sched_setaffinity(int(task.name), where)


def instrument(ops: list[h.Operator], how: str) -> None:
    """`BENCH_CALLGRIND=DIR`: the replicas run under callgrind; instrumented over the burst only (dumped at its end)."""
    if not os.environ.get('BENCH_CALLGRIND'):
        return
    for op in ops:
        if how == 'off':
            subprocess.run(['callgrind_control', '-d', f'burst-{op.pid}', str(op.pid)], check=False,
                           stdout=subprocess.DEVNULL)
        subprocess.run(['callgrind_control', '-i', how, str(op.pid)], check=False, stdout=subprocess.DEVNULL)


def counts(ops: list[h.Operator], n: int) -> list[dict[str, float]]:
    """`--count`: each replica's counters over the burst (its probes before and after), per object of the burst."""
    found = []
    for op in ops:
        where = pathlib.Path(op.env['BENCH_PROBE'])
        before, after = (json.loads((where / f'probe-{i}.json').read_text()).get('counts', {}) for i in (1, 2))
        found.append({key: (value - before.get(key, 0)) / n for key, value in sorted(after.items())
                      if value != before.get(key, 0)})
    return found


SCENARIOS = {'single': 1, 'single-lease': 1, 'single-sharded': 1, '3x6': 3, 'single+2-filtering': 1}


@contextlib.asynccontextmanager
async def server(args: argparse.Namespace, logdir: pathlib.Path) -> AsyncIterator[Any]:
    """The local cluster (`kopf cluster`) or kube-apiserver 1.37.2, the gate on or off."""
    gate = args.gate == 'on'
    if args.backend == 'envtest':
        async with h.envtest_server('1.37.2', {'ShardedListAndWatch': gate}) as real:
            yield real
        return
    emu = h.EmulatorProcess(run.ours_framework().python, logdir)
    emu.feature_gates = '' if gate else 'ShardedListAndWatch=false'
    emu.start()
    try:
        await h.create_crd(emu)
        yield emu
    finally:
        emu.stop()


BY_REPLICA = ('cpu_s_per_1000_by_replica', 'rss_mb_above_import_by_replica', 'rss_mb_before_burst_by_replica',
              'rss_mb_above_idle_by_replica', 'idle_cpu_ms_per_s_by_replica')


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One scenario's rounds: medians (per column for the per-replica lists)."""
    totals = ('objects_per_s', 'cpu_s_per_1000_total', 'emulator_cpu_s_per_1000')
    block = {key: statistics.median(r[key] for r in runs) for key in totals if key in runs[0]}
    block['watch_restarts'] = sum(r['watch_restarts'] for r in runs)
    spent = [r['per_1000_by_replica'] for r in runs if 'per_1000_by_replica' in r]
    if spent:  # per replica, per 1,000 objects of the burst: the mean of the replicas, the median of rounds
        keys = sorted({key for rounds in spent for replica in rounds for key in replica})
        block['per_1000_mean_replica'] = {key: statistics.median(
            statistics.mean(replica.get(key, 0) for replica in rounds) for rounds in spent) for key in keys}
    counted = [r['counts_per_object_by_replica'] for r in runs if r.get('counts_per_object_by_replica')]
    if counted:  # per object of the burst: the mean of the replicas, the median of rounds
        keys = sorted({key for rounds in counted for replica in rounds for key in replica})
        block['counts_per_object_mean_replica'] = {key: statistics.median(
            statistics.mean(replica.get(key, 0) for replica in rounds) for rounds in counted) for key in keys}
    asked = sorted({key for r in runs for key in r.get('requests_per_object', {})})
    if asked:  # the local cluster's counters over the burst, per object: every client's requests
        block['requests_per_object'] = {key: statistics.median(r['requests_per_object'].get(key, 0)
                                                               for r in runs) for key in asked}
    for key in BY_REPLICA:
        if key in runs[0]:
            columns = zip(*[r[key] for r in runs], strict=True)
            block[key] = [statistics.median(column) for column in columns]
    block['rounds'] = len(runs)
    return block


def targets(single: dict[str, Any], sharded: dict[str, Any]) -> dict[str, float]:
    """The issue's "done when": each replica <= 0.40x, all three <= 1.2x of one replica."""
    return {'cpu_per_replica_vs_single': max(sharded['cpu_s_per_1000_by_replica']) / single['cpu_s_per_1000_total'],
            'rss_per_replica_vs_single': max(sharded['rss_mb_above_import_by_replica'])
            / single['rss_mb_above_import_by_replica'][0],
            'cpu_all_vs_single': sharded['cpu_s_per_1000_total'] / single['cpu_s_per_1000_total'],
            'rss_growth_per_replica_vs_single': max(sharded['rss_mb_above_idle_by_replica'])
            / single['rss_mb_above_idle_by_replica'][0]}


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    logdir = h.logs_dir('kopf-bench-logs-')
    scenarios = [(name, SCENARIOS[name]) for name in args.scenarios]
    paces = [None, args.matched] if args.matched and args.objects else [None]   # the burst, then paced (--matched)
    runs: dict[tuple[str, float | None], list[dict[str, Any]]] = {(name, pace): [] for name, _ in scenarios
                                                                   for pace in paces}
    baseline = h.import_figures(run.ours_framework().python)['import_rss_mb']
    async with server(args, logdir) as emu, h.Client(emu.port, tls=emu.tls) as client:
        for round_ in range(args.rounds):
            for name, replicas in scenarios:
                for pace in paces:
                    result = await one(emu, client, name, replicas, (round_, pace), logdir, baseline, args)
                    idle = ', '.join(f'{c:.1f}' for c in result.get('idle_cpu_ms_per_s_by_replica', []))
                    log(f'round {round_ + 1}/{args.rounds}: {name}' + (f' at {pace:g}/s per replica' if pace else '')
                        + ': ' + (f'idle {idle} CPU ms/s; ' if idle else '')
                        + (f'{result["objects_per_s"]:.0f} obj/s, {result["cpu_s_per_1000_total"]:.2f} CPU s per '
                           f'1000 (all replicas)' if args.objects else ''))
                    runs[name, pace].append(result)
    report: dict[str, Any] = {name: summary(runs[name, None]) for name, _ in scenarios}
    if args.matched and args.objects:
        report['matched'] = {name: summary(runs[name, args.matched]) for name, _ in scenarios}
    if 'single' in report and '3x6' in report and args.objects:
        single, sharded = report['single'], report['3x6']
        extra_cpu = sharded['cpu_s_per_1000_total'] - single['cpu_s_per_1000_total']
        report['extra_ms_per_foreign_object'] = extra_cpu / 2  # s per 1000 objects / 2 foreign copies = ms each
        report['targets'] = targets(single, sharded)
        if 'matched' in report:
            report['targets_matched'] = targets(report['matched']['single'], report['matched']['3x6'])
    if 'single+2-filtering' in report and args.objects:
        filtering = report['single+2-filtering']['cpu_s_per_1000_by_replica']
        report['filtering_ms_per_foreign_object'] = statistics.mean(filtering[:2])  # the two lowest: the filtering
    report['meta'] = run.meta(args, logdir, objects=args.objects, rounds=args.rounds, shards=SHARDS,
                              backend=args.backend, gate=args.gate, import_rss_mb=baseline, load=h.loadavg(),
                              idle_s=args.idle, rate=args.rate, rate_per_replica=args.rate_per_replica,
                              matched=args.matched, uvloop=args.uvloop,
                              pin=[sorted(c) for c in args.pin] if args.pin else None)
    return report


def table(report: dict[str, Any]) -> str:
    meta = report['meta']
    rows = [f'{meta["objects"]:,} objects, {meta["backend"]}, ShardedListAndWatch {meta["gate"]}, '
            f'load {meta["load"]}']
    if meta.get('idle_s'):
        rows.append(f'idle, {meta["idle_s"]:g} s: CPU ms/s per replica: ' + '; '.join(
            f'{name} ' + ', '.join(f'{c:.2f}' for c in report[name]['idle_cpu_ms_per_s_by_replica'])
            for name in SCENARIOS if name in report))
    if not meta['objects']:
        return '\n'.join(rows)
    rows.append(f'{"scenario":<18} {"objects/s":>9} {"CPU s/1000 (all)":>16} {"server":>7}   '
                f'CPU s/1000 per replica   RSS MB above import per replica   RSS MB: before the burst, growth')
    for name in SCENARIOS:
        if name not in report:
            continue
        block = report[name]
        per = ', '.join(f'{c:.2f}' for c in block['cpu_s_per_1000_by_replica'])
        rss = ', '.join(f'{m:.1f}' for m in block['rss_mb_above_import_by_replica'])
        idle = ', '.join(f'{b:.1f} +{g:.1f}' for b, g in zip(block['rss_mb_before_burst_by_replica'],
                                                            block['rss_mb_above_idle_by_replica'], strict=True))
        rows.append(f'{name:<18} {block["objects_per_s"]:>9.0f} {block["cpu_s_per_1000_total"]:>16.2f} '
                    f'{block["emulator_cpu_s_per_1000"]:>7.2f}   {per:<23}   {rss:<31}   {idle}')
    for name in SCENARIOS:
        spent = report.get(name, {}).get('per_1000_mean_replica')
        if spent:
            rows.append(f'{name}: per replica per 1,000 objects: CPU s ' + ', '.join(
                f'{key} {spent.get(key, 0):.2f}' for key in ('main user', 'main sys', 'threads')) + '; switches '
                + ', '.join(f'{key} {spent.get(key, 0):,.0f}' for key in ('voluntary (main)', 'voluntary',
                                                                           'nonvoluntary (main)', 'nonvoluntary')))
    for name in SCENARIOS:
        counted = report.get(name, {}).get('counts_per_object_mean_replica')
        if counted:
            rows.append(f'{name}: counts per object of the burst, the mean replica: '
                        + ', '.join(f'{key} {n:.3f}' for key, n in counted.items() if not key.startswith('call ')))
    for name in SCENARIOS:
        asked = report.get(name, {}).get('requests_per_object')
        if asked:
            rows.append(f'{name}: requests per object (all clients): '
                        + ', '.join(f'{key} {n:.2f}' for key, n in asked.items()))
    matched = report.get('matched', {})
    for name in SCENARIOS:
        if name in matched:
            block = matched[name]
            per = ', '.join(f'{c:.2f}' for c in block['cpu_s_per_1000_by_replica'])
            rows.append(f'{name} at {meta["matched"]:g} objects/s per replica (--matched): '
                        f'{block["objects_per_s"]:.0f} obj/s, CPU s/1000 all {block["cpu_s_per_1000_total"]:.2f}, '
                        f'per replica {per}, server '
                        f'{block["emulator_cpu_s_per_1000"]:.2f}')
    for name in SCENARIOS:
        counted = matched.get(name, {}).get('counts_per_object_mean_replica')
        if counted:
            rows.append(f'{name} at {meta["matched"]:g}/s per replica: counts per object, the mean replica: '
                        + ', '.join(f'{key} {counted.get(key, 0):.3f}'
                                    for key in ('select wait', 'select poll', 'call_soon_threadsafe')))
    if 'targets' in report:
        t = report['targets']
        rows.append(f'3x6 vs single: each replica {t["cpu_per_replica_vs_single"]:.2f}x CPU (target <= 0.40), '
                    f'{t["rss_per_replica_vs_single"]:.2f}x RSS (target <= 0.40); all three '
                    f'{t["cpu_all_vs_single"]:.2f}x CPU (target <= 1.2); RSS growth over the burst, each replica '
                    f'{t["rss_growth_per_replica_vs_single"]:.2f}x')
    if 'targets_matched' in report:
        t = report['targets_matched']
        rows.append(f'3x6 vs single at the same event rate per replica ({meta["matched"]:g} objects/s each): each '
                    f'replica {t["cpu_per_replica_vs_single"]:.2f}x CPU, all three {t["cpu_all_vs_single"]:.2f}x CPU')
    return '\n'.join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--quick', action='store_true', help='500 objects (else 2,000)')
    parser.add_argument('--objects', type=int, default=None)
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--timeout', type=float, default=300.0)
    parser.add_argument('--no-write', action='store_true', help='print only; no file in bench/results/')
    parser.add_argument('--backend', choices=['local', 'envtest'], default='local',
                        help='the local cluster, or kube-apiserver 1.37.2 (tools/envtest/build.sh 1.37.2)')
    parser.add_argument('--gate', choices=['on', 'off'], default='on',
                        help='the server\'s feature gate ShardedListAndWatch (off: shardSelector= is ignored)')
    parser.add_argument('--profile', type=pathlib.Path, default=None,
                        help='py-spy ($PY_SPY) records each replica over the burst (and --idle) into this directory '
                             '(summarise with bench/profile_summary.py); its sampling costs the replicas some CPU')
    parser.add_argument('--probe', type=pathlib.Path, default=None,
                        help='each replica writes what it holds (bench/operator.py\'s BENCH_PROBE) before the burst, '
                             'after it, and --probe-settle seconds later, into this directory')
    parser.add_argument('--probe-settle', type=float, default=5.0)
    parser.add_argument('--count', action='store_true',
                        help='each replica counts its loop\'s waits, its requests, its watch items '
                             '(bench/operator.py\'s BENCH_COUNT; its probes, into --probe or a temporary directory), '
                             'per object of the burst')
    parser.add_argument('--tracemalloc', type=int, default=0,
                        help='with --probe: trace allocations (this many frames) from the import on; slow')
    parser.add_argument('--keep', action='store_true',
                        help='do not delete the objects after a burst (not measured anyway; saves the wait)')
    parser.add_argument('--scenarios', default=','.join(s for s in SCENARIOS if s != 'single-lease'),
                        help=f'some of {",".join(SCENARIOS)}')
    parser.add_argument('--rate', type=float, default=0.0,
                        help='create the burst at this many objects per second (else all at once, pipelined)')
    parser.add_argument('--rate-per-replica', type=float, default=0.0,
                        help='create the burst at this many objects per second per replica holding shards (single: '
                             'R/s, 3x6: 3R/s): each replica\'s CPU per own object at the same event rate')
    parser.add_argument('--matched', type=float, default=0.0,
                        help='each scenario also paced at this many objects/s per replica holding shards (single: '
                             'R/s, 3x6: 3R/s), printed beside the burst: the CPU per own object at the same event rate')
    parser.add_argument('--uvloop', action='store_true',
                        help='the replicas run on uvloop (`kopf run --uvloop`; else asyncio\'s own loop, --no-uvloop)')
    parser.add_argument('--pin', default=None,
                        help='REPLICAS/OTHERS: CPU lists (e.g. 1/0): every replica\'s threads on the first, the '
                             'server\'s and the bench\'s on the second (os.sched_setaffinity), before the burst')
    parser.add_argument('--idle', type=float, default=0.0,
                        help='seconds of idleness before the burst, each replica\'s CPU over them (ms/s)')
    args = parser.parse_args()
    args.objects = (500 if args.quick else 2000) if args.objects is None else args.objects
    if args.pin is not None:
        first, _, second = args.pin.partition('/')
        args.pin = ({int(c) for c in first.split(',')}, {int(c) for c in second.split(',')})
    args.scenarios = [name for name in args.scenarios.split(',') if name]
    if args.count and args.probe is None:
        args.probe = pathlib.Path(tempfile.mkdtemp(prefix='kopf-bench-probe-'))
    unknown = set(args.scenarios) - set(SCENARIOS)
    if unknown:
        parser.error(f'unknown scenarios: {sorted(unknown)}')
    run.run_and_report('sharding', bench(args), table, write=not args.no_write)
    return 0


if __name__ == '__main__':
    sys.exit(main())
