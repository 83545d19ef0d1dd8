"""Packaging: the version from the package metadata (read lazily), the data files in package_data and
MANIFEST.in (what `make dist` checks in the built wheel and sdist: tools/check_dist.py)."""
import fnmatch
import importlib.metadata
import pathlib
import subprocess
import sys

import pytest

import kopf
from kopf import _version

ROOT = pathlib.Path(__file__).parent.parent
sys.path.insert(0, str(ROOT / 'tools'))
import check_dist  # noqa: E402


def test_the_version_is_the_package_metadatas() -> None:
    assert kopf.__version__ == importlib.metadata.version('kopf') == _version.VERSION
    assert kopf.__version_tuple__ == _version.version_tuple(kopf.__version__)
    assert kopf.__commit_id__ is None


@pytest.mark.parametrize('text, expected', [('1.2.3', (1, 2, 3)), ('0.1.0', (0, 1, 0)),
                                            ('1.2.3.dev4', (1, 2, 3, 'dev4'))])
def test_version_tuples(text: str, expected: tuple[int | str, ...]) -> None:
    assert _version.version_tuple(text) == expected


def test_import_kopf_does_not_read_the_metadata() -> None:
    code = 'import sys, kopf; print("importlib.metadata" in sys.modules, kopf.__version__)'
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ['False', _version.VERSION]


def test_unknown_attributes_are_still_errors() -> None:
    with pytest.raises(AttributeError, match='nonexistent'):
        kopf.nonexistent  # type: ignore[attr-defined]  # noqa: B018


def test_every_data_file_is_in_package_data_and_the_manifest() -> None:
    setup = (ROOT / 'setup.py').read_text()
    data = ['py.typed', 'peering.yaml', '_cluster/openapi/data/*.json', '_cluster/openapi/data/*.xz',
            '_shared/data/*.json']
    globs = ['kopf/' + glob for glob in data if f"'{glob}'" in setup]
    manifest = (ROOT / 'MANIFEST.in').read_text()
    files = check_dist.data_files()
    assert files, 'no data files found: the check looks in the wrong place'
    for name in files:
        assert any(fnmatch.fnmatch(name, glob) for glob in globs), f'{name} is not in setup.py package_data'
        directory, _, base = name.rpartition('/')
        assert name in manifest or (directory in manifest and base.endswith(('.json', '.xz'))), \
            f'{name} not in MANIFEST.in'
