"""The pieces of the side-by-side benchmark: the emulator process, a raw HTTP client, watches, operators.

Nothing here knows a framework's internals: operators are separate processes (`python -I -m kopf run
--standalone -n NS bench/operator.py`), measured from outside (/proc) and through the objects they
write (each handler records `time.time()` in its result, i.e. in `status.<handler id>`).
"""
import asyncio
import contextlib
import dataclasses
import json
import os
import pathlib
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
OPERATOR = HERE / 'operator.py'
GROUP, VERSION, PLURAL, KIND = 'kopf.dev', 'v1', 'kopfbenches', 'KopfBench'
API_VERSION = f'{GROUP}/{VERSION}'
FINALIZER = 'kopf.zalando.org/KopfFinalizerMarker'

CRD = {
    'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
    'metadata': {'name': f'{PLURAL}.{GROUP}'},
    'spec': {'group': GROUP, 'scope': 'Namespaced',
             'names': {'plural': PLURAL, 'singular': 'kopfbench', 'kind': KIND},
             'versions': [{'name': VERSION, 'served': True, 'storage': True, 'subresources': {'status': {}},
                           'schema': {'openAPIV3Schema': {'type': 'object', 'properties': {
                               'spec': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True},
                               'status': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True}}}}}]},
}


def log(msg: str) -> None:
    print(f'[bench {time.strftime("%H:%M:%S")}] {msg}', file=sys.stderr, flush=True)


def objects_path(namespace: str, name: str | None = None) -> str:
    path = f'/apis/{GROUP}/{VERSION}/namespaces/{namespace}/{PLURAL}'
    return f'{path}/{name}' if name else path


# -- /proc figures -------------------------------------------------------------------------------

def cpu_seconds(pid: int) -> float:
    """User+system CPU seconds of a live process so far."""
    fields = pathlib.Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def threads_cpu(pid: int) -> dict[str, float]:
    """CPU seconds so far per thread group of a live process: the main thread, executor threads, others
    (by the thread's name, digits dropped); `main sys`, the main thread's system time alone; plus `switches`,
    the voluntary context switches of all its threads."""
    out: dict[str, float] = {}
    tick = os.sysconf('SC_CLK_TCK')
    for task in pathlib.Path(f'/proc/{pid}/task').iterdir():
        try:
            stat = (task / 'stat').read_text()
            status = (task / 'status').read_text()
        except OSError:
            continue  # the thread ended meanwhile
        name = stat[stat.index('(') + 1:stat.rindex(')')]
        fields = stat.rsplit(')', 1)[1].split()
        group = 'main' if task.name == str(pid) else name.rstrip('0123456789_-') or 'thread'
        out[group] = out.get(group, 0.0) + (int(fields[11]) + int(fields[12])) / tick
        if group == 'main':  # its system time alone too: the kernel's share (syscalls: epoll, send, recv)
            out['main sys'] = out.get('main sys', 0.0) + int(fields[12]) / tick
        for line in status.splitlines():
            if line.startswith('voluntary_ctxt_switches:'):
                out['switches'] = out.get('switches', 0.0) + int(line.split()[1])
    return out


def memory_mb(pid: int) -> dict[str, float]:
    """VmRSS (now) and VmHWM (peak) of a live process, in MiB."""
    result: dict[str, float] = {}
    for line in pathlib.Path(f'/proc/{pid}/status').read_text().splitlines():
        key, _, value = line.partition(':')
        if key in ('VmRSS', 'VmHWM'):
            result[key] = int(value.split()[0]) / 1024
    return result


def machine() -> dict[str, Any]:
    mem_kb = 0
    for line in pathlib.Path('/proc/meminfo').read_text().splitlines():
        if line.startswith('MemTotal:'):
            mem_kb = int(line.split()[1])
    model = ''
    for line in pathlib.Path('/proc/cpuinfo').read_text().splitlines():
        if line.startswith('model name'):
            model = line.split(':', 1)[1].strip()
            break
    return {'cores': os.cpu_count(), 'memory_gb': round(mem_kb / 1024 / 1024, 1), 'cpu': model,
            'python': sys.version.split()[0], 'platform': sys.platform}


# -- the emulator process --------------------------------------------------------------------------

class EmulatorProcess:
    """`python -m kopf cluster --port 0 --kubeconfig ...` (ours), in its own process."""

    def __init__(self, python: str, workdir: pathlib.Path) -> None:
        self.python = python
        self.kubeconfig = workdir / 'emulator.kubeconfig'
        self.logfile = workdir / 'emulator.log'
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    tls: ssl.SSLContext | None = None   # plain HTTP
    feature_gates = ''                  # `kopf cluster --feature-gates`, e.g. ShardedListAndWatch=false
    options: tuple[str, ...] = ()       # more `kopf cluster` options, e.g. ('--state', FILE, '--history-size', N)
    start_timeout = 60.0                # seconds for the kubeconfig to appear (a big state file takes longer)

    def start(self) -> None:
        gates = ['--feature-gates', self.feature_gates] if self.feature_gates else []
        with open(self.logfile, 'wb') as out:
            self.proc = subprocess.Popen([self.python, '-m', 'kopf', 'cluster', '--port', '0',
                                          '--kubeconfig', str(self.kubeconfig), *gates, *self.options],
                                         cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.start_timeout
        while not self.kubeconfig.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f'The emulator did not start; see {self.logfile}')
            time.sleep(0.05)
        time.sleep(0.05)  # the file is written whole, but be kind to slow disks
        for line in self.kubeconfig.read_text().splitlines():
            if 'server:' in line:
                self.port = int(line.rsplit(':', 1)[1].strip().strip('"\'/'))
        log(f'emulator at http://127.0.0.1:{self.port} (pid {self.proc.pid})')

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def logs_dir(prefix: str) -> pathlib.Path:
    """A fresh directory for one run's logs (the cluster's, the operators'), announced."""
    logdir = pathlib.Path(tempfile.mkdtemp(prefix=prefix))
    log(f'logs in {logdir}')
    return logdir


@contextlib.asynccontextmanager
async def local_cluster(python: str, logdir: pathlib.Path, *, crd: bool = True) -> AsyncIterator[EmulatorProcess]:
    """Our local cluster in its own process for the block, serving the bench CRD (unless `crd=False`: then
    `create_crd()` when the caller is ready); stopped after the block, also when it fails."""
    emu = EmulatorProcess(python, logdir)
    emu.start()
    try:
        if crd:
            await create_crd(emu)
        yield emu
    finally:
        emu.stop()


class EnvtestServer:
    """A real kube-apiserver (kopf.testing.EnvtestCluster: etcd + kube-apiserver) with the bench CRD, as the
    bench sees a server: its port, its kubeconfig, its TLS context, the pid whose CPU is the server's."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.port = int(cluster.url.rsplit(':', 1)[1])
        self.kubeconfig = pathlib.Path(cluster.kubeconfig)
        self.tls: ssl.SSLContext | None = cluster.ssl_context
        self.pid = cluster.pids['kube-apiserver']


@contextlib.asynccontextmanager
async def envtest_server(version: str, feature_gates: dict[str, bool]) -> AsyncIterator[EnvtestServer]:
    """kube-apiserver `version` (`tools/envtest/build.sh VERSION`) with these gates, for the block."""
    from kopf.testing import EnvtestCluster
    cluster = EnvtestCluster(version=version, feature_gates=feature_gates, controller_manager=False)
    await asyncio.to_thread(cluster.start)
    try:
        await asyncio.to_thread(cluster.apply, CRD)
        server = EnvtestServer(cluster)
        log(f'kube-apiserver {version} at {cluster.url} (pid {server.pid}), gates {feature_gates}')
        yield server
    finally:
        await asyncio.to_thread(cluster.stop)


async def create_crd(emu: EmulatorProcess, *, settle: float = 0.5) -> None:
    """The bench CRD (`kopfbenches`), then a short pause for it to be served."""
    async with Client(emu.port, connections=1) as client:
        status, _ = await client.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', CRD)
        assert status in (201, 409), status
    await asyncio.sleep(settle)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return int(sock.getsockname()[1])


def loadavg() -> list[float]:
    return [float(x) for x in pathlib.Path('/proc/loadavg').read_text().split()[:3]]


def git_state() -> dict[str, Any]:
    """Which code "ours" was: HEAD and how many files under kopf/ differ from it (a shared working tree)."""
    try:
        head = subprocess.run(['git', 'rev-parse', 'HEAD'], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(['git', 'status', '--porcelain', '--', 'kopf'], cwd=ROOT, capture_output=True,
                               text=True).stdout.splitlines()
    except OSError:
        return {}
    return {'head': head, 'kopf_files_changed': len(dirty)}


def ratios(a: dict[str, Any], b: dict[str, Any], keys: Iterable[str]) -> dict[str, float]:
    """a/b for each of the keys that both have (b's not zero)."""
    return {key: a[key] / b[key] for key in keys if a.get(key) is not None and b.get(key)}


# -- a raw HTTP/1.1 client (no client library is what gets measured) ---------------------------------

class Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port: int, tls: ssl.SSLContext | None = None) -> 'Connection':
        reader, writer = await asyncio.open_connection('127.0.0.1', port, limit=2**26, ssl=tls)
        return cls(reader, writer)

    @staticmethod
    def encode(method: str, path: str, body: Any = None, content_type: str = 'application/json') -> bytes:
        data = b'' if body is None else json.dumps(body, separators=(',', ':')).encode()
        return (f'{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: {content_type}\r\n'
                f'Content-Length: {len(data)}\r\n\r\n').encode() + data

    async def request(self, method: str, path: str, body: Any = None,
                      content_type: str = 'application/json') -> tuple[int, Any]:
        status, data = await self.raw_request(method, path, body, content_type)
        return status, json.loads(data) if data else None

    async def raw_request(self, method: str, path: str, body: Any = None,
                          content_type: str = 'application/json') -> tuple[int, bytes]:
        """The answer's body as bytes (not decoded: e.g. a list's latency without the client's JSON work)."""
        self.writer.write(self.encode(method, path, body, content_type))
        return await self.response()

    async def response(self) -> tuple[int, bytes]:
        head = await self.reader.readuntil(b'\r\n\r\n')
        status = int(head[9:12])
        length, chunked = 0, False
        for line in head.split(b'\r\n')[1:]:
            name, _, value = line.partition(b':')
            if name.lower() == b'content-length':
                length = int(value)
            elif name.lower() == b'transfer-encoding' and b'chunked' in value:
                chunked = True
        if not chunked:
            return status, await self.reader.readexactly(length)
        parts: list[bytes] = []
        while True:
            size = int((await self.reader.readline()).strip(), 16)
            if size == 0:
                await self.reader.readline()
                return status, b''.join(parts)
            parts.append(await self.reader.readexactly(size))
            await self.reader.readline()

    def close(self) -> None:
        self.writer.close()


class Client:
    """A few pipelined connections to the emulator; bulk requests with the send time of each."""

    def __init__(self, port: int, connections: int = 8, depth: int = 16, tls: ssl.SSLContext | None = None) -> None:
        self.port, self.n, self.depth, self.tls = port, connections, depth, tls   # tls: to a real server (envtest)
        self.conns: list[Connection] = []

    async def __aenter__(self) -> 'Client':
        self.conns = [await Connection.open(self.port, self.tls) for _ in range(self.n)]
        return self

    async def __aexit__(self, *_: Any) -> None:
        for conn in self.conns:
            conn.close()

    async def request(self, method: str, path: str, body: Any = None,
                      content_type: str = 'application/json') -> tuple[int, Any]:
        return await self.conns[0].request(method, path, body, content_type)

    async def bulk(self, requests: Iterable[tuple[str, str, Any, str]], ok: Iterable[int] = (200, 201, 202),
                   on_sent: Callable[[int, float], None] | None = None) -> int:
        """Send all requests (pipelined over the connections); return how many answered with `ok` codes."""
        items = list(requests)
        accepted = set(ok)
        good = 0

        async def worker(index: int) -> None:
            nonlocal good
            conn = self.conns[index]
            mine = list(range(index, len(items), self.n))
            for start in range(0, len(mine), self.depth):
                batch = mine[start:start + self.depth]
                now = time.time()
                conn.writer.write(b''.join(Connection.encode(*items[i]) for i in batch))
                if on_sent is not None:
                    for i in batch:
                        on_sent(i, now)
                for _ in batch:
                    status, _data = await conn.response()
                    good += status in accepted
        await asyncio.gather(*(worker(i) for i in range(self.n)))
        return good

    async def ensure_namespace(self, name: str) -> None:
        status, _ = await self.request('POST', '/api/v1/namespaces', {'metadata': {'name': name}})
        assert status in (201, 409), status

    async def resource_version(self, namespace: str) -> str:
        status, data = await self.request('GET', objects_path(namespace) + '?limit=1')
        assert status == 200, (status, data)
        return str(data['metadata']['resourceVersion'])

    async def counters(self) -> dict[str, int]:
        _, data = await self.request('GET', '/_emulator/counters')
        return dict(data)


class Watch:
    """A raw watch of the benchmark objects in one namespace; `on_event(type, obj, now)` per event.

    It resumes from the last resourceVersion seen whenever the stream ends, breaks, says ERROR, or is silent for
    `idle` seconds (90: longer than the 60 s between the bookmarks that the local cluster and a real
    kube-apiserver send on a quiet stream, so that a namespace with nothing happening is not taken for a stalled
    stream; a real kube-apiserver ends watches at its request timeout and may answer a watch from a
    resourceVersion its cache has not reached with an ERROR event, then close); after a 410 (expired) it lists
    the namespace and reports every object listed as MODIFIED and every known one missing as DELETED. Each
    restart is logged with its reason and counted (`restarts`, `relists`)."""

    def __init__(self, port: int, namespace: str, rv: str, on_event: Callable[[str, dict[str, Any], float], None],
                 tls: ssl.SSLContext | None = None, idle: float = 90.0):
        self.port, self.namespace, self.rv, self.on_event, self.tls = port, namespace, rv, on_event, tls
        self.idle = idle
        self.task: asyncio.Task[None] | None = None
        self.alive_names: set[str] = set()
        self.restarts = self.relists = 0

    def start(self) -> None:
        self.task = asyncio.create_task(self.run())

    async def run(self) -> None:
        expired = False
        while True:
            try:
                if expired:
                    await self.relist()
                why = await self.watch_once()
            except (OSError, asyncio.IncompleteReadError, ssl.SSLError, ValueError, TimeoutError) as exc:
                why = f'{type(exc).__name__}: {exc}'
            expired = why.startswith('410')
            self.restarts += 1
            log(f'watch of {self.namespace}: {why}; resuming from resourceVersion {self.rv}'
                f'{" after a re-list" if expired else ""}')
            await asyncio.sleep(0.05)

    async def relist(self) -> None:
        conn = await Connection.open(self.port, self.tls)
        try:
            status, data = await conn.request('GET', objects_path(self.namespace))
        finally:
            conn.close()
        assert status == 200, (status, data)
        now = time.time()
        listed = {item['metadata']['name']: item for item in data.get('items') or []}
        for name in sorted(self.alive_names - listed.keys()):
            self.emit('DELETED', {'metadata': {'name': name}}, now)
        for item in listed.values():
            self.emit('MODIFIED', item, now)
        self.rv = str(data['metadata']['resourceVersion'])
        self.relists += 1

    def emit(self, etype: str, obj: dict[str, Any], now: float) -> None:
        name = obj['metadata']['name']
        if etype == 'DELETED':
            self.alive_names.discard(name)
        else:
            self.alive_names.add(name)
        self.on_event(etype, obj, now)

    async def watch_once(self) -> str:
        """One watch request until the stream ends or stalls; why it ended ('410 ...' if the history expired)."""
        conn = await Connection.open(self.port, self.tls)
        path = f'{objects_path(self.namespace)}?watch=true&allowWatchBookmarks=true&resourceVersion={self.rv}'
        try:
            conn.writer.write(f'GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n'.encode())
            async with asyncio.timeout(self.idle):
                head = await conn.reader.readuntil(b'\r\n\r\n')
            if int(head[9:12]) != 200:
                return f'{int(head[9:12])} answered to the watch request'
            buffer = b''
            while True:
                async with asyncio.timeout(self.idle):
                    size = int((await conn.reader.readline()).strip(), 16)
                    if size == 0:
                        return 'the server ended the stream'
                    buffer += await conn.reader.readexactly(size)
                    await conn.reader.readexactly(2)
                if b'\n' not in buffer:
                    continue
                *lines, buffer = buffer.split(b'\n')
                now = time.time()
                for line in filter(None, (line.strip() for line in lines)):
                    event = json.loads(line)
                    if event['type'] == 'ERROR':
                        status = event['object']
                        return f'{status.get("code")} ERROR event: {status.get("message")}'
                    self.rv = event['object']['metadata']['resourceVersion']
                    if event['type'] != 'BOOKMARK':
                        self.emit(event['type'], event['object'], now)
        except TimeoutError:
            return f'nothing for {self.idle:g} s'
        finally:
            conn.close()

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            try:
                await self.task
            except (asyncio.CancelledError, Exception):
                pass


async def wait_for(predicate: Callable[[], bool], seconds: float, step: float = 0.02) -> bool:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(step)
    return True


# -- frameworks and their operator processes ------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Framework:
    name: str      # 'ours', 'upstream', 'upstream+clients'
    python: str    # the interpreter whose `kopf` is measured
    label: str     # 'ours', 'upstream' -- what the operator records as `by`
    run_args: tuple[str, ...] = ()  # more `kopf run` options, e.g. ('--no-uvloop',)


class Operator:
    """One operator process: `python -I -m kopf run --standalone -n NS bench/operator.py` (cwd: a temp dir; ours:
    `-s -P` and PYTHONPATH=<this tree>, so that ours is this tree's kopf whatever the venv's is);
    `-A` if `all_namespaces` (NS names the log file only); `env`: for bench/operator.py, e.g. BENCH_NO_RESUME."""

    def __init__(self, framework: Framework, kubeconfig: pathlib.Path, namespace: str, logdir: pathlib.Path,
                 extra_args: Iterable[str] = (), profile: pathlib.Path | None = None, *,
                 all_namespaces: bool = False, env: dict[str, str] | None = None) -> None:
        self.framework, self.kubeconfig, self.namespace = framework, kubeconfig, namespace
        self.profile = profile  # py-spy's raw (collapsed) stacks go here; the operator runs under py-spy
        self.logfile = logdir / f'operator-{framework.name}-{namespace}.log'
        self.extra_args = list(extra_args)
        self.scope = ['-A'] if all_namespaces else ['-n', namespace]
        self.env = dict(env or {})
        self.proc: subprocess.Popen[bytes] | None = None
        self.spawned_at = 0.0
        self.cwd = tempfile.mkdtemp(prefix='kopf-bench-cwd-')

    def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(('PYTHON', 'KOPF'))}
        env.update(KUBECONFIG=str(self.kubeconfig), BENCH_FRAMEWORK=self.framework.label, **self.env)
        # Ours is this tree's kopf, whichever the venv's is (a worktree's .venv is often a link to the main
        # checkout's, where an editable install points at the main checkout: with `-I` alone, a worktree's
        # bench measured the main checkout's code). `-s -P`: as isolated as `-I`, but PYTHONPATH is read.
        ours = self.framework.label == 'ours'
        isolation = ['-s', '-P'] if ours else ['-I']
        if ours:
            env['PYTHONPATH'] = str(ROOT)
        cmd = [self.framework.python, *isolation, '-m', 'kopf', 'run', '--standalone', *self.scope,
               *self.framework.run_args, *self.extra_args, str(OPERATOR)]
        if os.environ.get('BENCH_CALLGRIND'):   # the operator under callgrind, instrumented only when toggled on
            cmd = ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes',
                   f'--callgrind-out-file={os.environ["BENCH_CALLGRIND"]}/cg.%p', *cmd]
        if self.profile is not None:
            spy = pathlib.Path(self.framework.python).parent / 'py-spy'
            cmd = [str(spy), 'record', '--format', 'raw', '--rate', '250', '--threads',
                   '-o', str(self.profile), '--', *cmd]
        out = open(self.logfile, 'wb')
        self.spawned_at = time.time()
        self.proc = subprocess.Popen(cmd, cwd=self.cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        out.close()

    @property
    def pid(self) -> int:
        assert self.proc is not None
        if self.profile is None:
            return self.proc.pid
        for _ in range(200):  # under py-spy: the operator is its child
            children = pathlib.Path(f'/proc/{self.proc.pid}/task/{self.proc.pid}/children').read_text().split()
            if children:
                return int(children[0])
            time.sleep(0.01)
        raise RuntimeError('py-spy did not start the operator')

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def cpu(self) -> float:
        return cpu_seconds(self.pid)

    def memory(self) -> dict[str, float]:
        return memory_mb(self.pid)

    def stop(self, timeout: float = 20) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            os.kill(self.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                log(f'{self.framework.name} did not stop in {timeout}s; killing it')
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def tail(self, lines: int = 15) -> str:
        try:
            return '\n'.join(self.logfile.read_text(errors='replace').splitlines()[-lines:])
        except OSError:
            return ''


@contextlib.asynccontextmanager
async def running(op: 'Operator', *watches: Watch) -> AsyncIterator['Operator']:
    """The operator's process started for the block; if the block fails, the tail of its log is printed;
    after it, the operator is stopped, and the harness's watches of its namespace too."""
    op.start()
    try:
        yield op
    except Exception:
        log(f'{op.framework.name}: the operator log ends with:\n{op.tail()}')
        raise
    finally:
        op.stop()
        for watch in watches:
            await watch.stop()


def import_figures(python: str, repeats: int = 5) -> dict[str, Any]:
    """`import kopf` in a fresh interpreter: seconds and RSS after it (median of runs); optional clients loaded?"""
    code = ('import sys, time; t = time.perf_counter(); import kopf; dt = time.perf_counter() - t\n'
            'rss = [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmRSS:")][0]\n'
            'import json; print(json.dumps({"s": dt, "rss_kb": rss, "file": kopf.__file__,\n'
            '  "clients": sorted(m for m in ("kubernetes", "pykube") if m in sys.modules)}))')
    runs = []
    with tempfile.TemporaryDirectory(prefix='kopf-bench-import-') as cwd:
        for _ in range(repeats):
            out = subprocess.run([python, '-I', '-c', code], cwd=cwd, check=True, capture_output=True, text=True)
            runs.append(json.loads(out.stdout))
    runs.sort(key=lambda r: r['s'])
    rss = sorted(r['rss_kb'] for r in runs)[len(runs) // 2] / 1024
    return {'import_s': runs[len(runs) // 2]['s'], 'import_rss_mb': rss, 'file': runs[0]['file'],
            'optional_clients_imported': runs[0]['clients']}


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float('nan')
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]
