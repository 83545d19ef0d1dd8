"""Compatibility on the wire: objects handled by one framework, then served by the other.

    .venv/bin/python bench/compat_run.py [--objects 20]

Upstream Kopf 1.45.2 (in its throw-away venv, see run.py) and our kopf take turns on the same objects
in the same local cluster, both running bench/operator.py:
1. The first framework creates-handles the objects, and update-handles half of them; it stops.
2. The second framework starts: it must resume them (`on.resume`), and must NOT re-run the completed
   create/update handlers (it reads the first one's diff-base annotation and progress as its own).
3. A spec change of every object is update-handled by the second framework (its diff against the
   first one's diff-base is the real change only); deleting them runs the delete handler and
   releases the first framework's finalizer.
Both directions: upstream -> ours, ours -> upstream. Exit code 1 if any check fails.
"""
import argparse
import asyncio
import json
import pathlib
import sys
from typing import Any

import harness as h
from harness import log


async def turn(fw: h.Framework, emu: h.EmulatorProcess, ns: str, logdir: pathlib.Path,
               tracker: 'Tracker', until: Any, what: str, limit: float = 120) -> h.Operator:
    op = h.Operator(fw, emu.kubeconfig, ns, logdir)
    op.start()
    if not await h.wait_for(lambda: until(op) or not op.alive(), limit):
        op.stop()
        raise RuntimeError(f'{fw.name}: {what}: timed out; the log ends with:\n{op.tail()}')
    if not op.alive():
        raise RuntimeError(f'{fw.name} exited; the log ends with:\n{op.tail()}')
    return op


class Tracker:
    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.gone: set[str] = set()

    def __call__(self, etype: str, obj: dict[str, Any], now: float) -> None:
        name = obj['metadata']['name']
        if etype == 'DELETED':
            self.gone.add(name)
        else:
            self.objects[name] = obj

    def result(self, name: str, hid: str) -> dict[str, Any]:
        return dict((self.objects.get(name, {}).get('status') or {}).get(hid) or {})


async def direction(first: h.Framework, second: h.Framework, emu: h.EmulatorProcess, count: int,
                    logdir: pathlib.Path) -> dict[str, Any]:
    ns = f'compat-{first.label}-to-{second.label}'
    names = [f'c-{i:03d}' for i in range(count)]
    half = names[: count // 2]
    out: dict[str, Any] = {'first': first.label, 'second': second.label, 'objects': count}
    async with h.Client(emu.port, connections=2) as client:
        await client.ensure_namespace(ns)
        tracker = Tracker()
        watch = h.Watch(emu.port, ns, await client.resource_version(ns), tracker)
        watch.start()
        try:
            await client.bulk([('POST', h.objects_path(ns), {'apiVersion': h.API_VERSION, 'kind': h.KIND,
                                                             'metadata': {'name': n}, 'spec': {'n': 0}},
                                'application/json') for n in names])

            # 1. The first framework: create, then update half of them.
            op = await turn(first, emu, ns, logdir, tracker, what='create handlers',
                            until=lambda op: all(tracker.result(n, 'create_fn').get('by') == first.label
                                                 for n in names))
            await client.bulk([('PATCH', h.objects_path(ns, n), {'spec': {'n': 1}}, 'application/merge-patch+json')
                               for n in half])
            done = await h.wait_for(lambda: all(tracker.result(n, 'update_fn').get('n') == 1 for n in half), 60)
            op.stop()
            if not done:
                raise RuntimeError(f'{first.name}: update handlers did not run')
            await asyncio.sleep(0.3)
            before = {n: (tracker.result(n, 'create_fn'), tracker.result(n, 'update_fn')) for n in names}
            annotations = dict(tracker.objects[names[0]]['metadata'].get('annotations') or {})
            out['annotations_of_first'] = sorted(annotations)

            # 2. The second framework resumes them, re-running nothing that is done.
            op = await turn(second, emu, ns, logdir, tracker, what='resume handlers',
                            until=lambda op: all(tracker.result(n, 'resume_fn').get('by') == second.label
                                                 and tracker.result(n, 'resume_fn').get('t', 0) >= op.spawned_at
                                                 for n in names))
            await asyncio.sleep(1.0)  # time for any (wrong) re-run to show up
            out['resumed'] = sum(tracker.result(n, 'resume_fn').get('by') == second.label for n in names)
            out['creates_rerun'] = sum(tracker.result(n, 'create_fn') != before[n][0] for n in names)
            out['updates_rerun'] = sum(tracker.result(n, 'update_fn') != before[n][1] for n in names)

            # 3. A real change is an update for the second framework; deletion releases the first's finalizer.
            await client.bulk([('PATCH', h.objects_path(ns, n), {'spec': {'n': 2}}, 'application/merge-patch+json')
                               for n in names])
            await h.wait_for(lambda: all(tracker.result(n, 'update_fn').get('n') == 2 for n in names), 60)
            out['updates_by_second'] = sum(tracker.result(n, 'update_fn').get('n') == 2
                                           and tracker.result(n, 'update_fn').get('by') == second.label
                                           for n in names)
            await client.bulk([('DELETE', h.objects_path(ns, n), None, 'application/json') for n in names])
            await h.wait_for(lambda: set(names) <= tracker.gone, 60)
            out['deleted'] = len(set(names) & tracker.gone)
            op.stop()
        finally:
            await watch.stop()
    out['ok'] = (out['resumed'] == count and out['creates_rerun'] == 0 and out['updates_rerun'] == 0
                 and out['updates_by_second'] == count and out['deleted'] == count)
    return out


async def compat(emu: h.EmulatorProcess, ours: h.Framework, upstream: h.Framework, count: int,
                 logdir: pathlib.Path) -> list[dict[str, Any]]:
    results = []
    for first, second in ((upstream, ours), (ours, upstream)):
        log(f'compat: {first.label} -> {second.label} ({count} objects)')
        results.append(await direction(first, second, emu, count, logdir))
        log(f'  {json.dumps(results[-1])}')
    return results


def main() -> int:
    import run  # bench/run.py: the throw-away venvs
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--objects', type=int, default=20)
    args = parser.parse_args()
    ours = h.Framework('ours', str(h.ROOT / '.venv' / 'bin' / 'python'), 'ours')
    upstream = h.Framework('upstream', run.upstream_venv(False), 'upstream')
    logdir = h.logs_dir('kopf-compat-logs-')

    async def go() -> list[dict[str, Any]]:
        async with h.local_cluster(ours.python, logdir) as emu:
            return await compat(emu, ours, upstream, args.objects, logdir)
    results = asyncio.run(go())
    for r in results:
        print(f"{r['first']:>8} -> {r['second']:<8} resumed {r['resumed']}/{r['objects']}, "
              f"creates re-run {r['creates_rerun']}, updates re-run {r['updates_rerun']}, "
              f"updates by the second {r['updates_by_second']}/{r['objects']}, deleted {r['deleted']}/{r['objects']}: "
              f"{'OK' if r['ok'] else 'FAILED'}")
    return 0 if all(r['ok'] for r in results) else 1


if __name__ == '__main__':
    sys.exit(main())
