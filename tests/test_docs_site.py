"""The docs site's API reference (docs/_ext/kopfdocs.py), checked without building it: `make docs` builds it.

docs/api.md documents every public name once, by the blocks of `kopf.__all__` it names; the decorators'
`**options: Unpack[...]` are shown as their keywords. (Needs the `docs` extra: skipped without Sphinx.)
"""
import pathlib
import re
import sys
import typing
from types import ModuleType

import pytest

pytest.importorskip('sphinx')

import kopf
import kopf.lifecycles
import kopf.on
import kopf.testing

DOCS = pathlib.Path(__file__).parent.parent / 'docs'
sys.path.insert(0, str(DOCS / '_ext'))
import kopfdocs  # noqa: E402

DIRECTIVE = re.compile(r'^\.\. kopf-names:: (?P<module>[\w.]+)\n(?:   :group:(?P<group>.*)\n)?', re.M)


def _documented_by_the_page() -> list[str]:
    found = []
    for match in DIRECTIVE.finditer((DOCS / 'api.md').read_text()):
        module: ModuleType = sys.modules[match['module']]
        group = match['group']
        names = kopfdocs.groups(module)[group.strip()] if group is not None else kopfdocs.public_names(module)
        found += [f'{module.__name__}.{name}' for name in names]
    return found


def test_the_blocks_of_kopf_all_are_all_its_names_once() -> None:
    blocks = kopfdocs.groups(kopf)
    assert sorted(name for names in blocks.values() for name in names) == sorted(kopf.__all__)
    assert '' in blocks and 'handlers' in blocks  # the names before any comment; a marked block


def test_the_page_documents_every_public_name_once() -> None:
    documented = _documented_by_the_page()
    expected = [f'{module.__name__}.{name}' for module in (kopf, kopf.on, kopf.lifecycles, kopf.testing)
                for name in kopfdocs.public_names(module)]
    assert sorted(documented) == sorted(expected)


def test_public_names_without_all_leave_out_the_private_and_the_modules() -> None:
    names = kopfdocs.public_names(kopf.testing)
    assert {'LocalCluster', 'EnvtestCluster', 'KopfRunner', 'cluster_vault'} <= set(names)
    assert not any(name.startswith('_') for name in names)


@pytest.mark.parametrize('name', ['create', 'field', 'daemon', 'timer', 'validate', 'startup', 'subhandler'])
def test_unpacked_options_are_shown_as_keywords(name: str) -> None:
    fn = getattr(kopf.on, name)
    options = typing.get_type_hints(fn, include_extras=True)['options']
    keys = typing.get_type_hints(typing.get_args(options)[0])
    result = kopfdocs.expand_unpacked_options(None, 'function', f'kopf.on.{name}', fn, None, '(...)', '')
    assert result is not None
    signature, _ = result
    assert '**options' not in signature and 'Unpack' not in signature
    for key in keys:
        assert re.search(rf'\b{key}: ', signature), key


def test_other_signatures_are_left_as_they_are() -> None:
    assert kopfdocs.expand_unpacked_options(None, 'function', 'kopf.adopt', kopf.adopt, None, '()', '') is None
    assert kopfdocs.expand_unpacked_options(None, 'class', 'kopf.Body', kopf.Body, None, '()', '') is None
