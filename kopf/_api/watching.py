"""List + watch of one resource in one namespace (or cluster-wide): an async iterator of events.

The decisions are `streams.step()`'s; here is only the waiting and talking:
- LIST (in chunks of `settings.watching.chunk_size` with `continue`), then WATCH from the list's
  resourceVersion with `allowWatchBookmarks=true` (and `timeoutSeconds` = `server_timeout`).
- A stream that ends, breaks or stays silent for `inactivity_timeout` is reopened from the last
  seen resourceVersion after `reconnect_backoff`; a 410 (in the stream or as an answer) re-lists.
- Opening a watch is retried forever (connection errors, 5xx, 429, 403); a 404 (the resource is
  gone from the cluster) ends the iterator with `APINotFoundError`.
"""
import asyncio
import itertools
import json
import logging
from collections.abc import AsyncIterator, Iterator, Mapping

import aiohttp

from kopf._api import client as client_
from kopf._api import errors, streams
from kopf._model import resources

logger = logging.getLogger('kopf._api.watching')


def _forever(backoffs: errors.Backoffs) -> Iterator[float]:
    """The backoffs, then the last of them forever (watch streams are never given up)."""
    last = 1.0
    for last in errors.iter_backoffs(backoffs):
        yield last
    yield from itertools.repeat(last)


async def list_pages(
        client: client_.APIClient, resource: resources.Resource, namespace: str | None, *,
        params: Mapping[str, str] | None = None,
) -> AsyncIterator[streams.Page]:
    """The pages of a LIST; an expired `continue` token surfaces as an `APIClientError` with status 410."""
    chunk_size = client.settings.watching.chunk_size
    query = dict(params or {})
    if chunk_size is not None:
        query['limit'] = str(chunk_size)
    path = resource.get_url(namespace=namespace)
    while True:
        payload = await client.request('GET', path, params=query)
        page = streams.Page.from_list(payload)
        yield page
        if not page.continue_token:
            return
        query['continue'] = page.continue_token


async def _lines(response: aiohttp.ClientResponse, inactivity_timeout: float | None) -> AsyncIterator[bytes]:
    """Complete lines of a chunked body; TimeoutError if nothing at all arrives for the inactivity timeout."""
    buffer = b''
    while True:
        async with asyncio.timeout(inactivity_timeout):
            chunk = await response.content.readany()
        if not chunk:
            return
        buffer += chunk
        if b'\n' in buffer:
            *lines, buffer = buffer.split(b'\n')
            for line in lines:
                if line.strip():
                    yield line


async def watch_objs(
        client: client_.APIClient,
        resource: resources.Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        state: streams.WatchState | None = None,
) -> AsyncIterator[streams.StreamItem]:
    """Every change of the resource's objects, once each: listed (type None), LISTED, then watch events."""
    state = state if state is not None else streams.WatchState()
    watching = client.settings.watching
    selectors = {key: value for key, value in [('labelSelector', label_selector),
                                                ('fieldSelector', field_selector)] if value}
    where = f'{resource.name} in {namespace!r}' if namespace else f'{resource.name} cluster-wide'
    path = resource.get_url(namespace=namespace)
    while True:
        if state.needs_listing:
            try:
                async for page in list_pages(client, resource, namespace, params=selectors):
                    for item in streams.step(state, page):
                        yield item
            except errors.APIClientError as exc:
                if exc.status != 410:
                    raise
                logger.info(f'The listing of {where} expired midway; listing again.')
                state.restart_listing()
                continue
        params = {'watch': 'true', 'allowWatchBookmarks': 'true', **selectors}
        params['resourceVersion'] = state.resource_version or '0'
        if watching.server_timeout is not None:
            params['timeoutSeconds'] = str(int(watching.server_timeout))
        try:
            async with client.stream(path, params=params,
                                     backoffs=_forever(client.settings.networking.error_backoffs)) as response:
                async for line in _lines(response, watching.inactivity_timeout):
                    for item in streams.step(state, json.loads(line)):
                        yield item
                    if state.needs_listing:
                        logger.info(f'The watch of {where} is too old (410 Expired); re-listing.')
                        break
        except errors.APIClientError as exc:
            if exc.status != 410:
                raise
            state.resource_version = None
            logger.info(f'The watch of {where} is too old (410 Expired); re-listing.')
        except TimeoutError:
            logger.info(f'The watch of {where} was silent for {watching.inactivity_timeout}s; reconnecting.')
        except (aiohttp.ClientError, ConnectionError) as exc:
            logger.info(f'The watch of {where} broke ({type(exc).__name__}: {exc}); reconnecting.')
        await asyncio.sleep(watching.reconnect_backoff)
