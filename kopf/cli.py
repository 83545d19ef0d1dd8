"""The `kopf` command line: `kopf run`, `kopf cluster`, `kopf freeze`, `kopf resume`.

The CLI only parses options and hands them to the library; it holds no logic of its own.
"""
import click

from kopf._version import __version__


@click.group(name='kopf', context_settings={'help_option_names': ['-h', '--help'], 'auto_envvar_prefix': 'KOPF'})
@click.version_option(version=__version__, prog_name='kopf')
def main() -> None:
    """Kubernetes operators in plain Python, with a local cluster for development and tests."""


@main.command()
@click.option('--host', default='127.0.0.1', show_default=True, help='The address to listen on.')
@click.option('--port', type=int, default=0, show_default=True, help='The port to listen on; 0 picks a free one.')
@click.option('--kubeconfig', 'config_path', default='kopf-cluster.kubeconfig', show_default=True,
              type=click.Path(dir_okay=False), help='Where to write the kubeconfig (never ~/.kube/config).')
@click.option('--apply', 'apply', multiple=True, type=click.Path(dir_okay=False),
              help='A YAML manifest to apply at startup (repeatable; "-" for stdin).')
def cluster(host: str, port: int, config_path: str, apply: tuple[str, ...]) -> None:
    """Serve a local Kubernetes API (in memory) until interrupted."""
    import asyncio

    from kopf._cluster import running

    try:
        asyncio.run(running.serve(host, port, config_path, apply))
    except running.StartupError as exc:
        click.echo(f'Error: {exc}', err=True)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        pass
