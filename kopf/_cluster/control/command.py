"""`kopf cluster`: serve the emulator until SIGINT/SIGTERM, with a kubeconfig and pre-applied manifests."""
import asyncio
import gc
import pathlib
import signal
import sys
from collections.abc import Sequence
from typing import Any

from kopf._cluster import statuses
from kopf._cluster.control import featuregates, manifests
from kopf._cluster.control.emulator import Emulator


class StartupError(Exception):
    """A one-line reason the cluster could not start (bad manifest, port in use, ...)."""


async def serve(host: str, port: int, config_path: str, apply: Sequence[str], state: str | None = None,
                tls: bool = False, token: str | None = None, verbose: bool = False, *,
                git_version: str | None = None, tls_sans: Sequence[str] = (), feature_gates: str = '',
                history_size: int = 10000, compaction_interval: float = 300.0) -> None:
    tokens = {token: 'admin'} if token else None
    posing: dict[str, Any] = {'git_version': git_version} if git_version is not None else {}
    try:
        gates = featuregates.parse(feature_gates)
        emulator = Emulator(host=host, port=port, state_file=state, tls=tls, tokens=tokens, tls_sans=tls_sans,
                            feature_gates=gates, history_size=history_size, compaction_interval=compaction_interval,
                            **posing)
    except featuregates.GateError as exc:
        raise StartupError(f'--feature-gates: {exc}') from None
    if verbose:   # one line per request on stderr: method, path and query, status, milliseconds
        emulator.dispatcher.print_request = lambda line: print(line, file=sys.stderr, flush=True)
    objects = [(path, obj) for path in apply for obj in _load(path)]
    try:
        await emulator.start()
    except OSError as exc:
        raise StartupError(f'cannot listen on {host}:{port}: {exc.strerror or exc}') from None
    except ImportError as exc:  # only optional packages are imported on start: `cryptography` for --tls (one line)
        raise StartupError(str(exc)) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise StartupError(f'cannot resume from the state file {state}: {exc}') from None
    try:
        for path, obj in objects:
            _apply(emulator, path, obj)
        try:
            written = emulator.write_kubeconfig(config_path)
        except OSError as exc:
            raise StartupError(f'cannot write the kubeconfig {config_path}: {exc.strerror or exc}') from None
        settle_gc()
        print(f'Kubernetes API emulator serving at {emulator.url}', flush=True)
        print(f'kubeconfig: {written}  (kubectl --kubeconfig {written} get ns)', flush=True)
        await _until_signalled()
    finally:
        await emulator.stop()


GC_THRESHOLDS = (10_000, 10, 10)  # Python's: (700, 10, 10)


def settle_gc() -> None:
    """After the startup: what exists (modules, built-in schemas, a resumed state) lives as long as the process,
    and the youngest generation is collected every 10,000 allocations, not 700: a request's garbage is freed by
    reference counting, the history's long-lived objects are scanned less often (the collector's share of a
    resume PATCH: ~90 -> ~40 µs, bench/emulator_patch.py)."""
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def _load(path: str) -> list[dict[str, Any]]:
    try:
        return manifests.load(pathlib.Path(path) if path != '-' else sys.stdin.read())
    except manifests.ManifestError as exc:
        raise StartupError(str(exc)) from None


def _apply(emulator: Emulator, path: str, obj: dict[str, Any]) -> None:
    try:
        emulator.apply(obj)
    except statuses.ApiError as exc:
        name = f'{obj.get("kind")}/{(obj.get("metadata") or {}).get("name", "")}'
        raise StartupError(f'{path}: {name}: {exc.message}') from None


async def _until_signalled() -> None:
    loop = asyncio.get_running_loop()
    stopped = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopped.set)
    try:
        await stopped.wait()
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
