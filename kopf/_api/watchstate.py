"""The state of one list+watch stream and its `step` (kube-rs style): pure, no I/O.

The async shell (`watching`) feeds every list page and every watch event into `step()` and yields
what comes out; it asks the state where to continue: `needs_listing` (list first) or watch from
`resource_version`.

Rules:
- The initial listing yields each object as a `type: None` event, then `LISTED` once.
- A watch resumes from the last seen resourceVersion: of an object event, of a BOOKMARK, or of the list.
- BOOKMARKs move the resourceVersion forward and are never yielded.
- An ERROR with code 410 (Expired) means "re-list": the state forgets its resourceVersion. Any other
  ERROR is raised as the API error it describes.
- A re-list yields only differences from what was yielded before: ADDED for new objects, MODIFIED for
  changed ones, DELETED for objects that vanished meanwhile; unchanged objects are not yielded again.
  So a consumer never sees the same (uid, resourceVersion) twice.
- Per object, the state keeps its resourceVersion only: a vanished object's DELETED carries a stub
  (its uid, its last resourceVersion, the list's kind; the consumer knows the rest). With `keep_bodies`
  (a consumer whose handlers see a deletion's body: `on.event`, optional delete handlers), the last body
  of each object is kept too, and the DELETED carries it.
- An event with the same (uid, resourceVersion) as the last one yielded for that uid is swallowed.
- List items get the `kind` and `apiVersion` of the list (built-in lists omit them on items).
- With `streaming` (the initial listing streamed by the watch itself): ADDED events are the listing
  (yielded as `type: None`, not moving the resourceVersion) until the BOOKMARK annotated
  `k8s.io/initial-events-end`, which ends the listing: its resourceVersion is where to resume.
- `narrow()`: the selection changes (the replica's shards): objects outside it are forgotten without a
  DELETED (they still exist; another replica has them), and the re-list that follows yields the newly
  selected objects as listed (`type: None`, as at start), not as ADDED.
- A list page's `metadata.shardInfo.selector` (the server filtered it by a shard selector) is kept.
"""
import dataclasses
import enum
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final, Protocol

from kopf._api import apierrors

RawBody = dict[str, Any]
RawEvent = dict[str, Any]


Version = int | str | None  # a resourceVersion as kept per object: an int where it is one (28 bytes, not ~55)


def compact(rv: str | None) -> Version:
    """A resourceVersion as kept per object: Kubernetes' are decimal numbers (opaque ones are kept as they are)."""
    return int(rv) if rv is not None and rv.isdigit() and len(rv) < 19 else rv


class Missing(enum.Enum):
    MISSING = 'MISSING'  # an object not known before


MISSING = Missing.MISSING


class Marker(enum.Enum):
    LISTED = 'LISTED'  # the initial listing is done: every object that existed has been yielded

    def __repr__(self) -> str:
        return f'<{self.value}>'


LISTED = Marker.LISTED
StreamItem = RawEvent | Marker


@dataclasses.dataclass(frozen=True)
class Page:
    """One chunk of a LIST answer."""

    items: Sequence[RawBody]
    resource_version: str | None
    continue_token: str | None = None
    kind: str | None = None  # of the list, e.g. `ConfigMapList`
    api_version: str | None = None
    shard_info: str | None = None  # the server's normal form of the shard selector it filtered by

    @classmethod
    def from_list(cls, payload: Mapping[str, Any]) -> 'Page':
        meta = payload.get('metadata') or {}
        shard_info = meta.get('shardInfo')
        return cls(items=payload.get('items') or [], resource_version=meta.get('resourceVersion'),
                   continue_token=meta.get('continue') or None,
                   kind=payload.get('kind'), api_version=payload.get('apiVersion'),
                   shard_info=shard_info.get('selector') if isinstance(shard_info, Mapping) else None)


@dataclasses.dataclass
class WatchState:
    """Where a stream stands. Mutated by `step()` only (it is the stream's own, never shared)."""

    resource_version: str | None = None  # to watch from; None means "list first"
    listed: bool = False  # the initial listing has completed once (LISTED was yielded)
    known: dict[str, Version] = dataclasses.field(default_factory=dict)  # uid → resourceVersion (`compact()`)
    listing: set[str] | None = None  # uids seen so far in an ongoing (re-)listing
    streaming: bool = False  # the initial listing comes as watch events (`sendInitialEvents=true`)
    reselecting: bool = False  # a re-list after `narrow()`: new objects come as listed, not ADDED
    shard_info: str | None = None  # of the last list's first page (None: the server did not say it filtered)
    keep_bodies: bool = False  # keep each object's last body, for the DELETED of one that vanishes
    bodies: dict[str, RawBody] = dataclasses.field(default_factory=dict)  # uid → body (with `keep_bodies`)
    item_kind: str | None = None  # of the listed objects: for a vanished one's stub
    api_version: str | None = None

    def remember(self, uid: str, rv: Version, body: RawBody) -> Version | Missing:
        """Keep what is known of an object now; what was known before (MISSING if it was not known)."""
        previous = self.known.get(uid, MISSING)
        self.known[uid] = rv
        if self.keep_bodies:
            self.bodies[uid] = body
        return previous

    def vanish(self, uid: str) -> RawBody:
        """Forget an object; its last body (or a stub of it)."""
        rv = self.known.pop(uid, None)
        body = self.bodies.pop(uid, None)
        if body is not None:
            return body
        meta = {'uid': uid} if rv is None else {'uid': uid, 'resourceVersion': str(rv)}
        stub: RawBody = {'metadata': meta}
        if self.api_version:
            stub['apiVersion'] = self.api_version
        if self.item_kind:
            stub['kind'] = self.item_kind
        return stub

    @property
    def needs_listing(self) -> bool:
        return self.resource_version is None

    def restart_listing(self) -> None:
        """Forget a listing that broke midway (e.g. an expired `continue` token): list again from the start."""
        self.listing = None
        self.resource_version = None


def _key(body: Mapping[str, Any]) -> tuple[str, str | None]:
    meta = body.get('metadata') or {}
    uid = meta.get('uid') or f'{meta.get("namespace")}/{meta.get("name")}'
    return uid, meta.get('resourceVersion')


# The echo of our own write: the watch event of an object as a write's answer returned it is, from our local cluster
# (and kube-apiserver 1.34's, seen in tests/e2e/test_idle_records.py on envtest), that answer's very bytes in a
# MODIFIED event's envelope.
# Such a line is known by its hash, so that a consumer that awaits it and needs nothing of it (`kopf._engine.observing`)
# skips its parsing; a line that differs in any byte is parsed as any other.
ECHO_PREFIX: Final = b'{"type":"MODIFIED","object":'
ECHO_MASK: Final = (1 << 64) - 1
_UID_KEY: Final = b'"uid":"'


def echo_key(answer: bytes) -> int:
    """The key of the watch line that would carry this answer of a write (of `Echoes.match`): its hash, 64 bits."""
    return hash(ECHO_PREFIX + answer.strip() + b'}') & ECHO_MASK


def line_key(line: bytes) -> int:
    """The key of a watch line, as `echo_key()` makes it for an answer (the line's hash: kept by the bytes)."""
    return hash(line) & ECHO_MASK


def uids_in(line: bytes) -> Iterator[str]:
    """The values of `"uid"` keys in a line of JSON, in order: candidates only (a match is told by the hash)."""
    start = line.find(_UID_KEY)
    while start >= 0:
        start += len(_UID_KEY)
        end = line.find(b'"', start)
        if end < 0:
            return
        try:
            yield line[start:end].decode()
        except UnicodeDecodeError:
            pass
        start = line.find(_UID_KEY, end)


class Echoes(Protocol):
    """A consumer's knowledge of the echoes it awaits (`_api.watching` asks it before parsing a MODIFIED line)."""

    def match(self, line: bytes) -> tuple[str, str] | None:
        """The object's uid and resourceVersion if the line is an awaited echo that needs no parsing, else None."""

    def echoed(self, uid: str, rv: str) -> None:
        """The awaited echo has come (in the stream's order, as its event would have been yielded)."""


def step_echo(state: WatchState, uid: str, rv: str) -> bool:
    """Advance the state by a MODIFIED event of this object and resourceVersion, known without its body
    (an `Echoes.match`); whether it is yielded (False: the same (uid, resourceVersion) was yielded already).

    As `step()` with the event itself: only where bodies are not kept and the listing is not streamed.
    """
    state.resource_version = rv
    version = compact(rv)
    if state.known.get(uid, MISSING) == version:
        return False
    state.known[uid] = version
    return True


def step(state: WatchState, item: Page | Mapping[str, Any]) -> list[StreamItem]:
    """Advance the state by a list page or a raw watch event; return what to yield to the consumer."""
    if isinstance(item, Page):
        return _step_page(state, item)
    return _step_event(state, item)


def narrow(state: WatchState, keep: Callable[[str], bool]) -> list[str]:
    """The selection changed: forget the objects outside it (no DELETED), re-list; the uids forgotten."""
    dropped = [uid for uid in state.known if not keep(uid)]
    for uid in dropped:
        del state.known[uid]
        state.bodies.pop(uid, None)
    state.listing = None
    state.resource_version = None
    state.reselecting = state.listed
    return dropped


def _step_page(state: WatchState, page: Page) -> list[StreamItem]:
    if state.listing is None:
        state.listing = set()
        state.shard_info = page.shard_info
    item_kind = page.kind[:-4] if page.kind and page.kind.endswith('List') else None
    state.item_kind, state.api_version = item_kind or state.item_kind, page.api_version or state.api_version
    result: list[StreamItem] = []
    for body in page.items:
        if item_kind and 'kind' not in body:
            body['kind'] = item_kind
        if page.api_version and 'apiVersion' not in body:
            body['apiVersion'] = page.api_version
        uid, rv = _key(body)
        state.listing.add(uid)
        version = compact(rv)
        previous = state.remember(uid, version, body)
        if previous == version:
            pass  # unchanged since yielded (a re-list, or a listing restarted after an expired `continue`)
        elif not state.listed or (state.reselecting and previous is MISSING):
            result.append({'type': None, 'object': body})
        elif previous is MISSING:
            result.append({'type': 'ADDED', 'object': body})
        else:
            result.append({'type': 'MODIFIED', 'object': body})
    if page.continue_token:
        return result
    state.streaming = False
    for uid in [uid for uid in state.known if uid not in state.listing]:
        result.append({'type': 'DELETED', 'object': state.vanish(uid)})
    state.listing = None
    state.reselecting = False
    state.resource_version = page.resource_version or '0'
    if not state.listed:
        state.listed = True
        result.append(LISTED)
    return result


def _step_event(state: WatchState, event: Mapping[str, Any]) -> list[StreamItem]:
    etype = event.get('type')
    obj = event.get('object')
    if not isinstance(obj, dict):
        return []
    if etype == 'ERROR':
        code = obj.get('code')
        if code == 410:
            state.resource_version = None  # too old: re-list
            return []
        raise apierrors.map_error(code if isinstance(code, int) else 500, {'kind': 'Status', **obj})
    uid, rv = _key(obj)
    if state.streaming:
        return _step_streamed(state, etype, obj, uid, rv)
    if etype == 'BOOKMARK':
        if rv:
            state.resource_version = rv
        return []
    if etype not in ('ADDED', 'MODIFIED', 'DELETED'):
        return []
    if rv:
        state.resource_version = rv
    version = compact(rv)
    if rv is not None and state.known.get(uid, MISSING) == version:
        return []  # seen already
    if etype == 'DELETED':
        state.known.pop(uid, None)
        state.bodies.pop(uid, None)
    else:
        state.remember(uid, version, obj)
    return [{'type': etype, 'object': obj}]


INITIAL_EVENTS_END = 'k8s.io/initial-events-end'


def _step_streamed(state: WatchState, etype: Any, obj: RawBody, uid: str, rv: str | None) -> list[StreamItem]:
    if etype == 'BOOKMARK':
        annotations = (obj.get('metadata') or {}).get('annotations') or {}
        if annotations.get(INITIAL_EVENTS_END) != 'true':
            return []
        return _step_page(state, Page(items=[], resource_version=rv))  # ends the listing as its last page
    if etype not in ('ADDED', 'MODIFIED', 'DELETED'):
        return []
    if state.listing is None:
        state.listing = set()
    if etype == 'DELETED':
        known = uid in state.known
        state.known.pop(uid, None)
        state.bodies.pop(uid, None)
        state.listing.discard(uid)
        return [{'type': 'DELETED', 'object': obj}] if known else []
    state.listing.add(uid)
    version = compact(rv)
    if state.remember(uid, version, obj) == version:
        return []
    return [{'type': None, 'object': obj}]

