"""Every ```python block of every docs/*.md page compiles and its imports resolve; the index lists
every page; the runnable pages' blocks run (the testing page's tests pass, as documented).

Convention: a ```python block is valid Python (fragments with `...` are fine); shell commands,
YAML and outputs go into ```sh, ```yaml or plain ``` blocks. Several pages also have their own
tests that run their blocks and check what they say (handlers, memo, persistence, settings,
hierarchies).
"""
import ast
import asyncio
import importlib
import inspect
import pathlib
import re
from typing import Any

import pytest

import kopf
from kopf.testing import LocalCluster

from . import docs_blocks

ROOT = pathlib.Path(__file__).parent.parent
DOCS = ROOT / 'docs'
PAGES = sorted(DOCS.glob('*.md'))


blocks = docs_blocks.blocks

ALL_BLOCKS = [(page.name, idx, code) for page in PAGES for idx, code in enumerate(blocks(page))]


registry = docs_blocks.registry_fixture(autouse=True)


@pytest.mark.parametrize('page, idx, code', ALL_BLOCKS, ids=[f'{p}#{i}' for p, i, _ in ALL_BLOCKS])
def test_block_compiles_and_imports(page: str, idx: int, code: str) -> None:
    tree = ast.parse(code, filename=f'docs/{page}#{idx}')
    imports = ast.Module(body=[node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)],
                         type_ignores=[])
    exec(compile(imports, f'docs/{page}#{idx}', 'exec'), {'__name__': '__docs__'})


def test_the_index_lists_every_page() -> None:
    """By its name, or by the file it shows (docs/examples.md shows examples/README.md; the site links to it)."""
    index = (DOCS / 'index.md').read_text()
    for page in PAGES:
        included = re.findall(r'^```\{include\} (\S+)$', page.read_text(), flags=re.M)
        if page.name != 'index.md':
            assert any(f']({name})' in index for name in [page.name, *included]), page.name


def test_relative_links_resolve() -> None:
    for page in PAGES:
        for target in re.findall(r'\]\(([^)#:]+)(?:#[^)]*)?\)', page.read_text()):
            assert (page.parent / target).exists(), f'{page.name}: {target}'


def test_pages_cite_only_the_repository() -> None:
    """The docs site is read without the project's tracker and notes: no issue numbers, no specs' sections."""
    cited = re.compile(r'\N{SECTION SIGN}|\bSPEC\b|ARCHITECTURE|EMULATOR[.]md|\b[Ii]ssue \d+|the handlers issue')
    for page in [*PAGES, *DOCS.glob('design/*.md')]:
        for number, line in enumerate(page.read_text().splitlines(), 1):
            assert not cited.search(line), f'{page.name}:{number}: {line.strip()}'


PATH = re.compile(r'`((?:kopf|tests|examples|docs|bench|tools)/[\w./-]+)`')
DOTTED = re.compile(r'\b(kopf\._[a-z_]+(?:\.\w+)*)')        # kopf._model.plans.decide
SHORT = re.compile(r'[(,]\s*`((?!kopf\.)[a-z_]+(?:\.\w+)*)`(?=[),:])')   # (`loading`), (`a`, `b`), (`causes.detect`)
MODULES = [path for path in (ROOT / 'kopf').rglob('*.py') if path.name != '__init__.py']


def _resolves(dotted: str) -> bool:
    """Whether `kopf._x.y.Name.attr` is a module, or a module and attributes in it."""
    parts = dotted.split('.')
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module('.'.join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if inspect.isclass(obj) and not hasattr(obj, name):  # an instance's attribute, set in __init__
                return f'self.{name} ' in inspect.getsource(obj) and name == parts[-1]
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def _module_name(path: pathlib.Path) -> str:
    return '.'.join(path.relative_to(ROOT).with_suffix('').parts)


@pytest.mark.parametrize('page', [*PAGES, *DOCS.glob('design/*.md')], ids=lambda page: page.name)
def test_pages_name_only_what_exists(page: pathlib.Path) -> None:
    """The files, modules and names of the code that a page names exist (a move or a rename updates the page)."""
    text = page.read_text()
    missing = [path for path in PATH.findall(text) if not (ROOT / path.rstrip('/')).exists()]
    missing += [name for name in DOTTED.findall(text) if not _resolves(name.rstrip('.'))]
    if page.name == 'reactor.md':  # the steps name their modules by their short names: `running`, `causes.detect`
        for short in SHORT.findall(text):
            module, *rest = short.split('.')
            if not any(_resolves('.'.join([_module_name(path), *rest])) for path in MODULES if path.stem == module):
                missing.append(short)
    assert missing == []


def _exec(page: str, code: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {'__name__': '__docs__'}
    exec(compile(code, f'docs/{page}', 'exec'), namespace)
    return namespace


def test_walkthrough_blocks_register_their_handlers(registry: kopf.OperatorRegistry) -> None:
    for code in blocks(DOCS / 'walkthrough.md'):
        _exec('walkthrough.md', code)
    assert {h.id for h in registry.handlers} == {'create_fn', 'update_fn', 'field_fn/spec.field', 'delete_fn',
                                                 'create_with_retries'}


def test_embedding_blocks_define_what_they_say(registry: kopf.OperatorRegistry) -> None:
    namespaces = [_exec('embedding.md', code) for code in blocks(DOCS / 'embedding.md')]
    assert callable(namespaces[0]['start_operator']) and namespaces[0]['registry'].handlers
    assert inspect.iscoroutinefunction(namespaces[1]['main'])
    assert len(namespaces[2]['team_a'].handlers) == len(namespaces[2]['team_b'].handlers) == 1
    assert not registry.handlers  # every block used its own registry


def test_testing_page_tests_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the documented paths are relative to the repository root
    namespace: dict[str, Any] = {}
    for code in blocks(DOCS / 'testing.md'):
        namespace.update(_exec('testing.md', code))
    with LocalCluster() as cluster:
        namespace['test_the_operator'](cluster)
    asyncio.run(namespace['test_in_one_loop']())
    namespace['test_create_fn']()


def test_every_code_block_names_its_language() -> None:
    """So that no Python hides in an unlabelled block and escapes the checks above."""
    for page in PAGES:
        inside = False
        for number, line in enumerate(page.read_text().splitlines(), 1):
            if line.startswith('```'):
                assert inside or line[3:].strip(), f'{page.name}:{number}: a code block without a language'
                inside = not inside
