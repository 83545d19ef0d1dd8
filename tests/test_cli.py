import subprocess
import sys

from click.testing import CliRunner

import kopf
from kopf import _version
from kopf.cli import main


def test_version_option() -> None:
    result = CliRunner().invoke(main, ['--version'])
    assert result.exit_code == 0
    assert result.output.splitlines() == [f'kopf, version {kopf.__version__}',
                                          f'Tested against Kubernetes {", ".join(_version.KUBERNETES)} (envtest)']


def test_help_option() -> None:
    result = CliRunner().invoke(main, ['--help'])
    assert result.exit_code == 0
    assert 'Usage: kopf' in result.output


def test_python_dash_m_kopf() -> None:
    proc = subprocess.run([sys.executable, '-m', 'kopf', '--version'], capture_output=True, text=True, check=True)
    assert proc.stdout.startswith('kopf, version ')


def test_run_help_groups_the_options_as_kubectl_does() -> None:
    result = CliRunner().invoke(main, ['run', '--help'], terminal_width=100)
    assert result.exit_code == 0
    titles = [line.rstrip(':') for line in result.output.splitlines() if line.endswith(':') and not line[:1].isspace()]
    assert titles == ['Examples', 'Handlers and scope', 'Peering and leases', 'Probes and metrics', 'Logging',
                      'Local cluster (instead of a real one)', 'Event loop', 'Other options',
                      'Connection', 'Webhooks', 'Environment']
    other = result.output.split('Other options:')[1].split('Connection:')[0]
    assert other.split() == ['-h,', '--help', 'Show', 'this', 'message', 'and', 'exit.']   # every option has its group



def test_the_other_commands_are_made_when_one_of_them_is_named() -> None:
    """A running operator holds no click objects of the other commands (`kopf cluster`'s, `kopf rbac`'s, ...)."""
    code = ('import gc, sys, click, kopf.cli\n'
            'made = lambda: sorted(o.name for o in gc.get_objects() if isinstance(o, click.Command))\n'
            'print(made())\n'
            'print(sorted(kopf.cli.main.commands), made(), "kopf._kits.clicommands" in sys.modules)\n'
            'kopf.cli.main.commands["freeze"]\n'
            'print(made())\n')
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert proc.stdout.splitlines() == [
        "['kopf', 'run']",
        "['cluster', 'crd', 'freeze', 'rbac', 'resume', 'run'] ['kopf', 'run'] False",
        "['cluster', 'crd', 'freeze', 'kopf', 'rbac', 'resume', 'run']",
    ]


def test_the_commands_are_listed_and_shown_in_the_groups_help() -> None:
    result = CliRunner().invoke(main, ['--help'])
    lines = result.output.split('Commands:')[1].splitlines()
    names = [line.split()[0] for line in lines if line.startswith('  ') and not line.startswith('   ')]
    assert names == ['cluster', 'crd', 'freeze', 'rbac', 'resume', 'run']
