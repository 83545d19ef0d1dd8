"""kopf's pytest plugin (`_kopf_pytest`, the `pytest11` entry point `kopf`): the fixtures of `kopf.testing` without a
conftest line, `pytest_plugins = ['kopf.testing']` still working beside it, `-p no:kopf` turning it off, and a
plugin that imports nothing of kopf until a fixture is requested (it loads in every pytest run of the venv).

Each case runs pytest in a subprocess, in a directory of its own (its own pytest.ini: not this repository's).
"""
import importlib.metadata
import pathlib
import subprocess
import sys

import pytest

INI = '[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n'
TESTS = '''
import asyncio

def test_sync(kopf_local_cluster):
    kopf_local_cluster.apply({'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': 'plugged'}})
    assert kopf_local_cluster.get('v1', 'Namespace', 'plugged')['metadata']['name'] == 'plugged'

async def test_async(kopf_local_cluster_async):
    assert kopf_local_cluster_async.url.startswith('http://127.0.0.1:')
'''


def _pytest(tmp_path: pathlib.Path, *args: str, conftest: str | None = None) -> subprocess.CompletedProcess[str]:
    (tmp_path / 'pytest.ini').write_text(INI)
    (tmp_path / 'test_operator.py').write_text(TESTS)
    if conftest is not None:
        (tmp_path / 'conftest.py').write_text(conftest)
    return subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', *args, str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_the_entry_point_names_the_plugin() -> None:
    points = importlib.metadata.entry_points(group='pytest11', name='kopf')
    assert [point.value for point in points] == ['_kopf_pytest']


def test_the_plugin_imports_nothing_of_kopf() -> None:
    code = ('import sys, _kopf_pytest; '
            'print(sorted(m for m in sys.modules if m.split(".")[0] in {"kopf", "aiohttp", "yaml", "click"}))')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == '[]'


@pytest.mark.parametrize('conftest', [None, "pytest_plugins = ['kopf.testing']\n"], ids=['entry-point', 'both'])
def test_the_fixtures_are_there(tmp_path: pathlib.Path, conftest: str | None) -> None:
    result = _pytest(tmp_path, conftest=conftest)
    assert result.returncode == 0, result.stdout + result.stderr
    assert '2 passed' in result.stdout


def test_the_conftest_line_alone(tmp_path: pathlib.Path) -> None:
    result = _pytest(tmp_path, '-p', 'no:kopf', conftest="pytest_plugins = ['kopf.testing']\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert '2 passed' in result.stdout


def test_turned_off(tmp_path: pathlib.Path) -> None:
    result = _pytest(tmp_path, '-p', 'no:kopf')
    assert result.returncode == 1
    assert "fixture 'kopf_local_cluster' not found" in result.stdout
