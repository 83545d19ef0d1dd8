"""The layout of the kopf package outside the emulator (which tests/test_emulator_layout.py checks):

- each package's docstring lists the modules and subpackages it holds, as "- `name`  what it holds" lines;
- no comment or docstring in kopf/ or tests/ cites a section of a document outside the repository
  (the rules are stated where they are relied on; design decisions are in docs/design/decisions.md);
- no module of kopf/ is longer than 500 lines (split at a second reason to change), but the generated ones;
- no function of kopf/ is longer than 50 lines (from its `def` to its last line), but the generated ones;
- the unit tests mirror the modules they test (`tests/core/test_diffs.py` tests `kopf/_core/diffs.py`);
- no end-to-end test sleeps in real time before an assertion (it waits for a condition that proves
  the operator saw what it asserts on: tests/e2e/conftest.py has the barriers).
"""
import ast
import pathlib
import re

import pytest

KOPF = pathlib.Path(__file__).parent.parent / 'kopf'
TESTS = pathlib.Path(__file__).parent
BULLET = re.compile(r'^- ((?:`[a-z_][a-z0-9_]*`(?:, )?)+)', re.M)   # "- `a`, `b`: ..." or "- `name`  ..."
PACKAGES = [path.parent for path in sorted(KOPF.rglob('__init__.py'))
            if path.parent != KOPF and '_cluster' not in path.relative_to(KOPF).parts]


def _listed(docstring: str) -> set[str]:
    return {name for group in BULLET.findall(docstring) for name in re.findall(r'`([a-z0-9_]+)`', group)}


@pytest.mark.parametrize('package', PACKAGES, ids=lambda p: str(p.relative_to(KOPF)))
def test_package_docstrings_list_what_they_hold(package: pathlib.Path) -> None:
    held = {path.stem for path in package.glob('*.py') if path.name != '__init__.py'}
    held |= {path.name for path in package.iterdir() if (path / '__init__.py').exists()}
    docstring = ast.get_docstring(ast.parse((package / '__init__.py').read_text()), clean=False) or ''
    listed = _listed(docstring)
    assert sorted(held - listed) == [], f'{package}: not named in the docstring'
    assert sorted(listed - held) == [], f'{package}: named in the docstring, but not there'


def test_the_listing_pattern() -> None:
    assert _listed('x\n- `a`  one\n- `b`, `c`: two\n  - `d` nested\n- not `e`\n') == {'a', 'b', 'c'}


def test_no_citations_of_documents_outside_the_repository() -> None:
    cited = re.compile('\N{SECTION SIGN}|EMULATOR[.]md|SPEC[.]md|SPEC "Our[ ]decisions')
    paths = [*KOPF.rglob('*.py'), *TESTS.rglob('*.py')]
    found = [f'{path}:{number}' for path in paths
             for number, line in enumerate(path.read_text().splitlines(), 1) if cited.search(line)]
    assert found == []


# Synonyms that stemming does not catch: one concept, one name.
SYNONYMS = [{'index', 'indic', 'indexing'}, {'telemetry', 'metric'}, {'scop', 'paus'}, {'id', 'identity', 'identiti'},
            {'daemon', 'background'}]


def stem(name: str) -> str:
    """A crude English stem of a module's name: `leasing`, `leases` -> `leas`; `runner`, `running` -> `run`."""
    word = name.lower()
    for suffix in ('ies', 'ings', 'ing', 'ers', 'er', 'es', 's'):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[:-len(suffix)] + ('y' if suffix == 'ies' else '')
            if suffix in ('ings', 'ing', 'ers', 'er'):   # runn(ing) -> run; but cell(s) stays cell
                word = re.sub(r'(.)\1$', r'\1', word)
            break
    return word.removesuffix('e')


def test_the_stemming() -> None:
    assert stem('leases') == stem('leasing') == 'leas'
    assert stem('runner') == stem('running') == 'run'
    assert stem('peers') == stem('peering') == 'peer'
    assert stem('progress') != stem('progressstorages')
    assert stem('cells') != stem('cel')


def test_no_two_modules_share_a_stem_or_a_synonym() -> None:
    """Across kopf/ (the emulator too): one concept has one name, so "where is X" has one answer. Modules are
    compared with modules and with packages (a package and a module of one stem are two homes of one concept);
    packages with packages are not (`_api`, the client, and `_cluster/apis`, what the emulator serves)."""
    modules = sorted({path.stem for path in KOPF.rglob('*.py') if path.name != '__init__.py'})
    packages = sorted({path.parent.name.lstrip('_') for path in KOPF.rglob('__init__.py')} - {'kopf'})
    by_stem: dict[str, set[str]] = {}
    for name in modules:
        by_stem.setdefault(stem(name), set()).add(name)
    shared = {key: found for key, found in by_stem.items() if len(found) > 1}
    shared |= {stem(name): by_stem[stem(name)] | {name} for name in packages if stem(name) in by_stem}
    assert shared == {}, shared
    for group in SYNONYMS:
        used = {name for name in [*modules, *packages] if stem(name) in group}
        assert len({stem(name) for name in used}) <= 1, (group, used)


MAX_LINES = 500
GENERATED = {'_cluster/web/protos/messages.py'}  # by tools/generate_protos.py (field tables): not split by hand


def test_modules_stay_within_the_size_limit() -> None:
    sizes = {str(path.relative_to(KOPF)): len(path.read_text().splitlines()) for path in KOPF.rglob('*.py')}
    assert GENERATED <= sizes.keys()  # the exemptions exist (a moved or renamed one is noticed)
    assert {name: n for name, n in sizes.items() if n > MAX_LINES and name not in GENERATED} == {}


MAX_FUNCTION_LINES = 50
# Over the limit for a reason, each named here (none today); one leaves this list when it is within the limit.
LONG_FUNCTIONS_FOR_NOW: set[str] = set()


def _function_lengths(source: str) -> dict[str, int]:
    """`Class.function` -> its lines, from the `def` line (not its decorators) to its last line."""
    lengths: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f'{prefix}{child.name}'
                lengths[name] = (child.end_lineno or child.lineno) - child.lineno + 1
                visit(child, f'{name}.')
            elif isinstance(child, ast.ClassDef):
                visit(child, f'{prefix}{child.name}.')
            else:
                visit(child, prefix)

    visit(ast.parse(source), '')
    return lengths


def test_the_function_lengths() -> None:
    source = 'class A:\n    @property\n    def f(self):\n        def g():\n            pass\n        return 1\n'
    assert _function_lengths(source) == {'A.f': 4, 'A.f.g': 2}


def test_functions_stay_within_the_size_limit() -> None:
    modules = [path for path in sorted(KOPF.rglob('*.py')) if str(path.relative_to(KOPF)) not in GENERATED]
    lengths = {f'{path.relative_to(KOPF)}::{name}': n
               for path in modules for name, n in _function_lengths(path.read_text()).items()}
    too_long = {name: n for name, n in lengths.items() if n > MAX_FUNCTION_LINES}
    assert {name: n for name, n in too_long.items() if name not in LONG_FUNCTIONS_FOR_NOW} == {}
    assert sorted(LONG_FUNCTIONS_FOR_NOW - too_long.keys()) == []  # within the limit now: drop it from the list


# Unit tests by the package they test: `test_<module>.py` or `test_<module>_<aspect>.py`, where <module> is a
# module or a subpackage anywhere in the package (the emulator's are nested by concern).
MIRRORS = {folder: f'_{folder}' for folder in ('core', 'shared', 'engine', 'storage', 'api', 'cluster', 'kits',
                                                'daemons', 'indices', 'admission', 'peering', 'leases', 'shards',
                                                'metrics', 'rbac', 'typed')}
ACROSS_MODULES = {  # files that test one concern across modules, and that concern
    'storage/test_docs_examples.py': "docs/persistence.md's and docs/settings.md's examples: storages and settings",
    'storage/test_reactor_paths.py': "both storages' (progress, diff-base) fast paths against their per-key methods",
    'storage/test_seeds.py': "the persistence seed's configurations: both storages through the processing",
    'storage/test_upstream_compat.py': "both storages' bytes against upstream's recorded ones",
    'core/test_compat_types.py': "upstream's public names in annotations: kopf.X of many modules",
    'cluster/test_hostile_input.py': 'the whole HTTP surface, fuzzed: dispatching, codecs, every handler',
    'cluster/test_kinds.py': 'every built-in kind through the table, discovery, defaults, rules, Tables, OpenAPI',
    'cluster/test_conformance.py': "what Kubernetes' conformance specs expect (GC, quotas, OpenAPI v2, VAP, paging)",
}


def _tested_module(path: pathlib.Path, modules: set[str]) -> str | None:
    name = path.stem.removeprefix('test_')
    return next((module for module in sorted(modules, key=len, reverse=True)
                 if name == module or name.startswith(f'{module}_')), None)


def test_unit_tests_mirror_the_modules_they_test() -> None:
    unmapped = []
    for folder, package in MIRRORS.items():
        modules = {path.stem for path in (KOPF / package).rglob('*.py') if path.name != '__init__.py'}
        modules |= {path.parent.name for path in (KOPF / package).rglob('__init__.py')}
        for path in sorted((TESTS / folder).glob('test_*.py')):
            if _tested_module(path, modules) is None and f'{folder}/{path.name}' not in ACROSS_MODULES:
                unmapped.append(f'{folder}/{path.name}')
    assert unmapped == []
    assert all((TESTS / name).exists() for name in ACROSS_MODULES)  # a renamed or gone one is noticed


def _sleeps_before_asserts(source: str, *, window: int = 8) -> list[int]:
    """Lines of a test function's real-time sleeps (not in a poll loop, not of zero) with an assertion soon after."""
    tree = ast.parse(source)
    sleeps: list[int] = []

    def visit(node: ast.AST, in_test: bool, in_loop: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):  # a handler inside a test: not the test's
                visit(child, child.name.startswith('test_') and not in_test, False)
                continue
            if in_test and not in_loop and isinstance(child, ast.Call):
                func = child.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, 'id', '')
                zero = bool(child.args) and isinstance(child.args[0], ast.Constant) and child.args[0].value == 0
                if name == 'sleep' and not zero:
                    sleeps.append(child.lineno)
            visit(child, in_test, in_loop or isinstance(child, (ast.While, ast.For, ast.AsyncFor)))

    visit(tree, False, False)
    asserts = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Assert)]
    return [line for line in sleeps if any(line < at <= line + window for at in asserts)]


def test_the_sleep_pattern() -> None:
    source = ('async def test_a():\n    await asyncio.sleep(0.1)\n    assert not calls\n'
              'async def test_b():\n    while x:\n        time.sleep(0.1)\n    assert x\n'
              'async def test_c():\n    async def fn():\n        await asyncio.sleep(1)\n    assert fn\n'
              'async def test_d():\n    await asyncio.sleep(0)\n    assert x\n')
    assert _sleeps_before_asserts(source) == [2]


SLEEPS_KEPT: dict[str, str] = {}  # file name: why no condition can replace its sleep (none so far)


def test_no_real_time_sleep_before_an_assertion_in_e2e() -> None:
    found = {path.name: lines for path in sorted((TESTS / 'e2e').glob('test_*.py'))
             if (lines := _sleeps_before_asserts(path.read_text()))}
    assert {name: lines for name, lines in found.items() if name not in SLEEPS_KEPT} == {}
    assert sorted(SLEEPS_KEPT) == sorted(name for name in SLEEPS_KEPT if name in found)  # none kept needlessly
