"""The `kopf` command line: `kopf run`, `kopf cluster`, `kopf freeze`, `kopf resume`.

The CLI only parses options and hands them to the library; it holds no logic of its own.
"""
import click

from kopf._version import __version__


@click.group(name='kopf', context_settings={'help_option_names': ['-h', '--help'], 'auto_envvar_prefix': 'KOPF'})
@click.version_option(version=__version__, prog_name='kopf')
def main() -> None:
    """Kubernetes operators in plain Python, with a local cluster for development and tests."""
