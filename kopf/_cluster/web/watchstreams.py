"""Serving one watch request: the starting point, then live lines, bookmarks and timeouts.

The starting point: after a given resourceVersion, the changes since then from the history (one ERROR
event, 410 Expired, if they are compacted away, or more than a stream buffers before it is live: as a real
watch cache that no longer has them); without one (or "0", or with `sendInitialEvents`), the current
objects as ADDED events first. These initial lines go out in chunks of about `BACKLOG_CHUNK` bytes, each
at the client's pace; the live lines then go straight into the connection.
"""
import asyncio
import random
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from kopf._cluster import jsoncodec, statuses
from kopf._cluster.apis.routing import Target
from kopf._cluster.pipeline.state import State
from kopf._cluster.store import fanout, reading
from kopf._cluster.store.fanout import Hub, Watcher
from kopf._cluster.store.objectstore import Change
from kopf._cluster.web import tables
from kopf._shared.resourcetable import Resource

TRUE = ('1', 't', 'T', 'true', 'TRUE', 'True')
FUTURE_RV_WAIT = 3.0
BACKLOG_CHUNK = 1024 * 1024   # bytes of initial lines per HTTP chunk


class Streams:
    """Opens watch streams over the hub; `max_timeout` bounds streams without `timeoutSeconds`."""

    def __init__(self, state: State, hub: Hub, max_timeout: float = 1800.0) -> None:
        self.state = state
        self.hub = hub
        self.max_timeout = max_timeout

    async def serve(self, request: web.Request, target: Target, params: Mapping[str, str]) -> web.StreamResponse:
        initial = params.get('sendInitialEvents') in TRUE
        bookmarks = params.get('allowWatchBookmarks') in TRUE
        if 'sendInitialEvents' in params or 'resourceVersionMatch' in params:
            _check_initial_events(params)
        shards = self.state.settings.shard_selectors
        match = reading.object_matcher(target, params)
        seconds = _timeout(params.get('timeoutSeconds'), self.max_timeout)   # a bad value: a 400 before streaming
        if shards and params.get('shardSelector'):   # the storage parses it: after the handler's checks
            match = reading.object_matcher(target, params, shards)
        await self.wait_for_rv(params.get('resourceVersion') or '')
        selective = bool(params.get('labelSelector') or params.get('fieldSelector') or target.name
                         or (shards and params.get('shardSelector')))
        response = web.StreamResponse(status=200, headers={'Content-Type': 'application/json'})
        response.enable_chunked_encoding()
        watcher = self.hub.subscribe(target.resource.key, target.namespace, match, selective)
        if (version := tables.negotiate(request.headers.get('Accept', ''))) is not None:
            watcher.render = TableLines(target.resource, tables.include_object(params), version)
        try:
            first = self._start(target, watcher, params.get('resourceVersion') or '', initial)
            await response.prepare(request)
            if first is not None:
                await response.write(first)
            else:
                await _send_backlog(response, watcher)
                self._go_live(request, watcher)
                await self._pump(watcher, target, seconds, bookmarks)
            await response.write_eof()
        except (ConnectionResetError, ConnectionError):
            pass
        finally:
            self.hub.unsubscribe(watcher)
        return response

    async def wait_for_rv(self, rv: str) -> None:
        """A resourceVersion from the future: wait up to 3 s (as a real watch cache does), then answer 504."""
        requested = int(rv) if rv.isdigit() else 0
        loop = asyncio.get_running_loop()
        deadline = loop.time() + FUTURE_RV_WAIT
        while requested > self.state.store.rv:
            if loop.time() >= deadline:
                raise statuses.too_large_rv(requested, self.state.store.rv)
            await asyncio.sleep(0.05)

    def _go_live(self, request: web.Request, watcher: Watcher) -> None:
        transport = request.transport
        if transport is None or transport.is_closing():
            raise ConnectionResetError('the client has gone')
        limit = self.hub.transport_limit

        def sink(data: bytes) -> None:
            if transport.is_closing():
                watcher.close()
                return
            transport.write(b'%x\r\n%b\r\n' % (len(data), data))
            if transport.get_write_buffer_size() > limit:
                watcher.overflow()

        watcher.abort = transport.abort
        watcher.go_live(sink)

    def _start(self, target: Target, watcher: Watcher, rv: str, initial: bool) -> bytes | None:
        """Queue the initial lines; returns a final ERROR line instead if the RV is too old."""
        store = self.state.store
        resource = target.resource
        if not rv or rv == '0' or initial:
            for obj in store.iterate(resource.key, target.namespace):
                if watcher.match(obj):
                    line = fanout.added(obj) if watcher.render is None else watcher.render.added(obj)
                    watcher.buffer.append(line)
            if initial:
                watcher.buffer.append(_bookmark(resource, store.rv, True))
            return None
        try:
            since = int(rv)
        except ValueError:
            raise statuses.bad_request(f'invalid resource version: {rv}') from None
        changes = store.changes_since(resource.key, since)
        if changes is None:
            status = statuses.expired(f'too old resource version: {since} ({store.compacted + 1})').status()
            status.pop('details', None)
            return fanout.error(status)
        for change in changes:
            watcher.offer(change)
        if watcher.closed:   # overflowed: more changes than a stream buffers before it is live
            status = statuses.expired(f'too old resource version: {since} ({store.rv})').status()
            status.pop('details', None)
            return fanout.error(status)
        return None

    async def _pump(self, watcher: Watcher, target: Target, seconds: float, bookmarks: bool) -> None:
        """Live lines bypass this loop (see `Watcher.sink`); it only keeps time: bookmarks and the deadline."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        last_bookmark = loop.time()
        resource = target.resource
        while not watcher.closed:
            now = loop.time()
            if now >= deadline:
                break
            interval = self.hub.bookmark_interval
            if bookmarks and now >= last_bookmark + interval:
                watcher.push(_bookmark(resource, self.state.store.rv))
                last_bookmark = now
                continue
            watcher.wakeup.clear()
            until = min(deadline, last_bookmark + interval) if bookmarks else deadline
            try:
                async with asyncio.timeout(max(0.0, until - now)):   # not wait_for: it may swallow cancels
                    await watcher.wakeup.wait()
            except TimeoutError:
                pass
        if bookmarks and not watcher.closed:
            watcher.push(_bookmark(resource, self.state.store.rv))


class TableLines:
    """Watch lines whose objects are one-row Tables (kubectl `get -w`); column definitions only at first."""

    def __init__(self, resource: Resource, include: str = 'Metadata', version: str = 'v1') -> None:
        self.resource = resource
        self.include = include   # ?includeObject=
        self.version = version   # of meta.k8s.io's Table
        self.headers = True

    def __call__(self, type: str | None = None, *, change: Change) -> bytes:
        obj = change.obj
        if type == 'DELETED' and change.type == 'MODIFIED' and change.old is not None:
            obj = jsoncodec.loads(change.line('DELETED'))['object']
        return self._line(type or change.type, obj)

    def added(self, obj: Mapping[str, Any]) -> bytes:
        return self._line('ADDED', obj)

    def _line(self, type: str, obj: Mapping[str, Any]) -> bytes:
        meta = {'resourceVersion': obj['metadata'].get('resourceVersion', '')}
        body = tables.table(self.resource, [obj], meta, headers=self.headers, include=self.include,
                            version=self.version)
        self.headers = False
        return b'{"type":"' + type.encode() + b'","object":' + jsoncodec.dumps(body) + b'}\n'


async def _send_backlog(response: web.StreamResponse, watcher: Watcher) -> None:
    """The initial lines in chunks of about `BACKLOG_CHUNK` bytes, each written at the client's pace (and the
    lines that come meanwhile after them). All in one write, a backlog beyond the hub's `transport_limit`
    (e.g. a watch from before 100,000 changes of 1 KB: the echoes of a long resume) would cut the stream off
    before its first event, and the client, retrying from the same point, would never get past it."""
    while watcher.buffer and not watcher.closed:
        await response.write(watcher.take(BACKLOG_CHUNK))


def _timeout(value: str | None, maximum: float) -> float:
    if value:
        try:
            return max(0.0, float(value))
        except ValueError:
            raise statuses.bad_request(f'invalid timeoutSeconds: {value}') from None
    return maximum * (1 + random.random())


def _check_initial_events(params: Mapping[str, str]) -> None:
    """The watch's `sendInitialEvents` and `resourceVersionMatch`, validated as a real server does."""
    match, causes = params.get('resourceVersionMatch'), []
    if 'sendInitialEvents' in params and match != 'NotOlderThan':
        causes.append(statuses.cause('FieldValueForbidden', 'resourceVersionMatch',
                                     'Forbidden: sendInitialEvents requires setting resourceVersionMatch to '
                                     'NotOlderThan'))
    if match and 'sendInitialEvents' not in params:
        causes.append(statuses.cause('FieldValueForbidden', 'resourceVersionMatch',
                                     'Forbidden: resourceVersionMatch is forbidden for watch unless '
                                     'sendInitialEvents is provided'))
    if match and match != 'NotOlderThan':
        causes.append(statuses.cause('FieldValueNotSupported', 'resourceVersionMatch',
                                     f'Unsupported value: "{match}": supported values: "NotOlderThan"'))
    if causes:
        raise statuses.invalid('ListOptions', 'meta.k8s.io', '', causes)


def _bookmark(resource: Resource, rv: int, initial_end: bool = False) -> bytes:
    return fanout.bookmark(resource.kind, resource.api_version, rv, initial_end, resource.custom)
