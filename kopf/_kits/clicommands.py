"""The `kopf` commands other than `kopf run`: `cluster`, `rbac`, `crd`, `freeze`, `resume`.

Imported by `kopf.cli` when one of them is first named (`kopf cluster ...`, `kopf --help`): a running
operator then holds neither their code nor their click objects (~45 options; ~0.1 MB of its RSS). They
share `kopf.cli`'s options (`logging_options`, `posing_options`, the operator sources) and its helpers.
"""
import asyncio
import os
import pathlib
from typing import Any

import click

import kopf.cli as cli
from kopf._core import registries
from kopf._engine import identity as identity_
from kopf._engine import loading


class _ClusterCommand(click.Command):
    """`kopf cluster --help` ends with the control API's routes, from the emulator's table of control operations
    (imported only when the help is shown: `kopf run` does not pay for it)."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from kopf._cluster.control import operations  # the emulator: only for this help

        with formatter.section('Control API (for tests; also LocalCluster methods)'):
            formatter.write_dl(operations.routes_help())
        super().format_epilog(ctx, formatter)


@click.command(cls=_ClusterCommand)
@click.option('--host', default='127.0.0.1', show_default=True, help='The address to listen on.')
@click.option('--port', type=int, default=0, show_default=True, help='The port to listen on; 0 picks a free one.')
@click.option('--kubeconfig', 'config_path', default='kopf-cluster.kubeconfig', show_default=True,
              type=click.Path(dir_okay=False), help='Where to write the kubeconfig (never ~/.kube/config).')
@click.option('--apply', 'apply', multiple=True, type=click.Path(dir_okay=False),
              help='A YAML manifest to apply at startup (repeatable; "-" for stdin).')
@click.option('--state', 'state', default=None, type=click.Path(dir_okay=False),
              help='Resume the objects from this file if it exists, and save them there on exit.')
@click.option('--tls', is_flag=True, default=False, help='Serve HTTPS with a throw-away CA (put into the kubeconfig).')
@click.option('--token', default=None, help='Require this bearer token (put into the kubeconfig).')
@cli.posing_options
@click.option('--history-size', 'history_size', type=click.IntRange(min=1), default=10000, show_default=True,
              help='Changes kept: watches from an older resourceVersion and older list continue tokens get 410.')
@click.option('--compaction-interval', 'compaction_interval', type=click.FloatRange(min=0), default=300.0,
              show_default=True, help='Seconds between compactions of the history, as etcd\'s (0: never).')
@click.option('-v', '--verbose', is_flag=True, default=False,
              help='Print a line per request to stderr: method, path, status, milliseconds.')
def cluster(host: str, port: int, config_path: str, apply: tuple[str, ...], state: str | None,
            tls: bool, token: str | None, git_version: str | None, tls_sans: tuple[str, ...], feature_gates: str,
            history_size: int, compaction_interval: float, verbose: bool) -> None:
    """Serve a local Kubernetes API (in memory) until interrupted."""
    from kopf._cluster.control import command  # the emulator: only for `kopf cluster`

    try:
        asyncio.run(command.serve(host, port, config_path, apply, state, tls or bool(tls_sans), token, verbose,
                                  git_version=git_version, tls_sans=tls_sans, feature_gates=feature_gates,
                                  history_size=history_size, compaction_interval=compaction_interval))
    except command.StartupError as exc:
        click.echo(f'Error: {exc}', err=True)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        pass


@click.command()
@cli._operator_sources('The namespaces the operator will serve (as for kopf run): exact names get Roles.',
                   'A cluster-wide operator (a ClusterRole).')
@click.option('--peering', 'peering_name', default=None,
              help='The peering object the operator will use (default: "default", as kopf run\'s auto mode).')
@click.option('--standalone', is_flag=True, help='The operator runs with --standalone: no peering rules.')
@click.option('--lease', 'lease_name', default=None, help='The lease ([NAMESPACE/]NAME) the operator will hold.')
@click.option('--shards', 'shards', type=click.IntRange(min=1), default=None,
              help='The operator runs with --shards N (with --lease): its Leases are listed too (one watch by label).')
@click.option('--extra', multiple=True, type=click.Path(dir_okay=False),
              help='A YAML file of more rules (a list of rules, or a Role/ClusterRole), e.g. what handlers call.')
@click.option('--crd', 'crds', multiple=True, type=click.Path(dir_okay=False),
              help='A manifest with the CRDs of the handled resources (their groups, scopes, subresources).')
@click.option('--install-crds', 'install_crds', is_flag=True,
              help='The operator runs with --install-crds: the CRDs of its resource classes are created, updated.')
@click.option('--name', default='kopf', show_default=True, help='The name of the (Cluster)Role(Binding)s.')
@click.option('--service-account', 'service_accounts', multiple=True,
              help='Bind to this NAMESPACE/NAME (repeatable; default: default/kopf unless --user).')
@click.option('--user', 'users', multiple=True, help='Bind to this user (repeatable), e.g. of a client certificate.')
def rbac(paths: tuple[str, ...], modules: tuple[str, ...], namespaces: tuple[str, ...], clusterwide: bool,
         peering_name: str | None, standalone: bool, lease_name: str | None, shards: int | None,
         extra: tuple[str, ...], crds: tuple[str, ...], install_crds: bool, name: str,
         service_accounts: tuple[str, ...], users: tuple[str, ...]) -> None:
    """Print the RBAC YAML for the framework's own requests that the handlers imply."""
    from kopf._rbac import rendering  # a feature: only for `kopf rbac`
    from kopf._typed import declaring, finding  # a feature: only with resource classes

    if clusterwide and namespaces:
        raise click.UsageError('Either --namespace or --all-namespaces, not both.')
    if standalone and peering_name:
        raise click.UsageError('Either --peering or --standalone, not both.')
    if shards and not lease_name:
        raise click.UsageError('--shards needs --lease NAME.')
    # Without either, `kopf run` is in the auto mode: it reads the `default` peering (and joins it if it
    # exists), so it needs the peering rules too, or it warns of a 403 and runs standalone.
    peering_name = None if standalone else peering_name or 'default'
    registry = registries.OperatorRegistry()
    try:
        declared_before = cli._declared_count()
        with cli._default_registry(registry):
            loading.load(paths, modules)
        names = [*(loading.script_name(idx, path) for idx, path in enumerate(paths)), *modules]
        declared = finding.loaded(names, since=declared_before)
        installed = tuple(dict.fromkeys(d.crd_name for cls in declared if (d := declaring.declaration_of(cls))))
        if install_crds and not installed:
            raise loading.LoadingError('--install-crds: the loaded code declares no resource classes.')
        options = rendering.options_for(namespaces, peering=peering_name, lease=lease_name, shards=bool(shards),
                                        name=name, service_accounts=service_accounts, users=users,
                                        installed_crds=installed if install_crds else ())
        generated = rendering.generate(registry, options, crds=crds, extra=extra, declared=declared)
    except (loading.LoadingError, ValueError) as exc:
        click.echo(f'Error: {exc}', err=True)
        raise SystemExit(1) from None
    for warning in generated.warnings:
        click.echo(f'Warning: {warning}', err=True)
    click.echo(generated.dump(), nl=False)


@click.command()
@click.argument('targets', nargs=-1, required=True, metavar='PATH.py[:CLASS] | MODULE[:CLASS]...')
@click.option('-o', '--output', 'output', default=None, type=click.Path(file_okay=False),
              help='Write one file per CRD into this directory (<plural>.<group>.yaml), not to stdout.')
def crd(targets: tuple[str, ...], output: str | None) -> None:
    """Print the CRDs of the resource classes (@kopf.custom_resource) in files or modules (needs kopf[models])."""
    from kopf._typed import declaring, finding

    try:
        classes = finding.find(targets)
        from kopf._typed import definitions  # imports pydantic
        assembled = definitions.assemble(classes)
    except ModuleNotFoundError as exc:
        if exc.name not in ('pydantic', 'pydantic_core'):
            raise
        click.echo("Error: kopf crd needs pydantic: pip install 'kopf[models]'", err=True)
        raise SystemExit(1) from None
    except (finding.FindingError, declaring.DeclarationError, ValueError) as exc:
        click.echo(f'Error: {exc}', err=True)
        raise SystemExit(1) from None
    for warning in assembled.warnings:
        click.echo(f'Warning: {warning}', err=True)
    if output is None:
        click.echo(assembled.dump(), nl=False)
        return
    os.makedirs(output, exist_ok=True)
    for item in assembled.crds:
        name = item['metadata']['name']
        path = pathlib.Path(output) / f'{name}.yaml'
        path.write_text(assembled.dump(name), encoding='utf-8')
        click.echo(f'Wrote {path}', err=True)


@click.command()
@cli.logging_options
@click.option('-n', '--namespace', 'namespaces', multiple=True, help='Namespaces of the peering (repeatable).')
@click.option('-A', '--all-namespaces', 'clusterwide', is_flag=True, help='The cluster-wide peering.')
@click.option('-i', '--id', 'id_', envvar='KOPF_FREEZE_ID', default=None,
              help='The identity of the freezer (default: user@host).')
@click.option('--dev', is_flag=True, default=False, help='Priority 666.')
@click.option('-P', '--peering', 'peering_name', required=True, envvar='KOPF_FREEZE_PEERING',
              help='The peering object.')
@click.option('-p', '--priority', type=int, default=100, show_default=True, required=True,
              help='The priority of the freezer.')
@click.option('-t', '--lifetime', type=int, required=True, help='For how long to freeze, in seconds.')
@click.option('-m', '--message', default=None, help='A message (accepted, unused).')
@click.pass_context
def freeze(ctx: click.Context, /, namespaces: tuple[str, ...], clusterwide: bool, id_: str | None, dev: bool,
           peering_name: str, priority: int, lifetime: int, **more: Any) -> None:
    """Pause the operators of lower priorities in the peering (for --lifetime seconds, or until resumed)."""
    _peer_command(ctx, more, 'freeze', name=peering_name, namespaces=namespaces, clusterwide=clusterwide, id_=id_,
                  priority=666 if dev else priority, lifetime=lifetime)


@click.command()
@cli.logging_options
@click.option('-n', '--namespace', 'namespaces', multiple=True, help='Namespaces of the peering (repeatable).')
@click.option('-A', '--all-namespaces', 'clusterwide', is_flag=True, help='The cluster-wide peering.')
@click.option('-i', '--id', 'id_', envvar='KOPF_RESUME_ID', default=None,
              help='The identity of the freezer (default: user@host).')
@click.option('-P', '--peering', 'peering_name', required=True, envvar='KOPF_RESUME_PEERING',
              help='The peering object.')
@click.pass_context
def resume(ctx: click.Context, /, namespaces: tuple[str, ...], clusterwide: bool, id_: str | None,
           peering_name: str, **more: Any) -> None:
    """Resume the operators paused by `kopf freeze` (the freezer's entry is removed)."""
    _peer_command(ctx, more, 'resume', name=peering_name, namespaces=namespaces, clusterwide=clusterwide, id_=id_)


def _peer_command(ctx: click.Context, more: dict[str, Any], command: str, *, name: str, namespaces: tuple[str, ...],
                  clusterwide: bool, id_: str | None, **options: Any) -> None:
    from kopf._peering import keepalives as peering  # a feature: only for `kopf freeze/resume`

    if clusterwide and namespaces:
        raise click.UsageError('Either --namespace or --all-namespaces, not both.')
    cli._configure_logging(more['verbose'], more['debug'], more['quiet'], more['log_format'],
                       more['log_refkey'], more['log_prefix'])
    controls = ctx.obj if isinstance(ctx.obj, cli.CLIControls) else cli.CLIControls()
    where: list[str | None] = list(namespaces) if namespaces else [None]
    try:
        asyncio.run(peering.command(command, vault=controls.vault, name=name, namespaces=where,
                                    identity=id_ or identity_.freezer_identity(), **options))
    except Exception as exc:
        click.echo(f'Error: kopf {command}: {exc}', err=True)
        raise SystemExit(1) from exc
