"""The emulator: one aiohttp application over the state, with its control surface for tests.

`Emulator` runs in the current event loop (`await emu.start()` / `await emu.stop()`); its methods
for faults, watches, history and counters are the same ones the HTTP control API exposes.
"""
import asyncio
import contextlib
import logging
import os
import pathlib
import re
import socket
import time
from collections.abc import Callable, Mapping
from typing import Any

from aiohttp import web

from kopf._cluster import (
    authorizing,
    certificates,
    control,
    controllers,
    discovery,
    encoding,
    errors,
    faults,
    handlers,
    kinds,
    kubeconfig,
    writing,
)
from kopf._cluster.faults import Rule
from kopf._cluster.routing import Target
from kopf._cluster.state import State
from kopf._cluster.store import Obj
from kopf._cluster.streaming import Streams
from kopf._cluster.watching import Hub

logger = logging.getLogger(__name__)


DEFAULT_DEADLINE = 60.0
CLIENT_MAX_SIZE = 64 * 1024 * 1024   # bytes of a request body (aiohttp's default is 1 MiB)
_DURATION = re.compile(r'(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)')
_UNITS = {'ns': 1e-9, 'us': 1e-6, 'µs': 1e-6, 'ms': 1e-3, 's': 1.0, 'm': 60.0, 'h': 3600.0}


def _deadline(request: web.Request) -> float:
    """Non-watch requests are cut at `?timeout=` (Go duration) or 60 s; watches never."""
    if request.query.get('watch') in ('1', 't', 'T', 'true', 'TRUE', 'True'):
        return float('inf')
    text = request.query.get('timeout', '')
    parts = _DURATION.findall(text)
    if not parts or ''.join(n + u for n, u in parts) != text:
        return DEFAULT_DEADLINE
    return sum(float(number) * _UNITS[unit] for number, unit in parts)


async def _sleep_until(event: asyncio.Event, seconds: float) -> None:
    """Wait for the event or the time, whichever first (no `wait_for`: in 3.11 it can swallow cancellations)."""
    try:
        async with asyncio.timeout(seconds):
            await event.wait()
    except TimeoutError:
        pass


async def _expect_continue(request: web.Request) -> None:
    if request.version != (1, 1):
        return
    if request.headers.get('Expect', '').lower() != '100-continue':
        raise web.HTTPExpectationFailed(text=f'Unknown Expect: {request.headers.get("Expect")}')
    await request.writer.write(b'HTTP/1.1 100 Continue\r\n\r\n')
    request.writer.output_size = 0
    await request.writer.drain()


def _common_name(request: web.Request) -> str | None:
    """The CN of a verified client certificate, if the client presented one."""
    transport = request.transport
    peer = transport.get_extra_info('peercert') if transport is not None else None
    for rdn in (peer or {}).get('subject', ()):
        for key, value in rdn:
            if key == 'commonName':
                return str(value)
    return None


class Emulator:
    """A Kubernetes API server in memory, served over plain HTTP on loopback by default."""

    def __init__(self, *, host: str = '127.0.0.1', port: int = 0, git_version: str = discovery.DEFAULT_VERSION,
                 history_size: int = 10000, bookmark_interval: float = 60.0, watch_timeout: float = 1800.0,
                 allow_http_webhooks: bool = False, state_file: str | os.PathLike[str] | None = None,
                 tls: bool = False, tokens: Mapping[str, str] | None = None,
                 webhook_services: Mapping[str, str] | None = None, event_ttl: float = 3600.0,
                 client_certs: bool = False) -> None:
        self.host = host
        self.client_certs = client_certs   # require a client certificate (or a token) signed by our CA
        self.webhook_services = dict(webhook_services or {})   # "namespace/name" -> base URL of the service
        self.tls = tls or client_certs
        self.tokens = dict(tokens) if tokens is not None else None   # bearer token -> user name
        self.kubeconfig_path: pathlib.Path | None = None   # the last kubeconfig written (rewritten on rotation)
        self.certificates: certificates.Certificates | None = None
        self.denials: list[authorizing.Denial] = []
        self.state_file = pathlib.Path(state_file) if state_file is not None else None
        self.port = port
        self.git_version = git_version
        settings = kinds.Settings(allow_http_webhooks=allow_http_webhooks, event_ttl=event_ttl)
        self.state = State(history_size=history_size, settings=settings)
        self.hub = Hub(bookmark_interval=bookmark_interval)
        self.state.store.listeners.append(self.hub)
        self.streams = Streams(self.state, self.hub, max_timeout=watch_timeout)
        self.faults = faults.Faults()
        self._runner: web.ServerRunner | None = None
        self._controller: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._stopping = False
        self.print_request: Callable[[str], None] | None = None   # `kopf cluster -v`: a line per request

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f'{"https" if self.tls else "http"}://{self.address}'

    def write_kubeconfig(self, path: str | os.PathLike[str]) -> pathlib.Path:
        """A kubeconfig for this server: its URL, its CA (HTTPS mode), its first token (if any)."""
        ca_pem = self.certificates.ca_pem if self.certificates is not None else None
        token = next(iter(self.tokens), None) if self.tokens else None
        client = None
        if self.client_certs and self.certificates is not None and token is None:
            client = self.certificates.client(authorizing.DEFAULT_USER)
        self.kubeconfig_path = kubeconfig.write(path, self.url, ca_pem=ca_pem, token=token, client=client)
        return self.kubeconfig_path

    @property
    def address(self) -> str:
        host = f'[{self.host}]' if ':' in self.host else self.host
        return f'{host}:{self.port}'

    def make_server(self) -> web.Server:
        """aiohttp's low-level server straight into `_dispatch`: every path is ours, so no router, no app."""
        loop = asyncio.get_running_loop()

        def make_request(message: Any, payload: Any, protocol: Any, writer: Any, task: Any) -> web.Request:
            return web.Request(message, payload, protocol, writer, task, loop, client_max_size=CLIENT_MAX_SIZE)

        return web.Server(self._dispatch, request_factory=make_request,  # type: ignore[arg-type]
                          handler_cancellation=True, access_log=None)

    async def start(self) -> None:
        """Bind and serve; raises OSError if the port is taken (or the state file is unreadable)."""
        self._stopping = False
        if self.state_file is not None and self.state_file.exists():
            self.state.restore(encoding.loads(self.state_file.read_bytes()))
        self._wake = asyncio.Event()
        self._runner = web.ServerRunner(self.make_server(), handle_signals=False, shutdown_timeout=1.0)
        await self._runner.setup()
        sock = socket.socket(socket.AF_INET6 if ':' in self.host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.port))
        except OSError:
            sock.close()
            await self._runner.cleanup()
            raise
        self.port = sock.getsockname()[1]
        if self.tls and self.certificates is None:
            self.certificates = certificates.make(self.host)
        context = None
        if self.tls and self.certificates is not None:
            context = self.certificates.server_context(verify_clients=self.client_certs)
        await web.SockSite(self._runner, sock, ssl_context=context).start()
        self._controller = asyncio.create_task(self._run_controllers())

    async def stop(self) -> None:
        self.hub.close_all()
        self._stopping = True
        self._wake.set()
        if self._controller is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._controller
            self._controller = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self.state_file is not None:
            self.save_state(self.state_file)

    def save_state(self, path: str | os.PathLike[str]) -> None:
        """Write the objects and the RV counter (atomically) so that a later start resumes from them."""
        target = pathlib.Path(path)
        temporary = target.with_name(f'.{target.name}.tmp')
        temporary.write_bytes(encoding.dumps(self.state.snapshot()))
        os.replace(temporary, target)

    async def _run_controllers(self) -> None:
        pending = False
        while not self._stopping:
            await _sleep_until(self._wake, 0.1 if pending else 1.0)
            self._wake.clear()
            try:
                pending = controllers.sweep(self.state)
            except Exception:   # a bug of ours must not stop garbage collection for good
                logger.exception('The emulator controllers failed; retrying soon.')
                pending = True

    def wake_controllers(self) -> None:
        self._wake.set()

    # -- request dispatch ------------------------------------------------------------------------

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
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
        if path.startswith('/_emulator/'):
            return await control.serve(self, request)
        entry = {'method': request.method, 'path': path, 'query': request.query_string,
                 'contentType': request.headers.get('Content-Type', ''), 'code': 0}
        self.faults.requests.append(entry)
        if (self.tokens is not None or self.client_certs) and not self._authenticated(request, path):
            entry['code'] = 401
            return handlers.respond_error(errors.ApiError(401, 'Unauthorized', 'Unauthorized', {}))
        response = await self._answer(request, path)
        entry['code'] = response.status
        return response

    def user_of(self, request: web.Request) -> str:
        """The user of a request: by its bearer token or client certificate CN; else the default admin."""
        _, _, token = request.headers.get('Authorization', '').partition(' ')
        if self.tokens and token.strip() in self.tokens:
            return self.tokens[token.strip()]
        return _common_name(request) or authorizing.DEFAULT_USER

    def _authenticated(self, request: web.Request, path: str) -> bool:
        if path in ('/healthz', '/livez', '/readyz'):
            return True
        scheme, _, token = request.headers.get('Authorization', '').partition(' ')
        if scheme.lower() == 'bearer' and self.tokens is not None and token.strip() in self.tokens:
            return True
        return self.client_certs and _common_name(request) is not None

    async def _answer(self, request: web.Request, path: str) -> web.StreamResponse:
        rule = self.faults.find(request.method, path) if self.faults.rules else None
        if rule is not None:
            deadline = _deadline(request)
            if rule.latency and rule.latency >= deadline:   # the server's own request deadline cuts it
                await asyncio.sleep(deadline)
                return handlers.respond_error(errors.ApiError(
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
        except errors.ApiError as exc:
            return handlers.respond_error(exc)
        except (asyncio.CancelledError, ConnectionError):
            raise
        except Exception as exc:   # a bug of ours: still answer as a real server would, with a Status
            logger.exception('Unexpected failure serving %s %s', request.method, path)
            return handlers.respond_error(errors.internal(f'{type(exc).__name__}: {exc}'))

    async def _route(self, request: web.Request, path: str) -> web.StreamResponse:
        if path in ('/healthz', '/livez', '/readyz'):
            self.faults.count('get', 'health')
            return web.Response(text='ok')
        if path in ('/version', '/version/'):
            self.faults.count('get', 'version')
            return handlers.respond(200, encoding.dumps(discovery.version_info(self.git_version)))
        if path == '/openapi/v2':
            self.faults.count('get', 'openapi')
            return await handlers.openapi_v2(request)
        if path.startswith('/api/') or path.startswith('/apis/') or path in ('/api', '/apis'):
            accept = request.headers.get('Accept', '')
            if accept and 'protobuf' in accept and 'json' not in accept and '*/*' not in accept:
                raise errors.not_acceptable()
            return await handlers.api(self, request)
        self.faults.count(request.method.lower(), 'other')
        raise errors.generic_not_found()

    # -- the control surface (also served under /_emulator/) -------------------------------------

    def fail(self, method: str = '*', path: str = '*', status: int = 500, *, count: int | None = 1,
             retry_after: int | None = None, text: bool = False, message: str | None = None,
             latency: float = 0.0) -> Rule:
        """Fail the next `count` requests matching method and path (glob, or `re:` regex) with `status`."""
        return self.faults.add(Rule(method=method, path=path, status=status, count=count,
                                    retry_after=retry_after, text=text, message=message, latency=latency))

    def drop(self, method: str = '*', path: str = '*', *, count: int | None = 1) -> Rule:
        """Reset the connection of the next `count` matching requests without any answer."""
        return self.faults.add(Rule(method=method, path=path, status=None, count=count, drop=True))

    def throttle(self, method: str = '*', path: str = '*', *, count: int | None = 1, retry_after: int = 1) -> Rule:
        """The plain-text 429 that real servers send under max-in-flight throttling."""
        return self.fail(method, path, 429, count=count, retry_after=retry_after, text=True)

    def delay(self, method: str = '*', path: str = '*', seconds: float = 1.0, *, count: int | None = 1) -> Rule:
        return self.faults.add(Rule(method=method, path=path, status=None, count=count, latency=seconds))

    def clear_faults(self) -> None:
        self.faults.clear()

    def forbid(self, verb: str = '*', resource: str = '*', *, group: str = '*', namespace: str | None = None,
               user: str = '*') -> authorizing.Denial:
        """Deny matching requests with the exact 403 of a real server (until `allow_all()`)."""
        denial = authorizing.Denial(verb=verb, resource=resource, group=group, namespace=namespace, user=user)
        self.denials.append(denial)
        return denial

    def allow_all(self) -> None:
        self.denials.clear()

    def rotate_token(self, old: str, new: str | None) -> None:
        """Replace a bearer token by a new one of the same user (`new=None` revokes it): the old one gets 401.

        Open watches are not cut (a real server authenticates a request only when it starts).
        The kubeconfig written last is rewritten, so that a re-login from it finds the new token.
        """
        if self.tokens is None or old not in self.tokens:
            raise ValueError('no such token')
        if new == '':
            raise ValueError('the new token is empty')
        if new is not None and new != old and new in self.tokens:
            raise ValueError('the new token is already in use')
        self.tokens = {(token if token != old else new or token): name for token, name in self.tokens.items()
                       if token != old or new is not None}
        if self.kubeconfig_path is not None:
            self.write_kubeconfig(self.kubeconfig_path)

    def close_watches(self, abort: bool = False) -> int:
        """End all watch streams: cleanly (the chunked body ends), or by resetting their connections."""
        return self.hub.close_all(abort=abort)

    def fail_watches(self, code: int = 410) -> int:
        """Send an ERROR event with a Status of `code` (410 Expired, 500 InternalError) to all watches and end them."""
        if code == 410:
            status = errors.expired(f'too old resource version: 1 ({self.state.store.rv})').status()
        else:
            status = errors.ApiError(code, faults.REASONS.get(code, 'InternalError'),
                                     faults.MESSAGES.get(code, f'injected watch error {code}'), {}).status()
        status.pop('details', None)
        return self.hub.error_all(status)

    def compact_history(self, keep: int = 0) -> None:
        self.state.store.compact(keep)

    def set_bookmark_interval(self, seconds: float) -> None:
        self.hub.set_bookmark_interval(seconds)

    def counters(self) -> dict[str, int]:
        return self.faults.snapshot()

    def reset_counters(self) -> None:
        self.faults.counters.clear()

    def event_log(self) -> list[tuple[str, str, str]]:
        """(uid, resourceVersion, type) of every persisted change, oldest first."""
        return list(self.state.store.log)

    def request_log(self) -> list[dict[str, Any]]:
        return list(self.faults.requests)

    # -- direct object access (no HTTP) ----------------------------------------------------------

    def target(self, api_version: str, kind_or_plural: str, name: str | None = None,
               namespace: str | None = None) -> Target:
        group, _, version = api_version.rpartition('/')
        catalog = self.state.catalog
        resource = catalog.lookup(group, version, kind_or_plural) or catalog.by_kind(api_version, kind_or_plural)
        if resource is None:
            raise errors.generic_not_found()
        if resource.namespaced and name is not None:
            namespace = namespace or 'default'
        return Target(resource, namespace if resource.namespaced else None, name)

    def apply(self, obj: Obj) -> Obj:
        """Create the object, or merge it into the existing one (like `kubectl apply`, minus annotations)."""
        meta = obj.get('metadata') or {}
        target = self.target(obj['apiVersion'], obj['kind'], None, meta.get('namespace') or 'default')
        try:
            outcome = writing.create(self.state, target, encoding.clone(obj), writing.Options())
        except errors.ApiError as exc:
            if exc.reason != 'AlreadyExists':
                raise
            one = Target(target.resource, target.namespace, meta['name'])
            body = {k: v for k, v in obj.items() if k != 'status' or not target.resource.has_status}
            outcome = writing.patch(self.state, one, 'application/merge-patch+json', body, writing.Options())
        return encoding.loads(outcome.data)  # type: ignore[no-any-return]

    def get(self, api_version: str, kind_or_plural: str, name: str, namespace: str | None = None) -> Obj | None:
        target = self.target(api_version, kind_or_plural, name, namespace)
        found = self.state.store.get(target.resource.key, target.namespace or '', name)
        return encoding.clone(found) if found is not None else None

    def list(self, api_version: str, kind_or_plural: str, namespace: str | None = None) -> list[Obj]:
        target = self.target(api_version, kind_or_plural, None, namespace)
        return [encoding.clone(o) for o in self.state.store.iterate(target.resource.key, target.namespace)]
