"""bench/scale.py's population without hours: a `kopf cluster --state` file with N handled objects, cached.

The file is what the local cluster saves on exit and resumes from (`kopf._cluster.pipeline.state`:
`{"resourceVersion": RV, "objects": [[group, plural, object], ...], "managers": {uid: ...}}`). One object
is made by the cluster's own code (in this process: `Emulator.apply()`, so it is stored as the cluster
stores it), handled as `run.prehandled()` makes it (our finalizer, the diff-base annotation) plus a
create handler's result in its status; the others are copies of its JSON with their own name, namespace,
uid, resourceVersion and `spec.n` (also inside the annotation). The field-ownership records that writes
over HTTP would leave (`managers`) are not made: they matter to server-side apply only.

Cached by N and the namespaces under `~/.cache/kopf/bench-scale/` (a million objects: ~0.8 GB, ~5 min to
write on a loaded machine); each cluster resumes from a hard link to it (SIGKILLed after use: nothing is saved back).
"""
import contextlib
import os
import pathlib
import shutil
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import harness as h
import run
from harness import log

FORMAT = 2   # bump when the objects change: older cached files are then not used
# 2: the objects carry `metadata.managedFields` (the local cluster keeps them since 3ae79e2): ~830 bytes each,
#    ~4.7 KB of the cluster's RSS (format 1: ~480 bytes, ~2.7 KB)
CACHE = pathlib.Path(os.environ.get('XDG_CACHE_HOME') or pathlib.Path.home() / '.cache') / 'kopf' / 'bench-scale'
NAME, NAMESPACE, N = 'scale-name-placeholder', 'scale-ns-placeholder', 918273645  # replaced in each copy


def object_name(i: int) -> str:
    return f'o-{i:07d}'


def namespaces(count: int) -> list[str]:
    return [f'scale-{k}' for k in range(count)]


def namespace_of(i: int, count: int) -> str:
    return f'scale-{i % count}'


def cached(objects: int, spaces: int) -> pathlib.Path:
    return CACHE / f'state-v{FORMAT}-{objects}-{spaces}ns.json'


def ensure(objects: int, spaces: int, path: pathlib.Path | None = None) -> pathlib.Path:
    """The state file (written unless it exists): `path`, or the cached one for N and the namespaces."""
    path = path or cached(objects, spaces)
    if path.exists():
        log(f'state file {path} ({path.stat().st_size / 2**20:,.0f} MB): reused')
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    temporary = path.with_name(f'.{path.name}.tmp')
    with open(temporary, 'wb') as out:
        for chunk in state_chunks(objects, spaces):
            out.write(chunk)
    os.replace(temporary, path)
    log(f'state file {path}: {objects:,} objects, {path.stat().st_size / 2**20:,.0f} MB '
        f'in {time.monotonic() - started:.0f} s')
    return path


def template(spaces: int) -> tuple[list[Any], bytes, int]:
    """The cluster's own objects (namespaces, the CRD), one handled object's JSON with placeholders, the RV."""
    from kopf._cluster import jsoncodec
    from kopf._cluster.control.emulator import Emulator
    emulator = Emulator(workloads=False)
    emulator.apply(h.CRD)
    for namespace in namespaces(spaces) + [NAMESPACE]:
        emulator.apply({'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': namespace}})
    one = emulator.apply(run.prehandled(NAMESPACE, NAME, N))
    snapshot = emulator.state.snapshot()
    base = [item for item in snapshot['objects']
            if (item[0], item[1]) != (h.GROUP, h.PLURAL) and item[2]['metadata']['name'] != NAMESPACE]
    one['status'] = {'create_fn': {'t': time.time(), 'by': 'ours'}}
    one['metadata']['resourceVersion'] = 'RV-PLACEHOLDER'
    one['metadata']['uid'] = 'UID-PLACEHOLDER'
    data = jsoncodec.dumps([h.GROUP, h.PLURAL, one])
    assert data.count(str(N).encode()) == 2, data  # spec.n and the diff-base annotation's, nothing else
    return base, data, int(snapshot['resourceVersion'])


def state_chunks(objects: int, spaces: int) -> Iterator[bytes]:
    """The state file's bytes, a piece at a time (a million objects never sit in memory at once)."""
    from kopf._cluster import jsoncodec
    base, one, rv = template(spaces)
    yield b'{"resourceVersion":%d,"objects":[' % (rv + objects)
    yield b','.join(jsoncodec.dumps(item) for item in base)
    step = max(objects // 10, 1)
    for i in range(objects):
        copy = (one.replace(NAMESPACE.encode(), namespace_of(i, spaces).encode())
                .replace(NAME.encode(), object_name(i).encode()).replace(str(N).encode(), str(i).encode())
                .replace(b'UID-PLACEHOLDER', str(uuid.uuid4()).encode())
                .replace(b'RV-PLACEHOLDER', str(rv + 1 + i).encode()))
        yield b',' + copy
        if (i + 1) % step == 0:
            log(f'  state file: {i + 1:,} of {objects:,} objects')
    yield b'],"managers":{}}'


@contextlib.asynccontextmanager
async def cluster(python: str, state: pathlib.Path, logdir: pathlib.Path, tag: str,
                  history: int) -> AsyncIterator[h.EmulatorProcess]:
    """A local cluster process resumed from the state file (through a hard link in its own directory) that
    keeps `history` changes, for the block; then SIGKILLed: what it would save on exit is not needed."""
    workdir = logdir / f'cluster-{tag}'
    workdir.mkdir()
    linked = workdir / 'state.json'
    try:
        os.link(state, linked)
    except OSError:   # another filesystem: a copy
        shutil.copyfile(state, linked)
    emu = h.EmulatorProcess(python, workdir)
    emu.options = ('--state', str(linked), '--history-size', str(history), '--compaction-interval', '0')
    emu.start_timeout = 1800.0
    started = time.monotonic()
    emu.start()
    log(f'cluster {tag}: resumed from the state file in {time.monotonic() - started:.1f} s')
    try:
        yield emu
    finally:
        if emu.proc is not None and emu.proc.poll() is None:
            emu.proc.kill()
            emu.proc.wait()
        linked.unlink(missing_ok=True)
