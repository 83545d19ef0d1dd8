"""Steps as data and the one loop that sends each step to both backends and compares the answers."""
import dataclasses
import json
import re
import time
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any

from kopf._cluster.store.shardselectors import hash_field

from ..conftest import Http
from . import compare, rawbytes
from .known import BYTES_KNOWN, KNOWN

JSON, MERGE, PATCH, SMP, APPLY = ('application/json', 'application/merge-patch+json', 'application/json-patch+json',
                                  'application/strategic-merge-patch+json', 'application/apply-patch+yaml')
TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json'


@dataclasses.dataclass(frozen=True)
class Step:
    method: str
    path: str  # may use {saved} values of earlier steps (per backend: resourceVersions differ)
    body: Any = None
    ctype: str = JSON
    accept: str = 'application/json'
    known: tuple[str, ...] = ()  # ids in known.KNOWN: the fields allowed to differ in this answer
    known_bytes: tuple[str, ...] = ()  # ids in known.BYTES_KNOWN: why its bytes may differ (values equal)
    save: str | None = None  # remember this answer's metadata.resourceVersion under this name
    events: int = 0  # a watch: read up to this many events (the stream ends by its timeoutSeconds)
    pick: Callable[[Any], Any] | None = None  # compare only this part of the body (discovery)
    until_gone: bool = False  # poll this GET until 404 (garbage collection, finalizers), then compare
    action: str | None = None  # 'compact' | 'reviews': not a request, an effect or an observation
    headers: Mapping[str, str] = dataclasses.field(default_factory=dict)  # may use {saved} values (tokens)
    keep: Mapping[str, str] = dataclasses.field(default_factory=dict)  # saved name -> dotted path in the answer
    until: Callable[[int, Any], bool] | None = None  # poll until the answer satisfies it (RBAC caches, controllers)
    bare: bool = False  # without the admin's client certificate (only the headers' credentials count)


class Backend:
    """One side: raw HTTP, the values saved by steps, and what an action means there."""

    def __init__(self, name: str, http: Http, actions: Mapping[str, Callable[[dict[str, str]], Any]],
                 bare: Http | None = None) -> None:
        self.name, self.http, self.actions, self.saved = name, http, actions, dict[str, str]()
        self.raw: list[bytes] = []   # the last answer's bytes as sent (a watch: one per event line)
        self.bare = bare or http

    def send(self, step: Step) -> tuple[int, Any]:
        self.raw = []
        if step.action:
            return 200, {'observed': self.actions[step.action](self.saved)}
        path = step.path.format(**self.saved)
        headers = {'Accept': step.accept, **{key: value.format(**self.saved) for key, value in step.headers.items()}}
        if step.events:
            return 200, self.watch(path, step.events)
        body = step.body.encode() if isinstance(step.body, str) else self.fill(step.body)
        http = self.bare if step.bare else self.http
        deadline = time.monotonic() + 60
        while True:
            code, answer = self.request(step.method, path, body, step.ctype, headers, http)
            done = code == 404 if step.until_gone else step.until(code, answer) if step.until else True
            if done or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        answer = self.unfill(answer)
        self.raw = [self.unfill_raw(raw) for raw in self.raw]
        if step.save and isinstance(answer, dict):
            meta = answer.get('metadata') or {}
            self.saved.update({step.save: meta.get('resourceVersion', ''), f'{step.save}_uid': meta.get('uid', ''),
                               f'{step.save}_continue': urllib.parse.quote(meta.get('continue', ''))})
            if meta.get('uid'):   # the uid's shard hash and the next value: a range one hash wide (shardsteps.py)
                value = int(hash_field(meta['uid']), 16)
                self.saved.update({f'{step.save}_hash': f'{value:016x}', f'{step.save}_next': f'{value + 1:016x}'})
        for name, dotted in step.keep.items():
            found: Any = answer
            for key in dotted.split('.'):
                found = found.get(key) if isinstance(found, dict) else None
            self.saved[name] = str(found or '')
        return code, answer

    def request(self, method: str, path: str, body: Any, ctype: str, headers: dict[str, str],
                http: Http | None = None) -> tuple[int, Any]:
        """As `Http.request()`, keeping the answer's bytes in `raw`."""
        conn = (http or self.http).connection()
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        conn.request(method, path, body=data, headers={**headers, **({'Content-Type': ctype} if data else {})})
        response = conn.getresponse()
        raw = response.read()
        conn.close()
        self.raw = [raw]
        try:
            return response.status, json.loads(raw) if raw else None
        except ValueError:
            return response.status, raw.decode()

    def fill(self, body: Any) -> Any:
        """The body with `'{saved}'` strings replaced by this backend's saved values (uids differ)."""
        if isinstance(body, dict):
            return {key: self.fill(value) for key, value in body.items()}
        if isinstance(body, list):
            return [self.fill(value) for value in body]
        if isinstance(body, str) and (found := re.fullmatch(r'\{(\w+)\}', body)):
            return self.saved[found.group(1)]
        return body

    def unfill(self, answer: Any) -> Any:
        """This side's saved shard hashes in the answer back to their placeholders (`shardInfo` echoes them)."""
        hashes = {value: f'{{{key}}}' for key, value in self.saved.items() if key.endswith(('_hash', '_next'))}
        if not hashes:
            return answer
        if isinstance(answer, dict):
            return {key: self.unfill(value) for key, value in answer.items()}
        if isinstance(answer, list):
            return [self.unfill(value) for value in answer]
        if isinstance(answer, str) and 'shardRange' in answer:
            for value, placeholder in hashes.items():
                answer = answer.replace(f"'0x{value}'", f"'0x{placeholder}'")
        return answer

    def unfill_raw(self, raw: bytes) -> bytes:
        """As `unfill()`, in the answer's bytes (for the byte comparison)."""
        for key, value in self.saved.items():
            if key.endswith(('_hash', '_next')) and b'shardRange' in raw:
                raw = raw.replace(f"'0x{value}'".encode(), f"'0x{{{key}}}'".encode())
        return raw

    def watch(self, path: str, count: int) -> list[Any]:
        conn = self.http.connection(timeout=15)
        conn.request('GET', path, headers={'Accept': 'application/json'})
        response = conn.getresponse()
        events: list[Any] = [response.status]
        try:
            while len(events) <= count and (line := response.readline()):
                if line.strip() and not compare.furniture((event := json.loads(line)).get('object')):
                    events.append(event)
                    self.raw.append(line)
        except TimeoutError:
            events.append('<no more events in 15 s>')
        finally:
            conn.close()
        return events


@dataclasses.dataclass
class Tally:
    compared: int = 0
    exact: int = 0
    known: int = 0
    failures: list[str] = dataclasses.field(default_factory=list)
    messages: list[str] = dataclasses.field(default_factory=list)
    used: set[str] = dataclasses.field(default_factory=set)
    details: list[tuple[str, Any, Any]] = dataclasses.field(default_factory=list)  # the failures' answers
    bytewise: int = 0   # answers compared byte for byte (those equal once normalized, not picked)
    bytes_equal: int = 0
    bytes_known: int = 0
    bytes_failures: list[str] = dataclasses.field(default_factory=list)
    bytes_used: set[str] = dataclasses.field(default_factory=set)


def run(steps: list[Step], emulator: Backend, envtest: Backend, tally: Tally) -> None:
    for number, step in enumerate(steps):
        left, right = (_view(side.send(step), step.pick) for side in (emulator, envtest))
        if _generates(step.body):  # the names a server generated are its own
            for answer in (left, right):
                if 'status' in answer and 'name' in answer['status']['details']:
                    answer['status']['details']['name'] = '<generated>'
        strict, loose = compare.differences(left, right)
        where = f'#{number} {step.action or step.method} {urllib.parse.unquote(step.path)}'
        tally.compared += 1
        if loose:
            tally.messages.append(f'{where}: {compare.sample(left, right, loose, 1)}')
        if not strict:
            tally.exact += 1
            if step.pick is None and not step.action and loose:   # its bytes differ by the message: listed
                tally.bytewise += 1
                tally.bytes_known += 1
                tally.bytes_used.add('message')
            elif step.pick is None and not step.action:
                _bytewise(step, where, emulator, envtest, tally)
        elif step.known and compare.covered(strict, compare.known_patterns(step.known, KNOWN)):
            tally.known += 1
            tally.used.update(step.known)
        else:
            tally.failures.append(f'{where}: {compare.sample(left, right, strict)}')
            tally.details.append((where, left, right))


def _generates(body: Any) -> bool:
    meta = body.get('metadata') if isinstance(body, dict) else None
    return isinstance(meta, dict) and bool(meta.get('generateName')) and not meta.get('name')


def _view(answer: tuple[int, Any], pick: Callable[[Any], Any] | None) -> Any:
    code, body = answer
    if pick is not None and 200 <= code < 300 and isinstance(body, dict):
        body = pick(body)
    if isinstance(body, list):  # a watch: the status line, then the events
        return [body[0], *[compare.view(0, e.get('object')) | {'type': e.get('type')} if isinstance(e, dict) else e
                           for e in body[1:]]]
    return compare.view(code, body)


def _bytewise(step: Step, where: str, emulator: Backend, envtest: Backend, tally: Tally) -> None:
    """Compare the two answers' bytes once normalized (see rawbytes.py); a listed difference is counted apart."""
    generated = {name: '<generated>' for side in (emulator, envtest) for name in _generated(step, side.raw)}
    ours = [rawbytes.rendered(raw, generated) for raw in emulator.raw]
    theirs = [rawbytes.rendered(raw, generated) for raw in envtest.raw]
    tally.bytewise += 1
    if ours == theirs:
        tally.bytes_equal += 1
        return
    pairs = [(a, b) for a, b in zip(ours, theirs, strict=False) if a != b] or [(str(len(ours)), str(len(theirs)))]
    reasons = [i for i in step.known_bytes if BYTES_KNOWN[i].matches(pairs[0][0], pairs[0][1])]
    if reasons:
        tally.bytes_known += 1
        tally.bytes_used.update(reasons)
        return
    tally.bytes_failures.append(f'{where}: {_first_difference(*pairs[0])}')


def _generated(step: Step, raws: list[bytes]) -> list[str]:
    """The names a server generated, as its object or its Status (in `details.name`) shows them."""
    names = []
    for raw in raws if len(raws) == 1 else []:
        try:
            body = json.loads(raw)
        except ValueError:
            continue
        meta = body.get('metadata') if isinstance(body, dict) else None
        if isinstance(meta, dict) and meta.get('generateName') and meta.get('name'):
            names.append(str(meta['name']))
        details = body.get('details') if isinstance(body, dict) else None
        if _generates(step.body) and isinstance(details, dict) and details.get('name'):
            names.append(str(details['name']))
    return names


def _first_difference(ours: str, theirs: str, context: int = 60) -> str:
    at = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), min(len(ours), len(theirs)))
    start = max(0, at - context)
    return f'at {at}: emulator=...{ours[start:at + context]!r} envtest=...{theirs[start:at + context]!r}'
