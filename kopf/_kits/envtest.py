"""`EnvtestCluster`: a real etcd + kube-apiserver (+ kube-controller-manager) as a test backend.

Public as `kopf.testing.EnvtestCluster`; the interface is that of `kopf.testing.LocalCluster`
(`kubeconfig`, `url`, `apply`, `get`, `list`, `with` and `async with`), minus the emulator's fault
injection and introspection, which a real server does not have.

The binaries come from `$KUBEBUILDER_ASSETS` (the directory `setup-envtest use -p path` prints:
`etcd`, `kube-apiserver`, optionally `kube-controller-manager` and `kubectl`) or, without it, from
`~/.cache/kopf/envtest/<version>/` where `make envtest` builds them from their Go modules.

    with kopf.testing.EnvtestCluster() as cluster:
        cluster.apply('examples/crd.yaml')
        subprocess.run(['kubectl', '--kubeconfig', str(cluster.kubeconfig), 'get', 'ns'])

Everything runs on free loopback ports with a temporary data directory (etcd without fsync); the
admin is a client certificate in `system:masters`, signed by a CA generated per cluster. Both the
processes and the directory are gone after the `with` block, also when it fails, and when the
process is ended by SIGTERM or SIGHUP (a handler installed on the first start in the main thread
stops every running cluster, then lets the signal do what it did before). `compact_history()`
compacts etcd through its own API: watches from older resourceVersions get their 410 (or, through
the apiserver's watch cache, whatever the cache still holds); `restart_watch_cache(crd_name)` starts
that cache anew for a CRD's resource, as a restart of the server does.
`user_kubeconfig(user, groups)` makes a non-admin identity (a client certificate signed by the same
CA): RBAC is enforced, so it can do only what is bound to it.

Not imported by `import kopf`: only by `kopf.testing`, and `cryptography` is imported on start.
"""
import asyncio
import http.client
import json
import os
import pathlib
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.parse
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any

from kopf._api.credentials import ConnectionInfo
from kopf._cluster.control import manifests
from kopf._kits import envassets, envhistory, envprocs

Obj = dict[str, Any]
EnvtestError = envassets.EnvtestError  # public here: `kopf.testing.EnvtestCluster` raises it

ADMIN_USER = 'kopf-envtest-admin'
SERVICE_CLUSTER_IP_RANGE = '10.0.0.0/24'
FIELD_MANAGER = 'kopf-testing'


class ApiError(Exception):
    """A non-2xx answer of the real API server to one of `EnvtestCluster`'s own requests."""

    def __init__(self, status: int, body: Any, method: str, path: str) -> None:
        message = body.get('message') if isinstance(body, dict) else body
        super().__init__(f'{method} {path} -> {status}: {message}')
        self.status = status
        self.body = body
        self.reason = body.get('reason') if isinstance(body, dict) else None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(('127.0.0.1', 0))
        return int(sock.getsockname()[1])


class EnvtestCluster:
    """etcd and kube-apiserver (and kube-controller-manager if asked) on loopback, for tests.

    `controller_manager=True` also runs kube-controller-manager (garbage collection, namespace
    deletion, service accounts, `kube-root-ca.crt`, Deployments, Jobs, ...) and then keeps the
    `ServiceAccount` admission plugin on, as real clusters do; without it, that plugin is off.
    `None` (the default) runs it when its binary is present.

    `version='1.37.2'` takes the binaries `tools/envtest/build.sh 1.37.2` built (and checks the server's
    `/version` says so); `feature_gates={'ShardedListAndWatch': True}` is kube-apiserver's `--feature-gates`;
    `audit=True` logs every request the server receives (`audit_events()`: its URI, verb, user, status).
    """

    def __init__(self, *, assets: str | os.PathLike[str] | None = None,
                 version: str | None = None, feature_gates: Mapping[str, bool] | None = None, audit: bool = False,
                 controller_manager: bool | None = None,
                 kubeconfig: str | os.PathLike[str] | None = None,
                 manifests: Sequence[manifests.Manifest] = (),
                 apiserver_flags: Iterable[str] = (), etcd_flags: Iterable[str] = (),
                 controller_manager_flags: Iterable[str] = (),
                 startup_timeout: float = 120.0) -> None:
        self.assets = envassets.find_assets(assets, version)
        self.wanted_version = None if version is None else 'v' + version.removeprefix('v')
        self.feature_gates = dict(feature_gates or {})
        self._audit = audit
        self._want_kcm = controller_manager
        self._kubeconfig_path = None if kubeconfig is None else pathlib.Path(kubeconfig)
        self._manifests = list(manifests)
        self._apiserver_flags = list(apiserver_flags)
        self._etcd_flags = list(etcd_flags)
        self._kcm_flags = list(controller_manager_flags)
        self.startup_timeout = startup_timeout
        self.controller_manager = False
        self.dir: pathlib.Path | None = None
        self._kubeconfig: pathlib.Path | None = None
        self._processes: dict[str, subprocess.Popen[bytes]] = {}
        self._port = 0
        self._ssl: ssl.SSLContext | None = None
        self._resources: dict[str, list[Obj]] = {}
        self._lock = threading.Lock()
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._lifeline: envprocs.Lifeline | None = None  # stops the processes if we are SIGKILLed

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> 'EnvtestCluster':
        etcd = envassets.binary(self.assets, 'etcd')
        apiserver = envassets.binary(self.assets, 'kube-apiserver')
        kcm_path = self.assets / 'kube-controller-manager'
        if self._want_kcm is None:
            self.controller_manager = os.access(kcm_path, os.X_OK)
        elif self._want_kcm:
            envassets.binary(self.assets, 'kube-controller-manager')
            self.controller_manager = True
        for attempt in range(3):  # the free ports are free when chosen, not necessarily when bound
            self.dir = pathlib.Path(tempfile.mkdtemp(prefix='kopf-envtest-'))
            self._lifeline = envprocs.Lifeline(self.dir)
            self._finalizer = weakref.finalize(self, envprocs.kill_all, self._processes, self.dir, self._lifeline)
            envprocs.RUNNING.add(self._finalizer)
            envprocs.install_signal_handlers()
            try:
                self._start(etcd, apiserver, kcm_path)
            except envassets.EnvtestError as exc:
                self.stop()
                if 'address already in use' not in str(exc) or attempt == 2:
                    raise
            except BaseException:
                self.stop()
                raise
            else:
                break
        return self

    def _start(self, etcd: pathlib.Path, apiserver: pathlib.Path, kcm: pathlib.Path) -> None:
        assert self.dir is not None
        pki = self.dir / 'pki'
        pki.mkdir()
        envassets.write_pki(pki, ADMIN_USER)
        etcd_port, peer_port, self._port = free_port(), free_port(), free_port()
        etcd_url, peer_url = f'http://127.0.0.1:{etcd_port}', f'http://127.0.0.1:{peer_port}'
        self._spawn('etcd', [
            str(etcd), '--name=envtest', f'--data-dir={self.dir / "etcd"}',
            f'--listen-client-urls={etcd_url}', f'--advertise-client-urls={etcd_url}',
            f'--listen-peer-urls={peer_url}', f'--initial-advertise-peer-urls={peer_url}',
            f'--initial-cluster=envtest={peer_url}', '--unsafe-no-fsync', '--log-level=warn',
            *self._etcd_flags])
        self._wait(lambda: envprocs.http_ok(f'{etcd_url}/health'), 'etcd')

        admission = [] if self.controller_manager else ['--disable-admission-plugins=ServiceAccount']
        self._spawn('kube-apiserver', [
            str(apiserver), f'--etcd-servers={etcd_url}', f'--cert-dir={pki}',
            f'--tls-cert-file={pki / "serving.crt"}', f'--tls-private-key-file={pki / "serving.key"}',
            f'--client-ca-file={pki / "ca.crt"}',
            f'--secure-port={self._port}', '--bind-address=127.0.0.1', '--advertise-address=127.0.0.1',
            f'--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}', '--allow-privileged=true',
            '--authorization-mode=RBAC',
            f'--service-account-issuer=https://127.0.0.1:{self._port}/',
            f'--service-account-key-file={pki / "sa.pub"}',
            f'--service-account-signing-key-file={pki / "sa.key"}',
            *admission, *_gates(self.feature_gates), *(envassets.audit_flags(self.dir) if self._audit else []),
            *envassets.version_flags(apiserver),
            *self._apiserver_flags])
        self._ssl = ssl.create_default_context(cafile=str(pki / 'ca.crt'))
        self._ssl.load_cert_chain(str(pki / 'admin.crt'), str(pki / 'admin.key'))
        self._wait(lambda: self._ready('/readyz'), 'kube-apiserver')
        self._wait(lambda: self.get('v1', 'Namespace', 'default') is not None, 'the default namespace')
        served = self.version.get('gitVersion', '')
        if self.wanted_version is not None and served.split('+')[0] != self.wanted_version:
            raise envassets.EnvtestError(f'{apiserver} is {served}, not {self.wanted_version}: '
                                         f'rebuild it with `tools/envtest/build.sh {self.wanted_version}`.')

        self._kubeconfig = self._write_kubeconfig(self._kubeconfig_path or self.dir / 'kubeconfig')
        if self.controller_manager:
            self._start_controller_manager(kcm, pki)
        if self._manifests:
            self.apply(*self._manifests)

    def _start_controller_manager(self, kcm: pathlib.Path, pki: pathlib.Path) -> None:
        assert self.dir is not None
        kcm_config = self._write_kubeconfig(self.dir / 'kcm.kubeconfig')
        self._spawn('kube-controller-manager', [
            str(kcm), f'--kubeconfig={kcm_config}', '--leader-elect=false', '--secure-port=0',
            f'--service-account-private-key-file={pki / "sa.key"}', f'--root-ca-file={pki / "ca.crt"}',
            f'--cluster-signing-cert-file={pki / "ca.crt"}', f'--cluster-signing-key-file={pki / "ca.key"}',
            f'--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}', '--controllers=*',
            *self._kcm_flags])
        self._wait(lambda: self.get('v1', 'ServiceAccount', 'default', 'default') is not None,
                   'the default ServiceAccount (from kube-controller-manager)')

    def stop(self) -> None:
        """Stop the processes (controller-manager, apiserver, etcd) and remove the data directory."""
        if self._finalizer is not None:
            self._finalizer()  # idempotent: kills what is left, removes the directory
            envprocs.RUNNING.discard(self._finalizer)
            self._finalizer = None
        self._processes.clear()
        self._lifeline = None
        self.dir = None
        self._kubeconfig = None

    def __enter__(self) -> 'EnvtestCluster':
        return self.start()

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    async def __aenter__(self) -> 'EnvtestCluster':
        return await asyncio.to_thread(self.start)

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        await asyncio.to_thread(self.stop)

    def _spawn(self, name: str, args: list[str]) -> None:
        assert self.dir is not None
        with open(self.dir / f'{name}.log', 'wb') as log:
            self._processes[name] = envprocs.spawn(args, log, self._lifeline)

    def _wait(self, check: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while True:
            for name, process in self._processes.items():
                if process.poll() is not None:
                    raise envassets.EnvtestError(f'{name} exited with {process.returncode} while waiting for {what}:\n'
                                       f'{self.log_tail(name)}')
            try:
                if check():
                    return
            except (OSError, ApiError, http.client.HTTPException):
                pass
            if time.monotonic() > deadline:
                logs = '\n'.join(f'--- {name}:\n{self.log_tail(name)}' for name in self._processes)
                raise envassets.EnvtestError(f'{what} is not ready in {self.startup_timeout:g} s.\n{logs}')
            time.sleep(0.1)

    @property
    def pids(self) -> dict[str, int]:
        """The process ids of the running etcd, kube-apiserver (and kube-controller-manager)."""
        return {name: process.pid for name, process in self._processes.items()}

    @property
    def etcd_url(self) -> str:
        """The client URL of this cluster's etcd (plain HTTP on loopback)."""
        args = self._processes['etcd'].args if 'etcd' in self._processes else []
        assert isinstance(args, list), 'the cluster is not running'
        return next(str(a).split('=', 1)[1] for a in args if str(a).startswith('--listen-client-urls='))

    def compact_history(self, revision: int | str | None = None) -> int:
        """Compact etcd up to a revision (a resourceVersion; the current one by default): older ones are gone.

        Through etcd's v3 JSON gateway (`/v3/kv/compaction`, physical); returns the revision compacted to.
        A kube-apiserver with its watch cache (the default) keeps serving watches and `continue` tokens from
        its cache (`restart_watch_cache()` ends that for a CRD's resource); with
        `apiserver_flags=['--watch-cache=false']`, a watch from a compacted resourceVersion is refused.
        """
        return envhistory.compact(self.etcd_url, revision)

    def restart_watch_cache(self, crd_name: str) -> None:
        """Start kube-apiserver's watch cache of a CRD's resource anew, as after a restart of the server.

        Its spec is changed and changed back (its storage is rebuilt each time); when this returns, a watch
        from an earlier resourceVersion gets `410 Expired`, and an earlier `continue` token is read from
        etcd (`410 Expired` if compacted: `compact_history()`). See `kopf._kits.envhistory`.
        """
        envhistory.restart_watch_cache(self.request, self.url, self.ssl_context, self.etcd_url, crd_name)

    def log_tail(self, name: str, lines: int = 20) -> str:
        """The last lines of a process's output (its log is in the data directory while running)."""
        if self.dir is None or not (self.dir / f'{name}.log').exists():
            return ''
        text = (self.dir / f'{name}.log').read_text(errors='replace')
        return '\n'.join(text.splitlines()[-lines:])

    def _ready(self, path: str) -> bool:
        status, _ = self.request('GET', path, check=False)
        return status == 200

    # -- connection ------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        if not self._port:
            raise RuntimeError('The envtest cluster is not started yet.')
        return f'https://127.0.0.1:{self._port}'

    @property
    def kubeconfig(self) -> str:
        """The path of the written kubeconfig, as a `str` (ready for `KUBECONFIG`, subprocess arguments, open())."""
        if self._kubeconfig is None:
            raise RuntimeError('The envtest cluster is not started yet.')
        return str(self._kubeconfig)

    @property
    def pki(self) -> pathlib.Path:
        """The directory with `ca.crt`, `admin.crt` and `admin.key` (the admin's client certificate)."""
        if self.dir is None:
            raise RuntimeError('The envtest cluster is not started yet.')
        return self.dir / 'pki'

    @property
    def ssl_context(self) -> ssl.SSLContext:
        """A client context trusting the cluster's CA and presenting the admin's certificate."""
        if self._ssl is None:
            raise RuntimeError('The envtest cluster is not started yet.')
        return self._ssl

    def connection_info(self, **kwargs: Any) -> ConnectionInfo:
        """A `kopf.ConnectionInfo` for the admin (for a `Vault` or a login handler)."""
        return ConnectionInfo(server=self.url, ca_path=str(self.pki / 'ca.crt'),
                              certificate_path=str(self.pki / 'admin.crt'),
                              private_key_path=str(self.pki / 'admin.key'), **kwargs)

    def user_kubeconfig(self, user: str, groups: Sequence[str] = ()) -> pathlib.Path:
        """A kubeconfig of a non-admin identity: a client certificate for `user` (CN) in `groups` (O).

        Signed by the cluster's client CA, so the API server authenticates it as that user (plus
        `system:authenticated`); RBAC then allows it only what is bound to it (e.g. by `kopf rbac`).
        The files are in the data directory (`pki/user-<user>.*`, `user-<user>.kubeconfig`).
        """
        from kopf._shared import certificates  # optional: `cryptography`
        if self.dir is None:
            raise RuntimeError('The envtest cluster is not started yet.')
        if not user or '/' in user or 'system:masters' in groups:
            raise ValueError(f'Not a non-admin user name and groups: {user!r}, {list(groups)!r}.')
        authority = certificates.Certificates(ca_pem=(self.pki / 'ca.crt').read_bytes(), cert_pem=b'', key_pem=b'',
                                              ca_key_pem=(self.pki / 'ca.key').read_bytes())
        cert, key = authority.client(user, tuple(groups))
        (self.pki / f'user-{user}.crt').write_bytes(cert)
        (self.pki / f'user-{user}.key').write_bytes(key)
        return self._write_kubeconfig(self.dir / f'user-{user}.kubeconfig', user=user, cert=f'user-{user}.crt',
                                      key=f'user-{user}.key')

    def _write_kubeconfig(self, path: pathlib.Path, *, user: str = ADMIN_USER, cert: str = 'admin.crt',
                          key: str = 'admin.key') -> pathlib.Path:
        return envassets.write_kubeconfig(path, self.url, self.pki, user=user, cert=cert, key=key)

    def audit_events(self) -> list[Obj]:
        """What the server logged of the requests it received (`audit=True`: each request's final stage)."""
        if self.dir is None or not self._audit:
            raise RuntimeError('The envtest cluster is not started, or not with audit=True.')
        return envassets.read_audit(self.dir / 'audit.log')

    # -- raw requests ----------------------------------------------------------------------------

    def request(self, method: str, path: str, body: Any = None, *, content_type: str = 'application/json',
                check: bool = True, timeout: float = 30) -> tuple[int, Any]:
        """One HTTPS request as the admin; the answer decoded from JSON (text if it is not JSON)."""
        conn = http.client.HTTPSConnection('127.0.0.1', self._port, context=self.ssl_context, timeout=timeout)
        try:
            data = None if body is None else json.dumps(body).encode()
            headers = {'Accept': 'application/json'}
            if data is not None:
                headers['Content-Type'] = content_type
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            raw = response.read()
        finally:
            conn.close()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode(errors='replace')
        if check and not 200 <= response.status < 300:
            raise ApiError(response.status, parsed, method, path)
        return response.status, parsed

    # -- objects ---------------------------------------------------------------------------------

    def _resource(self, api_version: str, kind_or_plural: str, refresh: bool = False) -> Obj:
        with self._lock:
            if refresh or api_version not in self._resources:
                base = '/api/v1' if api_version == 'v1' else f'/apis/{api_version}'
                status, found = self.request('GET', base, check=False)
                self._resources[api_version] = found.get('resources', []) if status == 200 else []
            candidates = self._resources[api_version]
        for resource in candidates:
            if '/' not in resource['name'] and kind_or_plural in (resource['kind'], resource['name']):
                return resource
        if not refresh:
            return self._resource(api_version, kind_or_plural, refresh=True)
        raise LookupError(f'{kind_or_plural} is not served in {api_version}')

    def _path(self, api_version: str, kind_or_plural: str, name: str | None = None,
              namespace: str | None = None, *, default_namespace: str | None = None, refresh: bool = False) -> str:
        resource = self._resource(api_version, kind_or_plural, refresh=refresh)
        base = '/api/v1' if api_version == 'v1' else f'/apis/{api_version}'
        ns = (namespace or default_namespace) if resource['namespaced'] else None
        path = f'{base}/namespaces/{urllib.parse.quote(ns)}' if ns else base
        path += f'/{resource["name"]}'
        return f'{path}/{urllib.parse.quote(name)}' if name else path

    def apply(self, *sources: manifests.Manifest) -> list[Obj]:
        """Create or merge objects from dicts, lists of dicts, YAML text or YAML file paths.

        Like `LocalCluster.apply`: created, or merge-patched into the existing object; `status` is
        also written to the status subresource if there is one. CRDs are waited for to be served.
        """
        return [self._apply_one(obj) for source in sources for obj in manifests.load(source)]

    def _apply_one(self, obj: Obj) -> Obj:
        meta = obj.get('metadata') or {}
        api_version, kind = obj['apiVersion'], obj['kind']
        collection = self._path(api_version, kind, namespace=meta.get('namespace'), default_namespace='default')
        status, result = self.request('POST', collection, obj, check=False)
        if status == 409 and isinstance(result, dict) and result.get('reason') == 'AlreadyExists':
            one = f'{collection}/{urllib.parse.quote(meta["name"])}'
            result = self.request('PATCH', one, obj, content_type='application/merge-patch+json')[1]
        elif not 200 <= status < 300:
            raise ApiError(status, result, 'POST', collection)
        if 'status' in obj and result.get('status') != obj['status']:
            one = f'{collection}/{urllib.parse.quote(result["metadata"]["name"])}'
            patched, answer = self.request('PATCH', f'{one}/status', {'status': obj['status']},
                                           content_type='application/merge-patch+json', check=False)
            if 200 <= patched < 300:
                result = answer
        if api_version.startswith('apiextensions.k8s.io/') and kind == 'CustomResourceDefinition':
            self._wait_for_crd(result)
        return result  # type: ignore[no-any-return]

    def _wait_for_crd(self, crd: Obj) -> None:
        name, group = crd['metadata']['name'], crd['spec']['group']
        served = [v['name'] for v in crd['spec']['versions'] if v.get('served', True)]
        kind = crd['spec']['names']['kind']

        def established() -> bool:
            found = self.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', name) or {}
            conditions = (found.get('status') or {}).get('conditions') or []
            if not any(c['type'] == 'Established' and c['status'] == 'True' for c in conditions):
                return False
            for version in served:
                try:
                    path = self._path(f'{group}/{version}', kind, default_namespace='default', refresh=True)
                except LookupError:
                    return False
                # Served in discovery is not enough: lists answer 429 while the watch cache initializes.
                if self.request('GET', f'{path}?limit=1', check=False)[0] != 200:
                    return False
            return True
        deadline = time.monotonic() + 30
        while not established():
            if time.monotonic() > deadline:
                raise envassets.EnvtestError(f'The CRD {name} is not established in 30 s.')
            time.sleep(0.05)

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        """An object as stored (kind or plural accepted), or None if absent."""
        status, found = self.request('GET', self._path(api_version, kind, name, namespace), check=False)
        if status == 404:
            return None
        if status != 200:
            raise ApiError(status, found, 'GET', name)
        return found  # type: ignore[no-any-return]

    def list(self, api_version: str, kind: str, namespace: str | None = None) -> list[Obj]:
        found = self.request('GET', self._path(api_version, kind, namespace=namespace))[1]
        items: list[Obj] = found.get('items') or []
        prefix = {'apiVersion': api_version, 'kind': self._resource(api_version, kind)['kind']}
        return [{**prefix, **item} for item in items]

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None, *,
               force: bool = False) -> None:
        """Delete an object (absent is fine); `force=True` also removes its finalizers first."""
        path = self._path(api_version, kind, name, namespace)
        if force:
            self.request('PATCH', path, {'metadata': {'finalizers': None}},
                         content_type='application/merge-patch+json', check=False)
        status, body = self.request('DELETE', path, check=False)
        if status not in (200, 202, 404):
            raise ApiError(status, body, 'DELETE', path)

    @property
    def version(self) -> Obj:
        """The server's `/version` (gitVersion is the Kubernetes version the binaries were built at)."""
        return self.request('GET', '/version')[1]  # type: ignore[no-any-return]


def _gates(gates: Mapping[str, bool]) -> list[str]:
    """kube-apiserver's `--feature-gates=A=true,B=false` (no flag without gates)."""
    if not gates:
        return []
    return ['--feature-gates=' + ','.join(f'{name}={str(bool(on)).lower()}' for name, on in sorted(gates.items()))]
