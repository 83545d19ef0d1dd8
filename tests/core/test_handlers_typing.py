"""Decorators keep the user's function type (for IDEs and mypy) and type-check their options."""
import pathlib
import subprocess
import sys
import warnings

import pytest

import kopf

SNIPPET = '''
import kopf


@kopf.on.create('kopfexamples', retries=3)
@kopf.on.update('kopfexamples', field='spec.x', old=1)
@kopf.daemon('kopfexamples', initial_delay=1)
def create_fn(x: int, **_: object) -> int:
    return x


reveal_type(create_fn)
kopf.on.create('kopfexamples', unknown=1)
kopf.on.create('kopfexamples', retries='many')
kopf.on.event('kopfexamples', retries=3)
kopf.register(create_fn, field='x')
'''


def test_mypy_sees_the_function_unchanged_and_checks_options(tmp_path: pathlib.Path) -> None:
    path = tmp_path / 'user_code.py'
    path.write_text(SNIPPET)
    proc = subprocess.run([sys.executable, '-m', 'mypy', '--strict', '--no-error-summary', str(path)],
                          capture_output=True, text=True, cwd=pathlib.Path(__file__).parent.parent.parent)
    lines = [line.split(': ', 1)[1] for line in proc.stdout.splitlines() if ': ' in line]
    assert 'note: Revealed type is "def (x: builtins.int, **_: builtins.object) -> builtins.int"' in lines or \
           'note: Revealed type is "def (x: int, **_: object) -> int"' in lines, proc.stdout
    errors = [line for line in lines if line.startswith('error:')]
    assert any('"unknown"' in e for e in errors)
    assert any('"retries"' in e and 'incompatible type' in e for e in errors)
    assert any('"retries" for "event"' in e for e in errors)
    assert any('"field" for "register"' in e for e in errors)
    assert len(errors) == 4, proc.stdout


@pytest.mark.parametrize('call', [
    lambda: kopf.on.create('kex', cooldown=1, registry=kopf.OperatorRegistry()),
    lambda: kopf.on.startup(cooldown=1, registry=kopf.OperatorRegistry()),
    lambda: kopf.on.validate('kex', operation='CREATE', registry=kopf.OperatorRegistry()),
])
def test_deprecation_warnings_point_at_the_user_code(call) -> None:  # type: ignore[no-untyped-def]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        call()
    assert [w.filename for w in caught] == [__file__]
