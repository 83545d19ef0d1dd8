"""Packaging: the version from the package metadata (read lazily), the data files in package_data and
MANIFEST.in (what `make dist` checks in the built wheel and sdist: tools/check_dist.py)."""
import fnmatch
import importlib.metadata
import pathlib
import re
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


@pytest.mark.parametrize('text, expected', [
    ('1.2.3', (1, 2, 3)),
    ('0.1.0', (0, 1, 0)),
    ('1.2.3.dev4', (1, 2, 3, 'dev4')),
    ('1.45.2+0.1.0', (1, 45, 2, '0.1.0')),               # ours: the local part apart, not glued to the patch number
    ('1.45.2+0.1.0.dev3', (1, 45, 2, '0.1.0.dev3')),
    ('1.45.2rc1', (1, 45, 2, 'rc1')),
    ('1.45.2.post1.dev2+abc.7', (1, 45, 2, 'post1', 'dev2', 'abc.7')),
    ('1.45', (1, 45)),
    ('not-a-version', ('not-a-version',)),
])
def test_version_tuples(text: str, expected: tuple[int | str, ...]) -> None:
    assert _version.version_tuple(text) == expected


def test_the_version_states_the_upstream_api_level() -> None:
    assert _version.VERSION == f'{_version.UPSTREAM}+{_version.RELEASE}'
    assert _version.version_tuple(_version.VERSION)[:3] == _version.version_tuple(_version.UPSTREAM)
    assert _version.version_tuple(_version.VERSION) >= (1, 38)   # as an operator checks upstream's version
    assert _version.version_tuple(_version.VERSION) < (2,)


def _envtest_versions() -> set[str]:
    """The Kubernetes versions that tools/envtest builds: its VERSION file(s) and its per-version folders."""
    envtest = ROOT / 'tools' / 'envtest'
    found = {path.read_text().strip().removeprefix('v') for path in envtest.rglob('VERSION')}
    found |= {path.name for path in envtest.iterdir() if path.is_dir() and re.fullmatch(r'\d+\.\d+\.\d+', path.name)}
    return found


def test_the_tested_kubernetes_versions_are_envtests() -> None:
    from kopf._kits import envassets
    assert set(_version.KUBERNETES) == _envtest_versions()
    assert list(_version.KUBERNETES) == sorted(_version.KUBERNETES, key=_version.version_tuple)
    assert envassets.DEFAULT_VERSION in _version.KUBERNETES


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
            '_shared/data/*.json', '_cluster/rbac/data/*.json', '_cluster/patchtypes/data/*.json']
    globs = ['kopf/' + glob for glob in data if f"'{glob}'" in setup]
    manifest = (ROOT / 'MANIFEST.in').read_text()
    files = check_dist.data_files()
    assert files, 'no data files found: the check looks in the wrong place'
    for name in files:
        assert any(fnmatch.fnmatch(name, glob) for glob in globs), f'{name} is not in setup.py package_data'
        directory, _, base = name.rpartition('/')
        assert name in manifest or (directory in manifest and base.endswith(('.json', '.xz'))), \
            f'{name} not in MANIFEST.in'
