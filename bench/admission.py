"""Admission webhooks side by side: review latency and reviews/s of a trivial validating handler, ours vs upstream.

    .venv/bin/python bench/admission.py --quick     # 500 sequential reviews, 4 s concurrent (~30 s)
    .venv/bin/python bench/admission.py             # 3,000 sequential reviews, 10 s concurrent, median of 3 runs
    .venv/bin/python bench/admission.py --before /work/main/.venv/bin/python   # + main's kopf, as `before`

Per framework: one operator process (`python -I -m kopf run --standalone -n NS bench/operator.py` plus
`WEBHOOK_MODULE` below, written to a temp dir) against our local cluster process (which the operator
needs for its discovery; the reviews do not go through it). The module serves its webhooks with the
framework's own `kopf.WebhookServer` on a fixed loopback port, both with the same certificate and key
(an EC P-256 certificate from `kopf._shared.certificates`: upstream's self-signing needs packages that its
throw-away venv does not have), and two validating handlers for `kopfbenches` (`check`, sync, and
`check_async`; the URL path picks one) that deny `spec.field == "wrong"` and allow everything else.

The harness loads the webhook endpoint directly over HTTPS (TLS verified against that CA; keep-alive
connections; raw HTTP/1.1, no client library), as the API server would call it, with CREATE AdmissionReviews
of a ~1 KB object, each with its own uid:

1. ready: reviews of a "wrong" object until one is denied (the handler runs: the resource is served);
2. sequential: on a new connection of its own, 200 warm-up reviews, then N reviews one after another:
   p50/p99/mean latency and reviews/s. The client is the cheapest one Python has: a blocking `ssl` socket
   (TCP_NODELAY) in a thread of the harness (whose event loop idles meanwhile), the request bytes built
   before the clock starts, the answer read to its blank line and `Content-Length` bytes, its JSON
   parsed and checked after the phase;
3. concurrent: C connections (default 8) over asyncio streams, each sending its next review when the
   previous one was answered, for S seconds: reviews/s, p50/p99 latency, operator CPU per 1,000 reviews.

Every answer is checked (HTTP 200, the review's uid, allowed). Latency = request written → answer read
(the client's own TLS and parsing included, equally for both). The **floor**: the same two phases, the same
clients, against a server that only answers (`floor_server()`, a subprocess: blocking TLS, a thread per
connection, the uid echoed as allowed, the same certificate), after each run: how much of each figure is
the client, TLS and the loopback rather than the framework; the table also shows each p99 minus the
floor's. `bench/admission_micro.py` measures the operator's own work per review in-process (no sockets).
Figures are printed and written to bench/results/admission-<timestamp>-<mode>.json, never asserted; the
target (p99 ≤ ½ of upstream's) is reported as met or not. Upstream Kopf 1.45.2 runs from its throw-away
venv (`run.upstream_venv()`), as a black box.
"""
import argparse
import asyncio
import contextlib
import json
import os
import pathlib
import socket
import ssl
import statistics
import sys
import threading
import time
from typing import Any

import harness as h
import run
from harness import log

from kopf._shared import certificates  # the harness runs in the project's .venv

WEBHOOK_MODULE = '''\
"""Served by both frameworks: a trivial sync validating handler on a fixed port with a given certificate."""
import os

import kopf


@kopf.on.startup()
def configure(settings, **_):
    settings.admission.server = kopf.WebhookServer(
        addr='127.0.0.1', host='127.0.0.1', port=int(os.environ['BENCH_WEBHOOK_PORT']),
        certfile=os.environ['BENCH_WEBHOOK_CERT'], pkeyfile=os.environ['BENCH_WEBHOOK_KEY'])


@kopf.on.validate('kopf.dev', 'v1', 'kopfbenches')
def check(spec, **_):
    if spec.get('field') == 'wrong':
        raise kopf.AdmissionError('spec.field must not be "wrong".', code=422)


@kopf.on.validate('kopf.dev', 'v1', 'kopfbenches')
async def check_async(spec, **_):
    if spec.get('field') == 'wrong':
        raise kopf.AdmissionError('spec.field must not be "wrong".', code=422)
'''
HANDLERS = {'sync': 'check', 'async': 'check_async'}  # the webhook ids, i.e. the URL paths


def review(uid: str, field: str = 'value', webhook: str = HANDLERS['sync']) -> bytes:
    """A CREATE review as the API server sends it, with a ~1 KB object."""
    obj = {'apiVersion': h.API_VERSION, 'kind': 'KopfBench',
           'metadata': {'name': f'bench-{uid}', 'namespace': 'default', 'uid': uid, 'generation': 1,
                        'creationTimestamp': '2026-01-01T00:00:00Z',
                        'labels': {'app': 'bench', 'tier': 'backend', 'release': 'stable'},
                        'annotations': {'example.com/owner': 'bench', 'example.com/note': 'x' * 200}},
           'spec': {'field': field, 'items': [f'item{i}' for i in range(20)], 'replicas': 3,
                    'template': {'image': 'example.com/app:1.2.3', 'args': ['--flag', '--other', '--more']}}}
    kind = {'group': h.GROUP, 'version': h.VERSION, 'kind': 'KopfBench'}
    gvr = {'group': h.GROUP, 'version': h.VERSION, 'resource': h.PLURAL}
    body = {'apiVersion': 'admission.k8s.io/v1', 'kind': 'AdmissionReview', 'request': {
        'uid': uid, 'kind': kind, 'resource': gvr, 'requestKind': kind, 'requestResource': gvr,
        'name': obj['metadata']['name'], 'namespace': 'default', 'operation': 'CREATE',
        'userInfo': {'username': 'kubernetes-admin', 'groups': ['system:masters', 'system:authenticated']},
        'object': obj, 'oldObject': None, 'dryRun': False,
        'options': {'apiVersion': 'meta.k8s.io/v1', 'kind': 'CreateOptions'}}}
    data = json.dumps(body, separators=(',', ':')).encode()
    return (f'POST /{webhook}?timeout=10s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n'
            f'Accept: application/json, */*\r\nContent-Length: {len(data)}\r\n\r\n').encode() + data


def check(uid: str, status: int, body: bytes) -> dict[str, Any]:
    """The answer to review `uid`, checked: HTTP 200, the review's uid echoed; its `response`."""
    if status != 200:
        raise RuntimeError(f'review {uid}: HTTP {status}: {body[:200]!r}')
    answer: dict[str, Any] = json.loads(body)['response']
    if answer.get('uid') != uid:
        raise RuntimeError(f'review {uid}: answered for {answer.get("uid")!r}')
    return answer


class Reviewer:
    """One keep-alive HTTPS connection over asyncio streams (the concurrent phase); `send()` returns the latency."""

    def __init__(self, port: int, context: ssl.SSLContext) -> None:
        self.port, self.context = port, context
        self.conn: h.Connection | None = None
        self.sent = 0

    async def open(self) -> 'Reviewer':
        reader, writer = await asyncio.open_connection('127.0.0.1', self.port, ssl=self.context,
                                                       server_hostname='127.0.0.1', limit=2**24)
        self.conn = h.Connection(reader, writer)
        return self

    async def send(self, uid: str, field: str = 'value',
                   webhook: str = HANDLERS['sync']) -> tuple[float, dict[str, Any]]:
        assert self.conn is not None
        data = review(uid, field, webhook)
        t0 = time.perf_counter()
        self.conn.writer.write(data)
        status, body = await self.conn.response()
        dt = time.perf_counter() - t0
        self.sent += 1
        return dt, check(uid, status, body)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


class BlockingReviewer:
    """One keep-alive HTTPS connection on a blocking `ssl` socket (the sequential phase, in a thread of its own).

    The request bytes are built before the clock starts; `exchange()` times `sendall()` → the answer read whole
    (the head to its blank line, then `Content-Length` bytes): the least a client can do in Python.
    """

    def __init__(self, port: int, context: ssl.SSLContext) -> None:
        raw = socket.create_connection(('127.0.0.1', port))
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = context.wrap_socket(raw, server_hostname='127.0.0.1')
        self.buffer = bytearray()

    def exchange(self, data: bytes) -> tuple[float, int, bytes]:
        """Send one request, read its answer: (seconds, status, body)."""
        buffer, recv = self.buffer, self.sock.recv
        t0 = time.perf_counter()
        self.sock.sendall(data)
        while (end := buffer.find(b'\r\n\r\n')) < 0:
            buffer += recv(65536) or _closed()
        start = buffer.find(b'\r\ncontent-length:', 0, end + 2)
        start = start if start >= 0 else buffer.find(b'\r\nContent-Length:', 0, end + 2)
        if start < 0:
            raise RuntimeError(f'an answer without Content-Length: {bytes(buffer[:end])!r}')
        length = int(buffer[start + 17:buffer.find(b'\r\n', start + 2)])
        whole = end + 4 + length
        while len(buffer) < whole:
            buffer += recv(65536) or _closed()
        dt = time.perf_counter() - t0
        status, body = int(buffer[9:12]), bytes(buffer[end + 4:whole])
        del buffer[:whole]
        return dt, status, body

    def close(self) -> None:
        self.sock.close()


def _closed() -> bytes:
    raise ConnectionError('the server closed the connection')


def sequential_phase(port: int, context: ssl.SSLContext, webhook: str, args: argparse.Namespace,
                     rep: int) -> dict[str, Any]:
    """Warm-up, then N reviews one after another on one new connection (blocking: run in a thread)."""
    warm = [(uid, review(uid, webhook=webhook)) for uid in (f'warm-{webhook}-{rep}-{i}' for i in range(args.warmup))]
    measured = [(uid, review(uid, webhook=webhook)) for uid in (f'seq-{webhook}-{rep}-{i}'
                                                                for i in range(args.sequential))]
    client = BlockingReviewer(port, context)
    try:
        for uid, data in warm:
            check(uid, *client.exchange(data)[1:])
        answers: list[tuple[str, int, bytes]] = []
        latencies = []
        t0 = time.perf_counter()
        for uid, data in measured:
            dt, status, body = client.exchange(data)
            latencies.append(dt)
            answers.append((uid, status, body))
        wall = time.perf_counter() - t0
    finally:
        client.close()
    for uid, status, body in answers:  # checked after the clock: the JSON parsing is not in the figure
        if not check(uid, status, body).get('allowed'):
            raise RuntimeError(f'review {uid} was denied: {body[:300]!r}')
    return summary(latencies, wall)


# -- the floor: the same clients against a server that does nothing but answer ------------------------

FLOOR_ANSWER = b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"%s","allowed":true}}'


def floor_server(port: int, certfile: str, keyfile: str) -> None:
    """A blocking TLS HTTP/1.1 server (a thread per connection) that echoes each review's uid as allowed.

    Run as `python bench/admission.py --floor-server PORT CERT KEY`: the latency of the harness's clients
    against it is how much of each figure is the client (and TLS, and the loopback), not the framework.
    """
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2  # as our WebhookServer's
    context.load_cert_chain(certfile, keyfile)
    listener = socket.create_server(('127.0.0.1', port))
    while True:
        sock, _ = listener.accept()
        threading.Thread(target=_floor_connection, args=(context, sock), daemon=True).start()


def _floor_connection(context: ssl.SSLContext, raw: socket.socket) -> None:
    raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buffer = bytearray()
    with contextlib.suppress(OSError, ConnectionError), context.wrap_socket(raw, server_side=True) as sock:
        while True:
            while (end := buffer.find(b'\r\n\r\n')) < 0:
                buffer += sock.recv(65536) or _closed()
            start = buffer.lower().find(b'\r\ncontent-length:', 0, end + 2)
            whole = end + 4 + int(buffer[start + 17:buffer.find(b'\r\n', start + 2)])
            while len(buffer) < whole:
                buffer += sock.recv(65536) or _closed()
            uid_at = buffer.find(b'"uid":"', end) + 7
            body = FLOOR_ANSWER % bytes(buffer[uid_at:buffer.find(b'"', uid_at)])
            del buffer[:whole]
            sock.sendall(b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s'
                         % (len(body), body))


def summary(latencies: list[float], wall: float) -> dict[str, Any]:
    ms = [x * 1000 for x in latencies]
    return {'reviews': len(ms), 'reviews_per_s': len(ms) / wall if wall else None,
            'p50_ms': h.percentile(ms, 50), 'p99_ms': h.percentile(ms, 99),
            'mean_ms': statistics.fmean(ms) if ms else None, 'max_ms': max(ms) if ms else None}


async def one_run(fw: h.Framework, emu: h.EmulatorProcess, args: argparse.Namespace, rep: int,
                  logdir: pathlib.Path, module: pathlib.Path, tls: dict[str, str]) -> dict[str, Any]:
    port = h.free_port()
    ns = f'admission-{fw.name}-{rep}'
    os.environ.update(BENCH_WEBHOOK_PORT=str(port), BENCH_WEBHOOK_CERT=tls['cert'], BENCH_WEBHOOK_KEY=tls['key'])
    context = ssl.create_default_context(cafile=tls['ca'])
    op = h.Operator(fw, emu.kubeconfig, ns, logdir, extra_args=[str(module)])
    reviewers: list[Reviewer] = []
    async with h.running(op):
        try:
            first = Reviewer(port, context)
            reviewers.append(first)

            async def ready() -> bool:  # the server listens and the handler runs (the resource is served)
                try:
                    if first.conn is None:
                        await first.open()
                    _, answer = await first.send(f'ready-{time.monotonic_ns()}', field='wrong')
                    return answer.get('allowed') is False
                except (OSError, ssl.SSLError, asyncio.IncompleteReadError):
                    first.close()
                    first.conn = None
                    return False

            deadline = time.monotonic() + args.timeout
            while not await ready():
                if not op.alive() or time.monotonic() > deadline:
                    raise RuntimeError(f'{fw.name}: the webhook did not deny a wrong object in {args.timeout:.0f} s')
                await asyncio.sleep(0.1)
            log(f'{fw.name}: the webhook answers ({time.time() - op.spawned_at:.1f} s after the spawn)')
            reviewers += [await Reviewer(port, context).open() for _ in range(args.connections - 1)]
            out: dict[str, Any] = {}
            for kind, webhook in HANDLERS.items():
                suffix = '' if kind == 'sync' else f'_{kind}'
                out[f'sequential{suffix}'], out[f'concurrent{suffix}'] = await phases(op, reviewers, webhook, args, rep)
                log(f'{fw.name} run {rep}, {kind} handler: '
                    + describe(out[f'sequential{suffix}'], out[f'concurrent{suffix}']))
            return out
        finally:
            for reviewer in reviewers:
                reviewer.close()


async def phases(op: h.Operator, reviewers: list[Reviewer], webhook: str, args: argparse.Namespace,
                 rep: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The sequential phase (warm-up included) on a blocking connection of its own, then the concurrent one."""
    sequential = await asyncio.to_thread(sequential_phase, reviewers[0].port, reviewers[0].context, webhook, args, rep)
    cpu0 = op.cpu()
    concurrent = await concurrent_phase(reviewers, webhook, args, rep)
    cpu = op.cpu() - cpu0
    concurrent['cpu_s_per_1000'] = 1000 * cpu / concurrent['reviews'] if concurrent['reviews'] else None
    concurrent['rss_mb'] = op.memory()['VmRSS']
    return sequential, concurrent


async def concurrent_phase(reviewers: list[Reviewer], webhook: str, args: argparse.Namespace,
                           rep: int) -> dict[str, Any]:
    """All connections, each sending its next review when the previous one was answered, for S seconds."""
    per_conn: list[list[float]] = [[] for _ in reviewers]
    stop_at = time.perf_counter() + args.seconds

    async def loop(index: int) -> None:
        reviewer, n = reviewers[index], 0
        while time.perf_counter() < stop_at:
            dt, answer = await reviewer.send(f'con-{webhook}-{rep}-{index}-{n}', webhook=webhook)
            if not answer.get('allowed'):
                raise RuntimeError(f'a concurrent review was denied: {answer}')
            per_conn[index].append(dt)
            n += 1

    t0 = time.perf_counter()
    await asyncio.gather(*(loop(i) for i in range(len(reviewers))))
    return summary([x for xs in per_conn for x in xs], time.perf_counter() - t0)


async def floor_run(args: argparse.Namespace, rep: int, tls: dict[str, str]) -> dict[str, Any]:
    """The same two phases against `floor_server()` (a subprocess): the clients' own share of the latency."""
    port = h.free_port()
    proc = await asyncio.create_subprocess_exec(sys.executable, __file__, '--floor-server', str(port), tls['cert'],
                                                tls['key'])
    context = ssl.create_default_context(cafile=tls['ca'])
    reviewers: list[Reviewer] = []
    try:
        deadline = time.monotonic() + args.timeout
        while not reviewers:
            try:
                reviewers.append(await Reviewer(port, context).open())
            except OSError:
                if proc.returncode is not None or time.monotonic() > deadline:
                    raise RuntimeError('the floor server did not start') from None
                await asyncio.sleep(0.05)
        reviewers += [await Reviewer(port, context).open() for _ in range(args.connections - 1)]
        out = {'sequential': await asyncio.to_thread(sequential_phase, port, context, 'floor', args, rep),
               'concurrent': await concurrent_phase(reviewers, 'floor', args, rep)}
        log(f'floor run {rep}: ' + describe(out['sequential'], out['concurrent']))
        return out
    finally:
        for reviewer in reviewers:
            reviewer.close()
        proc.terminate()
        await proc.wait()


def describe(sequential: dict[str, Any], concurrent: dict[str, Any]) -> str:
    return (f'sequential p50 {sequential["p50_ms"]:.2f} ms, p99 {sequential["p99_ms"]:.2f} ms, '
            f'{sequential["reviews_per_s"]:.0f}/s; concurrent {concurrent["reviews_per_s"]:.0f}/s, '
            f'p50 {concurrent["p50_ms"]:.2f} ms, p99 {concurrent["p99_ms"]:.2f} ms')


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per phase and figure, the median over the runs."""
    out: dict[str, Any] = {}
    for phase in runs[0]:
        out[phase] = {key: statistics.median(r[phase][key] for r in runs)
                      for key in runs[0][phase] if all(r[phase].get(key) is not None for r in runs)}
    return out


def write_tls(logdir: pathlib.Path) -> dict[str, str]:
    """One CA and a certificate for 127.0.0.1, as files: the same for both frameworks' servers."""
    made = certificates.make('127.0.0.1')
    tls = {'ca': str(logdir / 'ca.pem'), 'cert': str(logdir / 'cert.pem'), 'key': str(logdir / 'key.pem')}
    for name, data in (('ca', made.ca_pem), ('cert', made.cert_pem), ('key', made.key_pem)):
        pathlib.Path(tls[name]).write_bytes(data)
    return tls


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    frameworks = run.frameworks(ours_only=args.ours_only)
    if args.before:  # another checkout's kopf (its own venv), run as ours is, alternating: an A/B of a change
        frameworks.insert(1, h.Framework('before', args.before, 'ours', frameworks[0].run_args))
    logdir = h.logs_dir('kopf-bench-admission-')
    module = logdir / 'bench_webhook_module.py'
    module.write_text(WEBHOOK_MODULE)
    tls = write_tls(logdir)
    runs: dict[str, list[dict[str, Any]]] = {fw.name: [] for fw in frameworks}
    floors: list[dict[str, Any]] = []
    async with h.local_cluster(frameworks[0].python, logdir) as emu:
        for rep in range(args.repeats):
            for fw in frameworks:  # alternating, so that a noisy neighbour hurts both alike
                runs[fw.name].append(await one_run(fw, emu, args, rep, logdir, module, tls))
            floors.append(await floor_run(args, rep, tls))
    report: dict[str, Any] = {name: median_run(rs) for name, rs in runs.items()}
    report['floor'] = median_run(floors)
    report['runs'] = runs
    report['floor_runs'] = floors
    if 'upstream' in report:
        report['ratio'] = {phase: h.ratios(report['ours'][phase], report['upstream'][phase], report['ours'][phase])
                           for phase in report['ours']}
    report['meta'] = run.meta(args, logdir, repeats=args.repeats, sequential=args.sequential,
                              connections=args.connections, seconds=args.seconds, warmup=args.warmup,
                              handlers=HANDLERS, loadavg=list(os.getloadavg()))
    return report


ROWS = [
    ('sequential', 'p50_ms', 'sequential: latency p50, ms', '{:.2f}'),
    ('sequential', 'p99_ms', 'sequential: latency p99, ms', '{:.2f}'),
    ('sequential', 'mean_ms', 'sequential: latency mean, ms', '{:.2f}'),
    ('sequential', 'reviews_per_s', 'sequential: reviews/s', '{:.0f}'),
    ('concurrent', 'reviews_per_s', 'concurrent: reviews/s', '{:.0f}'),
    ('concurrent', 'p50_ms', 'concurrent: latency p50, ms', '{:.2f}'),
    ('concurrent', 'p99_ms', 'concurrent: latency p99, ms', '{:.2f}'),
    ('concurrent', 'cpu_s_per_1000', 'concurrent: operator CPU s per 1,000', '{:.2f}'),
    ('concurrent', 'rss_mb', 'concurrent: operator RSS, MB', '{:.1f}'),
]
PHASES = ('sequential', 'concurrent')


def table(report: dict[str, Any]) -> str:
    meta = report['meta']
    up = report.get('upstream')
    lines = [f"kopf bench admission ({meta['mode']}: median of {meta['repeats']}; {meta['sequential']} sequential "
             f"reviews, then {meta['connections']} connections for {meta['seconds']:.0f} s; trivial validating "
             f"handlers; HTTPS direct) on {meta['machine']['cores']} cores, load {meta['loadavg'][0]:.2f}"]
    for kind in HANDLERS:
        suffix = '' if kind == 'sync' else f'_{kind}'
        before = report.get('before')
        extra = f" {'before':>8} {'ours/bef':>8}" if before else ''
        lines.append(f"{f'{kind} handler':44} {'ours':>10} {'upstream':>10} {'ours/up':>8} {'floor':>8}{extra}")
        for phase, key, title, fmt in ROWS:
            a = report['ours'][phase + suffix].get(key)
            b = up[phase + suffix].get(key) if up else None
            ratio = f'{a / b:.2f}x' if a is not None and b else '-'
            shown = ['-' if v is None else fmt.format(v) for v in (a, b, report['floor'][phase].get(key))]
            line = f'{title:44} {shown[0]:>10} {shown[1]:>10} {ratio:>8} {shown[2]:>8}'
            if before:
                c = before[phase + suffix].get(key)
                versus = f'{a / c:.2f}x' if a is not None and c else '-'
                line += f" {'-' if c is None else fmt.format(c):>8} {versus:>8}"
            lines.append(line)
        for phase in PHASES if up else ():
            net = [side[phase + suffix]['p99_ms'] - report['floor'][phase]['p99_ms'] for side in (report['ours'], up)]
            lines.append(f"{phase + ': p99 above the floor, ms':44} {net[0]:>10.2f} {net[1]:>10.2f} "
                         f"{(f'{net[0] / net[1]:.2f}x' if net[1] > 0 else '-'):>8}")
        if up:
            met = {phase: report['ours'][phase + suffix]['p99_ms'] <= up[phase + suffix]['p99_ms'] / 2
                   for phase in PHASES}
            marks = [f"{phase} p99 ≤ ½ of upstream's: {'met' if ok else 'not met'}" for phase, ok in met.items()]
            lines.append(f'target, {kind} (informative, not asserted): ' + '; '.join(marks))
    return '\n'.join(lines)


def main() -> int:
    if sys.argv[1:2] == ['--floor-server']:  # the floor's server process (see floor_run)
        floor_server(int(sys.argv[2]), sys.argv[3], sys.argv[4])
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--quick', action='store_true', help='500 sequential reviews, 4 s concurrent, 1 run')
    parser.add_argument('--repeats', type=int, default=None, help='runs per framework (default 3; quick 1)')
    parser.add_argument('--sequential', type=int, default=None, help='sequential reviews (default 3000; quick 500)')
    parser.add_argument('--connections', type=int, default=8, help='concurrent connections (default 8)')
    parser.add_argument('--seconds', type=float, default=None, help='the concurrent phase, s (default 10; quick 4)')
    parser.add_argument('--warmup', type=int, default=200, help='reviews before measuring (default 200)')
    parser.add_argument('--timeout', type=float, default=60.0, help='for the webhook to answer after the spawn, s')
    parser.add_argument('--before', metavar='PYTHON', default=None,
                        help="also another checkout's kopf (e.g. /work/main/.venv/bin/python), as `before`")
    run.side_options(parser, upstream_clients=False)
    args = parser.parse_args()
    args.repeats = args.repeats or (1 if args.quick else 3)
    args.sequential = args.sequential or (500 if args.quick else 3000)
    args.seconds = args.seconds or (4.0 if args.quick else 10.0)
    run.run_and_report('admission', bench(args), table, write=not args.no_write)
    return 0


if __name__ == '__main__':
    sys.exit(main())
