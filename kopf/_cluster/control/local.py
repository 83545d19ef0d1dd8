"""`LocalCluster`: the emulator's Python face (public as `kopf.testing.LocalCluster`).

Lives here, not in `kopf.testing`, so that `kopf run --local-cluster` and `KopfRunner` can use it
without importing the test tooling (pytest) that `kopf.testing` re-exports fixtures from.

    async with kopf.testing.LocalCluster() as cluster:        # in the current event loop
        cluster.apply('examples/crd.yaml')
        ...  # point clients at cluster.kubeconfig or cluster.url

    with kopf.testing.LocalCluster() as cluster:              # its own event loop in a thread
        subprocess.run(['kubectl', '--kubeconfig', str(cluster.kubeconfig), 'get', 'ns'])
"""
import asyncio
import builtins
import concurrent.futures
import os
import pathlib
import shutil
import tempfile
import threading
from collections.abc import Callable, Coroutine, Sequence
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar

from kopf._cluster.control import manifests
from kopf._cluster.control.emulator import Emulator
from kopf._cluster.control.operations import Controlled, Controls
from kopf._cluster.web import kubeconfigfiles

T = TypeVar('T')
P = ParamSpec('P')
Obj = dict[str, Any]


class LocalCluster(Controls):
    """A Kubernetes API emulator served over real HTTP, with its control surface for tests.

    Use as `async with` (the server runs in the current event loop: right for looptime-driven
    tests) or as `with` (the server runs in its own event loop in a daemon thread).
    The control operations (`fail`, `throttle`, `delay`, `drop`, `forbid`, `rotate_token`, `close_watches`,
    `counters`, ...) are its methods, run in the server's loop.
    """

    def __init__(self, *, host: str = '127.0.0.1', port: int = 0, kubeconfig: str | os.PathLike[str] | None = None,
                 manifests: tuple[manifests.Manifest, ...] | list[manifests.Manifest] = (),
                 **options: Any) -> None:
        self.emulator = Emulator(host=host, port=port, **options)
        self._kubeconfig_path = kubeconfig
        self._manifests = list(manifests)
        self._tmpdir: str | None = None
        self._kubeconfig: pathlib.Path | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> 'LocalCluster':
        await self.emulator.start()
        self._loop = asyncio.get_running_loop()
        if self._kubeconfig_path is None:
            self._tmpdir = tempfile.mkdtemp(prefix='kopf-cluster-')
            self._kubeconfig_path = pathlib.Path(self._tmpdir) / 'kubeconfig'
        try:
            self._kubeconfig = self.emulator.write_kubeconfig(self._kubeconfig_path)
        except OSError:   # e.g. the given kubeconfig's directory does not exist: no server left behind
            await self.stop()
            raise
        for manifest in self._manifests:
            self._apply_now(manifest)
        return self

    async def stop(self) -> None:
        await self.emulator.stop()
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    async def __aenter__(self) -> 'LocalCluster':
        return await self.start()

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.stop()

    def __enter__(self) -> 'LocalCluster':
        loop = asyncio.new_event_loop()
        started: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._run_loop, args=(loop, started), daemon=True,
                                        name='kopf-local-cluster')
        self._thread.start()
        try:
            started.result()
        except KeyboardInterrupt:  # Ctrl-C while starting: stopped all the same (its state saved), then raised
            started.result()
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None:
            asyncio.run_coroutine_threadsafe(self.stop(), loop).result(timeout=30)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=30)
        self._thread = None

    def _run_loop(self, loop: asyncio.AbstractEventLoop, started: 'concurrent.futures.Future[None]') -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self.start())
        except BaseException as exc:
            started.set_exception(exc)
            loop.close()
            return
        started.set_result(None)
        loop.run_forever()
        loop.close()

    def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a state-touching call in the server's loop thread (directly if we are in it)."""
        if self._thread is None or self._loop is None or threading.current_thread() is self._thread:
            return fn(*args, **kwargs)

        async def call() -> T:
            return fn(*args, **kwargs)

        coro: Coroutine[Any, Any, T] = call()
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=30)

    def run_control(self, fn: Callable[Concatenate[Controlled, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        return self._call(fn, self.emulator, *args, **kwargs)

    # -- connection ------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return self.emulator.url

    @property
    def kubeconfig(self) -> str:
        """The path of the written kubeconfig, as a `str` (ready for `KUBECONFIG`, subprocess arguments, open())."""
        if self._kubeconfig is None:
            raise RuntimeError('The local cluster is not started yet.')
        return str(self._kubeconfig)

    def user_kubeconfig(self, user: str, groups: Sequence[str] = ()) -> pathlib.Path:
        """A kubeconfig of a non-admin identity: a bearer token of `user` in `groups` (plus `system:authenticated`).

        RBAC then allows it only what is bound to it (e.g. by `kopf rbac`), as `EnvtestCluster.user_kubeconfig`
        does with a client certificate. The token is accepted even when the cluster requires no authentication.
        Over plain HTTP, client-go (kubectl) sends no credentials at all: the kubeconfig also impersonates the
        user (`as`, `as-groups`), which the admin (the anonymous requests of such a cluster) may.
        """
        if self._kubeconfig is None:
            raise RuntimeError('The local cluster is not started yet.')
        if not user or '/' in user or 'system:masters' in groups:
            raise ValueError(f'Not a non-admin user name and groups: {user!r}, {list(groups)!r}.')
        token = self._call(self.emulator.access.issue, user, tuple(groups))
        path = self._kubeconfig.parent / f'user-{user.replace(":", "-")}.kubeconfig'
        ca_pem = self.emulator.certificates.ca_pem if self.emulator.certificates is not None else None
        impersonate = None if self.emulator.tls else (user, list(groups))
        return kubeconfigfiles.write(path, self.url, ca_pem=ca_pem, token=token, impersonate=impersonate)

    # -- objects ---------------------------------------------------------------------------------

    def apply(self, *sources: manifests.Manifest) -> list[Obj]:
        """Create or merge objects from dicts, lists of dicts, YAML text or YAML file paths."""
        return [obj for source in sources for obj in self._call(self._apply_now, source)]

    def _apply_now(self, source: manifests.Manifest) -> list[Obj]:
        return [self.emulator.apply(obj) for obj in manifests.load(source)]

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        """An object as stored (kind or plural accepted), or None if absent."""
        return self._call(self.emulator.get, api_version, kind, name, namespace)

    def list(self, api_version: str, kind: str, namespace: str | None = None) -> builtins.list[Obj]:
        return self._call(self.emulator.list, api_version, kind, namespace)
