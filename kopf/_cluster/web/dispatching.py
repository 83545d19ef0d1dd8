"""The HTTP server: aiohttp's low-level server straight into one dispatcher, no router, no app.

Per request: the request log, authentication, impersonation and authorization (`accessrules`), then the
injected faults (fail, delay, drop), then the route: health, version, OpenAPI, or the Kubernetes API
(`endpoints`, given the `Backend`).
Paths under `/_emulator/` go to the control API callable it was given, untouched by faults.
"""
import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from kopf._cluster import jsoncodec, statuses
from kopf._cluster.rbac import subjects
from kopf._cluster.web import accessrules, apidiscovery, endpoints
from kopf._cluster.web.endpoints import Backend

logger = logging.getLogger(__name__)

DEFAULT_DEADLINE = 60.0
CLIENT_MAX_SIZE = 64 * 1024 * 1024   # bytes of a request body (aiohttp's default is 1 MiB)
CONTROL_PREFIX = '/_emulator/'
_DURATION = re.compile(r'(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)')
_UNITS = {'ns': 1e-9, 'us': 1e-6, 'µs': 1e-6, 'ms': 1e-3, 's': 1.0, 'm': 60.0, 'h': 3600.0}

Control = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _deadline(request: web.Request) -> float:
    """Non-watch requests are cut at `?timeout=` (Go duration) or 60 s; watches never."""
    if request.query.get('watch') in ('1', 't', 'T', 'true', 'TRUE', 'True'):
        return float('inf')
    text = request.query.get('timeout', '')
    parts = _DURATION.findall(text)
    if not parts or ''.join(n + u for n, u in parts) != text:
        return DEFAULT_DEADLINE
    return sum(float(number) * _UNITS[unit] for number, unit in parts)


async def _expect_continue(request: web.Request) -> None:
    if request.version != (1, 1):
        return
    if request.headers.get('Expect', '').lower() != '100-continue':
        raise web.HTTPExpectationFailed(text=f'Unknown Expect: {request.headers.get("Expect")}')
    await request.writer.write(b'HTTP/1.1 100 Continue\r\n\r\n')
    request.writer.output_size = 0
    await request.writer.drain()


def _impersonating(request: web.Request) -> bool:
    headers = request.headers
    if 'Impersonate-User' in headers:
        return True
    if 'impersonate-' not in ' '.join(headers).lower():   # the usual: no such header at all (at C speed)
        return False
    return any(key.lower().startswith('impersonate-') for key in headers)


class Dispatcher:
    """Every request, from aiohttp's low-level server to its answer."""

    def __init__(self, backend: Backend, control: Control, git_version: str = apidiscovery.DEFAULT_VERSION) -> None:
        self.backend = backend
        self.control = control
        self.git_version = git_version
        self.print_request: Callable[[str], None] | None = None   # `kopf cluster -v`: a line per request

    def make_server(self) -> web.Server:
        loop = asyncio.get_running_loop()

        def make_request(message: Any, payload: Any, protocol: Any, writer: Any, task: Any) -> web.Request:
            return web.Request(message, payload, protocol, writer, task, loop, client_max_size=CLIENT_MAX_SIZE)

        return web.Server(self.dispatch, request_factory=make_request,  # type: ignore[arg-type]
                          handler_cancellation=True, access_log=None)

    async def dispatch(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get('Expect'):   # what aiohttp's router did for us: `100 Continue` (curl sends it)
            await _expect_continue(request)
        if self.print_request is None:
            return await self._handle(request)
        started, status = time.monotonic(), '-'
        try:
            response = await self._handle(request)
            status = str(response.status)
            return response
        finally:
            elapsed = (time.monotonic() - started) * 1000
            self.print_request(f'{request.method} {request.path_qs} {status} {elapsed:.1f}ms')

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        if path.startswith(CONTROL_PREFIX):
            return await self.control(request)
        backend = self.backend
        entry = {'method': request.method, 'path': path, 'query': request.query_string,
                 'contentType': request.headers.get('Content-Type', ''), 'code': 0}
        backend.faults.requests.append(entry)
        access = backend.access
        user = access.authenticate(request, path)
        if user is None:
            entry['code'] = 401
            return endpoints.respond_error(statuses.ApiError(401, 'Unauthorized', 'Unauthorized'))
        if user is not subjects.ADMIN or access.denials or _impersonating(request):
            try:
                user = access.admit(request, path, user)
            except statuses.ApiError as exc:
                entry['code'] = exc.code
                return endpoints.respond_error(exc)
            request[accessrules.USER_KEY] = user
        response = await self._answer(request, path)
        entry['code'] = response.status
        return response

    async def _answer(self, request: web.Request, path: str) -> web.StreamResponse:
        faults = self.backend.faults
        agent = request.headers.get('User-Agent', '')
        rule = faults.find(request.method, path, agent, request.query_string) if faults.rules else None
        if rule is not None:
            deadline = _deadline(request)
            if rule.latency and rule.latency >= deadline:   # the server's own request deadline cuts it
                await asyncio.sleep(deadline)
                return endpoints.respond_error(statuses.ApiError(
                    504, 'Timeout', 'Timeout: request did not complete within requested timeout - '
                    'context deadline exceeded', {}))
            if rule.latency:
                await asyncio.sleep(rule.latency)
            if rule.drop and request.transport is not None:
                request.transport.abort()
                raise asyncio.CancelledError('the connection was dropped by an injected fault')
            if rule.status:
                code, headers, body = rule.response()
                return web.Response(status=code, body=body, headers=headers)
        try:
            return await self._route(request, path)
        except statuses.ApiError as exc:
            return endpoints.respond_error(exc)
        except web.HTTPRequestEntityTooLarge:   # aiohttp's, when reading a body over the limit: a Status, as real
            return endpoints.respond_error(statuses.ApiError(
                413, 'RequestEntityTooLarge', f'Request entity too large: limit is {CLIENT_MAX_SIZE}', {}))
        except (asyncio.CancelledError, ConnectionError):
            raise
        except Exception as exc:   # a bug of ours: still answer as a real server would, with a Status
            logger.exception('Unexpected failure serving %s %s', request.method, path)
            return endpoints.respond_error(statuses.internal(f'{type(exc).__name__}: {exc}'))

    async def _route(self, request: web.Request, path: str) -> web.StreamResponse:
        faults = self.backend.faults
        if path in ('/healthz', '/livez', '/readyz'):
            faults.count('get', 'health')
            return web.Response(text='ok')
        if path in ('/version', '/version/'):
            faults.count('get', 'version')
            return endpoints.respond(200, jsoncodec.dumps(apidiscovery.version_info(self.git_version)))
        if path == '/openapi/v2' or path == '/openapi/v3' or path.startswith('/openapi/v3/'):
            faults.count('get', 'openapi')
            return await endpoints.openapi(self.backend, request)
        if path.startswith('/api/') or path.startswith('/apis/') or path in ('/api', '/apis'):
            accept = request.headers.get('Accept', '')
            if accept and 'protobuf' in accept and 'json' not in accept and '*/*' not in accept:
                raise statuses.not_acceptable()
            return await endpoints.api(self.backend, request)
        faults.count(request.method.lower(), 'other')
        raise statuses.generic_not_found()
