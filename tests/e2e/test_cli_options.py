"""`kopf run/freeze/resume` options as upstream: the peering options, env vars, logging."""
import logging
import pathlib
import time
from typing import Any

import pytest
from click.testing import CliRunner

import kopf
from kopf import cli
from kopf.testing import KopfRunner

from .. import backends, waiting
from ..backends import Cluster
from .conftest import CRD, ROOT, vault_for

PEERING_CRDS = ROOT / 'kopf' / 'peering.yaml'

kopf_local_cluster = backends.kopf_local_cluster  # kopf.testing's, or the envtest cluster


@pytest.mark.parametrize('args, env, name, priority', [
    (['-A', '--peering', 'example'], {}, 'example', 0),
    (['-A', '-P', 'example', '--dev'], {}, 'example', 666),
    (['-A', '-p', '7'], {'KOPF_RUN_PEERING': 'example'}, 'example', 7),
])
def test_run_peering_options_go_to_the_settings(kopf_local_cluster: Cluster, tmp_path: pathlib.Path,
                                                args: list[str], env: dict[str, str], name: str, priority: int) -> None:
    path = tmp_path / 'handlers.py'
    path.write_text(HANDLERS)
    settings = kopf.OperatorSettings()
    runner = _run_briefly(kopf_local_cluster, args, path, settings=settings, env=env)
    assert runner.exit_code == 0, runner.output
    assert (settings.peering.name, settings.peering.priority, settings.peering.mandatory) == (name, priority, True)
    assert settings.peering.clusterwide and not settings.peering.standalone


@pytest.mark.parametrize('args, env', [
    (['freeze', '-P', 'example', '-t', '60'], {}),
    (['freeze', '--peering', 'example', '--lifetime', '60', '--dev', '-i', 'me', '-n', 'ns', '-m', 'hi'], {}),
    (['freeze', '-t', '60', '-A', '-p', '200'], {'KOPF_FREEZE_PEERING': 'example'}),
    (['resume', '-P', 'example'], {}),
    (['resume', '-A', '-i', 'me', '--log-format', 'json'], {'KOPF_RESUME_PEERING': 'example'}),
])
def test_freeze_and_resume_without_the_peering_object_fail_clearly(
        kopf_local_cluster: Cluster, args: list[str], env: dict[str, str]) -> None:
    controls = cli.CLIControls(vault=vault_for(kopf_local_cluster))
    result = CliRunner().invoke(cli.main, args, env=env, obj=controls)
    assert result.exit_code == 1, result.output
    assert "The peering object 'example' (" in result.output and 'is not found' in result.output
    assert 'Traceback' not in result.output


def test_freeze_writes_an_entry_and_resume_removes_it(kopf_local_cluster: Cluster) -> None:
    kopf_local_cluster.apply(str(PEERING_CRDS))
    kopf_local_cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfPeering',
                              'metadata': {'name': 'example', 'namespace': 'default'}})
    controls = cli.CLIControls(vault=vault_for(kopf_local_cluster))
    result = CliRunner().invoke(cli.main, ['freeze', '-n', 'default', '-P', 'example', '-t', '30', '--dev',
                                           '-i', 'me', '-m', 'a message'], obj=controls)
    assert result.exit_code == 0, result.output
    status = (kopf_local_cluster.get('kopf.dev/v1', 'KopfPeering', 'example', 'default') or {}).get('status')
    assert status is not None and set(status) == {'me'}
    assert status['me']['priority'] == 666 and status['me']['lifetime'] == 30 and 'lastseen' in status['me']
    controls = cli.CLIControls(vault=vault_for(kopf_local_cluster))  # a vault is closed with its command's client
    result = CliRunner().invoke(cli.main, ['resume', '-n', 'default', '-P', 'example', '-i', 'me'], obj=controls)
    assert result.exit_code == 0, result.output
    status = (kopf_local_cluster.get('kopf.dev/v1', 'KopfPeering', 'example', 'default') or {}).get('status')
    assert not status


def test_freeze_and_resume_take_every_option_from_upstreams_env_vars(kopf_local_cluster: Cluster) -> None:
    kopf_local_cluster.apply(str(PEERING_CRDS))
    kopf_local_cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfPeering',
                              'metadata': {'name': 'example', 'namespace': 'default'}})
    env = {'KOPF_FREEZE_PEERING': 'example', 'KOPF_FREEZE_ID': 'me', 'KOPF_FREEZE_LIFETIME': '30',
           'KOPF_FREEZE_PRIORITY': '321', 'KOPF_FREEZE_MESSAGE': 'a message', 'KOPF_FREEZE_NAMESPACES': 'default'}
    controls = cli.CLIControls(vault=vault_for(kopf_local_cluster))
    result = CliRunner().invoke(cli.main, ['freeze'], env=env, obj=controls)
    assert result.exit_code == 0, result.output
    status = (kopf_local_cluster.get('kopf.dev/v1', 'KopfPeering', 'example', 'default') or {}).get('status')
    assert status is not None and set(status) == {'me'}
    assert status['me']['priority'] == 321 and status['me']['lifetime'] == 30
    env = {'KOPF_RESUME_PEERING': 'example', 'KOPF_RESUME_ID': 'me', 'KOPF_RESUME_NAMESPACES': 'default'}
    controls = cli.CLIControls(vault=vault_for(kopf_local_cluster))
    result = CliRunner().invoke(cli.main, ['resume'], env=env, obj=controls)
    assert result.exit_code == 0, result.output
    assert not (kopf_local_cluster.get('kopf.dev/v1', 'KopfPeering', 'example', 'default') or {}).get('status')


@pytest.mark.parametrize('command, option, envvar', [
    ('freeze', '--id', 'KOPF_FREEZE_ID'), ('freeze', '--peering', 'KOPF_FREEZE_PEERING'),
    ('freeze', '--lifetime', 'KOPF_FREEZE_LIFETIME'), ('freeze', '--priority', 'KOPF_FREEZE_PRIORITY'),
    ('freeze', '--message', 'KOPF_FREEZE_MESSAGE'), ('freeze', '--namespace', 'KOPF_FREEZE_NAMESPACES'),
    ('freeze', '--all-namespaces', 'KOPF_FREEZE_CLUSTERWIDE'),
    ('resume', '--id', 'KOPF_RESUME_ID'), ('resume', '--peering', 'KOPF_RESUME_PEERING'),
    ('resume', '--namespace', 'KOPF_RESUME_NAMESPACES'), ('resume', '--all-namespaces', 'KOPF_RESUME_CLUSTERWIDE'),
])
def test_freeze_and_resume_env_var_names_are_upstreams(command: str, option: str, envvar: str) -> None:
    import click
    group_ctx = click.Context(cli.main, info_name='kopf', auto_envvar_prefix='KOPF')
    cmd = cli.main.commands[command]
    ctx = click.Context(cmd, info_name=command, parent=group_ctx)
    param, = [p for p in cmd.params if isinstance(p, click.Option) and option in p.opts]
    explicit = param.envvar if isinstance(param.envvar, str) else None
    assert (explicit or f'{ctx.auto_envvar_prefix}_{(param.name or "").upper()}') == envvar


@pytest.mark.parametrize('args', [['freeze', '-P', 'x'], ['freeze', '-t', '1'], ['resume']])
def test_freeze_and_resume_require_their_options(args: list[str]) -> None:
    result = CliRunner().invoke(cli.main, args)
    assert result.exit_code == 2
    assert 'Missing option' in result.output


def test_the_commands_and_their_options() -> None:
    assert set(cli.main.commands) >= {'run', 'freeze', 'resume', 'cluster'}
    shared = {'--verbose', '--debug', '--quiet', '--log-format', '--log-refkey', '--log-prefix'}
    for name in ['run', 'freeze', 'resume']:
        options = {opt for param in cli.main.commands[name].params for opt in param.opts}
        assert shared <= options, name
    run_options = {opt for param in cli.main.commands['run'].params for opt in param.opts + param.secondary_opts}
    assert {'-m', '-n', '-A', '--standalone', '--dev', '-L', '-P', '-p', '--no-log-prefix'} <= run_options


HANDLERS = '''
import kopf

@kopf.on.create('kopfexamples')
def create_fn(**_):
    return {'ok': True}
'''


def _run_briefly(cluster: Cluster, args: list[str], path: pathlib.Path, **kwargs: Any) -> KopfRunner:
    with KopfRunner(['run', *args, str(path)], cluster=cluster, registry=kopf.OperatorRegistry(),
                    timeout=20, **kwargs) as runner:
        assert runner.wait_ready(timeout=20), runner
    return runner


def test_standalone_has_no_peering_whatever_the_priority(kopf_local_cluster: Cluster, tmp_path: pathlib.Path) -> None:
    path = tmp_path / 'handlers.py'
    path.write_text(HANDLERS)
    runner = _run_briefly(kopf_local_cluster, ['-A', '--dev', '-p', '100', '--standalone', '--verbose'], path)
    assert runner.exit_code == 0
    assert 'peering' not in runner.output.lower()


def test_options_from_automatic_env_vars(kopf_local_cluster: Cluster, tmp_path: pathlib.Path) -> None:
    kopf_local_cluster.apply(str(CRD))
    for namespace in ['ns1', 'ns2', 'other']:
        kopf_local_cluster.apply({'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': namespace}})
    path = tmp_path / 'handlers.py'
    path.write_text(HANDLERS)
    env = {'KOPF_RUN_NAMESPACES': 'ns1 ns2', 'KOPF_RUN_VERBOSE': '1', 'KOPF_RUN_LOG_FORMAT': 'plain',
           'KOPF_RUN_PRIORITY': '5'}
    with KopfRunner(['run', str(path)], cluster=kopf_local_cluster, registry=kopf.OperatorRegistry(),
                    timeout=20, env=env) as runner:
        assert runner.wait_ready(timeout=20)
        for namespace in ['ns1', 'other']:
            kopf_local_cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
                                      'metadata': {'name': 'kex', 'namespace': namespace}, 'spec': {}})
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not _status(kopf_local_cluster, 'ns1'):
            time.sleep(0.02)
    assert runner.exit_code == 0, runner.output
    assert _status(kopf_local_cluster, 'ns1') == {'create_fn': {'ok': True}}    # KOPF_RUN_NAMESPACES
    assert _status(kopf_local_cluster, 'other') == {}  # and it cannot be handled later: never watched
    assert 'Starting the watch-stream for kopfexamples.v1.kopf.dev in ns1.' in runner.output
    assert 'Starting the watch-stream for kopfexamples.v1.kopf.dev in other.' not in runner.output
    assert 'Default peering object is not found' in runner.output             # not KOPF_RUN_STANDALONE (debug)
    assert 'Starting the watch-stream' in runner.output                        # KOPF_RUN_VERBOSE: debug
    assert '[DEBUG' not in runner.output and '[INFO' not in runner.output       # KOPF_RUN_LOG_FORMAT=plain


def _status(cluster: Cluster, namespace: str) -> dict[str, Any]:
    return dict((cluster.get('kopf.dev/v1', 'KopfExample', 'kex', namespace) or {}).get('status') or {})


def test_quiet_hides_info(kopf_local_cluster: Cluster, tmp_path: pathlib.Path) -> None:
    kopf_local_cluster.apply(str(CRD))
    path = tmp_path / 'handlers.py'
    path.write_text(HANDLERS)
    warnings: list[str] = []  # the peering's warning may come after "ready": the runner is left only once it came
    catcher = logging.Handler(logging.WARNING)
    catcher.emit = lambda record: warnings.append(record.getMessage())  # type: ignore[method-assign]
    peering_logger = logging.getLogger('kopf.reactor.peering')
    peering_logger.addHandler(catcher)
    try:
        with KopfRunner(['run', '-A', '--quiet', '-P', 'absent', str(path)], cluster=kopf_local_cluster,
                        registry=kopf.OperatorRegistry(), timeout=20) as runner:
            assert runner.wait_ready(timeout=20), runner
            waiting.wait_for(lambda: any('is not found' in message for message in warnings))
    finally:
        peering_logger.removeHandler(catcher)
    assert "The peering object 'absent' cluster-wide is not found" in runner.output  # a warning: shown
    assert 'Stop-flag is raised' not in runner.output      # an info: hidden


@pytest.mark.parametrize('args, env, name, namespace', [
    (['-A', '--lease', 'my-lease'], {}, 'my-lease', None),
    (['-A', '--lease', 'ns1/my-lease'], {}, 'ns1/my-lease', None),
    (['-A', '--lease-namespace', 'ns1'], {'KOPF_RUN_LEASE': 'my-lease'}, 'my-lease', 'ns1'),
])
def test_run_lease_options_go_to_the_settings(kopf_local_cluster: Cluster, tmp_path: pathlib.Path, args: list[str],
                                              env: dict[str, str], name: str, namespace: str | None) -> None:
    path = tmp_path / 'handlers.py'
    path.write_text(HANDLERS)
    settings = kopf.OperatorSettings()
    runner = _run_briefly(kopf_local_cluster, args, path, settings=settings, env=env)
    assert runner.exit_code == 0, runner.output
    assert (settings.peering.lease.name, settings.peering.lease.namespace) == (name, namespace)


def test_the_lease_namespace_is_pod_namespace_and_the_lease_is_released_on_exit(
        kopf_local_cluster: Cluster, tmp_path: pathlib.Path) -> None:
    kopf_local_cluster.apply({'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': 'ns1'}})
    path = tmp_path / 'handlers.py'
    path.write_text(HANDLERS)
    with KopfRunner(['run', '-A', '--lease', 'my-lease', str(path)], cluster=kopf_local_cluster, timeout=20,
                    registry=kopf.OperatorRegistry(), env={'POD_NAMESPACE': 'ns1', 'POD_ID': 'pod-1'}):
        lease = waiting.wait_for(lambda: kopf_local_cluster.get('coordination.k8s.io/v1', 'Lease', 'my-lease', 'ns1'))
        assert lease['spec']['holderIdentity'] == 'pod-1'
        assert lease['spec']['leaseDurationSeconds'] == 15
    lease = kopf_local_cluster.get('coordination.k8s.io/v1', 'Lease', 'my-lease', 'ns1') or {}
    assert lease['spec']['holderIdentity'] == ''


def test_lease_durations_out_of_order_fail_clearly(kopf_local_cluster: Cluster, tmp_path: pathlib.Path) -> None:
    path = tmp_path / 'handlers.py'
    path.write_text(HANDLERS)
    settings = kopf.OperatorSettings()
    settings.peering.lease.renew_deadline = 20  # longer than the lease_duration (15)
    with KopfRunner(['run', '-A', '--lease', 'my-lease', str(path)], cluster=kopf_local_cluster, timeout=20,
                    registry=kopf.OperatorRegistry(), settings=settings, reraise=False) as runner:
        pass
    assert runner.exit_code == 1
    assert "Error: The lease 'my-lease': the durations must be 0 < retry_period (2 s) < renew_deadline (20 s) " \
           "< lease_duration (15 s)" in runner.output


def test_shards_without_a_lease_fail_clearly(kopf_local_cluster: Cluster, tmp_path: pathlib.Path) -> None:
    path = tmp_path / 'handlers.py'
    path.write_text(HANDLERS)
    with KopfRunner(['run', '-A', '--shards', '3', str(path)], cluster=kopf_local_cluster, timeout=20,
                    registry=kopf.OperatorRegistry(), reraise=False) as runner:
        pass
    assert runner.exit_code == 1
    assert 'Error: --shards 3 needs --lease NAME and a positive number of shards.' in runner.output
