"""The walkthrough (docs/walkthrough.md) as written: `kopf run --local-cluster --state --kubeconfig` as a
process, kubectl against the kubeconfig it writes, a restart in the middle (steps 3 and 4).

The commands are taken from the page's ```sh blocks, so the page cannot drift from what works.
"""
import os
import pathlib
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading

import pytest

from .. import docs_blocks, waiting
from .conftest import ROOT

PAGE = ROOT / 'docs' / 'walkthrough.md'


def _sh_blocks() -> list[list[list[str]]]:
    """Each ```sh block as its commands (comments and outputs dropped), each split as a shell would."""
    found = re.findall(r'^```sh\n(.*?)^```', PAGE.read_text(), flags=re.S | re.M)
    return [[shlex.split(line) for line in block.splitlines() if line.strip() and not line.startswith('#')]
            for block in found]


class Operator:
    """`kopf run ...` in a process; its output collected line by line (so a test can wait for a line)."""

    def __init__(self, args: list[str], cwd: pathlib.Path) -> None:
        self.lines: list[str] = []
        self.proc = subprocess.Popen([sys.executable, '-m', 'kopf', *args], cwd=cwd, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    @property
    def output(self) -> str:
        return ''.join(self.lines)

    def wait_for(self, text: str) -> None:
        waiting.wait_for(lambda: text in self.output or self.proc.poll() is not None, within=60)
        assert text in self.output, self.output

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        self._reader.join(timeout=10)
        assert self.proc.returncode == 0, self.output
        assert 'Traceback' not in self.output, self.output
        return self.output


@pytest.mark.kubectl
@pytest.mark.skipif(shutil.which('kubectl') is None, reason='kubectl is not installed')
def test_walkthrough_restart_keeps_the_objects_and_the_kubeconfig(tmp_path: pathlib.Path) -> None:
    (tmp_path / 'examples').symlink_to(ROOT / 'examples')   # the page's paths are relative to a checkout
    code = docs_blocks.blocks(PAGE)
    (tmp_path / 'handlers.py').write_text(code[0])            # step 2
    run, create, change = _sh_blocks()[:3]
    assert run[0][:2] == ['kopf', 'run'] and '--state' in run[0] and '--kubeconfig' in run[0]
    env = {**os.environ, 'KUBECONFIG': str(tmp_path / 'none')}   # only the page's --kubeconfig may be used

    def kubectl(args: list[str]) -> subprocess.CompletedProcess[str]:
        assert args[0] == 'kubectl'
        cache = f'--cache-dir={tmp_path / "cache"}'
        return subprocess.run(['kubectl', cache, *args[1:]], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=60)

    first = Operator(run[0][1:], tmp_path)
    try:
        first.wait_for('The local cluster serves at')
        applied = kubectl(create[0])
        assert applied.returncode == 0, applied.stderr
        first.wait_for('Creation is processed: 1 succeeded; 0 failed.')
        assert kubectl(create[1]).stdout == '''{"create_fn":{"message":"field is 'value'"}}'''
    finally:
        first.stop()
    assert (tmp_path / 'cluster.json').exists()

    (tmp_path / 'handlers.py').write_text(code[0] + '\n\n' + code[1])   # step 4: "Add to handlers.py"
    second = Operator(run[0][1:], tmp_path)
    try:
        second.wait_for('The local cluster serves at')
        listed = waiting.wait_for(lambda: kubectl(['kubectl', '--kubeconfig', 'kubeconfig', 'get', 'kex', '-o',
                                                   'name']).stdout, within=30)
        assert listed.strip() == 'kopfexample.kopf.dev/kopf-example-1'   # kept across the restart
        patched = kubectl(change[0])
        assert patched.returncode == 0, patched.stderr
        second.wait_for("spec.field: 'value' → 'changed'")
        deleted = kubectl(change[1])   # waits for the finalizer: delete_fn runs first
        assert deleted.returncode == 0, deleted.stderr
        second.wait_for('kopf-example-1 is being deleted')
    finally:
        output = second.stop()
    assert 'Creation is processed' not in output   # not created again after the restart
    assert "Handler 'update_fn' succeeded." in output
