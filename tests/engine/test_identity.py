import datetime
import os
import re
import subprocess
import sys
from typing import Any

import pytest

from kopf._engine import identity


def test_the_pod_id_is_the_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('POD_ID', 'operator-7c9d-x2')
    assert identity.make_identity() == 'operator-7c9d-x2'


def test_else_user_at_host_with_a_timestamp_and_three_random_letters(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv('POD_ID', raising=False)
    monkeypatch.setenv('LOGNAME', 'alice')
    made = {identity.make_identity() for _ in range(20)}
    assert all(re.fullmatch(r'alice@[^/]+/\d{14}/[a-z]{3}', one) for one in made), made
    assert len({one.rsplit('/', 1)[1] for one in made}) > 1  # random, not fixed


@pytest.mark.parametrize('variable', ['LOGNAME', 'USER', 'LNAME', 'USERNAME'])
def test_the_user_comes_from_the_first_set_variable(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    for name in ['LOGNAME', 'USER', 'LNAME', 'USERNAME']:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, 'bob')
    assert identity.user() == 'bob'
    assert identity.freezer_identity().startswith('bob@')


def test_without_variables_the_password_database_or_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ['LOGNAME', 'USER', 'LNAME', 'USERNAME']:
        monkeypatch.delenv(name, raising=False)
    import getpass
    import pwd
    assert identity.user() == getpass.getuser()  # the same lookup, without importing getpass

    class Entry:
        pw_name = 'from-passwd'
    monkeypatch.setattr(pwd, 'getpwuid', lambda uid: Entry())
    assert identity.user() == 'from-passwd'

    def fail(uid: int) -> Any:
        raise KeyError(f'getpwuid(): uid not found: {uid}')
    monkeypatch.setattr(pwd, 'getpwuid', fail)
    assert identity.user() == 'unknown'


def test_without_variables_getpass_and_termios_are_not_loaded() -> None:
    code = ('import sys; from kopf._engine import identity; identity.user(); '
            'print(sorted({"getpass", "termios"} & set(sys.modules)))')
    env = {k: v for k, v in os.environ.items() if k not in ('LOGNAME', 'USER', 'LNAME', 'USERNAME')}
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True, env=env)
    assert proc.stdout.strip() == '[]'


NOW = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)


@pytest.mark.parametrize('pod_id, expected', [
    ('pod-abc', 'pod-abc'),
    (None, 'me@host/20260102030405/xyz'),
    ('', 'me@host/20260102030405/xyz'),
])
def test_the_format_is_upstreams(pod_id: str | None, expected: str) -> None:
    assert identity.format_identity(pod_id=pod_id, user='me', host='host', now=NOW, suffix='xyz') == expected
