"""What a newcomer's usual mistakes print, through `kopf run` as a process: one clear last line, the file and line."""
import os
import pathlib
import subprocess
import sys

import pytest

from .conftest import CRD

HANDLERS = "import kopf\n\n@kopf.on.create('kopfexamples')\ndef create_fn(**_):\n    pass\n"


def kopf_run(tmp_path: pathlib.Path, *args: str, kubeconfig: str | None = None,
             timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, 'HOME': str(tmp_path)}
    env.pop('KUBERNETES_SERVICE_HOST', None)
    if kubeconfig is None:
        env.pop('KUBECONFIG', None)
    else:
        env['KUBECONFIG'] = kubeconfig
    return subprocess.run([sys.executable, '-m', 'kopf', 'run', '-A', *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=tmp_path)


# The file's text, the user's frames that must show (file:line and the code), the last line.
IMPORT_ERRORS = {
    'a NameError': (
        {'handlers.py': 'import kopf\n\nx = undefined_name\n'},
        ['handlers.py", line 3, in <module>', 'x = undefined_name', "NameError: name 'undefined_name' is not defined"],
        "Error: Cannot load handlers.py: NameError: name 'undefined_name' is not defined"),
    "a decorator's TypeError": (
        {'handlers.py': "import kopf\n\n@kopf.on.create('kopfexamples', wrong=1)\ndef fn(**_):\n    pass\n"},
        ['handlers.py", line 3, in <module>', "@kopf.on.create('kopfexamples', wrong=1)"],
        'Error: Cannot load handlers.py: TypeError: kopf.on.create() got unexpected keyword arguments: wrong.'),
    'an error in a module it imports': (
        {'handlers.py': 'import kopf\nimport helper\n', 'helper.py': 'VALUE = 1\nBROKEN = VALUE / 0\n'},
        ['handlers.py", line 2, in <module>', 'helper.py", line 2, in <module>', 'BROKEN = VALUE / 0'],
        'Error: Cannot load handlers.py: ZeroDivisionError: division by zero'),
    'a syntax error': (
        {'handlers.py': 'import kopf\n\ndef fn(:\n    pass\n'},
        ['handlers.py", line 3', 'def fn(:'],
        'Error: Cannot load handlers.py: SyntaxError: invalid syntax (handlers.py, line 3)'),
}


@pytest.mark.parametrize('name', list(IMPORT_ERRORS))
def test_an_import_error_shows_the_users_frames_without_debug(tmp_path: pathlib.Path, name: str) -> None:
    files, shown, last = IMPORT_ERRORS[name]
    for filename, text in files.items():
        (tmp_path / filename).write_text(text)
    result = kopf_run(tmp_path, 'handlers.py', kubeconfig=str(tmp_path / 'none'))
    assert result.returncode == 1
    for text in shown:
        assert text in result.stderr, result.stderr
    assert result.stderr.rstrip('\n').splitlines()[-1] == last
    assert 'importlib' not in result.stderr and f'{os.sep}kopf{os.sep}' not in result.stderr  # only the user's frames


@pytest.mark.parametrize('kubeconfig, last', [
    ('/nonexistent/kc', 'Error: Cannot log in to the cluster: KUBECONFIG=/nonexistent/kc: no such file'),
    ('empty.kc', "Error: Cannot log in to the cluster: context 'nothing' is not defined in empty.kc"),
    (None, 'Error: Cannot log in to the cluster: no credentials found: no $KUBECONFIG, no ~/.kube/config, '
           'no service account (not in a cluster), and no @kopf.on.login() handlers'),
])
def test_kubeconfig_errors_end_with_one_line_saying_what_is_wrong(
        tmp_path: pathlib.Path, kubeconfig: str | None, last: str) -> None:
    (tmp_path / 'handlers.py').write_text(HANDLERS)
    (tmp_path / 'empty.kc').write_text('apiVersion: v1\nkind: Config\ncurrent-context: nothing\n')
    result = kopf_run(tmp_path, 'handlers.py', kubeconfig=kubeconfig)
    assert result.returncode == 1
    assert result.stderr.rstrip('\n').splitlines()[-1] == last
    assert 'Login via' not in result.stderr  # printed once: not once more per login method
    assert 'Cannot reach the Kubernetes API' not in result.stderr  # nothing was tried
    assert 'Traceback' not in result.stderr


@pytest.mark.parametrize('text', [
    'import kopf\n',
    'import kopf\n\n@kopf.on.create\ndef create_fn(**_):\n    pass\n',  # without the parentheses
])
def test_no_handlers_registered_warns_once_naming_the_files(tmp_path: pathlib.Path, text: str) -> None:
    (tmp_path / 'handlers.py').write_text(text)
    result = kopf_run(tmp_path, 'handlers.py', kubeconfig='/nonexistent/kc')
    warning = ('No handlers are registered (loaded: handlers.py). Is a decorator used without parentheses, '
               'e.g. @kopf.on.create instead of @kopf.on.create(...)?')
    assert result.stderr.count(warning) == 1, result.stderr


def test_handlers_registered_give_no_such_warning(tmp_path: pathlib.Path) -> None:
    (tmp_path / 'handlers.py').write_text(HANDLERS)
    result = kopf_run(tmp_path, 'handlers.py', kubeconfig='/nonexistent/kc')
    assert 'No handlers are registered' not in result.stderr


def test_apply_of_a_missing_path_says_so(tmp_path: pathlib.Path) -> None:
    (tmp_path / 'handlers.py').write_text(HANDLERS)
    result = kopf_run(tmp_path, '--local-cluster', '--apply', str(CRD), '--apply', 'missing.yaml', 'handlers.py')
    assert result.returncode == 1
    assert result.stderr.rstrip('\n').splitlines()[-1] == \
        'Error: Cannot apply the manifests: cannot read missing.yaml: No such file or directory'


def test_a_bad_metrics_address_is_one_clear_line(tmp_path: pathlib.Path) -> None:
    (tmp_path / 'handlers.py').write_text(HANDLERS)
    result = kopf_run(tmp_path, '--local-cluster', '--metrics', 'localhost:nine', 'handlers.py')
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: The metrics address must be [HOST:]PORT (e.g. 9090 or 0.0.0.0:9090): 'localhost:nine'")
