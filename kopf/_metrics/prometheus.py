"""Prometheus metrics of one operator (`kopf run --metrics [HOST:]PORT`, `settings.metrics`; docs/metrics.md).

- `Metrics` (in `kopf._engine.contexts`: this module is loaded only when metrics are on) is the no-op
  the operator context holds while metrics are off: every hook is one method call that does nothing.
  `PrometheusMetrics` (made by `enable()` after the startup handlers, which may set `settings.metrics`)
  keeps one `CollectorRegistry` per operator, so several operators in one process never mix their
  figures. `prometheus_client` is imported only then (`kopf[metrics]`).
- Hooks call it where things happen: handler attempts (`kopf._engine.changing`; timers' and daemons' in
  `kopf._daemons.workers`), patches (`kopf._engine.applying`), the convergence of objects (the records'
  `Converged` effect, in `kopf._engine.queueing`), timers' lateness (`kopf._daemons.workers`);
  API requests and watch streams through the API client's `observer` (`_api` knows no reactor).
- What is a count of live things is read at scrape time, at no cost in between: objects queued and
  running per resource (the records' phases), daemons and timers running, index sizes, and the
  scopes paused by peering (`ctx.pausing`).
- The Lease leader election (`kopf._leases.holding`) sets `kopf_peering_lease_held` through `lease()`; the
  shards (`kopf._shards.membership`) set `kopf_peering_shards_held` through `shards()`.
- `/metrics` answers GET only (other methods: 405); other paths 404. It is served on the metrics
  address, and on the liveness endpoint's server when that is on too (`route()`).
"""
import asyncio
import logging
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from kopf._core import handlers, records
from kopf._core.resources import Resource
from kopf._engine.contexts import Metrics  # the no-op (metrics off), which this module is not loaded for
from kopf._metrics import instruments
from kopf._shared import extras

if TYPE_CHECKING:
    from aiohttp import web  # aiohttp's server: only when serving

logger = logging.getLogger('kopf.reactor.metrics')


class MetricsError(Exception):
    """Metrics are asked for but cannot be had (no prometheus_client, a bad address)."""


class PrometheusMetrics(Metrics):
    """Metrics on: one registry of the operator's own, exposed in the Prometheus text format."""

    enabled = True

    def __init__(self, ctx: Any, address: instruments.Address | None = None) -> None:
        import prometheus_client as prom  # `kopf[metrics]`: only with metrics on

        self.address = address
        self.served: Mapping[Resource, Any] = {}
        self.registry = registry = prom.CollectorRegistry(auto_describe=True)

        def counter(name: str, doc: str, labels: list[str]) -> '_Children':
            return _Children(prom.Counter(name, doc, labels, registry=registry))

        def histogram(name: str, doc: str, labels: list[str], buckets: tuple[float, ...]) -> '_Children':
            return _Children(prom.Histogram(name, doc, labels, buckets=buckets, registry=registry))

        def gauge(name: str, doc: str, labels: list[str]) -> '_Children':
            return _Children(prom.Gauge(name, doc, labels, registry=registry))

        R, H = 'resource', 'handler'
        self._calls = counter('kopf_handler_calls', 'Attempts of top-level handlers, by outcome.', [R, H, 'outcome'])
        self._retries = counter('kopf_handler_retries', 'Attempts of top-level handlers that were retries.', [R, H])
        self._durations = histogram('kopf_handler_duration_seconds', 'Durations of handler attempts.', [R, H],
                                    instruments.DURATION_BUCKETS)
        self._patches = counter('kopf_patches', 'Cycles by their patch: sent, skipped (empty), refused.', [R, 'result'])
        self._lag = histogram('kopf_convergence_lag_seconds',
                              'From an object\'s new resourceVersion seen to its handling complete.', [R],
                              instruments.LAG_BUCKETS)
        self._lateness = histogram('kopf_timer_lateness_seconds', 'How late timers fired after their due time.', [R],
                                   instruments.LATENESS_BUCKETS)
        self._requests = counter('kopf_api_requests', 'API requests\' attempts, by verb and status code.',
                                 ['verb', 'code'])
        self._latency = histogram('kopf_api_request_duration_seconds', 'API requests\' attempts (WATCH: to the '
                                  'headers).', ['verb'], instruments.DURATION_BUCKETS)
        self._watches = counter('kopf_watch_connections', 'Watch streams opened (the first and every reconnection).',
                                [R])
        self._expired = counter('kopf_watch_expired', 'Watches and listings that expired (410 Gone): re-listed.', [R])
        self._listed = gauge('kopf_initial_listing_seconds', 'From a watch stream\'s start to its initial listing '
                             'processed (every listed object\'s first cycle over).', [R])
        self._shards = gauge('kopf_peering_shards_held', 'Shards this replica holds.', [])
        self._leases = gauge('kopf_peering_lease_held', '1 while this replica holds the Lease.', ['lease'])
        registry.register(_Live(ctx, self))

    def handled(self, resource: Resource, handler: str, outcome: str, seconds: float, *, retry: bool) -> None:
        name = resource.name
        self._calls(name, handler, outcome).inc()
        self._durations(name, handler).observe(seconds)
        if retry:
            self._retries(name, handler).inc()

    def patched(self, resource: Resource, result: str) -> None:
        self._patches(resource.name, result).inc()

    def converged(self, resource: Resource, lag: float) -> None:
        self._lag(resource.name).observe(lag)

    def timer_fired(self, resource: Resource, lateness: float) -> None:
        self._lateness(resource.name).observe(max(0.0, lateness))

    def requested(self, verb: str, code: str, seconds: float) -> None:
        self._requests(verb, code).inc()
        self._latency(verb).observe(seconds)

    def watched(self, resource: str, what: str) -> None:
        (self._expired if what == 'expired' else self._watches)(resource).inc()

    def listed(self, resource: Resource, seconds: float) -> None:
        self._listed(resource.name).set(seconds)

    def observe(self, served: Mapping[Resource, Any]) -> None:
        self.served = served

    def shards(self, held: int) -> None:
        self._shards().set(held)

    def lease(self, name: str, held: bool) -> None:
        self._leases(name).set(1 if held else 0)

    def exposition(self) -> bytes:
        """The whole registry in the Prometheus text format."""
        import prometheus_client as prom  # `kopf[metrics]`: only with metrics on
        return bytes(prom.generate_latest(self.registry))


class _Children:
    """A metric's children by their label values, kept in a dict (not looked up by `.labels()` at every hook)."""

    __slots__ = ('children', 'metric')

    def __init__(self, metric: Any) -> None:
        self.metric = metric
        self.children: dict[tuple[str, ...], Any] = {}

    def __call__(self, *labels: str) -> Any:
        child = self.children.get(labels)
        if child is None:
            child = self.children[labels] = self.metric.labels(*labels) if labels else self.metric
        return child


class _Live:
    """Counts of live things, read at scrape time: objects queued/running, daemons/timers, index sizes."""

    def __init__(self, ctx: Any, metrics: PrometheusMetrics) -> None:
        self.ctx = ctx
        self.metrics = metrics

    def describe(self) -> list[Any]:
        return []  # dynamic: not checked for duplicates at registration

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily  # `kopf[metrics]`: only with metrics on

        families = {
            'objects': GaugeMetricFamily('kopf_objects', 'Objects known (their records), per resource.',
                                         labels=['resource']),
            records.Phase.QUEUED: GaugeMetricFamily('kopf_queue_depth', 'Objects queued for a cycle.',
                                                    labels=['resource']),
            records.Phase.RUNNING: GaugeMetricFamily('kopf_in_flight', 'Objects whose cycle runs now.',
                                                     labels=['resource']),
            records.Phase.WAITING: GaugeMetricFamily('kopf_objects_waiting', 'Objects waiting for a delay, a retry '
                                                     'or their own write.', labels=['resource']),
        }
        for resource, rctx in list(self.metrics.served.items()):
            counts = dict.fromkeys(records.Phase, 0)
            known = list(rctx.records.values())
            for record in known:
                counts[record.phase] += 1
            families['objects'].add_metric([resource.name], len(known))
            for phase in (records.Phase.QUEUED, records.Phase.RUNNING, records.Phase.WAITING):
                families[phase].add_metric([resource.name], counts[phase])
        yield from families.values()
        yield from self._spawns()
        yield from self._indices()
        yield from self._pauses()

    def _spawns(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily  # `kopf[metrics]`: only with metrics on

        daemons = GaugeMetricFamily('kopf_daemons_running', 'Daemons running.', labels=['resource'])
        timers = GaugeMetricFamily('kopf_timers_running', 'Timers scheduled or running.', labels=['resource'])
        counts: dict[tuple[bool, str], int] = {}
        for spawn in list(self.ctx.spawns):
            key = (isinstance(spawn.handler, handlers.TimerHandler), spawn.background.rctx.resource.name)
            counts[key] = counts.get(key, 0) + 1
        for (timer, name), count in sorted(counts.items()):
            (timers if timer else daemons).add_metric([name], count)
        yield daemons
        yield timers

    def _indices(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily  # `kopf[metrics]`: only with metrics on

        sizes = GaugeMetricFamily('kopf_index_keys', 'Keys in each in-memory index.', labels=['index'])
        indexing = self.ctx.indexing
        for index_id, index in sorted((indexing.indices if indexing is not None else {}).items()):
            sizes.add_metric([index_id], len(index))
        yield sizes


    def _pauses(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily  # `kopf[metrics]`: only with metrics on

        paused = GaugeMetricFamily('kopf_peering_paused', '1 while peering pauses the scope (a namespace; '
                                   '"*": the whole operator).', labels=['scope'])
        pausing = getattr(self.ctx, 'pausing', None)
        scopes = [scope for scope in (pausing.pauses.by if pausing is not None else {}) if scope is None or
                  isinstance(scope, str)]  # shards not held are not "paused": see kopf_peering_shards_held
        for scope in sorted(scopes, key=lambda s: s or ''):
            paused.add_metric(['*' if scope is None else scope], 1)
        yield paused


def enable(ctx: Any) -> None:
    """Turn metrics on if `settings.metrics` asks (after the startup handlers): a `MetricsError` if they cannot be."""
    settings = ctx.settings.metrics
    if settings.endpoint is None and not settings.enabled:
        return
    address = check(settings.endpoint)
    ctx.metrics = PrometheusMetrics(ctx, address)
    ctx.client.observer = ctx.metrics


def check(endpoint: str | int | None) -> instruments.Address | None:
    """The address to serve on (None: none of its own); a `MetricsError` if unusable or prometheus_client is absent."""
    try:
        import prometheus_client  # noqa: F401
    except ImportError:
        raise MetricsError(extras.needs(extras.METRICS)) from None
    try:
        return None if endpoint is None else instruments.Address.parse(endpoint)
    except instruments.AddressError as exc:
        raise MetricsError(str(exc)) from None


def route(app: 'web.Application', metrics: Metrics) -> None:
    """`GET /metrics` on this app (the metrics' own server, or the liveness endpoint's)."""
    from aiohttp import web  # aiohttp's server: only when serving

    async def handle(request: web.Request) -> web.Response:
        assert isinstance(metrics, PrometheusMetrics)
        body = metrics.exposition()  # in the loop: the records it counts are the loop's
        return web.Response(body=body, headers={'Content-Type': 'text/plain; version=0.0.4; charset=utf-8'})

    app.router.add_get('/metrics', handle, allow_head=False)


async def serve(ctx: Any) -> None:
    """Serve `/metrics` on the metrics address until cancelled."""
    from aiohttp import web  # aiohttp's server: only when serving

    address = ctx.metrics.address
    app = web.Application()
    route(app, ctx.metrics)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, address.host, address.port).start()
        ports = sorted({bound[1] for bound in runner.addresses})  # the port picked, for port 0
        logger.info(f'Serving the metrics at http://{address.host}:{ports[0] if ports else address.port}/metrics.')
        await asyncio.Future()
    finally:
        await runner.cleanup()
