"""`KopfRunner`: the `kopf` CLI in a thread with its own event loop, as a context manager (for tests)."""
import concurrent.futures
import dataclasses
import pathlib
import threading
import time
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click.testing

import kopf.cli as cli
from kopf._api import credentials, kubeconfig
from kopf._engine import loggers

if TYPE_CHECKING:
    from kopf._cluster.control.local import LocalCluster
    from kopf._kits.envtest import EnvtestCluster


class KopfRunner:
    """The `kopf` CLI in a thread with its own event loop, as a context manager::

        with KopfRunner(['run', '-A', 'handlers.py'], cluster=cluster, timeout=30) as runner:
            runner.wait_ready()                  # optional: startup done, the cluster answered
            ...                                  # act on the cluster; the operator reacts
        assert runner.exit_code == 0
        assert 'Creation is processed' in runner.output

    On exit, a stop flag is set (a graceful stop, as SIGTERM does), and the thread is joined: if it is
    still alive after `timeout` seconds, an exception is raised instead of hanging. With `reraise`
    (default), an error of the operator is re-raised: for `kopf run`'s one-line errors (a file that does
    not import, an unreachable cluster, a failed startup) it is the original error (e.g. `LoadingError`
    caused by the `ImportError`), not a bare `SystemExit(1)`.

    `cluster=` (a `kopf.testing.LocalCluster` or `EnvtestCluster`) or `vault=` point the operator at a
    cluster directly, without `KUBECONFIG` or any other environment variable; `registry=` gets the handlers
    of the loaded files (instead of the default registry); `settings=` and `memo=` are the operator's.
    The results (`exit_code`, `output`, `exception`, ...) are available after the `with` block.
    """

    def __init__(
            self,
            cli_args: Sequence[str],
            *,
            reraise: bool = True,
            timeout: float | None = None,
            registry: Any = None,
            settings: Any = None,
            memo: Any = None,
            cluster: 'LocalCluster | EnvtestCluster | None' = None,
            vault: 'credentials.Vault | None' = None,
            **click_kwargs: Any,
    ) -> None:
        if cluster is not None and vault is not None:
            raise TypeError('KopfRunner accepts either cluster= or vault=, not both.')
        self.args = list(cli_args)
        self.reraise = reraise
        self.timeout = timeout
        self.registry = registry
        self.settings = settings
        self.memo = memo
        self.cluster = cluster
        self.vault = vault
        self.click_kwargs = click_kwargs
        self.stop_flag = threading.Event()
        self.ready_flag = threading.Event()
        self._future: concurrent.futures.Future[click.testing.Result] = concurrent.futures.Future()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> 'KopfRunner':
        vault = self.vault if self.cluster is None else cluster_vault(self.cluster)
        controls = cli.CLIControls(registry=self.registry, settings=self.settings, memo=self.memo, vault=vault,
                                   stop_flag=self.stop_flag, ready_flag=self.ready_flag)
        self._thread = threading.Thread(target=self._target, args=(controls,), name='kopf-runner', daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: types.TracebackType | None) -> None:
        self.stop_flag.set()
        assert self._thread is not None
        self._thread.join(timeout=self.timeout)
        if self._thread.is_alive():
            raise TimeoutError(f'The operator did not stop within {self.timeout} seconds: {self.args!r}')
        if exc is None and self.reraise:
            error = self.exception
            if isinstance(error, SystemExit) and error.__cause__ is not None:
                raise error.__cause__  # the CLI's one-line error: its original exception
            if error is not None:
                raise error

    def _target(self, controls: Any) -> None:
        try:
            result = click.testing.CliRunner().invoke(cli.main, self.args, obj=controls, **self.click_kwargs)
        except BaseException as exc:  # pragma: no cover  # CliRunner catches all; just in case
            self._future.set_exception(exc)
        else:
            self._future.set_result(result)
        finally:
            loggers.deconfigure()  # the CLI's log handler writes to the runner's (now closed) capture

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until the operator is ready (startup done, cluster answered) or has exited; True if ready."""
        thread = self._thread
        if thread is None:
            raise RuntimeError('KopfRunner is not started: use it as `with KopfRunner(...) as runner:`.')
        deadline = None if timeout is None else time.monotonic() + timeout
        while thread.is_alive() and not self.ready_flag.wait(0.05):
            if deadline is not None and time.monotonic() >= deadline:
                break
        return thread.is_alive() and self.ready_flag.is_set()

    # The results (available after the exit of the `with` block).

    @property
    def future(self) -> 'concurrent.futures.Future[click.testing.Result]':
        return self._future

    @property
    def _result(self) -> click.testing.Result:
        return self._future.result(timeout=0)

    @property
    def output(self) -> str:
        return self._result.output

    @property
    def stdout(self) -> str:
        return self._result.stdout

    @property
    def stdout_bytes(self) -> bytes:
        return self._result.stdout_bytes

    @property
    def stderr(self) -> str:
        return self._result.stderr

    @property
    def stderr_bytes(self) -> bytes:
        return self._result.stderr_bytes or b''

    @property
    def exit_code(self) -> int:
        return self._result.exit_code

    @property
    def exception(self) -> BaseException | None:
        return self._result.exception

    @property
    def exc_info(self) -> Any:
        return self._result.exc_info


def cluster_vault(cluster: 'LocalCluster | EnvtestCluster') -> 'credentials.Vault':
    """A credentials vault for the local cluster (from its kubeconfig: its URL, CA and token, if any)."""
    info = kubeconfig.load([pathlib.Path(cluster.kubeconfig)])
    if info.default_namespace is None:
        info = dataclasses.replace(info, default_namespace='default')
    vault = credentials.Vault()
    vault.populate([info])
    return vault
