"""The liveness endpoint (`kopf run --liveness http://host:port/path`, `liveness_endpoint=`).

A GET on the path answers JSON `{probe handler id: result}` (results that are not None), from the
`@kopf.on.probe()` handlers; they run at most once per `PROBE_CACHE_TIME` seconds (under a lock, so
concurrent requests share one run). A probe handler's final failure answers HTTP 500.
Only `http://` endpoints; the host defaults to `localhost`, the port to 80. With metrics on, the same
server answers `GET /metrics` too (`kopf._metrics.prometheus`).
aiohttp's server side (`aiohttp.web`) is imported only when an endpoint is served.
"""
import asyncio
import dataclasses
import logging
import time
import urllib.parse
from typing import TYPE_CHECKING, Any

from kopf._core.causes import Activity
from kopf._engine import activities, contexts

if TYPE_CHECKING:
    from aiohttp import web  # aiohttp's server: only when serving

logger = logging.getLogger('kopf.reactor.probing')

PROBE_CACHE_TIME = 10.0


@dataclasses.dataclass(frozen=True)
class Endpoint:
    """The liveness endpoint to serve: host, port and path of an http:// URL."""
    host: str
    port: int
    path: str

    @classmethod
    def parse(cls, url: str) -> 'Endpoint':
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme != 'http':
            raise ValueError(f'The liveness endpoint must be an http:// URL: {url!r}')
        return cls(host=parsed.hostname or 'localhost', port=parsed.port or 80, path=parsed.path or '/')


class Prober:
    def __init__(self, ctx: contexts.OperatorContext) -> None:
        self.ctx = ctx
        self.lock = asyncio.Lock()
        self.cached: tuple[float, dict[str, Any]] | None = None

    async def results(self) -> dict[str, Any]:
        async with self.lock:
            if self.cached is None or time.monotonic() - self.cached[0] >= PROBE_CACHE_TIME:
                found = await activities.run_activity(self.ctx, Activity.PROBE)
                self.cached = (time.monotonic(), {key: value for key, value in found.items() if value is not None})
            return self.cached[1]

    async def handle(self, request: 'web.Request') -> 'web.Response':
        from aiohttp import web  # aiohttp's server: only when serving
        try:
            return web.json_response(await self.results())
        except activities.ActivityError as exc:
            return web.json_response({'error': str(exc)}, status=500)


async def serve(ctx: contexts.OperatorContext, url: str) -> None:
    """Serve the liveness endpoint until cancelled."""
    from aiohttp import web  # aiohttp's server: only when serving
    endpoint = Endpoint.parse(url)
    app = web.Application()
    app.router.add_get(endpoint.path, Prober(ctx).handle)
    if ctx.metrics.enabled and endpoint.path != '/metrics':
        from kopf._metrics import prometheus as metrics  # `kopf[metrics]`: only with metrics on
        metrics.route(app, ctx.metrics)  # `/metrics` on the liveness server too
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, endpoint.host, endpoint.port).start()
        logger.debug(f'Serving the liveness endpoint at {url}.')
        await asyncio.Future()
    finally:
        await runner.cleanup()
