"""The architecture's rules that a test can check: the pure layers stay pure, `import kopf` stays light."""
import ast
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).parent.parent / 'kopf'
PURE_PACKAGES = ['_model', '_storage']
IO_MODULES = {'asyncio', 'aiohttp', 'socket', 'ssl', 'subprocess', 'threading'}


def _pure_files() -> list[pathlib.Path]:
    return sorted(path for pkg in PURE_PACKAGES for path in (ROOT / pkg).rglob('*.py'))


@pytest.mark.parametrize('path', _pure_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_pure_layers_do_no_io(path: pathlib.Path) -> None:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        assert not isinstance(node, ast.AsyncFunctionDef), f'{path}:{node.lineno}: async def in a pure layer'
        if isinstance(node, ast.Import):
            names = {alias.name.split('.')[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            names = {(node.module or '').split('.')[0]}
        else:
            continue
        assert not names & IO_MODULES, f'{path}:{node.lineno}: imports {names & IO_MODULES} in a pure layer'


def test_import_kopf_does_not_import_optional_clients() -> None:
    code = (
        'import sys, kopf; '
        'heavy = {"kubernetes", "pykube", "jsonschema", "orjson", "cryptography", "trustme", "aiohttp"}; '
        'print(sorted(heavy & {m.split(".")[0] for m in sys.modules}))'
    )
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == '[]'


def test_the_cli_and_the_local_cluster_do_not_import_test_tooling() -> None:
    code = 'import sys, kopf.cli, kopf._cluster.control.local, kopf._kits.runner; print("pytest" in sys.modules)'
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == 'False'
