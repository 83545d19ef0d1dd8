"""The `kopf` command line: `kopf run`, `kopf cluster`, `kopf rbac`, `kopf crd`, `kopf freeze`, `kopf resume`.

The CLI only parses options and hands them to the library; it holds no logic of its own.
"""
import contextlib
import copy
import dataclasses
import os
import pathlib
import warnings
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any, TypeVar

import click

from kopf import _version
from kopf._admission import protocols
from kopf._api import credentials
from kopf._core import registries
from kopf._engine import loading, loggers, running
from kopf._kits import clihelp, loops

LATER = ('cluster', 'rbac', 'crd', 'freeze', 'resume')  # the commands of `kopf._kits.clicommands`


class _Commands(MutableMapping[str, click.Command]):
    """The `kopf` group's commands: `kopf run` here; the others imported from `kopf._kits.clicommands` when one
    is first named (`kopf cluster ...`, `kopf --help`, `main.commands['rbac']`), not by a running operator."""

    def __init__(self) -> None:
        self._made: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._made and name in LATER:
            from kopf._kits import clicommands  # the other commands (~0.1 MB of their code and options)
            self._made.update({later: getattr(clicommands, later) for later in LATER if later not in self._made})
        return self._made[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._made[name] = command

    def __delitem__(self, name: str) -> None:
        raise TypeError('the commands of kopf cannot be removed')

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._made, *LATER]))

    def __len__(self) -> int:
        return len(self._made.keys() | set(LATER))


@click.group(name='kopf', context_settings={'help_option_names': ['-h', '--help'], 'auto_envvar_prefix': 'KOPF'},
             commands=_Commands())
@click.version_option(package_name='kopf', prog_name='kopf', message=_version.version_message())  # metadata: lazily
def main() -> None:
    """Kubernetes operators in plain Python, with a local cluster for development and tests."""


def posing_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The local cluster's options to pose as another flavour (k3s, minikube, Docker Desktop), e.g. for
    `WebhookAutoServer`'s detection: `kopf cluster` and `kopf run --local-cluster` share them."""
    fn = click.option('--tls-san', 'tls_sans', multiple=True, metavar='NAME',
                      help='An extra name in the serving certificate (repeatable; implies TLS), '
                           'e.g. k3s, minikubeCA, docker-for-desktop.')(fn)
    fn = click.option('--feature-gates', 'feature_gates', default='', metavar='GATES',
                      help='Feature gates as kube-apiserver takes them, e.g. ShardedListAndWatch=false '
                           '(serve shardSelector= or ignore it; on by default from --git-version v1.36).')(fn)
    return click.option('--git-version', 'git_version', default=None, metavar='VERSION',
                        help='The gitVersion that /version reports, e.g. v1.31.0+k3s1 (to pose as k3s).')(fn)


@dataclasses.dataclass
class CLIControls:
    """What an embedder (e.g. `kopf.testing.KopfRunner`) passes to `kopf run` as click's `obj`.

    All optional: the default registry, fresh settings, no flags, and the credentials found as
    kubectl finds them (or via `@kopf.on.login()` handlers) unless a `vault` is given.
    """
    registry: Any = None     # kopf.OperatorRegistry
    settings: Any = None     # kopf.OperatorSettings
    memo: Any = None
    vault: Any = None        # kopf._api.credentials.Vault: where to connect, bypassing the login
    stop_flag: Any = None
    ready_flag: Any = None


def logging_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The logging options shared by all operator commands (run, freeze, resume)."""
    options = [
        click.option('-v', '--verbose', is_flag=True, help='Log at the DEBUG level.'),
        click.option('-d', '--debug', is_flag=True, help='Log at the DEBUG level, incl. asyncio.'),
        click.option('-q', '--quiet', is_flag=True, help='Log only warnings and errors.'),
        click.option('--log-format', type=click.Choice(['plain', 'full', 'json'], case_sensitive=False),
                     default='full', show_default=True, help='The format of the log lines.'),
        click.option('--log-refkey', default=None, help='The JSON key of the object reference (--log-format json).'),
        click.option('--log-prefix/--no-log-prefix', default=None,
                     help='Prefix per-object messages with [namespace/name] (default: on for text, off for JSON).'),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _configure_logging(verbose: bool, debug: bool, quiet: bool, log_format: str,
                       log_refkey: str | None, log_prefix: bool | None) -> None:
    loggers.configure(debug=debug, verbose=verbose, quiet=quiet, log_format=loggers.LogFormat[log_format.upper()],
                      log_prefix=log_prefix, log_refkey=log_refkey)


F = TypeVar('F', bound=Callable[..., Any])


def _operator_sources(namespaces_help: str, clusterwide_help: str) -> Callable[[F], F]:
    """The options of `kopf run` and `kopf rbac` that say which handlers and which namespaces."""
    def decorate(fn: F) -> F:
        fn = click.option('-A', '--all-namespaces', 'clusterwide', is_flag=True, help=clusterwide_help)(fn)
        fn = click.option('-n', '--namespace', 'namespaces', multiple=True, help=namespaces_help)(fn)
        fn = click.option('-m', '--module', 'modules', multiple=True, help='A module to import (repeatable).')(fn)
        return click.argument('paths', nargs=-1)(fn)
    return decorate


@main.command(cls=clihelp.GroupedCommand, groups=clihelp.RUN_GROUPS, examples=clihelp.RUN_EXAMPLES,
              notes=clihelp.RUN_NOTES)
@_operator_sources('Namespaces to serve: names or globs, comma-separated, "!" to exclude (repeatable).',
                   'Serve the whole cluster.')
@click.option('--standalone', is_flag=True, default=None, help='No peering with other operators.')
@click.option('-L', '--liveness', 'liveness_endpoint', default=None,
              help='Serve the probe handlers\' results at this URL, e.g. http://0.0.0.0:8080/healthz.')
@click.option('--metrics', 'metrics_endpoint', default=None, metavar='[HOST:]PORT',
              help='Serve Prometheus metrics at /metrics (localhost unless a host is given; needs kopf[metrics]).')
@logging_options
@click.option('--dev', is_flag=True, default=False, help='Peering priority 666 (a developer\'s operator wins).')
@click.option('-P', '--peering', 'peering_name', envvar='KOPF_RUN_PEERING', default=None,
              help='The peering object (mandatory peering: no handling until it exists).')
@click.option('-p', '--priority', type=int, default=None, help='Peering priority (the highest one acts).')
@click.option('--lease', 'lease_name', envvar='KOPF_RUN_LEASE', default=None,
              help='Leader election on this coordination.k8s.io Lease ([NAMESPACE/]NAME): only its holder acts.')
@click.option('--lease-namespace', 'lease_namespace', envvar='KOPF_RUN_LEASE_NAMESPACE', default=None,
              help='The Lease\'s namespace (default: $POD_NAMESPACE, else the context\'s, else "default").')
@click.option('--shards', 'shards', envvar='KOPF_RUN_SHARDS', type=click.IntRange(min=1), default=None,
              help='With --lease NAME: N shard Leases NAME-<i>; the replicas share the objects by their uids\' hash.')
@click.option('--local-cluster', is_flag=True,
              help='Run against an in-memory local cluster (in its own thread), not a real one.')
@click.option('--apply', 'apply', multiple=True, type=click.Path(dir_okay=False),
              help='A YAML manifest to apply to the local cluster at start (repeatable; needs --local-cluster).')
@click.option('--state', 'state', default=None, type=click.Path(dir_okay=False),
              help='Keep the local cluster\'s objects in this file across restarts (needs --local-cluster).')
@click.option('--kubeconfig', 'kubeconfig', default=None, type=click.Path(dir_okay=False),
              help='Write the local cluster\'s kubeconfig to this path (needs --local-cluster).')
@posing_options
@click.option('--install-crds', 'install_crds', is_flag=True, default=False,
              help='Create or update the CRDs of the loaded resource classes (@kopf.custom_resource) at startup.')
@click.option('--uvloop/--no-uvloop', 'uvloop', default=None,
              help='Use uvloop (default: if installed, e.g. by pip install kopf[uvloop]) or asyncio\'s own loop.')
@click.pass_context
def run(ctx: click.Context, /, paths: tuple[str, ...], modules: tuple[str, ...], namespaces: tuple[str, ...],
        clusterwide: bool, standalone: bool | None, liveness_endpoint: str | None, local_cluster: bool,
        apply: tuple[str, ...], state: str | None, kubeconfig: str | None, **more: Any) -> None:
    """Run an operator: load the handlers from the files and modules, then serve the cluster."""
    controls = ctx.obj if isinstance(ctx.obj, CLIControls) else CLIControls()
    legacy_namespace = os.environ.get('KOPF_RUN_NAMESPACE')  # upstream's legacy env var: appended to -n
    if legacy_namespace:
        namespaces = (*namespaces, legacy_namespace)
    posing = {'git_version': more.pop('git_version'), 'tls_sans': more.pop('tls_sans'),
              'feature_gates': more.pop('feature_gates')}
    local = {'manifests': apply, 'state': state, 'kubeconfig': kubeconfig, **posing} if local_cluster else None
    _check_run_options(namespaces, clusterwide, controls, local, given={
        '--apply': apply, '--state': state, '--kubeconfig': kubeconfig, '--git-version': posing['git_version'],
        '--tls-san': posing['tls_sans'], '--feature-gates': posing['feature_gates']})
    try:
        factory = loops.loop_factory(more['uvloop'])
    except loops.LoopError as exc:
        raise click.UsageError(str(exc)) from None
    if not clusterwide and not namespaces:
        warnings.warn('Neither --namespace nor --all-namespaces is given; serving the whole cluster. '
                      'Use --all-namespaces to silence this warning.', FutureWarning, stacklevel=1)
    _configure_logging(more['verbose'], more['debug'], more['quiet'], more['log_format'],
                       more['log_refkey'], more['log_prefix'])
    priority = 666 if more['dev'] else more['priority']  # `--dev`: kopf._peering.priorities.DEV_PRIORITY
    options = {'namespaces': namespaces, 'clusterwide': clusterwide or not namespaces, 'standalone': standalone,
               'liveness_endpoint': liveness_endpoint, 'metrics_endpoint': more['metrics_endpoint'],
               'priority': priority, 'peering_name': more['peering_name'], 'lease_name': more['lease_name'],
               'lease_namespace': more['lease_namespace'], 'shards': more['shards']}
    _run_operator(controls, paths, modules, local, options, factory, install_crds=more['install_crds'])


def _check_run_options(namespaces: tuple[str, ...], clusterwide: bool, controls: 'CLIControls',
                       local: dict[str, Any] | None, *, given: dict[str, Any]) -> None:
    """The usage errors of `kopf run`: options that exclude each other, the local cluster's without it."""
    if clusterwide and namespaces:
        raise click.UsageError('Either --namespace or --all-namespaces, not both.')
    for option, value in given.items():
        if value and local is None:
            raise click.UsageError(f'{option} works only with --local-cluster'
                                   + (' (for a real cluster, set KUBECONFIG).' if option == '--kubeconfig' else '.'))
    if local is not None and controls.vault is not None:
        raise click.UsageError('--local-cluster cannot be used with a given vault (e.g. KopfRunner(cluster=...)).')


def _run_operator(controls: 'CLIControls', paths: tuple[str, ...], modules: tuple[str, ...],
                  local: dict[str, Any] | None, options: dict[str, Any], factory: loops.LoopFactory | None, *,
                  install_crds: bool = False) -> None:
    """The operator's code loaded (after the local cluster, if any, has started), then run until it stops."""
    with contextlib.ExitStack() as stack:
        try:
            vault = stack.enter_context(_local_cluster(**local)) if local is not None else controls.vault
            if controls.registry is not None:  # the loaded files' decorators register into it
                stack.enter_context(_default_registry(controls.registry))
            declared_before = _declared_count()
            loading.load(paths, modules)  # after KUBECONFIG is set: clients read it at import time
            _warn_if_nothing_registered(controls.registry, paths, modules)
            settings = _with_crds(controls.settings, controls.registry, paths, modules, declared_before) \
                if install_crds else controls.settings
            loops.run(running.operator(
                **options, vault=vault, registry=controls.registry, settings=settings, memo=controls.memo,
                stop_flag=controls.stop_flag, ready_flag=controls.ready_flag), factory)
        except (loading.LoadingError, running.OperatorError, protocols.UnsupportedHandlersError) as exc:
            if isinstance(exc, loading.LoadingError) and exc.details:
                click.echo(exc.details, err=True)  # the user's frames: the file and line of the mistake
            click.echo(f'Error: {exc}', err=True)
            raise SystemExit(1) from exc  # the cause: for embedders (KopfRunner re-raises it); no traceback shown
        except KeyboardInterrupt:
            pass


def _warn_if_nothing_registered(registry: Any, paths: tuple[str, ...], modules: tuple[str, ...]) -> None:
    warning = loading.nothing_registered(registry or registries.get_default_registry(), paths, modules)
    if warning is not None:
        running.logger.warning(warning)


def _declared_count() -> int:
    from kopf._typed import declaring
    return len(declaring.DECLARED)


def _with_crds(settings: Any, registry: Any, paths: tuple[str, ...], modules: tuple[str, ...], since: int) -> Any:
    """The settings with the loaded resource classes in `settings.crds.install` (`kopf run --install-crds`):
    those declared by the loaded code or in its namespaces, and those its handlers name (`@kopf.on.create(X)`)."""
    from kopf._core import registries
    from kopf._core import settings as settings_
    from kopf._engine import loading
    from kopf._typed import finding

    names = [*(loading.script_name(idx, path) for idx, path in enumerate(paths)), *modules]
    classes = finding.loaded(names, since=since)
    for handler in (registry or registries.get_default_registry()).handlers:
        named = getattr(handler, 'resource_class', None)
        if named is not None and named not in classes:
            classes.append(named)
    if not classes:
        raise loading.LoadingError('--install-crds: the loaded code declares no resource classes '
                                   '(@kopf.custom_resource(...)).')
    settings = copy.copy(settings) if settings is not None else settings_.OperatorSettings()  # the caller's: kept
    install = [*settings.crds.install, *(cls for cls in classes if cls not in settings.crds.install)]
    settings.crds = dataclasses.replace(settings.crds, install=install)
    return settings


@contextlib.contextmanager
def _default_registry(registry: Any) -> Iterator[None]:
    previous = registries.get_default_registry()
    registries.set_default_registry(registry)
    try:
        yield
    finally:
        registries.set_default_registry(previous)


@contextlib.contextmanager
def _local_cluster(manifests: tuple[str, ...], *, state: str | None = None, kubeconfig: str | None = None,
                   git_version: str | None = None, tls_sans: tuple[str, ...] = (),
                   feature_gates: str = '') -> Iterator[Any]:
    """A local cluster in its own thread and loop, the manifests applied; yields a vault pointing at it.

    With `state`, its objects are resumed from that file (if it exists) and saved there on exit, as by
    `kopf cluster --state`; with `kubeconfig`, the kubeconfig goes to that path (rewritten at each start)
    instead of a temporary directory, so `kubectl --kubeconfig PATH` keeps working across restarts.
    `KUBECONFIG` of this process points to it too: the handlers' own clients (pykube-ng, kubernetes)
    then talk to the local cluster, never to a real one by accident. With `git_version` and `tls_sans`
    (which makes it serve HTTPS with a throw-away CA), it poses as another flavour of cluster.
    """
    from kopf._cluster.control import featuregates  # the emulator: only with `--local-cluster`
    from kopf._cluster.control.local import LocalCluster

    with contextlib.ExitStack() as stack:
        try:
            posing: dict[str, Any] = {'tls': True, 'tls_sans': tls_sans} if tls_sans else {}
            if git_version is not None:
                posing['git_version'] = git_version
            if feature_gates:
                posing['feature_gates'] = featuregates.parse(feature_gates)
            cluster = stack.enter_context(LocalCluster(kubeconfig=kubeconfig, state_file=state, **posing))
        except ImportError as exc:  # `cryptography` for --tls-san: one line naming the extra
            raise click.ClickException(str(exc)) from None
        except featuregates.GateError as exc:
            raise click.ClickException(f'--feature-gates: {exc}') from None
        except OSError as exc:
            what = f'write the kubeconfig {kubeconfig}' if kubeconfig else 'start the local cluster'
            raise click.ClickException(f'Cannot {what}: {exc.strerror or exc}') from None
        except (ValueError, KeyError, TypeError) as exc:
            raise click.ClickException(f'Cannot resume from the state file {state}: {exc!r}') from None
        try:
            cluster.apply(*(pathlib.Path(path) for path in manifests))  # paths, never YAML text
        except Exception as exc:
            raise click.ClickException(f'Cannot apply the manifests: {exc}') from None
        resumed = f'; state: {state}' if state else ''
        click.echo(f'The local cluster serves at {cluster.url}; kubeconfig: {cluster.kubeconfig}{resumed}', err=True)
        os.environ['KUBECONFIG'] = str(cluster.kubeconfig)  # so that the handlers' own clients use it too
        vault = credentials.Vault()
        certificates = cluster.emulator.certificates  # with --tls-san: the throw-away CA to trust
        vault.populate([credentials.ConnectionInfo(server=cluster.url, default_namespace='default',
                                                   ca_data=certificates.ca_pem if certificates is not None else None)])
        yield vault
