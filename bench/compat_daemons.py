"""Daemons and timers side by side: the log lines and the objects' states, word for word, with timings.

    .venv/bin/python bench/compat_daemons.py --framework upstream            # all scenarios
    .venv/bin/python bench/compat_daemons.py --framework ours s1_sync_returns s7a_timers
    .venv/bin/python bench/compat_daemons.py --framework upstream --list     # the scenarios' names
    .venv/bin/python bench/compat_daemons.py --framework upstream --all-lines s2_async_graceful

For each scenario: a fresh operator process (`python -I -W default -m kopf run --standalone --verbose -n NS
OPERATOR.py`, cwd: a temp dir) on our local cluster (`python -m kopf cluster`), the scenario's operator
code (a module-level string below, written to a temp dir), and a timeline of actions on KopfExample
objects (create / label / patch / delete / signal the operator). Printed: every captured log line of the
operator (by default without the verbose wire chatter; `--all-lines` for everything) and every change of
the objects (finalizers, deletionTimestamp, status, gone), with seconds relative to the operator's spawn.

Upstream Kopf 1.45.2 is installed by bench/run.py's `upstream_venv()` into bench/.venvs/ (never into the
project's .venv) and only run as a black box; `--upstream-python PATH` to use another throw-away venv.
"""
import argparse
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

GROUP, VERSION, PLURAL, KIND = 'kopf.dev', 'v1', 'kopfexamples', 'KopfExample'
CRD_FILE = ROOT / 'examples' / 'crd.yaml'

HEADER = '''\
import asyncio, time, threading
import kopf

COUNTS = {}

def bump(key):
    COUNTS[key] = COUNTS.get(key, 0) + 1
    return COUNTS[key]

@kopf.on.startup()
def _settings(settings, **_):
    settings.posting.level = 10  # DEBUG: so that k8s events are posted for everything (also visible in logs)
'''

# Each scenario: (description, operator code, timeline of (at seconds after the operator's start, action, args)).
# Actions: create(name, labels?), label(name, {k: v|None}), patch(name, spec), delete(name), signal(SIGINT|SIGTERM),
# end (stop the operator with SIGINT, wait up to 20 s, then kill).
SCENARIOS: dict[str, tuple[str, str, list[tuple[float, str, Any]]]] = {
    's1_sync_returns': (
        'A sync daemon that returns a dict after 2 s; then the object is deleted.',
        '''
@kopf.daemon('kopfexamples')
def d1(stopped, logger, **_):
    logger.info('d1: started in a thread')
    time.sleep(2)
    logger.info('d1: returning now')
    return {'returned': 123}
''',
        [(3, 'create', 'obj1'), (9, 'delete', 'obj1'), (13, 'end', None)]),

    's2_async_graceful': (
        'An async daemon looping on `stopped` (0.5 s sleeps); deleted after 3 s of running.',
        '''
@kopf.daemon('kopfexamples')
async def d2(stopped, logger, **_):
    logger.info('d2: started')
    while not stopped:
        await asyncio.sleep(0.5)
    logger.info(f'd2: stopped flag seen: reason={stopped.reason!r}')
    return {'ended': True}

@kopf.daemon('kopfexamples')
async def d2w(stopped, logger, **_):
    while not stopped:
        await stopped.wait(1)
    logger.info('d2w: stopped.wait() returned')
''',
        [(3, 'create', 'obj2'), (7, 'delete', 'obj2'), (12, 'end', None)]),

    's3a_async_cancelled': (
        'An async daemon ignoring `stopped` (infinite sleep(1) loop), cancellation_backoff=1, no timeout.',
        '''
@kopf.daemon('kopfexamples', cancellation_backoff=1)
async def d3a(stopped, logger, **_):
    try:
        while True:
            await asyncio.sleep(1)
    except asyncio.CancelledError:
        logger.info('d3a: got CancelledError')
        raise
''',
        [(3, 'create', 'obj3a'), (6, 'delete', 'obj3a'), (11, 'end', None)]),

    's3b_async_resists': (
        'An async daemon that swallows CancelledError and keeps going; cancellation_timeout=2.',
        '''
@kopf.daemon('kopfexamples', cancellation_timeout=2)
async def d3b(stopped, logger, **_):
    while True:
        try:
            await asyncio.sleep(1)
        except asyncio.CancelledError:
            logger.info('d3b: got CancelledError, ignoring it')
''',
        [(3, 'create', 'obj3b'), (6, 'delete', 'obj3b'), (14, 'end', None)]),

    's3c_async_backoff_polling': (
        'An async daemon ignoring `stopped`, cancellation_backoff=1, cancellation_polling=1, no timeout.',
        '''
@kopf.daemon('kopfexamples', cancellation_backoff=1, cancellation_polling=1)
async def d3c(stopped, logger, **_):
    try:
        while True:
            await asyncio.sleep(1)
    except asyncio.CancelledError:
        logger.info('d3c: got CancelledError')
        raise
''',
        [(3, 'create', 'obj3c'), (6, 'delete', 'obj3c'), (12, 'end', None)]),

    's3d_async_backoff_timeout': (
        'An async daemon ignoring `stopped`, cancellation_backoff=1, cancellation_timeout=2 (cancel is obeyed).',
        '''
@kopf.daemon('kopfexamples', cancellation_backoff=1, cancellation_timeout=2)
async def d3d(stopped, logger, **_):
    try:
        while True:
            await asyncio.sleep(1)
    except asyncio.CancelledError:
        logger.info('d3d: got CancelledError')
        raise
''',
        [(3, 'create', 'obj3d'), (6, 'delete', 'obj3d'), (12, 'end', None)]),

    's4a_sync_timeout': (
        'A sync daemon ignoring `stopped` (sleep loop), cancellation_timeout=2.',
        '''
@kopf.daemon('kopfexamples', cancellation_timeout=2)
def d4a(stopped, logger, **_):
    n = 0
    while n < 40:
        time.sleep(0.5); n += 1
    logger.info('d4a: finally returning after 20 s')
''',
        [(3, 'create', 'obj4a'), (6, 'delete', 'obj4a'), (14, 'end', None)]),

    's4b_sync_polling': (
        'A sync daemon ignoring `stopped` for 8 s after deletion; cancellation_polling=1, no timeout.',
        '''
@kopf.daemon('kopfexamples', cancellation_polling=1)
def d4b(stopped, logger, **_):
    while not stopped:
        time.sleep(0.2)
    logger.info('d4b: stopped seen; lingering for 6 s more')
    time.sleep(6)
    logger.info('d4b: exiting now')
''',
        [(3, 'create', 'obj4b'), (6, 'delete', 'obj4b'), (16, 'end', None)]),

    's5_daemon_errors': (
        'Daemons: TemporaryError(delay=1) twice then return; PermanentError; plain Exception with backoff=1.',
        '''
@kopf.daemon('kopfexamples')
def d5temp(logger, name, **_):
    n = bump(('temp', name))
    if n <= 2:
        raise kopf.TemporaryError(f'temp #{n}', delay=1)
    logger.info('d5temp: returning after 2 temporary errors')
    return {'attempt': n}

@kopf.daemon('kopfexamples')
async def d5perm(logger, **_):
    raise kopf.PermanentError('perm!')

@kopf.daemon('kopfexamples', backoff=1)
async def d5exc(logger, name, **_):
    n = bump(('exc', name))
    raise ValueError(f'exc #{n}')
''',
        [(3, 'create', 'obj5'), (10, 'delete', 'obj5'), (14, 'end', None)]),

    's5b_daemon_retries': (
        'Daemons failing with retries=2 / timeout=2 (plain Exception, backoff=0.5).',
        '''
@kopf.daemon('kopfexamples', retries=2, backoff=0.5)
async def d5r(logger, name, **_):
    raise ValueError(f'fail #{bump(name)}')

@kopf.daemon('kopfexamples', timeout=2, backoff=0.5)
async def d5t(logger, name, **_):
    raise ValueError('always')
''',
        [(3, 'create', 'obj5b'), (10, 'delete', 'obj5b'), (14, 'end', None)]),

    's6_delay_labels': (
        'A daemon with initial_delay=2; a daemon filtered by labels={"run": "yes"}: label removed, re-added.',
        '''
@kopf.daemon('kopfexamples', initial_delay=2)
async def d6delay(stopped, logger, **_):
    logger.info('d6delay: started (after the initial delay)')
    await stopped.wait()
    logger.info(f'd6delay: stopped: {stopped.reason!r}')

@kopf.daemon('kopfexamples', labels={'run': 'yes'})
async def d6label(stopped, logger, **_):
    logger.info('d6label: started')
    await stopped.wait()
    logger.info(f'd6label: stopped: {stopped.reason!r}')
''',
        [(3, 'create', ('obj6', {'run': 'yes'})), (7, 'label', ('obj6', {'run': None})),
         (11, 'label', ('obj6', {'run': 'yes'})), (15, 'delete', 'obj6'), (19, 'end', None)]),

    's7a_timers': (
        'Timers (interval=1): returning a dict; TemporaryError; PermanentError; plain Exception (backoff=1).',
        '''
@kopf.timer('kopfexamples', interval=1)
def t7ok(logger, name, **_):
    n = bump(('ok', name))
    logger.info(f't7ok: call #{n}')
    return {'call': n}

@kopf.timer('kopfexamples', interval=1)
def t7temp(logger, name, **_):
    n = bump(('temp', name))
    raise kopf.TemporaryError(f'temp #{n}', delay=2)

@kopf.timer('kopfexamples', interval=1)
def t7perm(logger, name, **_):
    n = bump(('perm', name))
    raise kopf.PermanentError(f'perm #{n}')

@kopf.timer('kopfexamples', interval=1, backoff=1)
def t7exc(logger, name, **_):
    n = bump(('exc', name))
    raise ValueError(f'exc #{n}')
''',
        [(3, 'create', 'obj7a'), (10, 'delete', 'obj7a'), (13, 'end', None)]),

    's7b_timers': (
        'Timers: idle=3 (interval=1, a spec patch at +4 s); sharp=True (interval=1, slow 0.3 s body); '
        'retries=2 always failing (backoff=0.5); initial_delay=2.',
        '''
@kopf.timer('kopfexamples', interval=1, idle=3)
def t7idle(logger, name, **_):
    logger.info(f't7idle: call #{bump(("idle", name))}')

@kopf.timer('kopfexamples', interval=1, sharp=True)
async def t7sharp(logger, name, **_):
    logger.info(f't7sharp: call #{bump(("sharp", name))} at {time.time() % 100:.3f}')
    await asyncio.sleep(0.3)

@kopf.timer('kopfexamples', interval=1, retries=2, backoff=0.5)
def t7retries(logger, name, **_):
    raise ValueError(f'retry fail #{bump(("retries", name))}')

@kopf.timer('kopfexamples', interval=1, initial_delay=2)
def t7delay(logger, name, **_):
    logger.info(f't7delay: call #{bump(("delay", name))}')
''',
        [(3, 'create', 'obj7b'), (7, 'patch', ('obj7b', {'x': 1})), (14, 'delete', 'obj7b'), (17, 'end', None)]),

    's7c_timers_slow': (
        'Timers with a 0.6 s body: interval=1 (not sharp) vs sharp=True; an object deleted mid-call.',
        '''
@kopf.timer('kopfexamples', interval=1)
async def t7slow(logger, name, **_):
    logger.info(f't7slow: call #{bump(("slow", name))} at {time.time() % 100:.3f}')
    try:
        await asyncio.sleep(0.6)
    except asyncio.CancelledError:
        logger.info('t7slow: cancelled')
        raise
    return {'n': COUNTS[("slow", name)]}

@kopf.timer('kopfexamples', interval=1, sharp=True)
def t7slowsharp(logger, name, **_):
    logger.info(f't7slowsharp: call #{bump(("slowsharp", name))} at {time.time() % 100:.3f}')
    time.sleep(0.6)
''',
        [(3, 'create', 'obj7c'), (8.3, 'delete', 'obj7c'), (11, 'end', None)]),

    's9_events': (
        'k8s Events: a regular on.create handler next to a daemon and a timer (posting.level=DEBUG).',
        '''
@kopf.on.create('kopfexamples')
def c9(logger, **_):
    logger.info('c9: a log line from a regular handler')

@kopf.daemon('kopfexamples')
async def d9(stopped, logger, **_):
    logger.info('d9: a log line from a daemon')
    await stopped.wait()

@kopf.timer('kopfexamples', interval=1)
def t9(logger, **_):
    logger.info('t9: a log line from a timer')
''',
        [(3, 'create', 'obj9'), (5, 'delete', 'obj9'), (7, 'end', None)]),

    's8a_exit_sigint': (
        'Operator exit by SIGINT while daemons (async graceful, sync graceful) and a timer run.',
        '''
@kopf.daemon('kopfexamples')
async def d8async(stopped, logger, **_):
    await stopped.wait()
    logger.info(f'd8async: stopped: {stopped.reason!r}')

@kopf.daemon('kopfexamples')
def d8sync(stopped, logger, **_):
    while not stopped:
        stopped.wait(0.5)
    logger.info(f'd8sync: stopped: {stopped.reason!r}')

@kopf.timer('kopfexamples', interval=1)
def t8(logger, **_):
    pass
''',
        [(3, 'create', 'obj8a'), (6, 'signal', 'SIGINT'), (16, 'end', None)]),

    's8b_exit_sigterm': (
        'Operator exit by SIGTERM while an async daemon ignoring `stopped` (cancellation_timeout=1) runs.',
        '''
@kopf.daemon('kopfexamples', cancellation_timeout=1)
async def d8stubborn(stopped, logger, **_):
    while True:
        await asyncio.sleep(1)

@kopf.daemon('kopfexamples')
async def d8async(stopped, logger, **_):
    await stopped.wait()
    logger.info(f'd8async: stopped: {stopped.reason!r}')
''',
        [(3, 'create', 'obj8b'), (6, 'signal', 'SIGTERM'), (16, 'end', None)]),
}

# The verbose wire chatter hidden unless --all-lines (the lines are still in the saved log file).
NOISE = re.compile(r'Patching with|Patching failed|Watch-stream|Starting the watch-stream|Stopping the watch-stream'
                   r'|Keep-alive|Activity .* succeeded|Initial authentication|Client is configured|'
                   r'Discovered|Pinging|Found credentials|is processed: .*was not seen|Something has changed')


LINE = re.compile(r'^LOG \[[^\]]*\] (kopf\S*)\s+\[(\w+)\s*\] (?:\[[^\]]+\] )?(.*)$')
RELEVANT = re.compile(r"Daemon '|Timer '|did not exit|finalizer|ResourceWarning|Unprocessed streams|for the delayed")


class Api:
    """A tiny JSON client for the emulator (plain HTTP, no client library)."""

    def __init__(self, port: int) -> None:
        self.base = f'http://127.0.0.1:{port}'

    def call(self, method: str, path: str, body: Any = None,
             ctype: str = 'application/merge-patch+json') -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={'Content-Type': ctype if method == 'PATCH' else 'application/json'})
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                raw = resp.read()
                return resp.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                return e.code, json.loads(raw) if raw else None
            except ValueError:
                return e.code, raw.decode(errors='replace')


def objpath(ns: str, name: str | None = None) -> str:
    p = f'/apis/{GROUP}/{VERSION}/namespaces/{ns}/{PLURAL}'
    return f'{p}/{name}' if name else p


class Run:
    def __init__(self, name: str, python: str, kubeconfig: pathlib.Path, api: Api, workdir: pathlib.Path,
                 all_lines: bool) -> None:
        self.name, self.python, self.kubeconfig, self.api = name, python, kubeconfig, api
        self.workdir, self.all_lines = workdir, all_lines
        self.ns = name.replace('_', '-')
        self.t0 = 0.0
        self.lines: list[tuple[float, str]] = []  # (rel time, text) of everything, in order
        self.lock = threading.Lock()
        self.objects: set[str] = set()
        self.stop_watching = threading.Event()

    def emit(self, text: str, source: str) -> None:
        rel = time.time() - self.t0
        with self.lock:
            self.lines.append((rel, f'{source} {text}'))
            if source != 'LOG' or self.all_lines or not NOISE.search(text):
                print(f'{rel:7.2f}s {source} {text}', flush=True)

    def reader(self, stream: Any) -> None:
        for raw in iter(stream.readline, b''):
            self.emit(raw.decode(errors='replace').rstrip('\n'), 'LOG')

    def watcher(self) -> None:
        """Poll the objects every 0.1 s; report the changes of finalizers, deletion, status, labels."""
        last: dict[str, Any] = {}
        while not self.stop_watching.is_set():
            for name in sorted(self.objects):
                code, obj = self.api.call('GET', objpath(self.ns, name))
                if code == 404:
                    state: Any = 'GONE'
                elif code == 200:
                    meta = obj.get('metadata', {})
                    state = {'finalizers': meta.get('finalizers', []), 'deleting': 'deletionTimestamp' in meta,
                             'labels': meta.get('labels', {}), 'status': obj.get('status', {})}
                else:
                    state = f'HTTP {code}'
                if last.get(name) != state:
                    prev = last.get(name)
                    if isinstance(prev, dict) and isinstance(state, dict):
                        diff = {k: v for k, v in state.items() if prev.get(k) != v}
                    else:
                        diff = state
                    self.emit(f'{name}: {json.dumps(diff, sort_keys=True)}', 'OBJ')
                    last[name] = state
            time.sleep(0.1)

    def act(self, action: str, arg: Any, proc: subprocess.Popen[bytes]) -> None:
        if action == 'create':
            name, labels = (arg, {}) if isinstance(arg, str) else arg
            body = {'apiVersion': f'{GROUP}/{VERSION}', 'kind': KIND,
                    'metadata': {'name': name, 'namespace': self.ns, 'labels': labels}, 'spec': {'field': 'x'}}
            code, _ = self.api.call('POST', objpath(self.ns), body)
            self.objects.add(name)
            self.emit(f'create {name} labels={labels} -> {code}', 'ACT')
        elif action == 'label':
            name, labels = arg
            code, _ = self.api.call('PATCH', objpath(self.ns, name), {'metadata': {'labels': labels}})
            self.emit(f'label {name} {labels} -> {code}', 'ACT')
        elif action == 'patch':
            name, spec = arg
            code, _ = self.api.call('PATCH', objpath(self.ns, name), {'spec': spec})
            self.emit(f'patch {name} spec={spec} -> {code}', 'ACT')
        elif action == 'delete':
            code, _ = self.api.call('DELETE', objpath(self.ns, arg))
            self.emit(f'delete {arg} -> {code}', 'ACT')
        elif action == 'signal':
            if proc.poll() is None:
                proc.send_signal(getattr(signal, arg))
            self.emit(f'signal {arg}', 'ACT')

    def run(self, code: str, timeline: list[tuple[float, str, Any]]) -> int | None:
        self.api.call('POST', '/api/v1/namespaces', {'apiVersion': 'v1', 'kind': 'Namespace',
                                                      'metadata': {'name': self.ns}})
        opfile = self.workdir / f'{self.name}.py'
        opfile.write_text(HEADER + code)
        env = {k: v for k, v in os.environ.items() if not k.startswith(('PYTHON', 'KOPF'))}
        env['KUBECONFIG'] = str(self.kubeconfig)
        cmd = [self.python, '-I', '-W', 'default', '-m', 'kopf', 'run', '--standalone', '--verbose',
               '-n', self.ns, str(opfile)]
        self.t0 = time.time()
        proc = subprocess.Popen(cmd, cwd=self.workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        readers = [threading.Thread(target=self.reader, args=(proc.stdout,), daemon=True),
                   threading.Thread(target=self.watcher, daemon=True)]
        readers.append(threading.Thread(target=lambda: self.emit(f'the operator has exited: rc={proc.wait()}', 'ACT'),
                                        daemon=True))
        for t in readers:
            t.start()
        rc: int | None = None
        for at, action, arg in timeline:
            while time.time() - self.t0 < at:
                if proc.poll() is not None:
                    break
                time.sleep(0.02)
            if proc.poll() is not None and action not in ('end',):
                self.emit(f'the operator has exited (rc={proc.returncode}); skipping {action} {arg}', 'ACT')
                continue
            if action == 'end':
                if proc.poll() is None:
                    proc.send_signal(signal.SIGINT)
                    self.emit('end: SIGINT', 'ACT')
                try:
                    rc = proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    self.emit('end: did not exit in 20 s; SIGKILL', 'ACT')
                    proc.kill()
                    rc = proc.wait()
            else:
                self.act(action, arg, proc)
        readers[0].join(timeout=5)
        readers[2].join(timeout=5)
        time.sleep(0.3)
        self.stop_watching.set()
        readers[1].join(timeout=5)
        code, events = self.api.call('GET', f'/api/v1/namespaces/{self.ns}/events')
        for ev in (events or {}).get('items', []) if code == 200 else []:
            self.emit(f"{ev.get('type')} {ev.get('reason')} {ev.get('involvedObject', {}).get('name')}: "
                      f"{ev.get('message')!r} (count={ev.get('count')})", 'EVT')
        (self.workdir / f'{self.name}.log').write_text(''.join(f'{t:7.2f}s {s}\n' for t, s in self.lines))
        return rc

    def distinct(self) -> list[str]:
        """The framework's own lines about daemons/timers/finalizers: level + message, in first-seen order."""
        seen: dict[str, None] = {}
        for _, text in self.lines:
            m = LINE.match(text)
            if m and RELEVANT.search(m.group(3)):
                seen.setdefault(f'{m.group(2):8} {m.group(3)}', None)
        return list(seen)


def start_emulator(workdir: pathlib.Path, verbose: bool = False) -> tuple[subprocess.Popen[bytes], pathlib.Path, int]:
    kubeconfig = workdir / 'emulator.kubeconfig'
    logfile = open(workdir / 'emulator.log', 'wb')
    proc = subprocess.Popen([str(ROOT / '.venv' / 'bin' / 'python'), '-m', 'kopf', 'cluster', '--port', '0',
                             '--kubeconfig', str(kubeconfig), '--apply', str(CRD_FILE)] + (['-v'] if verbose else []),
                            cwd=ROOT, stdout=logfile, stderr=subprocess.STDOUT)
    logfile.close()
    deadline = time.monotonic() + 60
    while not kubeconfig.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f'The emulator did not start; see {workdir / "emulator.log"}')
        time.sleep(0.05)
    time.sleep(0.1)
    port = 0
    for line in kubeconfig.read_text().splitlines():
        if 'server:' in line:
            port = int(line.rsplit(':', 1)[1].strip().strip('"\'/'))
    return proc, kubeconfig, port


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('scenarios', nargs='*', help='scenario names (default: all); see --list')
    parser.add_argument('--framework', choices=['upstream', 'ours'], default='upstream')
    parser.add_argument('--upstream-python', help='a python of a throw-away venv with kopf==1.45.2 installed')
    parser.add_argument('--all-lines', action='store_true', help='also print the verbose wire chatter')
    parser.add_argument('--workdir', help='where to keep the operator files and logs (default: a temp dir)')
    parser.add_argument('--emulator-verbose', action='store_true', help="log the emulator's requests (emulator.log)")
    parser.add_argument('--list', action='store_true')
    args = parser.parse_args()
    if args.list:
        for name, (desc, _, _) in SCENARIOS.items():
            print(f'{name:22} {desc}')
        return 0
    names = args.scenarios or list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        parser.error(f'unknown scenarios: {unknown}; see --list')
    if args.framework == 'ours':
        python = str(ROOT / '.venv' / 'bin' / 'python')
    elif args.upstream_python:
        python = args.upstream_python
    else:
        import run  # bench/run.py: the throw-away venv with kopf==1.45.2 under bench/.venvs/
        python = run.upstream_venv(with_clients=False)
    workdir = pathlib.Path(args.workdir or tempfile.mkdtemp(prefix=f'kopf-compat-daemons-{args.framework}-'))
    workdir.mkdir(parents=True, exist_ok=True)
    emu, kubeconfig, port = start_emulator(workdir, args.emulator_verbose)
    print(f'# framework={args.framework} python={python} emulator=http://127.0.0.1:{port} workdir={workdir}')
    try:
        for name in names:
            desc, code, timeline = SCENARIOS[name]
            print(f'\n## {name}: {desc}', flush=True)
            runner = Run(name, python, kubeconfig, Api(port), workdir, args.all_lines)
            rc = runner.run(code, timeline)
            print(f'## {name}: exit code {rc}; full log: {workdir / (name + ".log")}', flush=True)
            lines = runner.distinct()
            print(f'## {name}: distinct framework lines about daemons/timers/finalizers ({len(lines)}):')
            for line in lines:
                print(f'    {line}')
            if not any("Daemon '" in line or "Timer '" in line for line in lines):
                print(f'## {name}: NOTE: no daemon/timer activity logged by {args.framework} '
                      f'(it refuses or ignores @kopf.daemon/@kopf.timer?)')
    finally:
        emu.send_signal(signal.SIGTERM)
        try:
            emu.wait(timeout=10)
        except subprocess.TimeoutExpired:
            emu.kill()
    return 0


if __name__ == '__main__':
    sys.exit(main())
