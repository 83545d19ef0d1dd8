"""Peering side by side: how fast an operator pauses, resumes and takes over, ours vs upstream.

    .venv/bin/python bench/peering.py            # 3 rounds per framework (~1.5 minutes)
    .venv/bin/python bench/peering.py --rounds 1

Per framework and round, against one local cluster (`kopf.testing.LocalCluster` in a thread), with
the same operator module (a create handler that records its pid and `time.monotonic()`; a startup
handler that sets `settings.peering.lifetime` to `--lifetime`):

- freeze → paused: a priority-1000 entry is written (as `kopf freeze` writes it); the time until the
  operator's log says "Pausing operations in favour of" (polled every 10 ms);
- resume → handled: an object is created while frozen; the entry is removed (as `kopf resume` does);
  the time until its create handler runs (the resuming re-lists the objects);
- SIGKILL → taken over: a priority-100 operator acts, a priority-0 one of the same framework joins
  (its entry is seen in the peering object); the first is SIGKILLed and an object created; the time
  until the second one's create handler runs (bounded by the lifetime: the killed one's entry must
  expire first).

Figures (seconds, the median of the rounds) are printed, never asserted. Upstream Kopf 1.45.2 runs
from its throw-away venv (bench/.venvs/upstream-1.45.2) as a black box; skipped if it is absent.
"""
import argparse
import json
import os
import pathlib
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

ROOT = pathlib.Path(__file__).parent.parent
sys.path.insert(0, str(ROOT))

from kopf.testing import LocalCluster  # noqa: E402

OURS = str(ROOT / '.venv' / 'bin' / 'python')
UPSTREAM = str(ROOT / 'bench' / '.venvs' / 'upstream-1.45.2' / 'bin' / 'python')
OPERATOR = '''
import os, time, kopf

@kopf.on.startup()
def configure(settings, **_):
    settings.peering.lifetime = int(os.environ['BENCH_LIFETIME'])

@kopf.on.create('kopfexamples')
def create_fn(name, **_):
    with open(os.environ['BENCH_LOG'], 'a') as f:
        f.write(f'{name} {os.getpid()} {time.monotonic()}\\n')
'''


def wait(check: Any, within: float = 60.0) -> float:
    """Poll until `check()` is truthy; the monotonic time then."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if check():
            return time.monotonic()
        time.sleep(0.01)
    raise RuntimeError(f'Timed out: {check}')


class Run:
    def __init__(self, cluster: LocalCluster, tmp: pathlib.Path, python: str, priority: int, tag: str,
                 lifetime: int) -> None:
        self.out = tmp / f'{tag}.out'
        self.log = tmp / 'handled'
        env = {**os.environ, 'KUBECONFIG': str(cluster.kubeconfig), 'BENCH_LOG': str(self.log),
               'BENCH_LIFETIME': str(lifetime)}
        env.pop('POD_ID', None)
        with self.out.open('w') as out:
            self.proc = subprocess.Popen([python, '-I', '-m', 'kopf', 'run', '-A', '--peering', 'bench', '--priority',
                                          str(priority), str(tmp / 'operator.py')], env=env, cwd=tmp,
                                         stdout=out, stderr=subprocess.STDOUT)

    def says(self, text: str, count: int = 1) -> bool:
        return self.out.read_text().count(text) >= count

    def handled(self, name: str) -> float | None:
        for line in (self.log.read_text().splitlines() if self.log.exists() else []):
            obj, pid, at = line.split()
            if obj == name and pid == str(self.proc.pid):
                return float(at)
        return None

    def stop(self, signum: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signum)
        self.proc.wait(timeout=60)


def kex(name: str) -> dict[str, Any]:
    return {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': name, 'namespace': 'default'},
            'spec': {}}


def priorities(cluster: LocalCluster) -> list[int]:
    obj = cluster.get('kopf.dev/v1', 'ClusterKopfPeering', 'bench') or {}
    return [entry.get('priority') for entry in (obj.get('status') or {}).values() if isinstance(entry, dict)]


def freezer(cluster: LocalCluster, lifetime: int | None) -> None:
    """What `kopf freeze` (a lifetime) or `kopf resume` (None) write: a merge-patch of the freezer's entry."""
    import datetime
    import urllib.request
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec='microseconds')
    entry = None if lifetime is None else {'priority': 1000, 'lifetime': lifetime, 'lastseen': now}
    request = urllib.request.Request(f'{cluster.url}/apis/kopf.dev/v1/clusterkopfpeerings/bench', method='PATCH',
                                     data=json.dumps({'status': {'bench-freezer': entry}}).encode(),
                                     headers={'Content-Type': 'application/merge-patch+json'})
    with urllib.request.urlopen(request, timeout=30):
        pass


def one_round(python: str, lifetime: int) -> dict[str, float]:
    import yaml
    with tempfile.TemporaryDirectory() as tmpdir, LocalCluster() as cluster:
        tmp = pathlib.Path(tmpdir)
        (tmp / 'operator.py').write_text(OPERATOR)
        cluster.apply(str(ROOT / 'examples' / 'crd.yaml'))
        cluster.apply([doc for doc in yaml.safe_load_all((ROOT / 'kopf' / 'peering.yaml').read_text())
                       if doc['kind'] == 'CustomResourceDefinition'])
        cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'ClusterKopfPeering', 'metadata': {'name': 'bench'}})
        high = Run(cluster, tmp, python, 100, 'high', lifetime)
        try:
            wait(lambda: high.says('Resuming operations after the pause.'))
            frozen = time.monotonic()
            freezer(cluster, 600)
            paused = wait(lambda: high.says('Pausing operations in favour of'))
            cluster.apply(kex('while-frozen'))
            resumed = time.monotonic()
            freezer(cluster, None)
            handled = wait(lambda: high.handled('while-frozen'))
            low = Run(cluster, tmp, python, 0, 'low', lifetime)
            try:
                wait(lambda: 0 in priorities(cluster))  # it has seen the peering (and the other one): paused
                high.stop(signal.SIGKILL)
                killed = time.monotonic()
                cluster.apply(kex('after-kill'))
                taken = wait(lambda: low.handled('after-kill'))
            finally:
                low.stop()
        finally:
            high.stop()
    return {'freeze_to_paused': paused - frozen, 'resume_to_handled': handled - resumed,
            'sigkill_to_taken_over': taken - killed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--lifetime', type=int, default=4, help='settings.peering.lifetime, seconds')
    args = parser.parse_args()
    frameworks = {'ours': OURS, **({'upstream': UPSTREAM} if pathlib.Path(UPSTREAM).exists() else {})}
    results: dict[str, dict[str, float]] = {}
    for name, python in frameworks.items():
        rounds = [one_round(python, args.lifetime) for _ in range(args.rounds)]
        results[name] = {key: round(statistics.median(r[key] for r in rounds), 3) for key in rounds[0]}
        print(f'{name:9} ' + '  '.join(f'{key}={value:.3f}s' for key, value in results[name].items()), flush=True)
    print(json.dumps({'lifetime': args.lifetime, 'rounds': args.rounds, 'results': results}))


if __name__ == '__main__':
    main()
