"""The processes of an envtest cluster: how they are stopped, also when the process gets SIGTERM or SIGHUP.

etcd, kube-apiserver and kube-controller-manager run in sessions of their own (a Ctrl-C of the
terminal does not reach them half-way), so they outlive a process that ends without its atexit
handlers, as SIGTERM and SIGHUP end it by default. `install_signal_handlers()` (on the first start,
in the main thread) stops every running cluster on those signals, then lets the signal act as before.
"""
import os
import pathlib
import shutil
import signal
import subprocess
import threading
import weakref
from collections.abc import Mapping
from typing import Any

#: The signals that would end the process without atexit handlers: each running cluster is stopped first.
STOPPING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
RUNNING: set['weakref.finalize[Any, Any]'] = set()
PREVIOUS: dict[int, Any] = {}


def install_signal_handlers() -> None:
    """Stop the running clusters on SIGTERM/SIGHUP (which skip atexit), then let the signal act as before."""
    if threading.current_thread() is not threading.main_thread():
        return  # only the main thread may set handlers; `async with` starts in a worker thread
    for signum in STOPPING_SIGNALS:
        if signum not in PREVIOUS and signal.getsignal(signum) is not signal.SIG_IGN:
            PREVIOUS[signum] = signal.signal(signum, _on_stopping_signal)


def _on_stopping_signal(signum: int, frame: Any) -> None:
    for finalizer in list(RUNNING):
        finalizer()
    RUNNING.clear()
    previous = PREVIOUS.get(signum)
    if callable(previous):
        previous(signum, frame)
    elif previous in (signal.SIG_DFL, None):  # the default: end the process as that signal does
        signal.signal(signum, signal.SIG_DFL)
        PREVIOUS.pop(signum, None)
        os.kill(os.getpid(), signum)


def kill_all(processes: Mapping[str, 'subprocess.Popen[bytes]'], directory: pathlib.Path) -> None:
    """Stop the processes in the reverse order of their start, then remove the data directory."""
    for process in reversed(list(processes.values())):
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
    shutil.rmtree(directory, ignore_errors=True)
