"""`make demo` runs examples/demo.py: the minimal operator on the local cluster, then exits 0."""
import pathlib
import subprocess
import sys

DEMO = pathlib.Path(__file__).parent.parent.parent / 'examples' / 'demo.py'


def test_demo_handles_the_object_and_exits_zero() -> None:
    proc = subprocess.run([sys.executable, str(DEMO)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert 'The object is handled; its status: {"create_fn": {"message": "hello world"}}' in proc.stdout
    assert "Handler 'create_fn' succeeded." in proc.stderr
