"""The architecture's rules that a test can check: the pure layers stay pure, `import kopf` stays light,
the emulator and the runtime never import each other (the emulator may use `kopf._core`), and the runtime's
imports point down its layers (`_kits` → `_reactor` → `_api` | `_storage` → `_model`), with named exceptions."""
import ast
import os
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
        'heavy = {"kubernetes", "pykube", "jsonschema", "orjson", "cryptography", "trustme", "aiohttp", '
        '"prometheus_client", "uvloop", "pythonjsonlogger"}; '  # the extras: only when used
        'print(sorted(heavy & {m.split(".")[0] for m in sys.modules}))'
    )
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == '[]'


def test_the_cli_and_the_local_cluster_do_not_import_test_tooling() -> None:
    code = 'import sys, kopf.cli, kopf._cluster.control.local, kopf._kits.clirunner; print("pytest" in sys.modules)'
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == 'False'


EMULATOR_MAY_IMPORT = ('kopf._cluster', 'kopf._core')   # never the runtime: kopf._engine, kopf._api, ...


def _kopf_imports(path: pathlib.Path) -> list[tuple[int, str]]:
    """(line, module) of every import of a kopf module, wherever it is (functions, `if TYPE_CHECKING:`)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):   # relative ones resolved against the file's package
            package = ['kopf', *path.parent.relative_to(ROOT).parts]
            base = package[:len(package) - node.level + 1] if node.level else []
            found.append((node.lineno, '.'.join([*base, *([node.module] if node.module else [])])))
    return [(line, name) for line, name in found if name == 'kopf' or name.startswith('kopf.')]


@pytest.mark.parametrize('path', sorted((ROOT / '_cluster').rglob('*.py')), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_emulator_imports_only_itself_and_the_model(path: pathlib.Path) -> None:
    for line, name in _kopf_imports(path):
        assert name.startswith(EMULATOR_MAY_IMPORT), f'{path}:{line}: the emulator imports {name}'


def test_import_kopf_does_not_import_the_emulator() -> None:
    code = 'import sys, kopf; print(sorted(m for m in sys.modules if m.startswith("kopf._cluster")))'
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == '[]'


RUNTIME_PACKAGES = ['_model', '_storage', '_api', '_reactor']   # the operator's path: never the emulator


@pytest.mark.parametrize('path', sorted(p for pkg in RUNTIME_PACKAGES for p in (ROOT / pkg).rglob('*.py')),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_the_runtime_never_imports_the_emulator(path: pathlib.Path) -> None:
    for line, name in _kopf_imports(path):
        assert not name.startswith('kopf._cluster'), f'{path}:{line}: the runtime imports {name}'


# The import direction of the runtime: `on`/`cli`/`testing` → `_kits` → `_reactor` → (`_api` | `_storage`)
# → `_model`. A layer imports only itself and the layers below it; `_api` and `_storage` not each other.
LAYERS = {'_model': 0, '_storage': 1, '_api': 1, '_reactor': 2, '_kits': 3}
LEAVES = {'kopf._version'}   # a constant, importable from everywhere
UPWARD_ALLOWED = {
    # The settings' defaults are storage instances (`settings.persistence.progress_storage`, as upstream's).
    ('_core/settings.py', 'kopf._storage'),
    # `KopfRunner` runs the `kopf run` command itself: the CLI is what it drives.
    ('_kits/clirunner.py', 'kopf.cli'),
}


@pytest.mark.parametrize('path', sorted(p for pkg in LAYERS for p in (ROOT / pkg).rglob('*.py')),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_point_down_the_layers(path: pathlib.Path) -> None:
    relative = path.relative_to(ROOT)
    own = relative.parts[0]
    for line, name in _kopf_imports(path):
        if name in LEAVES or name.startswith('kopf._cluster'):   # the emulator: checked above
            continue
        target = name.split('.')[1] if name.count('.') else ''
        allowed = target == own or (target in LAYERS and LAYERS[target] < LAYERS[own])
        excepted = any(str(relative) == where and (name == what or name.startswith(what + '.'))
                       for where, what in UPWARD_ALLOWED)
        assert allowed or excepted, f'{path}:{line}: {own} imports {name} (against the layers\' direction)'


def test_a_standalone_operator_loads_no_peering_leases_shards_indices_or_metrics() -> None:
    """What an operator does not use costs it no memory: the identity is made without the peering machinery;
    without `@kopf.index` handlers or metrics, their modules are not loaded either."""
    code = (
        'import asyncio, sys, kopf\n'
        'async def main():\n'
        '    tasks = await kopf.spawn_tasks(standalone=True, clusterwide=True)\n'
        '    for task in tasks: task.cancel()\n'
        '    await asyncio.gather(*tasks, return_exceptions=True)\n'
        'asyncio.run(main())\n'
        'optional = {"kopf._peering.keepalives", "kopf._peering.priorities", "kopf._leases.holding", "kopf._leases.elections",\n'
        '            "kopf._shards.membership", "kopf._shards.assignment", "getpass", "random",\n'
        '            "kopf._indices.filling", "kopf._metrics.prometheus"}\n'
        'print(sorted(optional & set(sys.modules)))\n'
    )
    env = {**os.environ, 'USER': 'someone'}
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True, env=env)
    assert proc.stdout.strip() == "[]"
