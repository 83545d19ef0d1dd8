"""The architecture's rules that a test can check, read from the code (AST) and, where it is about what gets
loaded, from a subprocess:

- pure modules (all of `_core` and `_storage`, and those marked "(pure)" in their package's docstring) import
  nothing async, read no clock (`now` is passed in), and define no `async def`;
- imports point down the layers: `_shared` <- `_core` <- (`_storage` | `_api`) <- `_engine` <- the features
  <- `_kits` <- the facade (`kopf`, `kopf.on`, `kopf.cli`, `kopf.testing`); features depend on the core and
  the engine, never the reverse (but `_engine.running`, which starts them), and never on another feature
  (but the faces declared below);
- the emulator (`_cluster`) imports only itself and `_shared`; the operator's runtime (what `kopf run` loads
  without `--local-cluster`) and `kopf rbac` never import the emulator;
- `import kopf` stays light: no optional client, no emulator.
"""
import ast
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).parent.parent / 'kopf'
IO_MODULES = {'asyncio', 'aiohttp', 'socket', 'ssl', 'subprocess', 'threading'}
CLOCK_READS = re.compile(r'\b(time\.(time|monotonic|perf_counter)(_ns)?|datetime\.(datetime\.)?(now|utcnow|today)|'
                         r'get_running_loop\(\)\.time|loop\.time)\(')
PURE_PACKAGES = {'_core', '_storage'}
FEATURES = ['_daemons', '_indices', '_admission', '_peering', '_leases', '_shards', '_metrics', '_rbac', '_typed']
LAYERS = {'_shared': 0, '_core': 1, '_storage': 2, '_api': 2, '_engine': 3, **dict.fromkeys(FEATURES, 4), '_kits': 5}
FACADE = {'__init__.py', 'on.py', 'cli.py', 'testing.py', 'lifecycles.py', '__main__.py', '_version.py'}


def _marked_pure(package: pathlib.Path) -> set[str]:
    """The modules that a package's docstring marks "(pure)" in its module list."""
    docstring = ast.get_docstring(ast.parse((package / '__init__.py').read_text())) or ''
    return {name for name, rest in re.findall(r'^- `([a-z_0-9]+)`(.*)$', docstring, re.M) if '(pure)' in rest}


def _pure_files() -> list[pathlib.Path]:
    found = [path for pkg in PURE_PACKAGES for path in (ROOT / pkg).rglob('*.py')]
    for package in sorted(path.parent for path in ROOT.glob('_*/__init__.py')):
        found += [package / f'{name}.py' for name in _marked_pure(package) if (package / f'{name}.py').exists()]
    return sorted(set(found))


def test_the_pure_modules_are_found() -> None:
    """Not vacuous: the marked ones of the feature packages and of `_shared` are there."""
    names = {str(path.relative_to(ROOT)) for path in _pure_files()}
    assert {'_core/plans.py', '_shared/fields.py', '_daemons/decisions.py', '_shards/assignment.py',
            '_engine/duetimes.py', '_api/watchstate.py'} <= names
    assert '_shared/certificates.py' not in names   # it reads the clock and makes keys


@pytest.mark.parametrize('path', _pure_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_pure_modules_do_no_io_and_read_no_clock(path: pathlib.Path) -> None:
    source = path.read_text()
    tree = ast.parse(source)
    for node in ast.walk(tree):
        assert not isinstance(node, ast.AsyncFunctionDef), f'{path}:{node.lineno}: async def in a pure module'
        if isinstance(node, ast.Import):
            names = {alias.name.split('.')[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            names = {(node.module or '').split('.')[0]}
        else:
            continue
        assert not names & IO_MODULES, f'{path}:{node.lineno}: imports {names & IO_MODULES} in a pure module'
    for number, line in enumerate(source.splitlines(), 1):
        code = line.split('#')[0]
        assert not CLOCK_READS.search(code), f'{path}:{number}: reads the clock in a pure module (pass `now` in)'


def _kopf_imports(path: pathlib.Path) -> list[tuple[int, str]]:
    """(line, module) of every import of a kopf module, wherever it is (functions, `if TYPE_CHECKING:`);
    `from kopf._x import y` counts as importing `kopf._x.y`."""
    found = []
    package = ['kopf', *path.parent.relative_to(ROOT).parts]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):   # relative ones resolved against the file's package
            base = package[:len(package) - node.level + 1] if node.level else []
            module = '.'.join([*base, *([node.module] if node.module else [])])
            found.extend((node.lineno, f'{module}.{alias.name}' if module.count('.') == 1 else module)
                         for alias in node.names)
    return [(line, name) for line, name in found if name == 'kopf' or name.startswith('kopf.')]


def _package(name: str) -> str:
    return name.split('.')[1] if name.count('.') else ''


def test_import_kopf_does_not_import_optional_clients() -> None:
    code = (
        'import sys, kopf; '
        'heavy = {"kubernetes", "pykube", "jsonschema", "orjson", "cryptography", "trustme", "aiohttp", '
        '"prometheus_client", "uvloop", "pythonjsonlogger", "pydantic", "pydantic_core"}; '  # the extras: when used
        'print(sorted(heavy & {m.split(".")[0] for m in sys.modules}))'
    )
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == '[]'


def test_the_cli_and_the_local_cluster_do_not_import_test_tooling() -> None:
    code = 'import sys, kopf.cli, kopf._cluster.control.local, kopf._kits.clirunner; print("pytest" in sys.modules)'
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == 'False'


@pytest.mark.parametrize('path', sorted((ROOT / '_cluster').rglob('*.py')), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_emulator_imports_only_itself_and_the_shared_modules(path: pathlib.Path) -> None:
    for line, name in _kopf_imports(path):
        assert _package(name) in ('_cluster', '_shared'), f'{path}:{line}: the emulator imports {name}'


def test_import_kopf_does_not_import_the_emulator() -> None:
    code = 'import sys, kopf; print(sorted(m for m in sys.modules if m.startswith("kopf._cluster")))'
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == '[]'


# Where the emulator may be imported outside itself: the ways in to the local cluster.
EMULATOR_USERS = {'cli.py', 'testing.py', '_kits/fixtures.py', '_kits/clirunner.py', '_kits/envtest.py',
                  '_kits/clicommands.py'}


@pytest.mark.parametrize('path', sorted(p for p in ROOT.rglob('*.py') if p.relative_to(ROOT).parts[0] != '_cluster'),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_the_runtime_never_imports_the_emulator(path: pathlib.Path) -> None:
    if str(path.relative_to(ROOT)) in EMULATOR_USERS:
        return
    for line, name in _kopf_imports(path):
        assert _package(name) != '_cluster', f'{path}:{line}: imports the emulator ({name})'


def test_kopf_run_and_kopf_rbac_load_no_emulator_module(tmp_path: pathlib.Path) -> None:
    """What is loaded, not only what is imported: an operator's startup, and the `kopf rbac` command."""
    (tmp_path / 'handlers.py').write_text('import kopf\n@kopf.on.create("kopfexamples")\ndef fn(**_): pass\n')
    code = (
        'import asyncio, sys, kopf, click.testing\n'
        'from kopf.cli import main\n'
        f'result = click.testing.CliRunner().invoke(main, ["rbac", {str(tmp_path / "handlers.py")!r}, "-A"])\n'
        'assert result.exit_code == 0, result.output\n'
        'async def run():\n'
        '    tasks = await kopf.spawn_tasks(standalone=True, clusterwide=True)\n'
        '    for task in tasks: task.cancel()\n'
        '    await asyncio.gather(*tasks, return_exceptions=True)\n'
        'asyncio.run(run())\n'
        'print(sorted(m for m in sys.modules if m.startswith("kopf._cluster")))\n'
    )
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip().splitlines()[-1] == '[]'


# A feature may use another feature only through these modules (its face), for the reason given.
FEATURE_FACES = {
    ('_shards', 'kopf._leases.holding'): 'each shard is held by a Lease: the same holder as `--lease`',
    ('_shards', 'kopf._leases.elections'): "the shard Leases' holders are read by the same rules",
    ('_rbac', 'kopf._typed.declaring'): 'the declared resource classes resolve without their CRD (`kopf rbac`)',
    ('_rbac', 'kopf._typed.versioning'): "of their versions, the preferred one: Kubernetes' order",
}
# Where the lower layers reach up, and why. Each is a module of the layer below naming one above it.
UPWARD_ALLOWED = {
    # The settings' defaults are storage instances (`settings.persistence.progress_storage`, as upstream's).
    ('_core/settings.py', 'kopf._storage'),
    # The assembler: it starts the features the registry and the options ask for (lazily: only those).
    ('_engine/running.py', 'kopf._daemons'), ('_engine/running.py', 'kopf._indices'),
    ('_engine/running.py', 'kopf._admission'), ('_engine/running.py', 'kopf._peering'),
    ('_engine/running.py', 'kopf._leases'), ('_engine/running.py', 'kopf._shards'),
    ('_engine/running.py', 'kopf._metrics'), ('_engine/running.py', 'kopf._typed'),
    # The liveness endpoint serves the metrics on the same port when both are on the same address.
    ('_engine/probing.py', 'kopf._metrics.prometheus'),
    # `KopfRunner` runs the `kopf run` command itself: the CLI is what it drives.
    ('_kits/clirunner.py', 'kopf.cli'),
    # The commands other than `kopf run`, imported by the CLI when named: they share its options and helpers.
    ('_kits/clicommands.py', 'kopf.cli'),
}
# None left: the engine reaches the daemons, shards, metrics and admission through the handles that
# `contexts` declares as Protocols (the features implement them, `running` plugs them in).
UPWARD_FOR_NOW: set[tuple[str, str]] = set()


def _layered_files() -> list[pathlib.Path]:
    return sorted(p for pkg in LAYERS for p in (ROOT / pkg).rglob('*.py'))


@pytest.mark.parametrize('path', _layered_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_point_down_the_layers(path: pathlib.Path) -> None:
    relative = str(path.relative_to(ROOT))
    own = relative.split('/')[0]
    for line, name in _kopf_imports(path):
        target = _package(name)
        if target in ('_version', '_cluster'):   # a constant; the emulator: checked above
            continue
        if own in FEATURES and target in FEATURES and target != own:
            assert any(own == where and (name == face or name.startswith(face + '.'))
                       for where, face in FEATURE_FACES), f'{path}:{line}: {own} imports another feature ({name})'
            continue
        allowed = target == own or (target in LAYERS and LAYERS[target] < LAYERS[own])
        excepted = any(relative == where and (name == what or name.startswith(what + '.'))
                       for where, what in UPWARD_ALLOWED | UPWARD_FOR_NOW)
        assert allowed or excepted, f'{path}:{line}: {own} imports {name} (against the layers\' direction)'


def test_the_exceptions_are_still_needed() -> None:
    """A named exception that no import uses any more is dropped from the lists above."""
    used = {(str(path.relative_to(ROOT)), name) for path in _layered_files() for _, name in _kopf_imports(path)}
    for where, what in UPWARD_ALLOWED | UPWARD_FOR_NOW:
        assert any(w == where and (n == what or n.startswith(what + '.')) for w, n in used), (where, what)


def test_the_layers_cover_every_package() -> None:
    packages = {path.name for path in ROOT.iterdir() if (path / '__init__.py').exists()}
    assert packages == set(LAYERS) | {'_cluster'}
    assert {path.name for path in ROOT.glob('*.py')} == FACADE


EVENT_PATH = re.compile(r'`(kopf\._[a-z]+\.[a-z_]+)(?:\.[a-zA-Z_]+(?:\(\))?)?`')


def test_one_events_path_names_each_module_once() -> None:
    docstring = ast.get_docstring(ast.parse((ROOT / '_core' / '__init__.py').read_text())) or ''
    path = docstring.split("One event's path", 1)[1].split('\nModules:', 1)[0]
    named = EVENT_PATH.findall(path)
    assert len(named) >= 15
    assert sorted(name for name in set(named) if named.count(name) > 1) == []
    for name in named:
        assert (ROOT.parent / (name.replace('.', '/') + '.py')).exists(), name


def test_a_standalone_operator_loads_no_optional_feature() -> None:
    """What an operator does not use costs it no memory: the identity is made without the peering machinery;
    without `@kopf.index` handlers, metrics, Leases, shards or daemons, their runtimes are not loaded (the public
    values, `kopf.Index` and `kopf.DaemonStopped` among them, are: `import kopf` gives them)."""
    code = (
        'import asyncio, sys, kopf\n'
        'async def main():\n'
        '    tasks = await kopf.spawn_tasks(standalone=True, clusterwide=True)\n'
        '    for task in tasks: task.cancel()\n'
        '    await asyncio.gather(*tasks, return_exceptions=True)\n'
        'asyncio.run(main())\n'
        'optional = ("kopf._peering", "kopf._leases", "kopf._shards", "kopf._indices.filling",\n'
        '            "kopf._metrics.prometheus", "kopf._daemons.spawning", "kopf._rbac", "getpass", "random")\n'
        'print(sorted(m for m in sys.modules if m.startswith(optional)))\n'
    )
    env = {**os.environ, 'USER': 'someone'}
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True, env=env)
    assert proc.stdout.strip() == '[]'


def _record_writes(path: pathlib.Path) -> list[int]:
    """Lines that assign a field of an `ObjectRecord` (or of its `work`) to a receiver named like one."""
    from kopf._core import records
    fields = set(records.ObjectRecord.__dataclass_fields__) | set(records.Work.__dataclass_fields__)
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            for one in (target.elts if isinstance(target, ast.Tuple) else [target]):
                if isinstance(one, ast.Attribute) and one.attr in fields:
                    receiver = ast.unparse(one.value)
                    if receiver.split('.')[-1] in ('record', 'work') or receiver.endswith('.work'):
                        found.append(one.lineno)
    return found


def test_the_scan_of_record_writes() -> None:
    source = 'record.phase = 1\nself.record.memo = 2\nrecord.work.pending = 3\nx.phase = 4\nrecord.phase += 1\n'
    path = pathlib.Path(__file__).parent / '_scan_probe.py'
    try:
        path.write_text(source)
        assert _record_writes(path) == [1, 2, 3, 5]
    finally:
        path.unlink()


def test_only_the_records_module_changes_a_record() -> None:
    """`records.step()` (and the records module) is the only place a record changes: the engine feeds it signals."""
    found = {str(path.relative_to(ROOT)): lines for path in sorted(ROOT.rglob('*.py'))
             if path.name != 'records.py' and (lines := _record_writes(path))}
    assert found == {}


def test_declaring_typed_resources_and_handlers_does_not_import_pydantic() -> None:
    """Typed resources (docs/models.md) import pydantic when a model is used (a CRD made, a kwarg parsed), not when
    declared: dataclass models and their handlers cost an operator without pydantic nothing."""
    code = (
        'import dataclasses, sys, kopf\n'
        '@kopf.Rule("self.a > 0")\n'
        '@dataclasses.dataclass\n'
        'class Spec:\n'
        '    a: int = 1\n'
        '@kopf.custom_resource("example.com", "v1", kind="Thing",\n'
        '                      printer_columns=[kopf.PrinterColumn("A", ".spec.a")])\n'
        '@dataclasses.dataclass\n'
        'class Thing:\n'
        '    spec: Spec\n'
        '@kopf.on.create(Thing)\n'
        'def fn(spec: Spec, **_): pass\n'
        'print(sorted(m for m in sys.modules if m.split(".")[0] in ("pydantic", "pydantic_core")))\n'
    )
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == '[]'
