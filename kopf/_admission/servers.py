"""Admission webhook servers and tunnels for `settings.admission.server`.

`WebhookServer` serves HTTPS with `httpserving` (a small HTTP/1.1 server, loaded when it starts): with the
given certificate, or a self-signed CA and certificate made with `cryptography` (SANs for the host,
the address and `extra_sans`; the CA goes into the client config's `caBundle`, and to `cadump`).
`WebhookK3dServer`, `WebhookMinikubeServer`, `WebhookDockerDesktopServer` differ in the host that
the cluster reaches the operator at; `WebhookAutoServer` picks that host by what the operator's API
client learns of the cluster (its version, its certificate's names), else serves as the plain one.
`WebhookNgrokTunnel` serves plain HTTP locally behind an ngrok HTTPS URL (`pyngrok`, imported only
when it starts); `WebhookAutoTunnel` is the auto server for a detected local cluster, else the tunnel.
"""
import asyncio
import base64
import functools
import logging
import os
import pathlib
import socket
import ssl
import urllib.parse
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any, ClassVar

from kopf._admission import protocols
from kopf._admission.protocols import WebhookClientConfig, WebhookFn, WebhookServerProtocol
from kopf._api import credentials
from kopf._shared import encoding, extras, localhosts

PathLike = str | os.PathLike[str]


logger = logging.getLogger('kopf.webhooks')


class WebhookServer:
    """A local HTTPS server for admission requests (a self-signed certificate unless one is given).

    As an async generator of client configs (`settings.admission.server = kopf.WebhookServer(...)`)
    it serves until cancelled, yielding its config once; as an async context manager it serves
    while the `async with` block runs. `POST <path>/<webhook id>` with an AdmissionReview body.
    """

    DEFAULT_HOST: ClassVar[str | None] = None
    MAX_BODY = 16 * 1024 * 1024  # an UPDATE review carries the object and the old object
    REQUEST_TIMEOUT = 30.0  # for a request to arrive whole (the API server waits 30 s at most anyway)
    IDLE_TIMEOUT = 75.0     # for the next request on a keep-alive connection

    def __init__(
            self,
            *,
            addr: str | None = None,
            port: int | None = None,
            path: str | None = None,
            host: str | None = None,
            cadata: bytes | None = None,
            cafile: PathLike | None = None,
            cadump: PathLike | None = None,
            context: ssl.SSLContext | None = None,
            insecure: bool = False,
            certfile: PathLike | None = None,
            pkeyfile: PathLike | None = None,
            password: str | None = None,
            extra_sans: Iterable[str] = (),
            verify_mode: ssl.VerifyMode | None = None,
            verify_cafile: PathLike | None = None,
            verify_capath: PathLike | None = None,
            verify_cadata: str | bytes | None = None,
            file_check_interval: float = 60,
    ) -> None:
        self.addr, self.port, self.path, self.host = addr, port, path, host
        self.cadata, self.cafile, self.cadump, self.context = cadata, cafile, cadump, context
        self.insecure, self.certfile, self.pkeyfile, self.password = insecure, certfile, pkeyfile, password
        self.extra_sans = list(extra_sans)
        self.verify_mode, self.verify_cafile = verify_mode, verify_cafile
        self.verify_capath, self.verify_cadata = verify_capath, verify_cadata
        self.file_check_interval = file_check_interval
        self._server: Any = None  # `httpserving.Server` while serving
        self._context: ssl.SSLContext | None = None
        self._host: str | None = None  # the URL host chosen when the server starts
        self.bound_port: int | None = None  # the port it listens on, once started

    def _needs(self) -> list[tuple[tuple[extras.Dependency, ...], str]]:
        """The optional dependencies it needs as configured (checked before the operator's watchers start)."""
        if self.insecure or self.context is not None or (self.certfile is not None and self.pkeyfile is not None):
            return []
        return [((extras.WEBHOOK_CERTIFICATES,), self._self_signed())]

    def _self_signed(self) -> str:
        return f'kopf.{type(self).__name__}() without certfile/pkeyfile (a self-signed certificate)'

    async def _guess_host(self) -> str | None:
        """The URL host when none is given: the class's (`DEFAULT_HOST`), or (in `WebhookAutoServer`) a detected one."""
        return self.DEFAULT_HOST

    async def __call__(self, fn: WebhookFn) -> AsyncIterator[WebhookClientConfig]:
        config = await self._start(fn)
        try:
            yield config
            await self._watch_files()  # serve until cancelled
        finally:
            await self._stop()

    async def _watch_files(self) -> None:
        """Re-read the certificate files when they change (e.g. renewed by cert-manager); new connections use them."""
        context, certfile, pkeyfile = self._context, self.certfile, self.pkeyfile
        if context is None or certfile is None or pkeyfile is None or self.context is not None:
            await asyncio.Event().wait()
            return
        files = [pathlib.Path(certfile), pathlib.Path(pkeyfile)]
        seen = [_mtime(f) for f in files]
        while True:
            await asyncio.sleep(self.file_check_interval)
            now = [_mtime(f) for f in files]
            if now != seen:
                seen = now
                try:
                    context.load_cert_chain(certfile, pkeyfile, password=self.password)
                    logger.info(f'The webhook server re-read its certificate: {self.certfile}')
                except (OSError, ssl.SSLError) as exc:  # e.g. half-written: the old one serves until the next check
                    logger.warning(f'The webhook server could not re-read its certificate: {exc!r}')

    async def __aenter__(self) -> 'WebhookServer':
        return self

    async def __aexit__(self, *_: Any) -> None:
        await self._stop()

    async def _start(self, fn: WebhookFn) -> WebhookClientConfig:
        from kopf._admission import httpserving  # only when a webhook server starts

        self._host = self.host or await self._guess_host()
        prefix = '/' + (self.path or '').strip('/')
        context, ca_pem = self._tls()
        self._context = context
        self._server = httpserving.Server(functools.partial(_serve_review, fn, prefix.rstrip('/')),
                                          max_body=self.MAX_BODY, request_timeout=self.REQUEST_TIMEOUT,
                                          idle_timeout=self.IDLE_TIMEOUT)
        sock = _listen(self.addr, self.port or 0)
        await self._server.start(sock, context)
        port = self.bound_port = int(sock.getsockname()[1])
        listening = self.addr if self.addr not in (None, '', '0.0.0.0', '::') else 'localhost'
        host = self._host or listening
        url = f'{"http" if self.insecure else "https"}://{host}:{port}{prefix.rstrip("/")}'
        config: WebhookClientConfig = {'url': url}
        if ca_pem is not None:
            config['caBundle'] = base64.b64encode(ca_pem).decode()
        logger.debug(f'Listening for webhooks at {url}')
        return config

    async def _stop(self) -> None:
        if self._server is not None:
            server, self._server = self._server, None
            await server.close()

    def _tls(self) -> tuple[ssl.SSLContext | None, bytes | None]:
        """The server's TLS context (TLS 1.2+), and the CA to put into the client config (if known)."""
        if self.insecure:
            return None, None
        ca_pem = self.cadata or (pathlib.Path(self.cafile).read_bytes() if self.cafile else None)
        context = self.context
        if context is None:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.minimum_version = ssl.TLSVersion.TLSv1_2
            if self.certfile is not None and self.pkeyfile is not None:
                context.load_cert_chain(self.certfile, self.pkeyfile, password=self.password)
            else:
                from kopf._shared import certificates  # optional: `cryptography`
                host = self._host or 'localhost'
                try:
                    made = certificates.make(host, *([self.addr] if self.addr else []), *self.extra_sans)
                except ImportError as exc:
                    if (exc.name or '').split('.')[0] != 'cryptography':
                        raise
                    raise ImportError(extras.needs(extras.WEBHOOK_CERTIFICATES, what=self._self_signed()),
                                      name='cryptography') from None
                ca_pem = made.ca_pem
                import tempfile  # only here: it loads shutil, bz2, lzma and random
                with tempfile.TemporaryDirectory() as tmp:
                    cert, key = pathlib.Path(tmp) / 'cert.pem', pathlib.Path(tmp) / 'key.pem'
                    cert.write_bytes(made.cert_pem)
                    key.touch(mode=0o600)
                    key.write_bytes(made.key_pem)
                    context.load_cert_chain(str(cert), str(key))
            if self.verify_mode is not None:
                context.verify_mode = self.verify_mode
            if self.verify_cafile or self.verify_capath or self.verify_cadata:
                context.load_verify_locations(cafile=self.verify_cafile, capath=self.verify_capath,
                                              cadata=self.verify_cadata)
        if self.cadump is not None and ca_pem is not None:
            pathlib.Path(self.cadump).write_bytes(ca_pem)
        return context, ca_pem


def _mtime(path: pathlib.Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _listen(addr: str | None, port: int) -> socket.socket:
    """One listening socket, so that a random port is the same on all interfaces (IPv4 and IPv6 when dual-stack)."""
    if addr in (None, '', '::') and socket.has_dualstack_ipv6():
        return socket.create_server(('::', port), family=socket.AF_INET6, dualstack_ipv6=True, reuse_port=False)
    host = '0.0.0.0' if addr in (None, '') else addr
    family = socket.AF_INET6 if ':' in str(host) else socket.AF_INET
    return socket.create_server((host, port), family=family)


async def _serve_review(fn: WebhookFn, prefix: str, request: Any) -> tuple[int, bytes] | tuple[int, bytes, Any]:
    """One request: POST `<prefix>[/<webhook id>]` with an AdmissionReview; 400 for what is not one, 500 for our
    own failure (logged), 404/405 for other paths and methods. The handlers' outcome lines are logged once the
    answer is written (the third item: `httpserving` calls it then)."""
    from kopf._admission import answering  # the admission runtime: only when serving

    deferred: answering.Deferred = []
    token = answering.deferred_logs.set(deferred)
    try:
        status, body = await _answer_review(fn, prefix, request)
    finally:
        answering.deferred_logs.reset(token)
    return (status, body, functools.partial(answering.emit_deferred, deferred)) if deferred else (status, body)


async def _answer_review(fn: WebhookFn, prefix: str, request: Any) -> tuple[int, bytes]:
    path: str = request.path
    if path != prefix and not path.startswith(prefix + '/'):
        return 404, b'{"error":"Not found."}'
    if request.method != 'POST':
        return 405, b'{"error":"Only POST is served."}'
    webhook = urllib.parse.unquote(path[len(prefix) + 1:]) or None
    try:
        payload = encoding.loads(request.body)
    except (ValueError, UnicodeDecodeError) as exc:  # malformed JSON, a wrong charset
        logger.warning(f'A malformed admission request to {path!r}: {exc!r}')
        return 400, b'{"error":"The body is not JSON."}'
    try:
        answer = await fn(payload, webhook=webhook, headers=dict(request.headers), sslpeer=request.peercert)
    except protocols.BadReview as exc:
        logger.warning(f'A bad admission request to {path!r}: {exc}')
        return 400, encoding.dumps({'error': str(exc)})
    except Exception as exc:
        logger.exception(f'An admission request to {path!r} failed: {exc!r}')
        return 500, b'{"error":"The request failed."}'
    return 200, encoding.dumps(answer)


class WebhookK3dServer(WebhookServer):
    """A local server reachable from a K3d cluster."""

    DEFAULT_HOST = localhosts.K3D_HOST


class WebhookMinikubeServer(WebhookServer):
    """A local server reachable from a Minikube cluster."""

    DEFAULT_HOST = localhosts.MINIKUBE_HOST


class WebhookDockerDesktopServer(WebhookServer):
    """A local server reachable from a Docker Desktop cluster."""

    DEFAULT_HOST = localhosts.DOCKER_DESKTOP_HOST


class WebhookAutoServer(WebhookServer):
    """A local server for the detected local cluster (K3d/K3s, Minikube, Docker Desktop), else plain.

    The cluster is recognised by what the operator's API client knows of it: the server's `/version`
    (`+k3s` in `gitVersion`) and the names in the API server's certificate. Never a tunnel.
    """

    async def _guess_host(self) -> str | None:
        host = await guess_host()
        logger.debug(f'The webhook server guessed its host: {host or "none, a plain server"}')
        return host


async def guess_host() -> str | None:
    """The host for webhooks of the operator's cluster, if it is a known local one (`kopf._admission.protocols`)."""
    from kopf._admission.answering import client_var  # the admission runtime: only when serving

    client = client_var.get(None)
    if client is None:  # a server started outside of an operator: nothing to ask
        return None
    version: str | None = None
    try:
        info = await client.request('GET', '/version')
        version = str(info.get('gitVersion')) if isinstance(info, Mapping) else None
    except Exception as exc:  # e.g. forbidden: the certificate may still say it
        logger.debug(f'The webhook server could not read the API server version: {exc!r}')
    try:
        names = await _server_certificate_names(client)
    except Exception as exc:  # e.g. no credentials: a guess is not worth failing the operator for
        logger.debug(f'The webhook server could not read the API server certificate: {exc!r}')
        names = []
    return localhosts.guess_host(version, names)


async def _server_certificate_names(client: Any) -> list[str]:
    """The names in the API server's TLS certificate, reached as the client reaches it (none for plain HTTP)."""
    creds = (await client.vault.select()).credentials
    parsed = urllib.parse.urlsplit(creds.server)
    if not isinstance(creds, credentials.ConnectionInfo) or parsed.scheme != 'https' or not parsed.hostname:
        return []
    try:
        context = creds.as_ssl_context()
        async with asyncio.timeout(client.settings.networking.connect_timeout or 10):
            _, writer = await asyncio.open_connection(parsed.hostname, parsed.port or 443, ssl=context,
                                                      server_hostname=parsed.hostname)
        try:
            tls = writer.get_extra_info('ssl_object')
            peercert = tls.getpeercert() if tls is not None else None
        finally:
            writer.close()
    except (OSError, TimeoutError, ssl.SSLError, ValueError) as exc:
        logger.debug(f'The webhook server could not read the API server certificate: {exc!r}')
        return []
    return localhosts.certificate_names(peercert or {})  # empty when unverified (`insecure`): the version decides


class WebhookNgrokTunnel:
    """A local HTTP server exposed to the cluster via an ngrok HTTPS tunnel (needs `pyngrok`: `kopf[dev]`).

    The ngrok process (downloaded by pyngrok on first use, or `binary`) terminates TLS with a publicly
    trusted certificate, so the client config has a URL and no `caBundle`. `token` is the ngrok
    authtoken, `region` its region (e.g. `eu`); `addr`, `port`, `path` are those of the local server.
    """

    def __init__(
            self,
            *,
            addr: str | None = None,
            port: int | None = None,
            path: str | None = None,
            token: str | None = None,
            region: str | None = None,
            binary: PathLike | None = None,
    ) -> None:
        self.addr, self.port, self.path = addr, port, path
        self.token, self.region, self.binary = token, region, binary

    def _needs(self) -> list[tuple[tuple[extras.Dependency, ...], str]]:
        return [((extras.NGROK,), f'kopf.{type(self).__name__}')]

    async def __call__(self, fn: WebhookFn) -> AsyncIterator[WebhookClientConfig]:
        ngrok, config = _pyngrok(self)
        server = WebhookServer(addr=self.addr or '127.0.0.1', port=self.port, path=self.path, insecure=True)
        local = await server._start(fn)
        try:
            tunnel = await asyncio.to_thread(ngrok.connect, server.bound_port, proto='http', bind_tls=True,
                                             pyngrok_config=config)
            public = str(tunnel.public_url)
            try:
                url = (public.rstrip('/') + '/' + (self.path or '').strip('/')).rstrip('/')  # https: bind_tls
                logger.info(f'The webhook tunnel is open: {url} -> {local["url"]}')
                yield {'url': url}
                await asyncio.Event().wait()  # serve until cancelled
            finally:
                await asyncio.shield(asyncio.to_thread(ngrok.disconnect, public, pyngrok_config=config))
        finally:
            await server._stop()


def _pyngrok(tunnel: WebhookNgrokTunnel) -> tuple[Any, Any]:
    """pyngrok's `ngrok` module and a config for this tunnel; a clear error if pyngrok is not installed."""
    try:
        from pyngrok import conf, ngrok  # `kopf[dev]`: only for the tunnel
    except ImportError:
        raise ImportError(extras.needs(extras.NGROK, what=f'kopf.{type(tunnel).__name__}'), name='pyngrok') from None
    options: dict[str, Any] = {}
    if tunnel.token is not None:
        options['auth_token'] = tunnel.token
    if tunnel.region is not None:
        options['region'] = tunnel.region
    if tunnel.binary is not None:
        options['ngrok_path'] = str(tunnel.binary)
    return ngrok, conf.PyngrokConfig(**options)


class WebhookAutoTunnel:
    """The auto server for a detected local cluster (K3d/K3s, Minikube, Docker Desktop), else an ngrok tunnel."""

    def __init__(
            self,
            *,
            addr: str | None = None,
            port: int | None = None,
            path: str | None = None,
    ) -> None:
        self.addr, self.port, self.path = addr, port, path

    def _needs(self) -> list[tuple[tuple[extras.Dependency, ...], str]]:
        """Either will do: a detected local cluster is served directly (self-signed), else through ngrok."""
        return [((extras.WEBHOOK_CERTIFICATES, extras.NGROK), f'kopf.{type(self).__name__}')]

    async def __call__(self, fn: WebhookFn) -> AsyncIterator[WebhookClientConfig]:
        host = await guess_host()
        server: WebhookServerProtocol
        if host is not None:
            server = WebhookServer(addr=self.addr, port=self.port, path=self.path, host=host)
        else:
            server = WebhookNgrokTunnel(addr=self.addr, port=self.port, path=self.path)
        logger.debug(f'The webhook auto-tunnel chose {type(server).__name__} (host: {host or "none detected"})')
        async for config in server(fn):
            yield config
