"""What docs/install.md, docs/local-cluster.md and docs/testing.md promise, checked against the repository."""
import ast
import os
import pathlib
import re
import shutil
import warnings
from typing import Any

import pytest

from kopf.testing import LocalCluster

from . import docs_blocks

ROOT = pathlib.Path(__file__).parent.parent
DOCS = ROOT / 'docs'


def _extras() -> dict[str, list[str]]:
    tree = ast.parse((ROOT / 'setup.py').read_text())
    call = next(node for node in ast.walk(tree)
                if isinstance(node, ast.Call) and getattr(node.func, 'id', '') == 'setup')
    value = next(keyword.value for keyword in call.keywords if keyword.arg == 'extras_require')
    extras: dict[str, list[str]] = ast.literal_eval(value)
    return extras


def test_install_page_says_whose_the_pypi_name_is() -> None:
    text = (DOCS / 'install.md').read_text()
    assert "the PyPI name `kopf` is upstream Kopf's" in text
    blocks = re.findall(r'^```sh\n(.*?)^```', text, flags=re.S | re.M)
    commands = [line for block in blocks for line in block.splitlines()]
    assert not any(re.match(r'pip install [\'"]?kopf\b', line) for line in commands)   # never from PyPI


def test_install_page_lists_the_extras_as_they_are() -> None:
    rows = re.findall(r'^\| `([\w-]+)` \| (.*?) \|', (DOCS / 'install.md').read_text(), flags=re.M)
    documented = {name: packages for name, packages in rows if name != 'Extra'}
    extras = _extras()
    assert set(documented) == set(extras)
    for name, requirements in extras.items():
        if name == 'test':
            continue
        names = {re.split(r'[<>=\[]', requirement)[0] for requirement in requirements}
        assert set(re.findall(r'`([\w.-]+)`', documented[name])) == names, name


def test_local_cluster_page_refers_only_to_the_repository() -> None:
    text = (DOCS / 'local-cluster.md').read_text()
    assert 'EMULATOR' not in text and '\N{SECTION SIGN}' not in text
    for path in re.findall(r'`((?:kopf|tests|examples|docs|bench|tools)/[\w./-]+)`', text):
        assert (ROOT / path.rstrip('/')).exists(), path
    for link in re.findall(r'\]\(([^)#:]+)(?:#[^)]*)?\)', text):
        assert (DOCS / link).exists(), link
    assert '## What is not emulated' in text


def test_testing_page_says_what_async_tests_need() -> None:
    text = (DOCS / 'testing.md').read_text()
    assert 'pytest-asyncio' in text and 'asyncio_mode = "auto"' in text


def test_testing_page_kubeconfig_goes_into_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    block = next(code for code in docs_blocks.blocks('testing.md') if 'monkeypatch.setenv' in code)
    namespace: dict[str, Any] = docs_blocks.run(block, 'docs/testing.md')
    with LocalCluster() as cluster, warnings.catch_warnings():
        warnings.simplefilter('error', pytest.PytestWarning)   # setenv() of a non-str warns
        namespace['test_with_kubeconfig_in_env'](cluster, monkeypatch)
        assert os.environ['KUBECONFIG'] == cluster.kubeconfig and isinstance(cluster.kubeconfig, str)


@pytest.mark.emulator_only(reason='the documented test starts its own LocalCluster')
def test_local_cluster_page_workloads_test_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The documented test of an operator of workloads runs and passes (a Deployment available, one crashing)."""
    block = next(code for code in docs_blocks.blocks('local-cluster.md') if 'def test_available_and_crashing' in code)
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv('KUBECONFIG', '')   # the test sets it; restored afterwards
    namespace: dict[str, Any] = docs_blocks.run(block, 'docs/local-cluster.md')
    namespace['test_available_and_crashing']()


def test_local_cluster_page_cel_test_passes() -> None:
    """The CEL example of docs/local-cluster.md runs and passes."""
    block = next(code for code in docs_blocks.blocks('local-cluster.md') if 'def test_rules_refuse' in code)
    namespace: dict[str, Any] = docs_blocks.run(block, 'docs/local-cluster.md')
    namespace['test_rules_refuse_what_a_real_server_refuses']()


@pytest.mark.emulator_only(reason='the documented example starts its own LocalCluster')
def test_local_cluster_page_rbac_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The documented run under the generated RBAC: the user is bound, and refused what is not bound."""
    if shutil.which('kubectl') is None:
        pytest.skip('needs kubectl')
    block = next(code for code in docs_blocks.blocks('local-cluster.md') if 'user_kubeconfig' in code)
    monkeypatch.chdir(ROOT)
    docs_blocks.run(block, 'docs/local-cluster.md')   # its own assertions: `kubectl auth can-i` yes and no
