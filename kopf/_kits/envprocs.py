"""The processes of an envtest cluster: how they are stopped, also when the process gets SIGTERM, SIGHUP or SIGKILL.

etcd, kube-apiserver and kube-controller-manager run in sessions of their own (a Ctrl-C of the
terminal does not reach them half-way), so they outlive a process that ends without its atexit
handlers, as SIGTERM and SIGHUP end it by default. `install_signal_handlers()` (on the first start,
in the main thread) stops every running cluster on those signals, then lets the signal act as before.

Nothing runs in a process killed by SIGKILL (a CI job's timeout, the OOM killer): for that, each
cluster has a `Lifeline`, a small `sh` that reads the pids of the cluster's processes from a pipe
whose other end only we hold. When that pipe closes without a word (we died), it stops their process
groups (SIGTERM, then SIGKILL after 5 s) and removes the data directory. A normal stop disarms it first.
`http_ok` and `etcd_call` reach etcd itself (its health, its v3 JSON gateway).
"""
import http.client
import json
import os
import pathlib
import shutil
import signal
import subprocess
import threading
import urllib.parse
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


# Reads a pid per line until its stdin closes; then stops those process groups and removes the directory ($1).
# A normal stop kills it first (SIGKILL: `read` is cut short and nothing else runs).
LIFELINE_SCRIPT = """
pids=''
while read -r pid; do pids="$pids $pid"; done
for pid in $pids; do kill -TERM "-$pid" 2>/dev/null; done
for _ in $(seq 50); do
  alive=''
  for pid in $pids; do kill -0 "-$pid" 2>/dev/null && alive=1; done
  [ -z "$alive" ] && break
  sleep 0.1
done
for pid in $pids; do kill -KILL "-$pid" 2>/dev/null; done
rm -rf -- "$1"
"""


class Lifeline:
    """Stops the cluster's processes and removes its directory if this process dies without a word (SIGKILL)."""

    def __init__(self, directory: pathlib.Path) -> None:
        self.owner = os.getpid()  # a forked child inherits this object, not the cluster: it does nothing
        self.process: subprocess.Popen[bytes] | None = subprocess.Popen(
            ['sh', '-c', LIFELINE_SCRIPT, 'kopf-envtest-lifeline', str(directory)],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        _LIFELINES.add(self)

    def watch(self, pid: int) -> None:
        """A process in a session of its own (its pid is its process group's id), to be stopped if we die."""
        if self.process is not None and self.process.stdin is not None:
            try:
                self.process.stdin.write(f'{pid}\n'.encode())
                self.process.stdin.flush()
            except OSError:  # the lifeline is gone (e.g. killed by someone): the normal stop still works
                pass

    def disarm(self) -> None:
        """We stop the processes ourselves: the lifeline goes, doing nothing."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            if self.process.stdin is not None:
                try:
                    self.process.stdin.close()
                except OSError:  # a pid left unflushed in a broken pipe
                    pass
            self.process = None


_LIFELINES: 'weakref.WeakSet[Lifeline]' = weakref.WeakSet()


def _in_a_forked_child() -> None:
    """A forked child lets go of the lifelines' pipes: only the parent's death may close them."""
    for lifeline in list(_LIFELINES):
        if lifeline.process is not None and lifeline.process.stdin is not None:
            try:
                lifeline.process.stdin.close()  # the child's copy of the descriptor only
            except OSError:
                pass
        lifeline.process = None


os.register_at_fork(after_in_child=_in_a_forked_child)


def spawn(args: list[str], log: Any, lifeline: Lifeline | None) -> 'subprocess.Popen[bytes]':
    """A cluster's process: in a session of its own, watched by the lifeline."""
    process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    if lifeline is not None:
        lifeline.watch(process.pid)
    return process


def kill_all(processes: Mapping[str, 'subprocess.Popen[bytes]'], directory: pathlib.Path,
             lifeline: Lifeline | None = None) -> None:
    """Stop the processes in the reverse order of their start, then remove the data directory.

    Only in the process that started them: a forked child exiting (its atexit runs this) must not remove
    the directory of its parent's running cluster.
    """
    if lifeline is not None and lifeline.owner != os.getpid():
        return
    if lifeline is not None:
        lifeline.disarm()
    for process in reversed(list(processes.values())):
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
    shutil.rmtree(directory, ignore_errors=True)


def http_ok(url: str) -> bool:
    """A plain-HTTP GET on loopback answers 200 (etcd's `/health`)."""
    parsed = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname or '127.0.0.1', parsed.port, timeout=2)
    try:
        conn.request('GET', parsed.path)
        return conn.getresponse().status == 200
    finally:
        conn.close()


def etcd_call(url: str, path: str, body: Mapping[str, Any]) -> tuple[int, Any]:
    """One call of etcd's v3 JSON gateway (plain HTTP on loopback): the status and the decoded answer."""
    parsed = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname or '127.0.0.1', parsed.port, timeout=30)
    try:
        conn.request('POST', path, json.dumps(body), {'Content-Type': 'application/json'})
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b'null')
    finally:
        conn.close()
