import subprocess
import sys

from click.testing import CliRunner

import kopf
from kopf.cli import main


def test_version_option() -> None:
    result = CliRunner().invoke(main, ['--version'])
    assert result.exit_code == 0
    assert result.output.strip() == f'kopf, version {kopf.__version__}'


def test_help_option() -> None:
    result = CliRunner().invoke(main, ['--help'])
    assert result.exit_code == 0
    assert 'Usage: kopf' in result.output


def test_python_dash_m_kopf() -> None:
    proc = subprocess.run([sys.executable, '-m', 'kopf', '--version'], capture_output=True, text=True, check=True)
    assert proc.stdout.startswith('kopf, version ')
