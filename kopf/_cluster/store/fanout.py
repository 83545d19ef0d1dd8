"""Watch fan-out: per-kind watcher sets fed synchronously by the store, never blocking writers.

Each change is serialised once (`Change.line`); every watcher gets the same bytes. Until a stream
is live (headers sent, initial events flushed), lines wait in a buffer; once live, the lines of one
event-loop iteration are flushed together by one `call_soon` callback straight into the connection's
transport as one HTTP chunk: no task switch per event, one syscall per batch. A watcher whose
transport buffer grows beyond the limit (a stuck client) is aborted.
"""
import asyncio
import functools
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from kopf._cluster import jsoncodec
from kopf._cluster.store.objectstore import Change, Key

Match = Callable[[Mapping[str, Any]], bool]


class Render(Protocol):
    """Builds a watcher's own lines (instead of the shared `Change.line` bytes)."""

    def __call__(self, type: str | None = None, *, change: Change) -> bytes: ...

    def added(self, obj: Mapping[str, Any]) -> bytes: ...


class Watcher:
    """One open watch stream's filter and pending output."""

    def __init__(self, key: Key, namespace: str | None, match: Match, selective: bool, limit: int) -> None:
        self.key = key
        self.namespace = namespace
        self.match = match
        self.selective = selective
        self.limit = limit
        self.buffer: list[bytes] = []
        self.wakeup = asyncio.Event()
        self.closed = False
        self.sink: Callable[[bytes], None] | None = None
        self.render: Render | None = None   # per-watcher lines (e.g. Tables) instead of the shared ones
        self.scheduled = False
        self.abort: Callable[[], None] | None = None
        self.ending = False   # a last line is buffered: nothing more is, and the stream ends once it is sent

    def offer(self, change: Change) -> None:
        if self.namespace is not None and change.namespace != self.namespace:
            return
        line: Callable[..., bytes] = change.line if self.render is None else functools.partial(self.render,
                                                                                               change=change)
        if not self.selective:
            self.push(line())
            return
        now = self.match(change.obj)
        if change.type == 'MODIFIED' and change.old is not None:
            before = self.match(change.old)
            if now and before:
                self.push(line())
            elif now:
                self.push(line('ADDED'))
            elif before:
                self.push(line('DELETED'))
        elif now:
            self.push(line())

    def push(self, line: bytes) -> None:
        if self.closed or self.ending:
            return
        self.buffer.append(line)
        if self.sink is not None:
            if not self.scheduled:
                self.scheduled = True
                asyncio.get_running_loop().call_soon(self.flush)
            return
        if len(self.buffer) > self.limit:
            self.overflow()
        self.wakeup.set()

    def flush(self) -> None:
        self.scheduled = False
        if self.buffer and self.sink is not None and not self.closed:
            self.sink(self.take())

    def go_live(self, sink: Callable[[bytes], None]) -> None:
        """From now on, write lines directly; the buffered ones go first, in one chunk."""
        if self.buffer:
            sink(self.take())
        self.sink = sink
        if self.ending:
            self.close()

    def end_with(self, line: bytes) -> None:
        """A last line (an ERROR event), then the end of the stream: at once if it is live; if not yet, after
        the lines buffered before it (its initial ones), as soon as they are sent (`go_live()`)."""
        if self.closed or self.ending:
            return
        if self.sink is None:
            self.buffer.append(line)
            self.ending = True
            self.wakeup.set()
            return
        self.flush()
        self.sink(line)
        self.close()

    def overflow(self) -> None:
        self.close()
        if self.abort is not None:
            self.abort()

    def close(self) -> None:
        self.closed = True
        self.buffer.clear()
        self.wakeup.set()

    def take(self, limit: int | None = None) -> bytes:
        """The buffered lines, joined; with `limit`: only the first ones, about `limit` bytes (one line at least)."""
        if limit is None:
            count = len(self.buffer)
        else:
            count, size = 0, 0
            for line in self.buffer:
                if count and size + len(line) > limit:
                    break
                count, size = count + 1, size + len(line)
        data = b''.join(self.buffer[:count])
        del self.buffer[:count]
        return data


class Hub:
    """All open watchers, by storage key; subscribe it to the store's listeners."""

    def __init__(self, bookmark_interval: float = 60.0, buffer_limit: int = 100_000,
                 transport_limit: int = 64 * 1024 * 1024) -> None:
        self.watchers: dict[Key, set[Watcher]] = {}
        self.bookmark_interval = bookmark_interval
        self.buffer_limit = buffer_limit          # lines buffered before a stream goes live
        self.transport_limit = transport_limit    # bytes unsent to a live client before it is cut off

    def __call__(self, change: Change) -> None:
        watchers = self.watchers.get(change.key)
        if watchers:
            for watcher in tuple(watchers):
                watcher.offer(change)

    def subscribe(self, key: Key, namespace: str | None, match: Match, selective: bool) -> Watcher:
        watcher = Watcher(key, namespace, match, selective, self.buffer_limit)
        self.watchers.setdefault(key, set()).add(watcher)
        return watcher

    def unsubscribe(self, watcher: Watcher) -> None:
        self.watchers.get(watcher.key, set()).discard(watcher)

    def close_all(self, abort: bool = False) -> int:
        count = 0
        for watchers in self.watchers.values():
            for watcher in tuple(watchers):
                watcher.close()
                if abort and watcher.abort is not None:
                    watcher.abort()
                count += 1
        return count

    def error_all(self, status: Mapping[str, Any]) -> int:
        """Send one ERROR event (a Status) to every open stream, then end them (as 410/500 do in real life)."""
        line = error(status)
        count = 0
        for watchers in self.watchers.values():
            for watcher in tuple(watchers):
                watcher.end_with(line)   # a stream not live yet gets it after its initial lines, not never
                count += 1
        return count

    def set_bookmark_interval(self, seconds: float) -> None:
        self.bookmark_interval = seconds
        for watchers in self.watchers.values():
            for watcher in watchers:
                watcher.wakeup.set()

    def count(self) -> int:
        return sum(len(w) for w in self.watchers.values())


def bookmark(kind: str, api_version: str, rv: int, initial_end: bool = False, custom: bool = False) -> bytes:
    """A BOOKMARK line: a built-in kind's in its Go struct's order, a custom one's keys sorted (unstructured)."""
    meta: dict[str, Any] = {'resourceVersion': str(rv)}
    if initial_end:
        meta['annotations'] = {'k8s.io/initial-events-end': 'true'}
    obj = {'kind': kind, 'apiVersion': api_version, 'metadata': meta}
    if custom:
        obj = {'apiVersion': api_version, 'kind': kind, 'metadata': dict(sorted(meta.items()))}
    return b'{"type":"BOOKMARK","object":' + jsoncodec.dumps(obj) + b'}\n'


def added(obj: Mapping[str, Any]) -> bytes:
    return b'{"type":"ADDED","object":' + jsoncodec.dumps(obj) + b'}\n'


def error(status: Mapping[str, Any]) -> bytes:
    return b'{"type":"ERROR","object":' + jsoncodec.dumps(status) + b'}\n'
