"""Kubernetes Events about objects: `kopf.event/info/warn/exception` and the background poster.

Rules:
- The public functions never block and never fail a handler: they queue the events to the poster of
  the running operator (found in a context variable; callable from sync handlers in threads too).
- The poster posts each object's events in order through one worker per object (keyed by uid, else
  by apiVersion/kind/namespace/name); different objects are posted concurrently, up to
  `posting.worker_limit`; an idle worker exits after `posting.idle_timeout`.
- Events about core v1 Events are dropped (they would echo forever). A message over 1024 chars is cut
  in the middle with `...`. Cluster-scoped objects' events go to the credentials' default namespace,
  else `default` (and `default` if the server refuses the former: it accepts cluster-scoped objects'
  events only in `default` and `kube-system`). A 404 (the object's namespace is gone) is dropped
  quietly; other errors are logged.
"""
import asyncio
import contextvars
import dataclasses
import datetime
import logging
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kopf._api import apierrors
from kopf._api import client as client_
from kopf._core import settings as settings_

logger = logging.getLogger('kopf._api.events')

MAX_MESSAGE_LENGTH = 1024
CUT_MARK = '...'


def truncate(message: str, limit: int = MAX_MESSAGE_LENGTH) -> str:
    """Cut an over-long message in the middle, keeping its head and tail: `head...tail`, `limit` chars in all."""
    if len(message) <= limit:
        return message
    room = limit - len(CUT_MARK)
    head = room - room // 2
    return message[:head] + CUT_MARK + message[len(message) - room // 2:]


def is_core_event(body: Mapping[str, Any]) -> bool:
    return body.get('apiVersion') == 'v1' and body.get('kind') == 'Event'


def object_reference(body: Mapping[str, Any]) -> dict[str, Any]:
    meta = body.get('metadata') or {}
    ref = {'apiVersion': body.get('apiVersion'), 'kind': body.get('kind'),
           'name': meta.get('name'), 'uid': meta.get('uid'), 'namespace': meta.get('namespace')}
    return {key: value for key, value in ref.items() if value is not None}


def build_event(ref: Mapping[str, Any], *, type: str, reason: str, message: str,
                settings: settings_.OperatorSettings, now: datetime.datetime,
                default_namespace: str | None = None) -> dict[str, Any]:
    """The core v1 Event body as kopf posts it (no apiVersion/kind: the URL says it)."""
    stamp = now.isoformat()
    posting = settings.posting
    return {
        'metadata': {'namespace': ref.get('namespace') or default_namespace or 'default',
                     'generateName': posting.event_name_prefix},
        'action': 'Action?',
        'type': type,
        'reason': reason,
        'message': truncate(message),
        'reportingComponent': posting.reporting_component,
        'reportingInstance': posting.reporting_instance,
        'source': {'component': posting.reporting_component},
        'involvedObject': dict(ref),
        'firstTimestamp': stamp,
        'lastTimestamp': stamp,
        'eventTime': stamp,
    }


async def post_event(client: client_.APIClient, ref: Mapping[str, Any], *, type: str, reason: str,
                     message: str = '', backoffs: apierrors.Backoffs = client_.DEFAULT) -> None:
    """Post one event now; errors are logged, never raised."""
    if _is_event(ref):
        return
    settings = client.settings
    try:
        namespace = ref.get('namespace') or await client.default_namespace()
        body = build_event(ref, type=type, reason=reason, message=message, settings=settings,
                           now=datetime.datetime.now(datetime.UTC), default_namespace=namespace)
        backoffs = settings.posting.default_backoffs if backoffs is client_.DEFAULT else backoffs
        try:
            await client.request('POST', f'/api/v1/namespaces/{body["metadata"]["namespace"]}/events',
                                 payload=body, backoffs=backoffs)
        except apierrors.APIUnprocessableEntityError:
            # A cluster-scoped object's event is valid only in `default` or `kube-system` (real servers say so).
            if ref.get('namespace') or body['metadata']['namespace'] in ('default', 'kube-system'):
                raise
            body['metadata']['namespace'] = 'default'
            await client.request('POST', '/api/v1/namespaces/default/events', payload=body, backoffs=backoffs)
    except apierrors.APINotFoundError:
        logger.debug(f'The event {reason!r} about {_describe(ref)} is dropped: its namespace is gone.')
    except (apierrors.APIError, apierrors.LoginError, OSError, TimeoutError) as exc:
        logger.warning(f'Failed to post an event {reason!r} about {_describe(ref)}: {exc}. Ignoring.')


def _is_event(ref: Mapping[str, Any]) -> bool:
    """An event about an Event: dropped, never posted."""
    return ref.get('apiVersion') == 'v1' and ref.get('kind') == 'Event'


def _describe(ref: Mapping[str, Any]) -> str:
    return f'{ref.get("kind")} {ref.get("namespace") or ""}/{ref.get("name")}'.replace(' /', ' ')


@dataclasses.dataclass(frozen=True)
class _Queued:
    ref: Mapping[str, Any]
    type: str
    reason: str
    message: str
    backoffs: apierrors.Backoffs


class EventPoster:
    """The background poster: `enqueue()` from anywhere (any thread), `run()` as one task of the operator."""

    def __init__(self, client: client_.APIClient) -> None:
        self._client = client
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queues: dict[Any, asyncio.Queue[_Queued]] = {}
        self._workers: set[asyncio.Task[None]] = set()
        self._semaphore: asyncio.Semaphore | None = None
        self._pending: list[_Queued] = []
        self._lock = threading.Lock()
        self._inflight = 0  # dispatched, not yet posted
        self._idle = asyncio.Event()

    def enqueue(self, ref: Mapping[str, Any], *, type: str, reason: str, message: str = '',
                backoffs: apierrors.Backoffs = client_.DEFAULT) -> None:
        """Queue an event (never blocks; thread-safe); posted by the running poster."""
        if _is_event(ref):
            return
        item = _Queued(ref, type, reason, message, backoffs)
        with self._lock:
            loop = self._loop
            if loop is None:
                self._pending.append(item)
                return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._dispatch(item)
        else:
            loop.call_soon_threadsafe(self._dispatch, item)

    def _dispatch(self, item: _Queued) -> None:
        ref = item.ref
        key = ref.get('uid') or (ref.get('apiVersion'), ref.get('kind'), ref.get('namespace'), ref.get('name'))
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = asyncio.Queue()
            task = asyncio.create_task(self._worker(key, queue), name=f'kopf event poster for {_describe(ref)}')
            self._workers.add(task)
            task.add_done_callback(self._workers.discard)
        self._inflight += 1
        queue.put_nowait(item)

    async def _worker(self, key: Any, queue: asyncio.Queue[_Queued]) -> None:
        posting = self._client.settings.posting
        try:
            while True:
                try:
                    async with asyncio.timeout(posting.idle_timeout):
                        item = await queue.get()
                except TimeoutError:
                    if queue.empty():
                        return
                    continue
                assert self._semaphore is not None
                try:
                    async with self._semaphore:
                        await post_event(self._client, item.ref, type=item.type, reason=item.reason,
                                         message=item.message, backoffs=item.backoffs)
                finally:
                    self._done()
        finally:
            if self._queues.get(key) is queue:
                del self._queues[key]
            for item in _drain(queue):  # arrived after the idle timeout fired: re-dispatch
                self._done()
                if self._loop is not None:
                    self._dispatch(item)

    def _done(self) -> None:
        self._inflight -= 1
        if not self._inflight:
            self._idle.set()

    async def run(self) -> None:
        """Post queued events until cancelled; then the workers stop too (what is unsent is dropped)."""
        limit = self._client.settings.posting.worker_limit
        self._semaphore = asyncio.Semaphore(limit) if limit else asyncio.Semaphore(sys.maxsize)
        with self._lock:
            self._loop = asyncio.get_running_loop()
            pending, self._pending = self._pending, []
        for item in pending:
            self._dispatch(item)
        try:
            await asyncio.Future()
        finally:
            with self._lock:
                self._loop = None
            for task in list(self._workers):
                task.cancel()
            await asyncio.gather(*self._workers, return_exceptions=True)

    async def flush(self) -> None:
        """Wait until everything queued so far is posted (for orderly exits and tests)."""
        while self._inflight:
            self._idle.clear()
            await self._idle.wait()


def _drain(queue: asyncio.Queue[_Queued]) -> list[_Queued]:
    items = []
    while not queue.empty():
        items.append(queue.get_nowait())
    return items


# The public API: `kopf.event/info/warn/exception`, bound to the running operator's poster & settings.

poster_var: contextvars.ContextVar[EventPoster] = contextvars.ContextVar('kopf_event_poster')

Objs = Mapping[str, Any] | Iterable[Any]


def _flatten(objs: Objs) -> list[Mapping[str, Any]]:
    if isinstance(objs, Mapping):
        return [objs]
    raw = getattr(objs, 'obj', None)  # pykube objects
    if isinstance(raw, Mapping):
        return [raw]
    to_dict: Callable[[], Any] | None = getattr(objs, 'to_dict', None)  # kubernetes client models
    if callable(to_dict) and not isinstance(objs, (list, tuple, set)):
        converted = to_dict()
        return [_from_model(converted)] if isinstance(converted, Mapping) else []
    result: list[Mapping[str, Any]] = []
    for obj in objs:
        result.extend(_flatten(obj))
    return result


def _from_model(converted: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = converted.get('metadata') or {}
    return {'apiVersion': converted.get('api_version'), 'kind': converted.get('kind'), 'metadata': meta}


def _poster() -> EventPoster:
    try:
        return poster_var.get()
    except LookupError:
        raise RuntimeError('Events can be posted only from within a running operator '
                           '(handlers, daemons, timers, activities).') from None


def event(objs: Objs, *, type: str, reason: str, message: str = '', backoffs: apierrors.Backoffs = None) -> None:
    """Post a Kubernetes Event of any `type` about the object (a body) or objects (several), in the background.

    Not when `settings.posting.enabled` is false. Only from within a running operator (handlers,
    daemons, timers, activities): elsewhere, a `RuntimeError`.
    """
    poster = _poster()
    if not poster._client.settings.posting.enabled:
        return
    _post(poster, objs, type=type, reason=reason, message=message, backoffs=backoffs)


def info(objs: Objs, *, reason: str, message: str = '', backoffs: apierrors.Backoffs = None) -> None:
    """Post a `Normal` Event, as `kopf.event()` does, if `settings.posting.level` is INFO or lower."""
    poster = _poster()
    posting = poster._client.settings.posting
    if posting.enabled and posting.level <= logging.INFO:
        _post(poster, objs, type='Normal', reason=reason, message=message, backoffs=backoffs)


def warn(objs: Objs, *, reason: str, message: str = '', backoffs: apierrors.Backoffs = None) -> None:
    """Post a `Warning` Event if `settings.posting.level` is WARNING or lower (even if posting is disabled)."""
    poster = _poster()
    if poster._client.settings.posting.level <= logging.WARNING:  # the `enabled` flag is not checked (as upstream)
        _post(poster, objs, type='Warning', reason=reason, message=message, backoffs=backoffs)


def exception(objs: Objs, *, reason: str = '', message: str = '', exc: BaseException | None = None,
              backoffs: apierrors.Backoffs = None) -> None:
    """Post an `Error` Event about an exception (`exc`, or the one being handled) if the level lets ERROR through.

    The exception is appended to `message`; its class name is the `reason` unless one is given.
    """
    poster = _poster()
    posting = poster._client.settings.posting
    if exc is None:
        exc = sys.exc_info()[1]
    reason = reason or (type(exc).__name__ if exc is not None else '')
    message = f'{message} {exc}'.strip() if exc is not None else message
    if posting.enabled and posting.level <= logging.ERROR:
        _post(poster, objs, type='Error', reason=reason, message=message, backoffs=backoffs)


def _post(poster: EventPoster, objs: Objs, *, type: str, reason: str, message: str,
          backoffs: apierrors.Backoffs) -> None:
    for body in _flatten(objs):
        if is_core_event(body):
            continue
        poster.enqueue(object_reference(body), type=type, reason=reason, message=message,
                       backoffs=client_.DEFAULT if backoffs is None else backoffs)
