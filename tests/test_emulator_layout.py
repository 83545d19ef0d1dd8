"""The emulator's layout (`kopf/_cluster/`), checked by reading the code (AST), not by importing it.

- no import cycles between its modules, nor between its subpackages (every import counts: at the top,
  inside functions, under `if TYPE_CHECKING:`);
- each package's docstring lists exactly the modules and subpackages it holds;
- no module basename of the emulator repeats, inside it or elsewhere in kopf/;
- no comment cites a section of a document outside the repository.
"""
import ast
import pathlib
import re

import pytest

KOPF = pathlib.Path(__file__).parent.parent / 'kopf'
ROOT = KOPF / '_cluster'
PREFIX = 'kopf._cluster'
LISTED = re.compile(r'^    ([a-z_][a-z0-9_]*)(?:\s{2,}|$)', re.M)   # "    name   what it holds"


def _dotted(path: pathlib.Path) -> str:
    parts = path.relative_to(KOPF.parent).with_suffix('').parts
    return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


def _modules() -> dict[str, pathlib.Path]:
    return {_dotted(path): path for path in sorted(ROOT.rglob('*.py'))}


def _imports(dotted: str, path: pathlib.Path, known: set[str]) -> set[str]:
    """The emulator's modules this one imports (a `from package import name` imports the module `name`)."""
    found: set[str] = set()
    package = dotted if path.name == '__init__.py' else dotted.rpartition('.')[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                anchor = package.split('.')[:len(package.split('.')) - node.level + 1]
                base = '.'.join(anchor + ([base] if base else []))
            candidates = [f'{base}.{alias.name}' for alias in node.names] + [base]
        else:
            continue
        for name in candidates:
            while name and name not in known:
                name = name.rpartition('.')[0]
            if name and name != dotted and name != PREFIX and not dotted.startswith(name + '.'):
                found.add(name)
    return found


def _graph(collapse: bool) -> dict[str, set[str]]:
    """Module -> imported modules; with `collapse`, a subpackage's modules count as the subpackage."""
    modules = _modules()

    def node(name: str) -> str:
        return '.'.join(name.split('.')[:3]) if collapse else name

    graph: dict[str, set[str]] = {}
    for dotted, path in modules.items():
        targets = {node(target) for target in _imports(dotted, path, set(modules))}
        graph.setdefault(node(dotted), set()).update(targets - {node(dotted)})
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


@pytest.mark.parametrize('collapse', [False, True], ids=['modules', 'subpackages'])
def test_no_import_cycles(collapse: bool) -> None:
    assert _cycles(_graph(collapse)) == []


def test_the_cycle_check_finds_cycles() -> None:
    """Not vacuous: a two-module and a three-module cycle are found; a chain is not one."""
    assert _cycles({'a': {'b'}, 'b': {'a'}, 'c': {'a'}}) == [['a', 'b']]
    assert _cycles({'a': {'b'}, 'b': {'c'}, 'c': {'a'}}) == [['a', 'b', 'c']]
    assert _cycles({'a': {'b'}, 'b': {'c'}, 'c': set()}) == []


def test_the_graph_sees_the_imports() -> None:
    """Not vacuous: known edges of both import styles are in the graph."""
    modules = _graph(collapse=False)
    assert f'{PREFIX}.web.endpoints' in modules[f'{PREFIX}.web.dispatching']         # from package import module
    assert f'{PREFIX}.control.operations' in modules[f'{PREFIX}.control.emulator']   # from module import names
    assert f'{PREFIX}.pipeline' in _graph(collapse=True)[f'{PREFIX}.web']


def _packages() -> list[pathlib.Path]:
    return sorted(path.parent for path in ROOT.rglob('__init__.py'))


@pytest.mark.parametrize('package', _packages(), ids=lambda p: str(p.relative_to(KOPF)))
def test_package_docstrings_list_what_they_hold(package: pathlib.Path) -> None:
    held = {path.stem for path in package.glob('*.py') if path.name != '__init__.py'}
    held |= {path.name for path in package.iterdir() if (path / '__init__.py').exists()}
    docstring = ast.get_docstring(ast.parse((package / '__init__.py').read_text()), clean=False) or ''
    assert docstring.strip(), f'{package}: no docstring'
    listed = set(LISTED.findall(docstring))
    assert sorted(held - listed) == [], f'{package}: not named in the docstring'
    assert sorted(listed - held) == [], f'{package}: named in the docstring, but not there'


def test_emulator_basenames_are_unique_across_kopf() -> None:
    ours = [path for path in ROOT.rglob('*.py') if path.name != '__init__.py']
    others = {path.name for path in KOPF.rglob('*.py') if ROOT not in path.parents}
    names = [path.name for path in ours]
    assert sorted({name for name in names if names.count(name) > 1}) == []
    assert sorted({name for name in names if name in others}) == []


def test_no_citations_of_documents_outside_the_repository() -> None:
    """Comments state the rule they rely on, not a section number of a spec the repository does not hold."""
    tests = pathlib.Path(__file__).parent
    paths = [*ROOT.rglob('*.py'), *(tests / 'cluster').rglob('*.py'), *(tests / 'fidelity').rglob('*.py')]
    cited = re.compile('\N{SECTION SIGN}|EMULATOR[.]md|SPEC[.]md')
    found = [f'{path}:{number}' for path in paths
             for number, line in enumerate(path.read_text().splitlines(), 1) if cited.search(line)]
    assert found == []


def test_the_root_docstring_lists_the_packages_in_their_import_order() -> None:
    """Each of the emulator's packages (and root modules) imports only those listed before it."""
    docstring = ast.get_docstring(ast.parse((ROOT / '__init__.py').read_text()), clean=False) or ''
    order = [f'{PREFIX}.{name}' for name in LISTED.findall(docstring)]
    later = [f'{source} -> {target}' for source, targets in _graph(collapse=True).items() for target in targets
             if source in order and target in order and order.index(target) >= order.index(source)]
    assert later == []
