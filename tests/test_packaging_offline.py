"""The version scheme at work: an operator whose metadata requires `kopf>=1.38.0` installs beside ours, and pip keeps
ours, also when an index offers upstream's 1.45.2 (docs/install.md: why `<upstream API level>+<our release>`).

Offline: the wheel is built from a copy of the sources without build isolation; the operator's package,
"upstream's" kopf and stand-ins for our runtime dependencies (pip's resolver reads only their metadata) are wheels
made here by hand; pip installs into a fresh virtualenv with `--no-index`, ignoring the environment's pip settings.
"""
import importlib.metadata
import pathlib
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

from kopf import _version

ROOT = pathlib.Path(__file__).parent.parent
SOURCES = ['setup.py', 'pyproject.toml', 'requirements.txt', 'README.md', 'MANIFEST.in', '_kopf_pytest.py']


def _pip(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, '-m', 'pip', '--isolated', '--disable-pip-version-check', '--no-input', *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def _our_wheel(tmp_path: pathlib.Path) -> pathlib.Path:
    source = tmp_path / 'source'
    shutil.copytree(ROOT / 'kopf', source / 'kopf', ignore=shutil.ignore_patterns('__pycache__'))
    for name in SOURCES:
        shutil.copy(ROOT / name, source / name)
    result = _pip('wheel', '--no-deps', '--no-build-isolation', '--no-index', '-w', str(tmp_path / 'ours'), str(source))
    assert result.returncode == 0, result.stdout + result.stderr
    [wheel] = (tmp_path / 'ours').glob('kopf-*.whl')
    return wheel


def _wheel(directory: pathlib.Path, name: str, version: str, *requires: str) -> pathlib.Path:
    """A minimal pure wheel: one empty package and the metadata (what pip's resolver reads)."""
    info = f'{name}-{version}.dist-info'
    files = {f'{name}/__init__.py': '',
             f'{info}/METADATA': f'Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n'
                                 + ''.join(f'Requires-Dist: {requirement}\n' for requirement in requires),
             f'{info}/WHEEL': 'Wheel-Version: 1.0\nGenerator: kopf-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n'}
    files[f'{info}/RECORD'] = ''.join(f'{path},,\n' for path in [*files, f'{info}/RECORD'])
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f'{name}-{version}-py3-none-any.whl'
    with zipfile.ZipFile(path, 'w') as archive:
        for member, text in files.items():
            archive.writestr(member, text)
    return path


def _stand_ins(wheel: pathlib.Path, directory: pathlib.Path) -> None:
    """A wheel of each runtime dependency of ours, at its lowest allowed version (all are `name>=version`)."""
    with zipfile.ZipFile(wheel) as archive:
        [metadata] = [name for name in archive.namelist() if name.endswith('.dist-info/METADATA')]
        lines = archive.read(metadata).decode().splitlines()
    requires = [line.removeprefix('Requires-Dist: ') for line in lines
                if line.startswith('Requires-Dist: ') and 'extra ==' not in line]
    assert requires, 'no runtime dependencies found in the metadata'
    for requirement in requires:
        name, version = re.fullmatch(r'([\w.-]+)\s*>=\s*([\w.]+)', requirement).groups()  # type: ignore[union-attr]
        _wheel(directory, re.sub(r'[-.]', '_', name), version)


def _installed_kopf(venv: pathlib.Path) -> str:
    [site] = (venv / 'lib').glob('python*/site-packages')
    [info] = site.glob('kopf-*.dist-info')
    return importlib.metadata.PathDistribution(info).version


@pytest.fixture
def index(tmp_path: pathlib.Path) -> pathlib.Path:
    """A local "index": the operator's package (requiring kopf>=1.38.0) and "upstream's" kopf 1.45.2."""
    _wheel(tmp_path / 'index', 'needs_kopf', '1.0', 'kopf>=1.38.0')
    _wheel(tmp_path / 'index', 'kopf', '1.45.2')
    return tmp_path / 'index'


def _venv_with(tmp_path: pathlib.Path, wheel: pathlib.Path, index: pathlib.Path) -> pathlib.Path:
    """A fresh virtualenv with that kopf and its dependencies (a broken one would make pip look for another kopf)."""
    venv = tmp_path / 'venv'
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', str(venv)], check=True, timeout=120)
    result = _pip('--python', str(venv / 'bin' / 'python'), 'install', '--no-index', '--find-links', str(index),
                  str(wheel))
    assert result.returncode == 0, result.stdout + result.stderr
    return venv


def test_pip_keeps_ours_beside_an_operator_requiring_upstream(tmp_path: pathlib.Path, index: pathlib.Path) -> None:
    ours = _our_wheel(tmp_path)
    assert ours.name == f'kopf-{_version.VERSION}-py3-none-any.whl'
    _stand_ins(ours, index)
    venv = _venv_with(tmp_path, ours, index)
    result = _pip('--python', str(venv / 'bin' / 'python'), 'install', '--no-index', '--find-links', str(index),
                  'needs_kopf')
    assert result.returncode == 0, result.stdout + result.stderr
    assert _installed_kopf(venv) == _version.VERSION   # not upstream's 1.45.2 from the index


def test_the_old_scheme_was_replaced(tmp_path: pathlib.Path, index: pathlib.Path) -> None:
    """The control: a kopf 0.1.0 (the version this project had) is replaced by upstream's, as users found."""
    venv = _venv_with(tmp_path, _wheel(tmp_path / 'old', 'kopf', '0.1.0'), index)
    result = _pip('--python', str(venv / 'bin' / 'python'), 'install', '--no-index', '--find-links', str(index),
                  'needs_kopf')
    assert result.returncode == 0, result.stdout + result.stderr
    assert _installed_kopf(venv) == '1.45.2'
