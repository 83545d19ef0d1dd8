"""List + watch of one resource in one namespace (or cluster-wide): an async iterator of events.

The decisions are `watchstate.step()`'s; here is only the waiting and talking:
- LIST (in chunks of `settings.watching.chunk_size` with `continue`, the next page asked for while the
  previous one is processed), then WATCH from the list's resourceVersion with `allowWatchBookmarks=true`
  (and `timeoutSeconds` = `server_timeout`). Items come in batches (`watch_batches`: a page's at once).
- A stream that ends, breaks or stays silent for `inactivity_timeout` is reopened from the last
  seen resourceVersion after `reconnect_backoff`; a 410 (in the stream or as an answer) re-lists.
- With `settings.watching.initial_streaming`, the first watch streams the initial listing itself
  (`sendInitialEvents=true`); if that stream breaks before the listing ends, it is LISTed instead
  (from scratch: objects the broken stream listed but the LIST lacks are yielded as DELETED).
- A stream that breaks with any transport error (a `ConnectionError`, a TLS error, any other `OSError`
  but a failed certificate verification) is reopened as well; it never ends the iterator.
- Opening a watch is retried forever (connection errors, 5xx, 429, 403); a 404 (the resource is
  gone from the cluster) ends the iterator with `APINotFoundError`. A 5xx ERROR event inside the
  stream reconnects (from the last resourceVersion); other ERROR events are raised.
"""
import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

from kopf._api import apierrors, transports, watchstate
from kopf._api import client as client_
from kopf._core import resources, selectors
from kopf._core import settings as settings_
from kopf._shared import encoding

logger = logging.getLogger('kopf._api.watching')


def _as_selector(key: Any) -> selectors.Selector:
    if isinstance(key, selectors.Selector):
        return key
    if isinstance(key, tuple):
        return selectors.parse_selector(*key)
    return selectors.parse_selector(key)


def server_side_selectors(settings: settings_.OperatorSettings, resource: resources.Resource) -> dict[str, str]:
    """The `labelSelector`, `fieldSelector`, `shardSelector` of `settings.watching` that apply to the resource.

    Label & field selectors of all matching entries are de-duplicated, sorted and joined with commas;
    of the shard selectors, only the first matching entry is used.
    """
    watching = settings.watching
    params: dict[str, str] = {}
    for name, mapping, joined in [('labelSelector', watching.label_selectors, True),
                                  ('fieldSelector', watching.field_selectors, True),
                                  ('shardSelector', watching.shard_selectors, False)]:
        values = [value for key, value in mapping.items() if value and _as_selector(key).check(resource)]
        if values:
            params[name] = ','.join(sorted(set(values))) if joined else values[0]
    return params


async def list_pages(
        client: client_.APIClient, resource: resources.Resource, namespace: str | None, *,
        params: Mapping[str, str] | None = None,
) -> AsyncIterator[watchstate.Page]:
    """The pages of a LIST; an expired `continue` token surfaces as an `APIClientError` with status 410.

    The next page is requested as soon as a page arrives, while the consumer processes that one (one page
    ahead at most): the server's time per page (~10 ms of 500 objects) overlaps ours, not adds to it.
    """
    chunk_size = client.settings.watching.chunk_size
    query = dict(params or {})
    if chunk_size is not None:
        query['limit'] = str(chunk_size)
    path = resource.get_url(namespace=namespace)
    fetching = asyncio.ensure_future(client.request('GET', path, params=dict(query)))
    try:
        while True:
            page = watchstate.Page.from_list(await fetching)
            if page.continue_token:
                query['continue'] = page.continue_token
                fetching = asyncio.ensure_future(client.request('GET', path, params=dict(query)))
            yield page
            if not page.continue_token:
                return
    finally:
        if not fetching.done():
            fetching.cancel()  # the consumer stopped early: the page ahead is not needed
        fetching.add_done_callback(_retrieved)


def _retrieved(task: asyncio.Future[Any]) -> None:
    """A page fetched ahead and never awaited: its failure is not "never retrieved" (the listing ended)."""
    if not task.cancelled():
        task.exception()


async def _listed(
        client: client_.APIClient, resource: resources.Resource, namespace: str | None,
        query: Mapping[str, str], state: watchstate.WatchState,
) -> AsyncIterator[list[watchstate.StreamItem]]:
    """The stream items of a (re-)listing, a page's at once. A frame of its own: the last page (with all the
    listed bodies of an unchunked listing) is released when the listing ends, not kept while the watch runs."""
    async for page in list_pages(client, resource, namespace, params=query):
        batch = watchstate.step(state, page)
        del page
        if batch:
            yield batch


SILENCE_SLACK = 0.001  # seconds: a silence this close to its limit when its timer runs is over (no re-arming spin)


class _Silence:
    """A stream's inactivity timeout as one timer, re-armed only when it runs: not a timeout scope per chunk.

    Only the time spent waiting for a chunk counts (`reading`, since `since`), as with a scope around each read:
    the consumer's time between chunks does not. When a wait reaches the limit, the response is closed: the read
    ends (or fails), and `_lines` raises TimeoutError for it.
    """

    __slots__ = ('expired', 'handle', 'loop', 'reading', 'response', 'since', 'timeout')

    def __init__(self, response: transports.StreamResponse, timeout: float) -> None:
        self.loop = asyncio.get_running_loop()
        self.response = response
        self.timeout = timeout
        self.reading = False
        self.expired = False
        self.since = self.loop.time()
        self.handle: asyncio.TimerHandle | None = self.loop.call_at(self.since + timeout, self._check)

    def _check(self) -> None:
        now = self.loop.time()
        if self.reading and now >= self.since + self.timeout - SILENCE_SLACK:
            self.handle = None
            self.expired = True
            self.response.close()
        else:  # a wait that began later, or the consumer's time: not silence
            self.handle = self.loop.call_at((self.since if self.reading else now) + self.timeout, self._check)

    def cancel(self) -> None:
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None


async def _lines(response: transports.StreamResponse, inactivity_timeout: float | None) -> AsyncIterator[bytes]:
    """Complete lines of a chunked body; TimeoutError if nothing at all arrives for the inactivity timeout."""
    silence = _Silence(response, inactivity_timeout) if inactivity_timeout is not None else None
    buffer = b''
    try:
        while True:
            if silence is None:
                chunk = await response.read_chunk()
            else:
                silence.reading, silence.since = True, silence.loop.time()
                try:
                    chunk = await response.read_chunk()
                except Exception:
                    if silence.expired:
                        raise TimeoutError(f'Nothing arrived for {inactivity_timeout}s.') from None
                    raise
                finally:
                    silence.reading = False
                if silence.expired:  # closed by the silence: its end is no end of the stream
                    raise TimeoutError(f'Nothing arrived for {inactivity_timeout}s.')
            if not chunk:
                return
            buffer += chunk
            if b'\n' in buffer:
                *lines, buffer = buffer.split(b'\n')
                for line in lines:
                    if line.strip():
                        yield line
    finally:
        if silence is not None:
            silence.cancel()


def _tell(client: client_.APIClient, resource: resources.Resource, what: str) -> None:
    observer = getattr(client, 'observer', None)  # metrics: connections and 410s per resource (None: off)
    if observer is not None:
        observer.watched(resource.name, what)


async def watch_objs(
        client: client_.APIClient,
        resource: resources.Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        shard_selector: str | None = None,
        state: watchstate.WatchState | None = None,
        keep_bodies: bool = False,
) -> AsyncIterator[watchstate.StreamItem]:
    """Every change of the resource's objects, once each (`watch_batches()`, one by one)."""
    async for batch in watch_batches(client, resource, namespace=namespace, label_selector=label_selector,
                                     field_selector=field_selector, shard_selector=shard_selector, state=state,
                                     keep_bodies=keep_bodies):
        for item in batch:
            yield item


async def watch_batches(
        client: client_.APIClient,
        resource: resources.Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        shard_selector: str | None = None,
        state: watchstate.WatchState | None = None,
        keep_bodies: bool = False,
        echoes: watchstate.Echoes | None = None,
) -> AsyncIterator[list[watchstate.StreamItem]]:
    """Every change of the resource's objects, once each: listed (type None), LISTED, then watch events; in
    batches: a list page's items, or a watch event's, at once (fewer async steps per object than one by one).

    `keep_bodies`: a vanished object's DELETED (found by a re-list) carries its last body, not a stub.
    `echoes`: a MODIFIED line that it knows as an awaited echo of the consumer's own write (`Echoes.match`) is
    not parsed nor yielded: the state advances as by its event, and the consumer is told (`Echoes.echoed`).
    `shard_selector` (the replica's shards) is sent unless `settings.watching.shard_selectors` has one
    for the resource (sent as given). Whether the server filtered: `state.shard_info` after each LIST.
    """
    state = state if state is not None else watchstate.WatchState(keep_bodies=keep_bodies)
    watching = client.settings.watching
    query = _query(client.settings, resource, label_selector, field_selector, shard_selector)
    where = f'{resource.name} in {namespace!r}' if namespace else f'{resource.name} cluster-wide'
    streamed = False  # the initial listing is streamed at most once; after a failure, it is listed
    while True:
        state.streaming = state.needs_listing and not state.listed and watching.initial_streaming and not streamed
        streamed = streamed or state.streaming
        if state.needs_listing and not state.streaming:
            state.restart_listing()  # uids seen by a streamed listing that broke midway are no listing's
            try:
                async for batch in _listed(client, resource, namespace, query, state):
                    yield batch
            except apierrors.APIClientError as exc:
                if exc.status != 410:
                    raise
                logger.info(f'The listing of {where} expired midway; listing again.')
                _tell(client, resource, 'expired')
                state.restart_listing()
                continue
        async for batch in _watched(client, resource, namespace, query, state, where, echoes):
            yield batch
        await asyncio.sleep(watching.reconnect_backoff)


def _query(settings: settings_.OperatorSettings, resource: resources.Resource, label_selector: str | None,
           field_selector: str | None, shard_selector: str | None) -> dict[str, str]:
    """The selectors of the LIST and WATCH: the settings', the caller's label/field selectors, the shards held."""
    query = server_side_selectors(settings, resource)
    if shard_selector and 'shardSelector' not in query:
        query['shardSelector'] = shard_selector
    for key, value in [('labelSelector', label_selector), ('fieldSelector', field_selector)]:
        if value:
            query[key] = ','.join(sorted({*query[key].split(','), value})) if key in query else value
    return query


async def _watched(
        client: client_.APIClient, resource: resources.Resource, namespace: str | None,
        query: Mapping[str, str], state: watchstate.WatchState, where: str,
        echoes: watchstate.Echoes | None = None,
) -> AsyncIterator[list[watchstate.StreamItem]]:
    """The items of one WATCH request, until it ends, breaks, stays silent, or needs a re-list (a 410)."""
    watching = client.settings.watching
    params = {'watch': 'true', 'allowWatchBookmarks': 'true', **query}
    if state.streaming:
        params.update(sendInitialEvents='true', resourceVersionMatch='NotOlderThan')
    else:
        params['resourceVersion'] = state.resource_version or '0'
    if watching.server_timeout is not None:
        params['timeoutSeconds'] = str(int(watching.server_timeout))
    try:
        backoffs = apierrors.endless_backoffs(client.settings.networking.error_backoffs)
        async with client.stream(resource.get_url(namespace=namespace), params=params, backoffs=backoffs) as response:
            _tell(client, resource, 'connected')
            async for line in _lines(response, watching.inactivity_timeout):
                if echoes is not None and line.startswith(watchstate.ECHO_PREFIX) and not state.streaming \
                        and not state.keep_bodies and (found := echoes.match(line)) is not None:
                    if watchstate.step_echo(state, *found):  # an awaited echo of our own write: not parsed
                        echoes.echoed(*found)
                    continue
                batch = watchstate.step(state, encoding.loads(line))
                if batch:
                    yield batch
                if state.needs_listing and not state.streaming:
                    logger.info(f'The watch of {where} is too old (410 Expired); re-listing.')
                    _tell(client, resource, 'expired')
                    return
    except apierrors.APIClientError as exc:
        if exc.status != 410:
            raise
        state.resource_version = None
        logger.info(f'The watch of {where} is too old (410 Expired); re-listing.')
        _tell(client, resource, 'expired')
    except apierrors.APIServerError as exc:  # an ERROR event in the stream: resume from the last RV
        logger.warning(f'The watch of {where} reported a server error ({exc}); reconnecting.')
    except TimeoutError:
        logger.info(f'The watch of {where} was silent for {watching.inactivity_timeout}s; reconnecting.')
    except OSError as exc:  # `http.TransportError`s, the OS's, TLS errors; aiohttp's are mapped to the former
        if not apierrors.is_retriable(exc):
            raise  # a certificate that fails verification: reconnecting does not heal it
        logger.info(f'The watch of {where} broke ({type(exc).__name__}: {exc}); reconnecting.')
