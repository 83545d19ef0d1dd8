"""The `Emulator`: the parts assembled (state, watch hub and streams, faults, access, controllers, the HTTP
server), their lifecycle in the current event loop, direct object access, and the control operations.

    emu = Emulator()            # then: await emu.start() ... await emu.stop()
    emu.fail('PATCH', '/apis/*', 503)   # the control operations (`operations.Controls`) are its methods
"""
import asyncio
import contextlib
import functools
import os
import pathlib
import socket
from collections.abc import Callable, Iterable, Mapping
from typing import Concatenate, ParamSpec, TypeVar

from aiohttp import web

from kopf._cluster import jsoncodec, statuses
from kopf._cluster.apis.routing import Target
from kopf._cluster.control import featuregates, httpapi
from kopf._cluster.control.operations import Controlled, Controls
from kopf._cluster.controllers import sweeping
from kopf._cluster.controllers.workloads import Workloads
from kopf._cluster.pipeline import kindrules, tokenrequests, writing
from kopf._cluster.pipeline.state import State
from kopf._cluster.store.fanout import Hub
from kopf._cluster.store.objectstore import Obj
from kopf._cluster.web import accessrules, apidiscovery, faults, kubeconfigfiles, tlsmode
from kopf._cluster.web.dispatching import Dispatcher
from kopf._cluster.web.endpoints import Backend
from kopf._cluster.web.watchstreams import Streams
from kopf._shared import extras

P = ParamSpec('P')
APPLY = writing.Options(manager='unknown')   # `apply()` writes as a client without a name (as EnvtestCluster's)
R = TypeVar('R')


class Emulator(Controls):
    """A Kubernetes API server in memory, served over plain HTTP on loopback by default."""

    def __init__(self, *, host: str = '127.0.0.1', port: int = 0, git_version: str | None = None,
                 history_size: int = 10000, bookmark_interval: float = 60.0, watch_timeout: float = 1800.0,
                 allow_http_webhooks: bool = False, state_file: str | os.PathLike[str] | None = None,
                 tls: bool = False, tokens: Mapping[str, accessrules.Token] | None = None,
                 webhook_services: Mapping[str, str] | None = None, event_ttl: float = 3600.0,
                 quota_resync: float = 300.0, compaction_interval: float = 300.0, client_certs: bool = False,
                 tls_sans: Iterable[str] = (), workloads: bool = True, nodes: int = 1,
                 feature_gates: Mapping[str, bool] | None = None) -> None:
        self.host = host
        self.tls_sans = tuple(tls_sans)  # more names/addresses in the serving certificate (e.g. "k3s", "minikube")
        self.port = port
        self.tls = tls or client_certs
        self.kubeconfig_path: pathlib.Path | None = None   # the last kubeconfig written (rewritten on rotation)
        self.certificates: tlsmode.Certificates | None = None
        self.state_file = pathlib.Path(state_file) if state_file is not None else None
        self.feature_gates = featuregates.resolve(feature_gates or {}, git_version)   # GateError if unknown
        git_version = git_version or apidiscovery.DEFAULT_VERSION   # given: posing as it (discovery, features)
        settings = kindrules.Settings(allow_http_webhooks=allow_http_webhooks, event_ttl=event_ttl,
                                      quota_resync=quota_resync, compaction_interval=compaction_interval,
                                      shard_selectors=self.feature_gates['ShardedListAndWatch'])
        self.state = State(history_size=history_size, settings=settings)
        self.hub = Hub(bookmark_interval=bookmark_interval)
        self.state.store.listeners.append(self.hub)
        self.streams = Streams(self.state, self.hub, max_timeout=watch_timeout)
        self.faults = faults.Faults()
        # tokens: bearer token -> user name (in system:masters) or (name, groups); client_certs: require a
        # certificate (or a token) signed by our CA; both: RBAC decides what those users may do
        self.access = accessrules.Access(tokens=accessrules.tokens_of(tokens), client_certs=client_certs,
                                         authorizer=self.state.authorizer,
                                         sa_tokens=functools.partial(tokenrequests.authenticate, self.state))
        # workloads: the fake nodes, kubelet and controllers (Deployments, ReplicaSets, Jobs, endpoints, ...)
        self.workloads = Workloads(self.state, nodes=nodes, kubelet_version=git_version,
                                   ca_pem=lambda: self.certificates.ca_pem.decode() if self.certificates else None,
                                   wake=lambda: self.controllers.nudge()) if workloads else None
        self.controllers = sweeping.Sweeper(self.state, self.workloads)
        self.state.wake = self.controllers.nudge
        self.backend = Backend(state=self.state, streams=self.streams, faults=self.faults, access=self.access,
                               wake_controllers=self.controllers.wake,
                               webhook_services=dict(webhook_services or {}))
        self.dispatcher = Dispatcher(self.backend, functools.partial(httpapi.serve, self), git_version)
        self._runner: web.ServerRunner | None = None
        self._controller: asyncio.Task[None] | None = None

    def run_control(self, fn: Callable[Concatenate[Controlled, P], R], *args: P.args, **kwargs: P.kwargs) -> R:
        return fn(self, *args, **kwargs)

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f'{"https" if self.tls else "http"}://{self.address}'

    @property
    def address(self) -> str:
        host = f'[{self.host}]' if ':' in self.host else self.host
        return f'{host}:{self.port}'

    def write_kubeconfig(self, path: str | os.PathLike[str]) -> pathlib.Path:
        """A kubeconfig for this server: its URL, its CA (HTTPS mode), its first token (if any)."""
        ca_pem = self.certificates.ca_pem if self.certificates is not None else None
        tokens = self.access.tokens
        token = next(iter(tokens), None) if tokens else None
        client = None
        if self.access.client_certs and self.certificates is not None and token is None:
            client = self.certificates.client(accessrules.DEFAULT_USER)
        self.kubeconfig_path = kubeconfigfiles.write(path, self.url, ca_pem=ca_pem, token=token, client=client)
        return self.kubeconfig_path

    def rewrite_kubeconfig(self) -> None:
        """The kubeconfig written last, again (after a token rotation); nothing if none was written."""
        if self.kubeconfig_path is not None:
            self.write_kubeconfig(self.kubeconfig_path)

    async def start(self) -> None:
        """Bind and serve; raises OSError if the port is taken (or the state file is unreadable)."""
        if self.state_file is not None and self.state_file.exists():
            self.state.restore(jsoncodec.loads(self.state_file.read_bytes()))
        if self.tls and self.certificates is None:  # first: a missing `cryptography` leaves nothing half-started
            try:
                self.certificates = tlsmode.make(self.host, *self.tls_sans)
            except ImportError as exc:
                if (exc.name or '').split('.')[0] != 'cryptography':
                    raise
                raise ImportError(extras.needs(extras.CLUSTER_TLS), name='cryptography') from None
        self.controllers.reset()
        if self.workloads is not None:
            self.workloads.seed()   # before serving: clients see the nodes and namespaces' defaults from the start
        self._runner = web.ServerRunner(self.dispatcher.make_server(), handle_signals=False, shutdown_timeout=1.0)
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
        self.backend.address = self.address
        context = None
        if self.tls and self.certificates is not None:
            context = tlsmode.server_context(self.certificates, verify_clients=self.access.client_certs)
        await web.SockSite(self._runner, sock, ssl_context=context).start()
        self._controller = asyncio.create_task(self.controllers.run())

    async def stop(self) -> None:
        self.hub.close_all()
        self.controllers.stop()
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
        target.parent.mkdir(parents=True, exist_ok=True)   # as for the kubeconfig
        temporary = target.with_name(f'.{target.name}.tmp')
        temporary.write_bytes(jsoncodec.dumps(self.state.snapshot()))
        os.replace(temporary, target)

    # -- direct object access (no HTTP) ----------------------------------------------------------

    def target(self, api_version: str, kind_or_plural: str, name: str | None = None,
               namespace: str | None = None) -> Target:
        group, _, version = api_version.rpartition('/')
        catalog = self.state.catalog
        resource = catalog.lookup(group, version, kind_or_plural) or catalog.by_kind(api_version, kind_or_plural)
        if resource is None:
            raise statuses.generic_not_found()
        if resource.namespaced and name is not None:
            namespace = namespace or 'default'
        return Target(resource, namespace if resource.namespaced else None, name)

    def apply(self, obj: Obj) -> Obj:
        """Create the object, or merge it into the existing one (like `kubectl apply`, minus annotations)."""
        meta = obj.get('metadata') or {}
        target = self.target(obj['apiVersion'], obj['kind'], None, meta.get('namespace') or 'default')
        try:
            outcome = writing.create(self.state, target, jsoncodec.clone(obj), APPLY)
        except statuses.ApiError as exc:
            if exc.reason != 'AlreadyExists':
                raise
            one = Target(target.resource, target.namespace, meta['name'])
            body = {k: v for k, v in obj.items() if k != 'status' or not target.resource.has_status}
            outcome = writing.patch(self.state, one, 'application/merge-patch+json', body, APPLY)
        return jsoncodec.loads(outcome.data)  # type: ignore[no-any-return]

    def get(self, api_version: str, kind_or_plural: str, name: str, namespace: str | None = None) -> Obj | None:
        target = self.target(api_version, kind_or_plural, name, namespace)
        found = self.state.store.get(target.resource.key, target.namespace or '', name)
        return jsoncodec.clone(found) if found is not None else None

    def list(self, api_version: str, kind_or_plural: str, namespace: str | None = None) -> list[Obj]:
        target = self.target(api_version, kind_or_plural, None, namespace)
        return [jsoncodec.clone(o) for o in self.state.store.iterate(target.resource.key, target.namespace)]
