"""Which resources and namespaces are served, found at runtime; one watcher per (resource, namespace).

- Every resource selector of the registry is resolved through discovery; a name without a group
  that several non-core groups serve is not served (one warning naming them all, as upstream); one
  that resolves to nothing gets one warning naming it, and is served as soon as its CRD appears (the CRDs are
  watched unless `settings.scanning.disabled`). With `settings.scanning.disabled`, the namespaces
  are not watched either: of globbed patterns, only the plain names in them are served (one warning).
- Before the first watch of a resource, its schema decides where progress and the diff-base are
  kept (`kopf._storage.fitting`: one warning per pruned status field, naming the resource).
- Namespaces: cluster-wide (`-A`, or none given, or a cluster-scoped resource); else one watcher per
  namespace: the names given exactly, or, for globs and exclusions, the matching namespaces as they
  appear (the namespaces are watched; a deleted namespace's watchers stop).
- A watcher whose resource disappears (404: its CRD was deleted) ends quietly; it is restarted if
  the resource comes back.
- On a CRD event, discovery is refreshed only as far as the selectors need: if every selector names
  its group (and is not a callable), only the CRD's group, if a selector names it (nothing else can
  have changed); else the full scan.
- Re-checks: while a group-version is skipped by discovery (it answered 5xx: an API server restarting,
  a broken aggregated API), one background task re-reads the skipped groups after `RECHECK_BACKOFFS`
  (1, 2, 4 ... 60 s, then every 60 s) and serves what the selectors find there; one info line names a
  skipped group-version that answers again and what is served of it. Selectors that are unresolved for
  another reason (no such CRD yet) wait for CRD events, as before: no polling of the discovery.
  No task runs while nothing is skipped.
- Pausing (`kopf._engine.scopes`, by peering): a watcher whose scope is paused stops its stream (in-
  flight cycles finish; daemons and timers stop) and waits; resuming starts a new stream, which
  re-lists. The streams of indexed resources go on while paused (only the indices are fed) and
  re-list when resumed.
"""
import asyncio
import dataclasses
import logging
from collections.abc import Collection, Mapping
from typing import Any

from kopf._api import apierrors, discovery, namespaces, watching, watchstate
from kopf._core import handlers, records, resources, selectors
from kopf._core.causes import Reason
from kopf._engine import contexts, queueing
from kopf._storage import fitting

logger = logging.getLogger('kopf.reactor.observing')

CRDS = resources.Resource('apiextensions.k8s.io', 'v1', 'customresourcedefinitions',
                          kind='CustomResourceDefinition', namespaced=False)
NAMESPACES = resources.Resource('', 'v1', 'namespaces', kind='Namespace', namespaced=False)
BUILTIN_SCHEMA: Mapping[str, Any] = {'type': 'object'}  # built-ins keep no unknown status fields
RECHECK_BACKOFFS: tuple[float, ...] = (1, 2, 4, 8, 16, 32, 60)  # then the last one, for as long as needed


@dataclasses.dataclass(frozen=True)
class Scope:
    """Where to watch: cluster-wide, or the namespaces matching the patterns."""

    clusterwide: bool = True
    patterns: Collection[str] = ()
    _served: dict[str, bool] = dataclasses.field(default_factory=dict, compare=False, repr=False)

    @property
    def discovering(self) -> bool:
        """Whether the namespaces must be listed (globs, exclusions) rather than named exactly."""
        return not self.clusterwide and namespaces.exact_names(self.patterns) is None

    def watch_namespaces(self, resource: resources.Resource, discovered: Collection[str] = ()) -> list[str | None]:
        """Where to watch the resource: None for cluster-wide, else the namespaces one by one."""
        if self.clusterwide or not resource.namespaced:
            return [None]
        exact = namespaces.exact_names(self.patterns)
        names = exact if exact is not None else [n for n in discovered if namespaces.match_any(n, self.patterns)]
        return list(sorted(names))

    def serves(self, namespace: str | None) -> bool:
        """Whether the namespace is served (memoised: this is asked for every event)."""
        if self.clusterwide or namespace is None:
            return True
        served = self._served.get(namespace)
        if served is None:
            served = self._served[namespace] = namespaces.match_any(namespace, self.patterns)
        return served


class Observer:
    """Serves the registry's resources: resolves them, fits their storages, spawns their watchers."""

    def __init__(self, ctx: contexts.OperatorContext, scope: Scope, tg: asyncio.TaskGroup) -> None:
        self.ctx = ctx
        self.scope = scope
        self.tg = tg
        self.discovery = discovery.Discovery(ctx.client)
        self.served: dict[resources.Resource, contexts.ResourceContext] = {}
        ctx.served = self.served  # the shards' takeovers and releases find the records here
        ctx.metrics.observe(self.served)  # its objects are counted at scrape time
        self.watchers: dict[tuple[resources.Resource, str | None], asyncio.Task[None]] = {}
        self.warned: set[selectors.Selector] = set()
        self.ambiguous: set[selectors.Selector] = set()  # warned about, not served
        self.unresolved: set[selectors.Selector] = set()
        self.discovered: set[str] = set()
        self.rechecking: asyncio.Task[None] | None = None
        self._refreshing = asyncio.Lock()  # the CRD events' refreshes and the re-checks' ones, one at a time

    async def run(self) -> None:
        scanning = not self.ctx.settings.scanning.disabled
        if self.scope.discovering and not scanning:  # no listing of namespaces: only plain names are served
            self.discovered.update(namespaces.plain_names(self.scope.patterns))
            logger.warning(f'settings.scanning.disabled: the namespaces matching {list(self.scope.patterns)} are '
                           f'not looked for; served are only those named exactly: {sorted(self.discovered)}.')
        if self.ctx.indexing is not None and self.scope.discovering and scanning:
            self.ctx.indexing.parts.add('namespaces')  # the start waits for the namespaces' listing too
        if self.scope.discovering and scanning:
            self.tg.create_task(self.watch_namespaces(), name='kopf namespaces watcher')
        await self.refresh()
        if self.ctx.indexing is not None:
            self.ctx.indexing.serving_started('resources')  # the indexed resources found now are being listed
        if self.ctx.settings.scanning.disabled:
            return
        logger.debug(f'Starting the watch-stream for {_where(CRDS, None)}.')
        try:
            async for item in watching.watch_objs(self.ctx.client, CRDS):
                if item is watchstate.LISTED:
                    if self.unresolved and not self.rechecks_needed:  # a CRD made since the discovery: look again
                        await self.refresh()
                elif item.get('type') is not None:
                    await self.rediscover(item.get('object'))
                    await self.refresh()
        except (apierrors.APIForbiddenError, apierrors.APINotFoundError) as exc:
            logger.warning(f'Cannot watch the CRDs ({exc}); resources appearing later will not be served.')
        finally:
            logger.debug(f'Stopping the watch-stream for {_where(CRDS, None)}.')

    async def rediscover(self, crd: Any) -> None:
        """Refresh discovery after a CRD event: the named groups that the CRD may change, or everything."""
        versions: dict[str, set[str | None]] = {}
        for selector in self.ctx.registry.selectors:
            if selector.group is None or selector.callable is not None:
                await self.discovery.scan(refresh=True)  # any group may hold what it means
                return
            versions.setdefault(selector.group, set()).add(selector.version)
        spec = crd.get('spec') if isinstance(crd, Mapping) else None
        group = spec.get('group') if isinstance(spec, Mapping) else None
        if isinstance(group, str):  # no other group can have changed
            groups = [group] if group in versions else []
        else:
            groups = sorted(versions)
        for name in groups:
            version = next(iter(versions[name])) if len(versions[name]) == 1 else None  # None: all versions
            await self.discovery.scan_group(name, version, refresh=True)

    async def refresh(self, *, rescan: bool = True) -> None:
        """Serve what the selectors resolve to; start re-checking if a group-version is skipped."""
        async with self._refreshing:
            for selector in sorted(self.ctx.registry.selectors, key=str):
                found = await self.discovery.select(selector, rescan=rescan)
                if selector.ambiguous(found):
                    if selector not in self.ambiguous:
                        self.ambiguous.add(selector)
                        listed = ', '.join(sorted(str(resource) for resource in found))
                        logger.warning(f'Ambiguous resources will not be served (try specifying API groups): '
                                       f'{selector.title} => {{{listed}}}')
                    continue
                self.ambiguous.discard(selector)
                if found:
                    self.unresolved.discard(selector)
                else:
                    self.unresolved.add(selector)
                    if selector not in self.warned:
                        self.warned.add(selector)
                        logger.warning(f'Unresolved resources cannot be served (try creating their CRDs): '
                                       f'{selector.title}')
                for resource in sorted(found, key=str):
                    await self.serve(resource)
            for group, version in self.discovery.take_recovered():
                names = sorted(r.name for r in self.served if (r.group, r.version) == (group, version))
                logger.info(f'Discovery: the API {group}/{version} answers again; serving '
                            f'{", ".join(names) or "none of its resources (no selector means them)"}.')
            if self.rechecks_needed and (self.rechecking is None or self.rechecking.done()):
                self.rechecking = self.tg.create_task(self.recheck(), name='kopf discovery re-checks')

    @property
    def rechecks_needed(self) -> bool:
        return bool(self.discovery.failing)

    async def recheck(self) -> None:
        """Re-read the skipped group-versions' groups, backing off, until none is skipped."""
        for delay in apierrors.endless_backoffs(RECHECK_BACKOFFS):
            await asyncio.sleep(delay)
            try:
                for group in sorted({group for group, _ in self.discovery.failing}):
                    await self.discovery.scan_group(group, refresh=True)
                await self.refresh(rescan=False)  # just re-read: no second request per selector
            except Exception as exc:  # the API server is still unwell: not a reason to stop the operator
                logger.warning(f'Discovery re-check failed ({exc!r}); retrying in {RECHECK_BACKOFFS[-1]} s at most.')
            if not self.rechecks_needed:
                return

    async def serve(self, resource: resources.Resource) -> None:
        rctx = self.served.get(resource) or await self.fit(resource)
        self.served[resource] = rctx
        if self.ctx.admission is not None:
            await self.ctx.admission.served(self.served)  # the webhooks' rules for what is served
        for namespace in self.scope.watch_namespaces(resource, self.discovered):
            task = self.watchers.get((resource, namespace))
            if task is None or task.done():
                where = _where(resource, namespace)
                logger.debug(f'Starting the watch-stream for {where}.')
                if self.ctx.indexing is not None and self.ctx.registry.has_handlers(resource, handlers.IndexingHandler):
                    self.ctx.indexing.register((resource, namespace))  # the start waits for its listing
                self.watchers[(resource, namespace)] = self.tg.create_task(
                    self.watch(rctx, namespace), name=f'kopf watcher of {where}')

    async def watch_namespaces(self) -> None:
        """Serve the namespaces matching the patterns as they appear; stop serving those deleted."""
        async for item in watching.watch_objs(self.ctx.client, NAMESPACES):
            if item is watchstate.LISTED:
                if self.ctx.indexing is not None:
                    self.ctx.indexing.serving_started('namespaces')  # the namespaces found now are served
                continue
            name = str(item['object']['metadata']['name'])
            if item.get('type') == 'DELETED':
                self.discovered.discard(name)
                if self.ctx.peering is not None:
                    self.ctx.peering.forget(name)
                for (_, namespace), task in list(self.watchers.items()):
                    if namespace == name:
                        task.cancel()
            elif name not in self.discovered and self.scope.serves(name):
                self.discovered.add(name)
                if self.ctx.peering is not None:
                    self.ctx.peering.serve(name)  # its scope is paused until its peering's first look
                for resource in list(self.served):
                    await self.serve(resource)

    async def fit(self, resource: resources.Resource) -> contexts.ResourceContext:
        schema = await self.discovery.schema(resource)
        persistence = self.ctx.settings.persistence
        fitted = fitting.fit(progress_storage=persistence.progress_storage,
                             diffbase_storage=persistence.diffbase_storage,
                             schema=schema if schema is not None else BUILTIN_SCHEMA, crd_name=resource.name)
        for warning in fitted.warnings:
            logger.warning(warning)
        return contexts.ResourceContext(operator=self.ctx, resource=resource,
                                        progress_storage=fitted.progress_storage,
                                        diffbase_storage=fitted.diffbase_storage)

    async def watch(self, rctx: contexts.ResourceContext, namespace: str | None) -> None:
        """Stream the objects while their scope is not paused; resuming re-lists them (a new stream)."""
        pausing = self.ctx.pausing
        indexed = self.ctx.indexing is not None and self.ctx.registry.has_handlers(rctx.resource,
                                                                                   handlers.IndexingHandler)
        where = _where(rctx.resource, namespace)
        try:
            while True:
                if not indexed and pausing.paused(namespace):
                    await pausing.wait(namespace, paused=False)  # indexed streams go on: the indices are fed
                    logger.debug(f'Resuming the watch-stream for {where}.')
                if not await self.stream(rctx, namespace, indexed=indexed):
                    return
        except* apierrors.APINotFoundError:
            logger.info(f'{rctx.resource.name} is not served anymore; stopped watching it.')
        except* apierrors.APIForbiddenError as group:
            logger.error(f'No permission to watch {rctx.resource.name} ({group.exceptions[0]}); not served.')

    async def stream(self, rctx: contexts.ResourceContext, namespace: str | None, *, indexed: bool) -> bool:
        """One watch stream until it ends (False), or until its scope is paused (True; re-listed on resuming).

        An indexed stream goes on while paused (its cycles only feed the indices) and ends when resumed.
        """
        pausing = self.ctx.pausing
        where = _where(rctx.resource, namespace)
        async with asyncio.TaskGroup() as workers:
            dispatcher = queueing.Dispatcher(rctx, workers, key=(rctx.resource, namespace))
            reader = workers.create_task(self.read(dispatcher, rctx, namespace), name=f'kopf reader of {where}')

            async def until_paused() -> None:
                await pausing.wait(namespace, paused=True)
                logger.debug(f'Pausing the watch-stream for {where}.')
                if indexed:
                    dispatcher.pause()  # the stream goes on: the indices are fed, no handler runs
                    await pausing.wait(namespace, paused=False)
                    logger.debug(f'Resuming the watch-stream for {where} (re-listing).')
            pauser = workers.create_task(until_paused(), name=f'kopf pauser of {where}')
            await asyncio.wait([reader, pauser], return_when=asyncio.FIRST_COMPLETED)
            interrupted = pauser.done()
            pauser.cancel()
            if interrupted:
                reader.cancel()  # in-flight cycles finish (`read` drains without a deadline)
                await asyncio.wait([reader])
                dispatcher.pause()
        return interrupted

    async def read(self, dispatcher: queueing.Dispatcher, rctx: contexts.ResourceContext,
                   namespace: str | None) -> None:
        def put(item: watchstate.StreamItem) -> bool:
            """Dispatch the item; whether the queue is too long to read on (listed or watched alike: e.g. the
            echoes of a resumption's patches, replayed when its watch begins)."""
            if item is watchstate.LISTED:
                dispatcher.listed()
                return False
            ns = (item['object'].get('metadata') or {}).get('namespace')
            if self.scope.serves(ns):
                dispatcher.dispatch(item)
                return len(dispatcher.ready) > dispatcher.backlog_limit
            return False

        async def deliver(item: watchstate.StreamItem) -> None:
            if put(item):
                await dispatcher.backlog()

        keep = keeps_bodies(rctx)
        try:
            selection = self.ctx.selection   # `--shards N`: the server sends only the shards held (if it can)
            if selection is not None and selection.applies(self.ctx, rctx.resource):
                await selection.read(self.ctx, rctx, namespace, deliver, keep_bodies=keep)
                return
            stream = watching.watch_batches(self.ctx.client, rctx.resource, namespace=namespace, keep_bodies=keep,
                                            echoes=_Echoes(dispatcher, self.scope))
            async for batch in stream:
                for item in batch:
                    if put(item):
                        await dispatcher.backlog()
        finally:
            logger.debug(f'Stopping the watch-stream for {_where(rctx.resource, namespace)}.')
            pausing = self.ctx.pausing  # paused: its handlers finish, however long they take (a lost Lease: cancelled)
            grace = (0.0 if pausing.cancels(namespace) else None) if pausing.paused(namespace) else \
                rctx.settings.queueing.exit_timeout
            await dispatcher.drain(grace)  # the records stay
            if self.ctx.indexing is not None:
                self.ctx.indexing.unregister((rctx.resource, namespace))  # if it ended before listing


class _Echoes:
    """The echoes of our own patches that a stream's dispatcher awaits (`watchstate.Echoes`), of its scope only."""

    def __init__(self, dispatcher: queueing.Dispatcher, scope: "Scope") -> None:
        self.dispatcher, self.scope = dispatcher, scope

    def match(self, line: bytes) -> tuple[str, str] | None:
        """The uid and resourceVersion of an awaited echo of our own patch, if the line is it and it needs nothing.

        A watch line with the key of the answer that an idle record awaits the echo of (`records.awaited_echo`):
        its `Arrived` would only drop it. Not where the object's events are seen by its daemons and timers or kept
        for its shard, nor once the stream is closed, nor out of the scope (`Dispatcher.dispatch()` does those).
        """
        dispatcher = self.dispatcher
        if dispatcher.daemons is not None or dispatcher.newest is not None or dispatcher.closed:
            return None
        known = dispatcher.rctx.records
        for uid in watchstate.uids_in(line):
            record = known.get(uid)
            awaited = None if record is None else records.awaited_echo(record)
            if awaited is not None and awaited[1] == watchstate.line_key(line):  # hashed only if awaited
                return (uid, awaited[0]) if self.scope.serves(record.namespace) else None  # type: ignore[union-attr]
        return None

    def echoed(self, uid: str, rv: str) -> None:
        self.dispatcher.echoed(uid, rv)


def keeps_bodies(rctx: contexts.ResourceContext) -> bool:
    """Whether a vanished object's deletion needs its last body: for `on.event` or optional delete handlers."""
    for handler in rctx.registry.select(handlers.ResourceHandler, rctx.resource):
        if isinstance(handler, handlers.WatchingHandler):
            return True
        if isinstance(handler, handlers.ChangingHandler) and not handler.requires_finalizer and (
                handler.reason == Reason.DELETE or (handler.initial and handler.deleted)):  # resume(deleted=True)
            return True
    return False


def _where(resource: resources.Resource, namespace: str | None) -> str:
    """As upstream's watch-stream lines: `kopfexamples.v1.kopf.dev in ns1` or `... cluster-wide`."""
    return f'{resource} in {namespace}' if namespace else f'{resource} cluster-wide'
