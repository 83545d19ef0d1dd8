"""Running an operator: `kopf.run()`, `kopf.operator()`, `kopf.spawn_tasks()`, `kopf.run_tasks()`.

Order: startup activities (with retries; they may tune `settings`) → what the handlers and options need
(the admission webhooks' server, the Lease's timing, the metrics) → check that the cluster answers →
`ready_flag` → daemons and timers plugged in; the shards, the Lease or the peerings (their scopes paused
until ours) → one TaskGroup (those, the event poster, the
observer with its watchers and workers, the stopper, the servers asked for: admission, metrics, liveness)
→ the Lease released → cleanup activities last. SIGINT/SIGTERM (main thread only) or the `stop_flag` stop
it gracefully. The features are imported here only when the registry or the options ask for them.
"""
import asyncio
import logging
import os
import signal
import threading
import warnings
from collections.abc import Collection, Coroutine
from typing import Any

import kopf._version
from kopf._api import apierrors, credentials, events, namespaces
from kopf._api import client as client_
from kopf._core import memos, progress, registries
from kopf._core import settings as settings_
from kopf._core.causes import Activity
from kopf._daemons.reasons import DaemonStoppingReason
from kopf._engine import activities, contexts, flags, memory, observing, preflight
from kopf._engine import identity as identity_
from kopf._engine.flags import Flag

logger = logging.getLogger('kopf.reactor.running')


# Upstream's options for internals (indices, insights): accepted, unused.
LATER_OPTIONS = frozenset({'indexers', 'memories', 'insights', 'identity', '_command'})


class OperatorError(Exception):
    """The operator cannot run: unsupported handlers, an unreachable cluster, a failed startup."""


class _Stopped(Exception):
    """Internal: the stop flag or a signal ended the operator."""


def run(*, loop: asyncio.AbstractEventLoop | None = None, **kwargs: Any) -> None:
    """Run the operator synchronously until stopped; the options are those of `kopf.spawn_tasks()`."""
    coro = operator(**kwargs)
    if loop is not None:
        loop.run_until_complete(coro)
    else:
        asyncio.run(coro)


async def operator(**kwargs: Any) -> None:
    """Run the operator in the current event loop until stopped: `kopf.spawn_tasks(**kwargs)`, then `run_tasks()`."""
    tasks = await spawn_tasks(**kwargs)
    await run_tasks(tasks)


async def spawn_tasks(
        *,
        registry: registries.OperatorRegistry | None = None,
        settings: settings_.OperatorSettings | None = None,
        memo: Any = None,
        lifecycle: Any = None,
        namespaces: Collection[str] = (),
        namespace: str | None = None,
        clusterwide: bool = False,
        stop_flag: Flag | None = None,
        ready_flag: Flag | None = None,
        vault: credentials.Vault | None = None,
        standalone: bool | None = None,
        priority: int | None = None,
        peering_name: str | None = None,
        lease_name: str | None = None,
        lease_namespace: str | None = None,
        shards: int | None = None,
        liveness_endpoint: str | None = None,
        metrics_endpoint: str | int | None = None,
        **later: Any,
) -> list[asyncio.Task[None]]:
    """The operator's root task(s), created in the current loop; await them with `run_tasks()`."""
    if logger.isEnabledFor(logging.DEBUG):  # the version's metadata is read only if logged
        logger.debug(f'Starting Kopf {kopf._version.version()}.')
    _check_options(later, liveness_endpoint=liveness_endpoint)
    if namespace is not None:
        warnings.warn('namespace= is deprecated; use namespaces=[...].', DeprecationWarning, stacklevel=2)
        namespaces = [*namespaces, namespace]
    if not clusterwide and not namespaces:
        clusterwide = True
    registry = registry if registry is not None else registries.get_default_registry()
    settings = settings if settings is not None else settings_.OperatorSettings()
    _peering_options(settings, standalone=standalone, priority=priority, peering_name=peering_name,
                     clusterwide=clusterwide)
    _feature_options(settings, metrics_endpoint=metrics_endpoint, lease_name=lease_name,
                     lease_namespace=lease_namespace, shards=shards)
    ctx = _operator_context(registry, settings, memo=memo, lifecycle=lifecycle, vault=vault)
    scope = observing.Scope(clusterwide=clusterwide, patterns=tuple(namespaces))
    coro = _orchestrate(ctx, scope, stop_flag=stop_flag, ready_flag=ready_flag, liveness=liveness_endpoint)
    return [asyncio.create_task(coro, name='kopf operator')]


def _check_options(later: dict[str, Any], *, liveness_endpoint: str | None) -> None:
    """Refuse what cannot run before anything starts: unknown options, a malformed liveness endpoint."""
    unknown = set(later) - LATER_OPTIONS
    if unknown:
        raise TypeError(f'Unknown options of the operator: {", ".join(sorted(unknown))}')
    if liveness_endpoint is not None:
        from kopf._engine import probing  # only with a liveness endpoint
        try:
            probing.Endpoint.parse(liveness_endpoint)
        except ValueError as exc:
            raise OperatorError(str(exc)) from None


def _feature_options(settings: settings_.OperatorSettings, *, metrics_endpoint: str | int | None,
                     lease_name: str | None, lease_namespace: str | None, shards: int | None) -> None:
    """The options of `run()` for metrics, Leases and shards into `settings` (metrics checked now: a clear error)."""
    if metrics_endpoint is not None:
        from kopf._metrics import prometheus as metrics  # only with metrics: `prometheus_client`
        try:
            metrics.check(metrics_endpoint)
        except metrics.MetricsError as exc:
            raise OperatorError(str(exc)) from None
        settings.metrics.endpoint = metrics_endpoint
    if lease_name is not None:
        settings.peering.lease.name = lease_name
    if lease_namespace is not None:
        settings.peering.lease.namespace = lease_namespace
    if shards is not None:
        settings.peering.lease.shards = shards


def _operator_context(registry: registries.OperatorRegistry, settings: settings_.OperatorSettings, *,
                      memo: Any, lifecycle: Any, vault: credentials.Vault | None) -> contexts.OperatorContext:
    """The operator's context: its identity, memo, lifecycle, indices (if any handler fills one) and API client."""
    identity = identity_.make_identity()
    ctx = contexts.OperatorContext(
        settings=settings, registry=registry, client=None,  # type: ignore[arg-type]  # set below
        memo=memo if memo is not None else memos.Memo(), lifecycle=lifecycle or progress.get_default_lifecycle())
    preflight.check_kwargs(registry)
    if registry.indexing:
        from kopf._indices import filling  # only with `@kopf.index` handlers
        ctx.indexing = indexing = filling.Indexing(registry)
        ctx.indices = indexing.indices
    vault = vault if vault is not None else credentials.Vault(activities.make_login(ctx))
    ctx.identity = identity
    ctx.client = client_.APIClient(vault, settings, identity=identity)
    return ctx


def _peering_options(settings: settings_.OperatorSettings, *, standalone: bool | None, priority: int | None,
                     peering_name: str | None, clusterwide: bool) -> None:
    """The options of `run()` into `settings.peering` (startup handlers may change them further), as upstream."""
    peering = settings.peering
    peering.standalone = bool(standalone) or peering.standalone
    peering.clusterwide = clusterwide
    if priority is not None:
        peering.priority = priority
    if peering_name is not None:
        peering.name = peering_name
        peering.mandatory = True


def _peers(settings: settings_.OperatorSettings) -> bool:
    """Whether the operator takes part in a peering: not standalone; with a Lease, only a `--peering` given."""
    peering = settings.peering
    return not peering.standalone and (not peering.lease.name or peering.mandatory)


async def run_tasks(tasks: Collection[asyncio.Task[Any]], *, ignored: Collection[asyncio.Task[Any]] = ()) -> None:
    """Await the root tasks; the first one to fail cancels the others; its error is re-raised."""
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            if not task.done() and task not in ignored:
                task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _orchestrate(ctx: contexts.OperatorContext, scope: observing.Scope, *,
                       stop_flag: Flag | None, ready_flag: Flag | None, liveness: str | None) -> None:
    poster = events.EventPoster(ctx.client)
    token = events.poster_var.set(poster)
    stopping = asyncio.Event()
    restore = _install_signals(stopping, ctx.settings)
    stopper = asyncio.ensure_future(_stopper(stopping, stop_flag))
    try:
        if await _start_or_stop(ctx, stopper):
            await _serve(ctx, scope, poster, stopper, ready_flag=ready_flag, liveness=liveness)
    finally:
        stopper.cancel()
        await asyncio.gather(stopper, return_exceptions=True)
        ctx.scheduler.close()  # nothing later is due any more: no timer keeps the operator's state alive
        restore()
        events.poster_var.reset(token)
        await ctx.client.close()


async def _serve(ctx: contexts.OperatorContext, scope: observing.Scope, poster: events.EventPoster,
                 stopper: 'asyncio.Future[None]', *, ready_flag: Flag | None, liveness: str | None) -> None:
    """The started operator: its root tasks in one TaskGroup until the stop; then the Lease and the cleanup."""
    try:
        flags.raise_flag(ready_flag)
        _pause_until_ours(ctx, scope)
        async with asyncio.TaskGroup() as tg:
            _root_tasks(ctx, scope, tg, poster, stopper, liveness=liveness)
    except* _Stopped:
        logger.debug('Root tasks are stopped: finishing normally; tasks left: set()')  # as upstream 1.45.2
        logger.debug('Hung tasks stopping is skipped: no tasks given.')  # none is left behind here
    except* Exception as group:
        for exc in group.exceptions:
            logger.error('The operator has failed.', exc_info=exc)
        raise OperatorError(f'The operator has failed: {group.exceptions[0]!r}') from None
    finally:
        if ctx.leasing is not None:  # after the handlers stopped: the next replica acquires it at once
            await asyncio.shield(ctx.leasing.release())
        await asyncio.shield(activities.run_activity(ctx, Activity.CLEANUP))


def _pause_until_ours(ctx: contexts.OperatorContext, scope: observing.Scope) -> None:
    """The features plugged in before any watcher starts: daemons and timers; the shards, the Lease or the
    peering (their scopes paused until ours)."""
    if ctx.registry.spawning:  # after the startup handlers, which may register some
        from kopf._daemons import spawning  # only with daemons or timers
        ctx.daemons = spawning.Daemons
    lease = ctx.settings.peering.lease
    if lease.name and lease.shards:
        from kopf._shards import assignment, membership  # only with `--shards`
        ctx.shards = total = lease.shards
        ctx.shard_of = lambda uid: assignment.shard_of(uid, total)
        ctx.leasing = membership.Sharding(ctx)
    elif lease.name:
        from kopf._leases import holding  # only with `--lease`
        ctx.leasing = holding.Leasing(ctx)
    if _peers(ctx.settings):
        from kopf._peering import keepalives as peering  # only when peering
        ctx.peering = peering.Peerings(ctx, clusterwide=ctx.settings.peering.clusterwide or scope.clusterwide,
                                       namespaces=namespaces.exact_names(scope.patterns) or ())


def _root_tasks(ctx: contexts.OperatorContext, scope: observing.Scope, tg: asyncio.TaskGroup,
                poster: events.EventPoster, stopper: 'asyncio.Future[None]', *, liveness: str | None) -> None:
    """The root tasks: the peering or Lease, the event poster, the observer, the stopper, the servers asked for."""
    if ctx.peering is not None:
        ctx.peering.start(tg)
    if ctx.leasing is not None:
        ctx.leasing.start(tg)
    tg.create_task(_logged('Poster of events', poster.run()), name='kopf event poster')
    tg.create_task(_logged('Resource observer', observing.Observer(ctx, scope, tg).run()), name='kopf observer')
    tg.create_task(_until(ctx, stopper), name='kopf stopper')
    if ctx.registry.webhooks:
        from kopf._admission import answering as admission  # only with admission handlers
        ctx.admission = admission.Admission(ctx)
        tg.create_task(_logged('Admission webhook server', ctx.admission.serve()), name='kopf admission webhooks')
    if getattr(ctx.metrics, 'address', None) is not None:  # metrics on, with an endpoint of their own
        from kopf._metrics import prometheus as metrics  # only with metrics: `prometheus_client`
        tg.create_task(metrics.serve(ctx), name='kopf metrics endpoint')
    if liveness is not None:
        from kopf._engine import probing  # only with a liveness endpoint
        tg.create_task(probing.serve(ctx, liveness), name='kopf liveness endpoint')


async def _logged(label: str, coro: Coroutine[Any, Any, None]) -> None:
    """A root task that says when it is cancelled at the exit, as upstream 1.45.2's are named there."""
    try:
        await coro
    except asyncio.CancelledError:
        logger.debug(f'{label} is cancelled.')
        raise


async def _start_or_stop(ctx: contexts.OperatorContext, stopper: 'asyncio.Future[None]') -> bool:
    """The startup, unless a stop comes first (then: no cleanup, as nothing has started); True if started."""
    starting = asyncio.ensure_future(_start(ctx))
    await asyncio.wait([starting, stopper], return_when=asyncio.FIRST_COMPLETED)
    if not starting.done():
        starting.cancel()
        await asyncio.gather(starting, return_exceptions=True)
        return False
    starting.result()
    return True


async def _until(ctx: contexts.OperatorContext, stopper: 'asyncio.Future[None]') -> None:
    try:
        await stopper  # raises _Stopped when the stop comes
    finally:
        from kopf._daemons import spawning  # loaded by the first daemon or timer, else only now
        await spawning.stop_all(ctx, DaemonStoppingReason.OPERATOR_EXITING)  # before the watchers go


async def _start(ctx: contexts.OperatorContext) -> None:
    try:
        await activities.run_activity(ctx, Activity.STARTUP)
    except activities.ActivityError as exc:
        raise OperatorError(str(exc)) from None
    if ctx.settings.process.release_memory:  # before our first connection (`kopf._engine.memory`)
        memory.fix_mmap_threshold()
    if ctx.registry.webhooks:  # they need settings.admission.server, set by startup handlers
        from kopf._admission import protocols
        try:
            protocols.check(ctx.registry, ctx.settings)
        except protocols.UnsupportedHandlersError as exc:
            raise OperatorError(str(exc)) from None
    lease = ctx.settings.peering.lease
    if lease.name:
        from kopf._leases import elections  # only with `--lease`
        if problem := elections.check(elections.durations_of(lease)):
            raise OperatorError(f'The lease {lease.name!r}: {problem}')
    if lease.shards and (not lease.name or not isinstance(lease.shards, int) or lease.shards < 0):
        raise OperatorError(f'--shards {lease.shards!r} needs --lease NAME and a positive number of shards.')
    if ctx.settings.metrics.enabled or ctx.settings.metrics.endpoint is not None:  # set by startup handlers too
        from kopf._metrics import prometheus as metrics  # only with metrics: `prometheus_client`
        try:
            metrics.enable(ctx)
        except metrics.MetricsError as exc:
            raise OperatorError(str(exc)) from None
    try:
        await ctx.client.request('GET', '/api', backoffs=(0.5, 1, 2))
    except apierrors.LoginError as exc:
        raise OperatorError(f'Cannot log in to the cluster: {exc}') from None
    except Exception as exc:
        raise OperatorError(f'Cannot reach the Kubernetes API: {exc}') from None
    if ctx.settings.crds.install:   # typed resources: lazily, as they import pydantic
        from kopf._typed import installing
        try:
            await installing.install_classes(ctx.client, ctx.settings.crds.install, logger)
        except installing.InstallError as exc:
            raise OperatorError(str(exc)) from None


async def _stopper(stopping: asyncio.Event, stop_flag: Flag | None) -> None:
    waits: list[Coroutine[Any, Any, Any]] = [stopping.wait()]
    if stop_flag is not None:
        waits.append(flags.wait_flag(stop_flag))
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
    if not stopping.is_set():
        logger.info('Stop-flag is raised. Operator is stopping.')
    raise _Stopped()


def _on_signal(signum: int, stopping: asyncio.Event, settings: settings_.OperatorSettings) -> None:
    logger.info(f'Signal {signal.Signals(signum).name} is received. Operator is stopping.')
    timeout = settings.process.ultimate_exiting_timeout
    if not stopping.is_set() and timeout is not None:  # a stuck sync handler must not keep us alive forever
        timer = threading.Timer(timeout, _kill_self, args=(timeout,))
        timer.daemon = True
        timer.start()
    stopping.set()


def _kill_self(timeout: float) -> None:
    logger.error(f'The operator did not exit within {timeout} seconds after the signal; killing itself.')
    os.kill(os.getpid(), signal.SIGKILL)


def _install_signals(stopping: asyncio.Event, settings: settings_.OperatorSettings) -> Any:
    """SIGINT/SIGTERM set the stopping event (main thread only); returns the restoring callable."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    loop = asyncio.get_running_loop()
    installed = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(signum, _on_signal, signum, stopping, settings)
            installed.append(signum)
        except (NotImplementedError, RuntimeError):
            pass

    def restore() -> None:
        for signum in installed:
            loop.remove_signal_handler(signum)
    return restore
