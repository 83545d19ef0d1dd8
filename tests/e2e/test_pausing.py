"""A paused operator (by a `kopf freeze` entry in its peering) in the test's loop: the indices are fed,
no handler runs, daemons and timers stop; resuming runs what was missed and restarts them."""
import asyncio
from typing import Any

import pytest
from click.testing import CliRunner

import kopf
from kopf import cli

from ..backends import Cluster
from . import test_peering
from .conftest import Kube, Starter, eventually, example, vault_for


async def freezer(cluster: Cluster, *args: str) -> None:
    controls = cli.CLIControls(vault=vault_for(cluster))
    result = await asyncio.to_thread(CliRunner().invoke, cli.main, [*args, '-A', '-P', 'e2e', '-i', 'freezer'],
                                     obj=controls)
    assert result.exit_code == 0, result.output


async def peering_ready(cluster: Cluster) -> None:
    cluster.apply(test_peering.peering_crds())
    peering = {'apiVersion': 'kopf.dev/v1', 'kind': 'ClusterKopfPeering', 'metadata': {'name': 'e2e'}}
    await eventually(lambda: test_peering.applied(cluster, peering))


async def test_a_paused_operator_feeds_its_indices_only_and_catches_up_when_resumed(
        cluster: Cluster, registry: kopf.OperatorRegistry, start_operator: Starter,
        caplog: pytest.LogCaptureFixture) -> None:
    await peering_ready(cluster)
    indexed: list[str] = []
    created: list[str] = []
    timed: list[str] = []

    @kopf.index('kopfexamples', registry=registry)
    def by_name(name: str, **_: Any) -> dict[str, None]:
        indexed.append(name)
        return {name: None}

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(name: str, **_: Any) -> None:
        created.append(name)

    reasons: list[Any] = []
    started: list[str] = []

    @kopf.daemon('kopfexamples', registry=registry)
    async def watcher(name: str, stopped: kopf.DaemonStopped, **_: Any) -> None:
        started.append(name)
        await stopped.wait()
        reasons.append((name, stopped.reason))

    @kopf.timer('kopfexamples', interval=0.05, registry=registry)
    def tick(name: str, **_: Any) -> None:
        timed.append(name)

    await start_operator(peering_name='e2e')
    cluster.apply(example('kex-0'))
    await eventually(lambda: created == ['kex-0'] and 'kex-0' in timed)

    await freezer(cluster, 'freeze', '--lifetime', '60', '--priority', '1000')
    await eventually(lambda: any(m.startswith('Pausing operations in favour of') for m in caplog.messages))
    await eventually(lambda: any(m.startswith('Pausing the watch-stream') for m in caplog.messages))
    await eventually(lambda: reasons == [('kex-0', kopf.DaemonStoppingReason.OPERATOR_PAUSING)])
    ticks = len(timed)
    cluster.apply(example('kex-1'))
    await eventually(lambda: 'kex-1' in indexed)  # the indices are fed while paused
    assert created == ['kex-0']                   # ... but no handler runs
    assert len(timed) <= ticks + 1                # ... and no timer (but the call in flight, if any)

    await freezer(cluster, 'resume')
    await eventually(lambda: created == ['kex-0', 'kex-1'])  # what was missed
    await eventually(lambda: len(timed) > ticks and 'kex-1' in timed)  # the timers again
    await eventually(lambda: started.count('kex-0') == 2)  # the daemons again
    assert indexed.count('kex-0') >= 1


async def test_a_handler_in_flight_finishes_when_paused_and_does_not_rerun_when_resumed(
        cluster: Cluster, registry: kopf.OperatorRegistry, start_operator: Starter,
        caplog: pytest.LogCaptureFixture) -> None:
    await peering_ready(cluster)
    release = asyncio.Event()
    begun: list[str] = []
    finished: list[str] = []

    @kopf.on.create('kopfexamples', id='create_fn', registry=registry)
    async def create_fn(name: str, **_: Any) -> dict[str, str]:
        begun.append(name)
        await release.wait()
        finished.append(name)
        return {'done': name}

    await start_operator(peering_name='e2e')
    cluster.apply(example('kex-0'))
    await eventually(lambda: begun == ['kex-0'])
    await freezer(cluster, 'freeze', '--lifetime', '60', '--priority', '1000')
    await eventually(lambda: any(m.startswith('Pausing operations in favour of') for m in caplog.messages))
    release.set()  # as upstream: a pause lets the handlers in flight finish (it cancels nothing)
    await eventually(lambda: finished == ['kex-0'])
    await freezer(cluster, 'resume')
    await eventually(lambda: any(m.startswith('Resuming operations') for m in caplog.messages))
    await eventually(lambda: ((cluster.get('kopf.dev/v1', 'KopfExample', 'kex-0', 'default') or {})
                              .get('status') or {}).get('create_fn') == {'done': 'kex-0'})
    cluster.apply(example('kex-1'))  # handled after the resume: by then, a re-run of kex-0 would have begun
    await eventually(lambda: 'kex-1' in begun)
    assert begun.count('kex-0') == 1 and finished.count('kex-0') == 1


async def test_only_an_active_replica_manages_the_webhook_configurations_and_a_paused_one_serves_them(
        cluster: Cluster, registry: kopf.OperatorRegistry, start_operator: Starter,
        caplog: pytest.LogCaptureFixture, kube: Kube) -> None:
    await peering_ready(cluster)
    await freezer(cluster, 'freeze', '--lifetime', '60', '--priority', '1000')  # paused from the start

    @kopf.on.startup(registry=registry)
    def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
        settings.admission.server = kopf.WebhookServer(addr='127.0.0.1', host='127.0.0.1')
        settings.admission.managed = 'auto.kopf.dev'

    checked: list[str] = []

    @kopf.on.validate('kopfexamples', id='check', registry=registry)
    def check(name: str, **_: Any) -> None:
        checked.append(name)

    def configs() -> Any:
        obj = cluster.get('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'auto.kopf.dev')
        return (obj or {}).get('webhooks')

    await start_operator(peering_name='e2e')
    await eventually(lambda: any('are left to the active replica' in m for m in caplog.messages))
    assert not configs()
    await freezer(cluster, 'resume')
    await eventually(lambda: [webhook for webhook in configs() or [] if webhook.get('rules')])
    await freezer(cluster, 'freeze', '--lifetime', '60', '--priority', '1000')  # paused again: still serving
    await eventually(lambda: len([m for m in caplog.messages if m.startswith('Pausing operations')]) >= 2)
    await kube.create(example('kex-1'))  # through the API server: it calls the webhook
    assert 'kex-1' in checked  # the admission webhook is served while paused (the configuration stays)
    await freezer(cluster, 'resume')  # active again: it removes its configurations on exit (a shared envtest)
    await eventually(lambda: len([m for m in caplog.messages if m.startswith('Resuming operations')]) >= 2)


@pytest.mark.parametrize('stealth', [False, True])
async def test_stealth_peering_keeps_alive_without_logging_it(
        cluster: Cluster, registry: kopf.OperatorRegistry, start_operator: Starter,
        caplog: pytest.LogCaptureFixture, stealth: bool) -> None:
    await peering_ready(cluster)
    created: list[str] = []

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(name: str, **_: Any) -> None:
        created.append(name)

    @kopf.on.startup(registry=registry)
    def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
        settings.peering.stealth = stealth

    def entries() -> dict[str, Any]:
        obj = cluster.get('kopf.dev/v1', 'ClusterKopfPeering', 'e2e') or {}
        return dict(obj.get('status') or {})

    await start_operator(peering_name='e2e')
    await eventually(lambda: len(entries()) == 1)  # our keep-alive is written either way
    cluster.apply(example('kex-0'))
    await eventually(lambda: created == ['kex-0'])  # later than the keep-alive's answer was taken
    kept_alive = [m for m in caplog.messages if 'Keep-alive in' in m]
    assert kept_alive == ([] if stealth else ["Keep-alive in 'e2e' cluster-wide: ok."])
