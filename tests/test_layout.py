"""The layout of the kopf package outside the emulator (which tests/test_emulator_layout.py checks):

- each package's docstring lists the modules and subpackages it holds, as "- `name`  what it holds" lines;
- no comment or docstring in kopf/ or tests/ cites a section of a document outside the repository
  (the rules are stated where they are relied on; design decisions are in docs/design/decisions.md);
- no module of kopf/ is longer than 500 lines (split at a second reason to change), but the generated ones.
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


def test_few_module_basenames_repeat_across_kopf() -> None:
    """A basename means one thing: at most 3 repeat across packages (a pure half and its I/O half, say)."""
    names = [path.name for path in KOPF.rglob('*.py') if path.name != '__init__.py']
    repeated = sorted({name for name in names if names.count(name) > 1})
    assert len(repeated) <= 3, repeated


MAX_LINES = 500
GENERATED = {'_cluster/web/protos/messages.py'}  # by tools/generate_protos.py (field tables): not split by hand


def test_modules_stay_within_the_size_limit() -> None:
    sizes = {str(path.relative_to(KOPF)): len(path.read_text().splitlines()) for path in KOPF.rglob('*.py')}
    assert GENERATED <= sizes.keys()  # the exemptions exist (a moved or renamed one is noticed)
    assert {name: n for name, n in sizes.items() if n > MAX_LINES and name not in GENERATED} == {}
