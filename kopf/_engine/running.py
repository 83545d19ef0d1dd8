"""Running an operator: `kopf.run()`, `kopf.operator()`, `kopf.spawn_tasks()`, `kopf.run_tasks()`.

Order: refuse handler kinds whose runtime is not here yet → startup activities (with retries; they
may tune `settings`) → check that the cluster answers → `ready_flag` → the peerings (unless
standalone; their scopes paused until their first look) → one TaskGroup (the event poster, the
peerings, the observer with its watchers and workers, the stopper) → cleanup activities last.
SIGINT/SIGTERM (main thread only) or the `stop_flag` stop it gracefully.
"""
import asyncio
import logging
import os
import signal
import threading
import warnings
from collections.abc import Collection, Coroutine
from typing import Any

from kopf._api import apierrors, credentials, events, namespaces
from kopf._api import client as client_
from kopf._core import memos, progress, registries
from kopf._core import settings as settings_
from kopf._core.causes import Activity
from kopf._daemons.reasons import DaemonStoppingReason
from kopf._engine import activities, contexts, flags, observing, preflight
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
    if logger.isEnabledFor(logging.DEBUG):  # the version's metadata is read only if logged (~2 ms)
        import kopf._version
        logger.debug(f'Starting Kopf {kopf._version.version()}.')
    unknown = set(later) - LATER_OPTIONS
    if unknown:
        raise TypeError(f'Unknown options of the operator: {", ".join(sorted(unknown))}')
    if liveness_endpoint is not None:
        from kopf._engine import probing  # lazily: only with a liveness endpoint (~0.6 ms)
        try:
            probing.Endpoint.parse(liveness_endpoint)
        except ValueError as exc:
            raise OperatorError(str(exc)) from None
    if namespace is not None:
        warnings.warn('namespace= is deprecated; use namespaces=[...].', DeprecationWarning, stacklevel=2)
        namespaces = [*namespaces, namespace]
    if not clusterwide and not namespaces:
        clusterwide = True
    registry = registry if registry is not None else registries.get_default_registry()
    settings = settings if settings is not None else settings_.OperatorSettings()
    _peering_options(settings, standalone=standalone, priority=priority, peering_name=peering_name,
                     clusterwide=clusterwide)
    if metrics_endpoint is not None:  # `kopf run --metrics`: checked now, for a clear error before anything starts
        from kopf._metrics import prometheus as metrics  # lazily: an operator without metrics never loads it
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
    identity = identity_.make_identity()
    ctx = contexts.OperatorContext(
        settings=settings, registry=registry, client=None,  # type: ignore[arg-type]  # set below
        memo=memo if memo is not None else memos.Memo(), lifecycle=lifecycle or progress.get_default_lifecycle())
    preflight.check_kwargs(registry)
    if registry.indexing:
        from kopf._indices import filling  # lazily: an operator without indices never loads it
        ctx.indexing = filling.Indexing(registry)
        ctx.indices = ctx.indexing.indices
    vault = vault if vault is not None else credentials.Vault(activities.make_login(ctx))
    ctx.identity = identity
    ctx.client = client_.APIClient(vault, settings, identity=identity)
    scope = observing.Scope(clusterwide=clusterwide, patterns=tuple(namespaces))
    coro = _orchestrate(ctx, scope, stop_flag=stop_flag, ready_flag=ready_flag, liveness=liveness_endpoint)
    return [asyncio.create_task(coro, name='kopf operator')]


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
        if not await _start_or_stop(ctx, stopper):
            return
        try:
            flags.raise_flag(ready_flag)
            if ctx.settings.peering.lease.name and ctx.settings.peering.lease.shards:  # shards paused until ours
                from kopf._shards import membership
                ctx.shards = ctx.settings.peering.lease.shards
                ctx.leasing = membership.Sharding(ctx)
            elif ctx.settings.peering.lease.name:  # paused before any watcher starts, until the Lease is ours
                from kopf._leases import holding
                ctx.leasing = holding.Leasing(ctx)
            if _peers(ctx.settings):  # its scopes are paused before any watcher starts
                from kopf._peering import keepalives as peering
                ctx.peering = peering.Peerings(ctx, clusterwide=ctx.settings.peering.clusterwide or scope.clusterwide,
                                               namespaces=namespaces.exact_names(scope.patterns) or ())
            async with asyncio.TaskGroup() as tg:
                if ctx.peering is not None:
                    ctx.peering.start(tg)
                if ctx.leasing is not None:
                    ctx.leasing.start(tg)
                tg.create_task(_logged('Poster of events', poster.run()), name='kopf event poster')
                tg.create_task(_logged('Resource observer', observing.Observer(ctx, scope, tg).run()),
                               name='kopf observer')
                tg.create_task(_until(ctx, stopper), name='kopf stopper')
                if ctx.registry.webhooks:
                    from kopf._admission import answering as admission
                    ctx.admission = admission.Admission(ctx)
                    tg.create_task(_logged('Admission webhook server', ctx.admission.serve()),
                                   name='kopf admission webhooks')
                if ctx.metrics.address is not None:
                    from kopf._metrics import prometheus as metrics
                    tg.create_task(metrics.serve(ctx), name='kopf metrics endpoint')
                if liveness is not None:
                    from kopf._engine import probing
                    tg.create_task(probing.serve(ctx, liveness), name='kopf liveness endpoint')
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
    finally:
        stopper.cancel()
        await asyncio.gather(stopper, return_exceptions=True)
        ctx.scheduler.close()  # nothing later is due any more: no timer keeps the operator's state alive
        restore()
        events.poster_var.reset(token)
        await ctx.client.close()


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
        from kopf._daemons import spawning  # lazily: loaded by the first daemon or timer, else only now
        await spawning.stop_all(ctx, DaemonStoppingReason.OPERATOR_EXITING)  # before the watchers go


async def _start(ctx: contexts.OperatorContext) -> None:
    try:
        await activities.run_activity(ctx, Activity.STARTUP)
    except activities.ActivityError as exc:
        raise OperatorError(str(exc)) from None
    try:
        preflight.check(ctx.registry, ctx.settings)  # e.g. settings.admission.server, set by startup handlers
    except preflight.UnsupportedHandlersError as exc:
        raise OperatorError(str(exc)) from None
    lease = ctx.settings.peering.lease
    if lease.name:
        from kopf._leases import elections  # lazily: only with a Lease
        if problem := elections.check(elections.durations_of(lease)):
            raise OperatorError(f'The lease {lease.name!r}: {problem}')
    if lease.shards and (not lease.name or not isinstance(lease.shards, int) or lease.shards < 0):
        raise OperatorError(f'--shards {lease.shards!r} needs --lease NAME and a positive number of shards.')
    if ctx.settings.metrics.enabled or ctx.settings.metrics.endpoint is not None:  # set by startup handlers too
        from kopf._metrics import prometheus as metrics
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
