"""Every example of examples/ runs end to end against the local cluster, and its observable effect shows.

Each operator runs with `KopfRunner` (the CLI in a thread) pointed at a `LocalCluster` (in its own
thread) by `cluster=`, or via the embedding API; objects are made and checked with the cluster's
control API and the official `kubernetes` client.
"""
import json
import logging
import pathlib
import runpy
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

import kopf
from kopf import cli
from kopf.testing import KopfRunner

from .. import backends
from ..backends import Cluster
from ..waiting import wait_for
from . import test_peering
from .conftest import CRD, ROOT, fast_settings, vault_for

EXAMPLES = ROOT / 'examples'
Obj = dict[str, Any]


@pytest.fixture
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:  # in its own thread: the operator runs in another one
    with backends.cluster(request) as local:
        local.apply(str(CRD))
        yield local


@pytest.fixture
def kubeconfig(cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """For examples whose handlers use their own clients (pykube-ng, kubernetes): they read KUBECONFIG."""
    monkeypatch.setenv('KUBECONFIG', str(cluster.kubeconfig))
    return cluster.kubeconfig



def runner(example: str, cluster: Cluster | None, *args: str, **kwargs: Any) -> KopfRunner:
    kwargs.setdefault('settings', fast_settings())
    return KopfRunner(['run', '-A', '--verbose', *args, str(EXAMPLES / example / 'example.py')],
                      cluster=cluster, registry=kopf.OperatorRegistry(), timeout=30, **kwargs)


def kex(cluster: Cluster, name: str = 'kopf-example-1') -> Obj | None:
    return cluster.get('kopf.dev/v1', 'KopfExample', name, 'default')


def status(cluster: Cluster, name: str = 'kopf-example-1') -> Obj:
    return dict((kex(cluster, name) or {}).get('status') or {})


def annotations(obj: Obj | None) -> dict[str, str]:
    return dict(((obj or {}).get('metadata') or {}).get('annotations') or {})


def pods(cluster: Cluster) -> list[Obj]:
    return cluster.list('v1', 'Pod', 'default')


def k8s(cluster: Cluster) -> Any:
    import kubernetes
    return kubernetes.config.new_client_from_config(config_file=str(cluster.kubeconfig))


def delete_kex(cluster: Cluster, name: str = 'kopf-example-1') -> None:
    import kubernetes
    kubernetes.client.CustomObjectsApi(k8s(cluster)).delete_namespaced_custom_object(
        'kopf.dev', 'v1', 'default', 'kopfexamples', name)


def patch_kex(cluster: Cluster, patch: Obj, name: str = 'kopf-example-1') -> None:
    import kubernetes
    kubernetes.client.CustomObjectsApi(k8s(cluster)).patch_namespaced_custom_object(
        'kopf.dev', 'v1', 'default', 'kopfexamples', name, patch)


OBJ = str(EXAMPLES / 'obj.yaml')
LAST_HANDLED = 'kopf.zalando.org/last-handled-configuration'


def test_01_minimal(cluster: Cluster) -> None:
    with runner('01-minimal', cluster) as operator:
        assert operator.wait_ready(20)
        cluster.apply(OBJ)
        assert wait_for(lambda: status(cluster)) == {'create_fn': {'message': 'hello world'}}
    assert "And here we are! Creating: {'duration': '1m', 'field': 'value'" in operator.output
    obj = kex(cluster)
    assert LAST_HANDLED in annotations(obj)
    assert not obj['metadata'].get('finalizers')


def test_02_children(cluster: Cluster, kubeconfig: pathlib.Path) -> None:
    with runner('02-children', cluster) as operator:
        assert operator.wait_ready(20)
        cluster.apply(OBJ)
        children = wait_for(lambda: status(cluster).get('create_fn', {}).get('children'))
        parent = kex(cluster)
        assert parent is not None
        [pod] = pods(cluster)
        assert children == [pod['metadata']['uid']]
        assert pod['metadata']['name'].startswith('kopf-example-1-')
        assert pod['metadata']['labels'] == {'somelabel': 'somevalue'}
        assert pod['metadata']['ownerReferences'] == [{
            'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'name': 'kopf-example-1',
            'uid': parent['metadata']['uid'], 'controller': True, 'blockOwnerDeletion': True}]
        assert pod['spec']['containers'][0]['command'] == ['sleep', '60']
        delete_kex(cluster)
        wait_for(lambda: not pods(cluster))  # garbage-collected with the parent
    assert 'Created the child pod kopf-example-1-' in operator.output


def test_03_exceptions(cluster: Cluster) -> None:
    progress: list[Obj] = []

    def finished() -> bool:
        for key, value in annotations(kex(cluster)).items():
            if key == 'kopf.zalando.org/succeed_on_the_fourth_try':
                progress.append(json.loads(value))
        return 'Creation is processed' in operator.output if operator.future.done() else False

    with runner('03-exceptions', cluster) as operator:
        assert operator.wait_ready(20)
        cluster.apply(OBJ)
        wait_for(lambda: (finished(), LAST_HANDLED in annotations(kex(cluster)))[1], interval=0.05)
    output = operator.output
    assert 'Creation is processed: 1 succeeded; 3 failed.' in output
    assert "Handler 'fail_permanently' failed permanently: The spec can never be satisfied." in output
    assert ("Handler 'fail_at_once_on_any_error' failed with an exception and will stop now: "
            "An unexpected value, and no retries for it.") in output
    assert 'The sensor is still not ready (attempt 3).' in output  # retries=3: three attempts in all
    assert 'The sensor is still not ready (attempt 4).' not in output
    tries = output.count("Handler 'fail_after_three_tries' failed with an exception and will try again in 1")
    assert tries == 2  # the third and last failure is final, and says so:
    assert ("Handler 'fail_after_three_tries' failed with an exception and will stop now "
            "(it would exceed 3 retries on the next attempt): The sensor is still not ready (attempt 3).") in output
    assert 'Succeeded after 3 retries.' in output
    assert output.count('Traceback (most recent call last)') >= 4
    assert status(cluster) == {'succeed_on_the_fourth_try': {'retries': 3}}
    assert any(p.get('delayed') and p.get('message', '').startswith('Not yet') for p in progress), progress
    assert not [key for key in annotations(kex(cluster)) if 'succeed_on' in key]  # purged at the end


def test_04_events(cluster: Cluster) -> None:
    with runner('04-events', cluster) as operator:
        assert operator.wait_ready(20)
        cluster.apply(OBJ)

        def events() -> list[Obj]:
            found = [e for e in cluster.list('v1', 'Event', 'default') if e.get('reason') == 'Greeting']
            return found if len(found) == 4 else []
        found = wait_for(events)
    messages = {e['type']: e['message'] for e in found}
    assert messages == {'Custom': 'A custom event type.', 'Normal': 'Everything is fine.',
                        'Warning': 'Something looks odd.', 'Error': 'Something went wrong: The reactor is overheating.'}
    assert {e['involvedObject']['name'] for e in found} == {'kopf-example-1'}
    assert {e['involvedObject']['kind'] for e in found} == {'KopfExample'}


def test_05_handlers(cluster: Cluster) -> None:
    cluster.apply(OBJ)  # before the operator starts, so it is resumed on a restart below
    with runner('05-handlers', cluster) as operator:
        assert operator.wait_ready(20)
        wait_for(lambda: LAST_HANDLED in annotations(kex(cluster)))
        created = kex(cluster)
        assert created is not None
        assert created['metadata']['finalizers'] == ['kopf.zalando.org/KopfFinalizerMarker']
        assert created['status'] == {'create_fn_1': {'order': 1}, 'create_fn_2': {'order': 2}}
        if not backends.is_envtest(cluster):  # the emulator's request log
            patches = [r for r in cluster.request_log() if r['method'] == 'PATCH' and 'kopf-example-1' in r['path']]
            assert len(patches) >= 3  # the finalizer; create_fn_1 + its progress; create_fn_2 + the diff-base
        patch_kex(cluster, {'spec': {'field': 'changed'}})
        wait_for(lambda: '"changed"' in annotations(kex(cluster))[LAST_HANDLED])
    with runner('05-handlers', cluster) as operator2:  # a restart: the existing object is resumed
        assert operator2.wait_ready(20)
        wait_for(lambda: status(cluster).get('resume_fn'))
        delete_kex(cluster)
        wait_for(lambda: kex(cluster) is None)
    output = operator.output
    assert output.index('create_fn_1: {') < output.index('create_fn_2: kopf-example-1')
    assert "field_fn: None -> 'value'" in output
    assert "update_fn: spec.field: 'value' -> 'changed'" in output
    assert "field_fn: 'value' -> 'changed'" in output
    assert 'resume_fn' not in output  # a new object is created, not resumed
    assert 'resume_fn: the operator has restarted' in operator2.output
    assert 'delete_fn_1: kopf-example-1' in operator2.output
    assert 'delete_fn_2: kopf-example-1' in operator2.output


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_06_peering(cluster: Cluster) -> None:
    cluster.apply(test_peering.peering_crds())
    wait_for(lambda: test_peering.applied(cluster, str(EXAMPLES / '06-peering' / 'peering.yaml')))
    lines = _Lines()
    logging.getLogger('kopf.reactor.peering').addHandler(lines)

    def freezer(*args: str) -> None:
        controls = cli.CLIControls(vault=vault_for(cluster))
        result = CliRunner().invoke(cli.main, [*args, '-A', '--peering', 'example', '-i', 'freezer'], obj=controls)
        assert result.exit_code == 0, result.output

    def paused() -> bool:
        return any(line.startswith('Pausing operations in favour of [<Peer freezer') for line in lines.lines)
    try:
        with runner('06-peering', cluster, '--peering', 'example', '--priority', '100') as operator:
            assert operator.wait_ready(20)
            wait_for(lambda: (cluster.get('kopf.dev/v1', 'ClusterKopfPeering', 'example') or {}).get('status'))
            freezer('freeze', '--lifetime', '60', '--priority', '1000')
            wait_for(paused)
            cluster.apply(OBJ)
            assert not status(cluster)
            freezer('resume')
            assert wait_for(lambda: status(cluster)) == {
                'create_fn': {'message': 'kopf-example-1 is handled by the acting replica'}}
    finally:
        logging.getLogger('kopf.reactor.peering').removeHandler(lines)
    entries = (cluster.get('kopf.dev/v1', 'ClusterKopfPeering', 'example') or {}).get('status')
    assert not entries  # ours removed on exit, the freezer's on resume
    assert 'Resuming operations after the pause.' in operator.output


def test_07_subhandlers(cluster: Cluster) -> None:
    with runner('07-subhandlers', cluster) as operator:
        assert operator.wait_ready(20)
        cluster.apply(OBJ)
        wait_for(lambda: LAST_HANDLED in annotations(kex(cluster)))
    assert status(cluster) == {'create_fn/item1': {'handled': 'item1'}, 'create_fn/item2': {'handled': 'item2'}}
    assert "=== Handling the item 'item1' ===" in operator.output
    assert "Handler 'create_fn/item1' succeeded." in operator.output
    assert "Handler 'create_fn/item2' succeeded." in operator.output
    assert "Handler 'create_fn' succeeded." in operator.output


def test_09_testing() -> None:
    """The example's own test passes, run by pytest as a user would run it."""
    args = [sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', str(EXAMPLES / '09-testing')]
    result = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert '1 passed' in result.stdout


def pod(name: str) -> Obj:
    return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': name, 'namespace': 'default'},
            'spec': {'containers': [{'name': 'main', 'image': 'busybox'}]}}


def replay_pods(cluster: Cluster, *, since: str, until_deleted: str) -> list[tuple[str, Obj]]:
    """(type, metadata) of the pods' watch-events after `since`, replayed from history, up to a deletion."""
    found: list[tuple[str, Obj]] = []
    url = f'{cluster.url}/api/v1/namespaces/default/pods?watch=1&resourceVersion={since}&timeoutSeconds=60'
    context = cluster.ssl_context if backends.is_envtest(cluster) else None  # type: ignore[union-attr]
    with urllib.request.urlopen(url, timeout=90, context=context) as response:
        for line in response:
            event = json.loads(line)
            meta = event['object']['metadata']
            if meta['name'] == until_deleted:
                found.append((event['type'], meta))
                if event['type'] == 'DELETED':
                    break
    return found


def test_10_builtins(cluster: Cluster, kubeconfig: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 3 s: creationTimestamp has whole seconds, so a pod may look up to 1 s older than it is; with a
    # real API server's latencies on top, a 1 s lifetime was sometimes over at the first handler call.
    monkeypatch.setenv('POD_LIFETIME', '3')
    with runner('10-builtins', cluster) as operator:
        assert operator.wait_ready(20)
        created, _ = cluster.apply(pod('short-lived'), pod('kube-proxy-x'))
        wait_for(lambda: cluster.get('v1', 'Pod', 'short-lived', 'default') is None, within=30)
        # The finalizer lives only a few seconds (POD_LIFETIME): too short a window to poll for under load.
        # Instead, the pod's history is replayed by a watch from its creation, once it is gone.
        history = replay_pods(cluster, since=created['metadata']['resourceVersion'], until_deleted='short-lived')
        finalizers = [meta.get('finalizers') for kind, meta in history if kind == 'MODIFIED']
        assert ['kopf.zalando.org/KopfFinalizerMarker'] in finalizers, history
        assert history[-1][0] == 'DELETED'
        system_pod = cluster.get('v1', 'Pod', 'kube-proxy-x', 'default')
        assert system_pod is not None and not system_pod['metadata'].get('finalizers')
        assert LAST_HANDLED not in annotations(system_pod)
    output = operator.output
    assert "Handler 'limit_the_lifetime' failed temporarily: The pod is" in output
    assert 'Deleted the pod default/short-lived after' in output
    assert 'The pod short-lived is being deleted.' in output
    assert 'kube-proxy-x' not in output.replace('Starting', '')


def test_11_filtering_handlers(cluster: Cluster) -> None:
    with runner('11-filtering-handlers', cluster) as operator:
        assert operator.wait_ready(20)
        cluster.apply(OBJ)
        wait_for(lambda: LAST_HANDLED in annotations(kex(cluster)))
        patch_kex(cluster, {'spec': {'field': 'changed'}})
        wait_for(lambda: '"changed"' in annotations(kex(cluster))[LAST_HANDLED])
    output = operator.output
    for message in ['Label is matching.', 'Label is present.', 'Label is absent.', 'Label callback is satisfied.',
                    'Annotation is matching.', 'Field value is matching.', 'The when= condition is true.',
                    'Any of the callbacks is satisfied.', 'Field changed from "value" to "changed".']:
        assert message in output, message
    assert 'MUST NOT BE LOGGED' not in output
    assert 'Creation is processed: 8 succeeded; 0 failed.' in output
    assert 'Field daemon is running.' in output  # while spec.field is "value"; stopped when it changes:
    assert 'Field daemon is stopped: DaemonStoppingReason.FILTERS_MISMATCH.' in output


@pytest.mark.emulator_only(reason='the example logs in by the URL alone, without credentials: '
                                   'only the emulator serves anonymous clients')
def test_12_embedded(cluster: Cluster, capsys: pytest.CaptureFixture[str]) -> None:
    namespace = runpy.run_path(str(EXAMPLES / '12-embedded' / 'example.py'), run_name='example_12')
    namespace['main'](cluster)
    lines = capsys.readouterr().out.splitlines()
    assert sorted(lines) == sorted([f'Hello, kopf-example-{i}!' for i in range(3)] +
                                   [f'Good bye, kopf-example-{i}!' for i in range(3)])
    assert not cluster.list('kopf.dev/v1', 'KopfExample', 'default')
    assert not kopf.get_default_registry().handlers or all(  # its own registry: the default one is untouched
        'greet' not in h.id for h in kopf.get_default_registry().handlers)


def test_12_embedded_as_a_script() -> None:
    result = subprocess.run([sys.executable, str(EXAMPLES / '12-embedded' / 'example.py')],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert 'Good bye, kopf-example-2!' in result.stdout


def free_port() -> int:
    import socket
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port: int = sock.getsockname()[1]
        return port


def test_13_hooks(cluster: Cluster, kubeconfig: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kopf._engine import probing
    monkeypatch.setattr(probing, 'PROBE_CACHE_TIME', 0.0)  # not to wait 10 s for fresh probes
    url = f'http://127.0.0.1:{free_port()}/healthz'
    with runner('13-hooks', None, '--liveness', url) as operator:  # no cluster=: the custom login is used
        assert operator.wait_ready(20)
        cluster.apply(pod('pod-1'), pod('pod-2'))

        def probed() -> Obj | None:
            try:  # the probe server may not listen yet, or answer 500 while a probe is retried
                with urllib.request.urlopen(url, timeout=5) as response:
                    result: Obj = json.loads(response.read())
            except OSError:  # URLError, HTTPError, ConnectionError are all OSErrors
                return None
            return result if result.get('pods_seen') == 2 else None
        probes = wait_for(probed, interval=0.1)
        assert set(probes) == {'pods_seen', 'started_at'}
    output = operator.output
    assert 'The dependency is not ready yet (attempt 2).' in output
    assert 'The dependency is ready.' in output
    assert 'Served by the background task.' in output
    assert output.index('The dependency is ready.') < output.index('Starting the watch-stream')
    assert f'Logged in to {cluster.url}, valid for 30 seconds.' in output
    assert '[default/pod-1] Pod event: ' in output and '[default/pod-2] Pod event: ' in output
    assert output.index('The background task is stopped.') > output.index('Stop-flag is raised')


class Lines(logging.Handler):
    """The messages of a logger as they are logged (the runner's output is there only at its end)."""

    def __init__(self, logger: str) -> None:
        super().__init__()
        self.messages: list[str] = []
        self.logger = logging.getLogger(logger)

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    def __enter__(self) -> 'Lines':
        self.logger.addHandler(self)
        return self

    def __exit__(self, *_: Any) -> None:
        self.logger.removeHandler(self)


def test_14_daemons(cluster: Cluster) -> None:
    progress: set[str] = set()

    def finished() -> Obj | None:
        found = status(cluster)
        if 'progress' in found:
            progress.add(found['progress'])
        return found.get('accompany')

    def watched() -> Obj:
        return dict(status(cluster).get('watch_annotated') or {})

    mismatch = 'DaemonStoppingReason.FILTERS_MISMATCH'
    started = 'Watching the annotated kopf-example-1 (time {}).'.format
    with Lines('kopf.objects') as lines, runner('14-daemons', cluster) as operator:
        assert operator.wait_ready(20)
        cluster.apply(OBJ)
        assert wait_for(finished, interval=0.05) == {'message': 'Accompanying is finished.'}
        assert status(cluster)['progress'] == 'Done.'
        obj = kex(cluster)
        assert obj is not None and obj['metadata']['finalizers'] == ['kopf.zalando.org/KopfFinalizerMarker']
        assert not watched()  # still running
        patch_kex(cluster, {'metadata': {'annotations': {'someannotation': None}}})  # the filter stops matching
        assert wait_for(watched) == {'times': 1, 'stopped': mismatch}
        patch_kex(cluster, {'metadata': {'annotations': {'someannotation': 'somevalue'}}})  # it matches again
        wait_for(lambda: any(m.endswith(started(2)) for m in lines.messages))  # restarted: its next stop counts 2
        patch_kex(cluster, {'metadata': {'annotations': {'someannotation': None}}})
        assert wait_for(lambda: watched().get('times') == 2 and watched()) == {'times': 2, 'stopped': mismatch}
        patch_kex(cluster, {'metadata': {'annotations': {'someannotation': 'somevalue'}}})
        wait_for(lambda: any(m.endswith(started(3)) for m in lines.messages))  # running again when deleted
        delete_kex(cluster)
        wait_for(lambda: kex(cluster) is None)  # the finalizer is released once the daemons have exited
    output = operator.output
    deleted = output.index('Stopped watching kopf-example-1: DaemonStoppingReason.RESOURCE_DELETED.')
    assert {'Getting ready (attempt 1).', 'Getting ready (attempt 2).'} & progress, progress
    assert output.count("Daemon 'accompany' failed temporarily: Not ready to accompany yet") == 2
    assert 'Accompanying: step 3 of 3.' in output
    assert 'Accompanying is interrupted' not in output
    assert "Daemon 'accompany' has exited on its own and will not be retried or restarted." in output
    assert 'Ping 2.' in output
    assert 'Watching the annotated kopf-example-1 (time 3).' in output[:deleted]
    # Cancelled after cancellation_backoff=0.1 if stopped in its 1-second sleep (most likely), else graceful:
    assert 'Pinging is cancelled after ' in output or "Daemon 'ping' has exited gracefully." in output
    assert 'OPERATOR_EXITING' not in output  # all were stopped by the deletion, before the operator's exit


def test_15_timers(cluster: Cluster) -> None:
    with runner('15-timers', cluster) as operator:
        assert operator.wait_ready(20)
        cluster.apply(OBJ)
        assert wait_for(lambda: status(cluster).get('check_when_quiet')) == {'field': 'value'}
        assert wait_for(lambda: status(cluster).get('tick', {}).get('ticks', 0) >= 3)
        changed = time.monotonic()
        patch_kex(cluster, {'spec': {'field': 'changed'}})
        wait_for(lambda: status(cluster).get('check_when_quiet') == {'field': 'changed'})
        assert time.monotonic() - changed >= 0.9  # idle=1: not before 1 s of no essential changes
        delete_kex(cluster)
        wait_for(lambda: kex(cluster) is None)
    output = operator.output
    assert 'Tick 3.' in output
    assert "The object has been quiet for a while: field='value'." in output
    assert "The object has been quiet for a while: field='changed'." in output


def test_16_indexing(cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    import kubernetes

    from kopf._engine import probing
    monkeypatch.setattr(probing, 'PROBE_CACHE_TIME', 0.0)  # not to wait 10 s for fresh probes
    core = kubernetes.client.CoreV1Api(k8s(cluster))

    def app_pod(name: str, app: str | None) -> Obj:
        obj = pod(name)
        obj['metadata']['labels'] = {} if app is None else {'app': app}
        obj['spec']['schedulerName'] = 'none'   # no scheduler binds it, no kubelet runs it: its status is ours to set
        return obj

    def set_phase(name: str, phase: str) -> None:  # no kubelet runs the pods: their status is ours to set
        core.patch_namespaced_pod_status(name, 'default', {'status': {'phase': phase}})

    def summary() -> Obj:
        return dict(status(cluster).get('summarize') or {})

    def probed() -> Obj | None:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                result: Obj = json.loads(response.read())
        except OSError:
            return None
        return result

    cluster.apply(app_pod('web-1', 'web'), app_pod('db-1', 'db'), app_pod('no-app', None))  # before the start
    set_phase('web-1', 'Running')
    set_phase('no-app', 'Running')
    url = f'http://127.0.0.1:{free_port()}/healthz'
    with runner('16-indexing', cluster, '--liveness', url) as operator:
        assert operator.wait_ready(20)
        cluster.apply(app_pod('web-2', 'web'), OBJ)  # after the start
        set_phase('db-1', 'Running')
        assert wait_for(lambda: summary().get('running-pods') == ['db-1', 'no-app', 'web-1'] and summary()) == {
            'running-pods': ['db-1', 'no-app', 'web-1'],
            'apps': [{'app': 'db', 'pods': ['db-1']}, {'app': 'web', 'pods': ['web-1', 'web-2']}]}
        assert wait_for(lambda: (probed() or {}).get('indexed_pods')) == {'labelled': 3, 'running': 3}
        core.delete_namespaced_pod('web-1', 'default')  # both indices forget it
        set_phase('db-1', 'Succeeded')                  # no longer running: out of one index only
        assert wait_for(lambda: summary().get('running-pods') == ['no-app'] and summary()) == {
            'running-pods': ['no-app'],
            'apps': [{'app': 'db', 'pods': ['db-1']}, {'app': 'web', 'pods': ['web-2']}]}
        assert wait_for(lambda: (probed() or {}).get('indexed_pods') == {'labelled': 2, 'running': 1})
        assert not any(p['metadata'].get('finalizers') for p in pods(cluster))  # indexing holds no finalizers
    output = operator.output
    assert 'Indexing is complete: ' in output
    assert output.index('Indexing is complete: ') < output.index("Timer 'summarize' is invoked.")


def test_17_admission(cluster: Cluster) -> None:
    import kubernetes
    api = kubernetes.client.CustomObjectsApi(k8s(cluster))
    managed = 'auto.kopf.dev'

    def webhooks(kind: str) -> list[Obj]:
        return list((cluster.get('admissionregistration.k8s.io/v1', kind, managed) or {}).get('webhooks') or [])

    def create(name: str, field: str, labels: dict[str, str] | None = None) -> Obj:
        body = {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
                'metadata': {'name': name, 'labels': labels or {}}, 'spec': {'field': field}}
        created: Obj = api.create_namespaced_custom_object('kopf.dev', 'v1', 'default', 'kopfexamples', body)
        return created

    with runner('17-admission', cluster) as operator:
        assert operator.wait_ready(20)
        wait_for(lambda: all(w.get('rules') for w in webhooks('ValidatingWebhookConfiguration'))
                 and len(webhooks('ValidatingWebhookConfiguration')) == 2
                 and [w for w in webhooks('MutatingWebhookConfiguration') if w.get('rules')])
        validating = {w['name']: w for w in webhooks('ValidatingWebhookConfiguration')}
        assert set(validating) == {f'check-field.{managed}', f'check-status.{managed}'}
        assert validating[f'check-status.{managed}']['rules'][0]['resources'] == ['kopfexamples/status']
        [mutating] = webhooks('MutatingWebhookConfiguration')
        assert mutating['objectSelector'] == {'matchExpressions': [{'key': 'inject', 'operator': 'In',
                                                                    'values': ['yes']}]}
        assert mutating['clientConfig']['url'].startswith('https://127.0.0.1:')
        assert mutating['clientConfig']['caBundle']

        with pytest.raises(kubernetes.client.ApiException) as err:
            create('invalid', 'wrong')
        assert err.value.status == 422
        assert 'spec.field must not be "wrong".' in json.loads(err.value.body)['message']
        assert kex(cluster, 'invalid') is None

        plain = create('plain', 'doubtful')  # allowed, with a warning; not labelled: not mutated
        assert 'injected' not in plain['spec']
        labelled = create('labelled', 'value', {'inject': 'yes'})
        assert labelled['spec'] == {'field': 'value', 'injected': 'by the mutating webhook'}
        assert (kex(cluster, 'labelled') or {})['spec']['injected'] == 'by the mutating webhook'

        with pytest.raises(kubernetes.client.ApiException) as err:
            api.patch_namespaced_custom_object_status('kopf.dev', 'v1', 'default', 'kopfexamples', 'plain',
                                                      {'status': {'replicas': -1}})
        assert err.value.status == 422
        assert 'status.replicas must not be negative.' in json.loads(err.value.body)['message']
        api.patch_namespaced_custom_object_status('kopf.dev', 'v1', 'default', 'kopfexamples', 'plain',
                                                  {'status': {'replicas': 2}})
        assert status(cluster, 'plain') == {'replicas': 2}
    output = operator.output
    assert "Validated: field='doubtful'." in output and "Validated: field='value'." in output
    assert webhooks('ValidatingWebhookConfiguration') == []  # removed on exit (none is persistent)
    assert webhooks('MutatingWebhookConfiguration') == []


def test_18_metrics(cluster: Cluster) -> None:
    from prometheus_client.parser import text_string_to_metric_families
    url = f'http://127.0.0.1:{free_port()}/metrics'
    kex_ = 'kopfexamples.kopf.dev'

    def scraped() -> dict[tuple[str, frozenset[tuple[str, str]]], float] | None:
        try:  # the metrics server may not listen yet
            with urllib.request.urlopen(url, timeout=5) as response:
                text = response.read().decode()
        except OSError:
            return None
        found = {(s.name, frozenset(s.labels.items())): s.value
                 for family in text_string_to_metric_families(text) for s in family.samples}
        return found if found.get(('kopf_convergence_lag_seconds_count', frozenset({('resource', kex_)}))) else None

    with runner('18-metrics', cluster, '--metrics', url.removeprefix('http://').removesuffix('/metrics')) as operator:
        assert operator.wait_ready(20)
        cluster.apply(OBJ)
        assert wait_for(lambda: status(cluster).get('flaky')) == {'attempts': 2}
        found = wait_for(scraped, interval=0.1)

    def calls(handler: str, outcome: str) -> float | None:
        labels = frozenset({('resource', kex_), ('handler', handler), ('outcome', outcome)})
        return found.get(('kopf_handler_calls_total', labels))
    assert calls('create_fn', 'success') == 1
    assert calls('flaky', 'retry') == 1 and calls('flaky', 'success') == 1
    assert found[('kopf_handler_retries_total', frozenset({('resource', kex_), ('handler', 'flaky')}))] == 1
    lag = found[('kopf_convergence_lag_seconds_sum', frozenset({('resource', kex_)}))]
    assert lag >= 0.5  # the retry's delay is part of the lag
    assert 'Serving the metrics at http://127.0.0.1:' in operator.output
def test_19_builtin_kinds(cluster: Cluster, kubeconfig: pathlib.Path) -> None:
    with runner('19-builtin-kinds', cluster) as operator:
        assert operator.wait_ready(20)
        cluster.apply(OBJ)
        job = wait_for(lambda: (annotations(cluster.get('batch/v1', 'Job', 'kopf-example-1-job', 'default'))
                                .get('kopf.dev/selector') and cluster.get('batch/v1', 'Job', 'kopf-example-1-job',
                                                                          'default')), within=30)
        uid = job['metadata']['uid']
        assert annotations(job)['kopf.dev/selector'] == f'batch.kubernetes.io/controller-uid={uid}'
        owner = kex(cluster)
        assert owner is not None and job['metadata']['ownerReferences'][0]['uid'] == owner['metadata']['uid']
        for api_version, kind, name in [('v1', 'ServiceAccount', 'kopf-example-1-runner'),
                                        ('rbac.authorization.k8s.io/v1', 'Role', 'kopf-example-1-reader'),
                                        ('rbac.authorization.k8s.io/v1', 'RoleBinding', 'kopf-example-1-reader')]:
            child = cluster.get(api_version, kind, name, 'default')
            assert child is not None and child['metadata']['ownerReferences'][0]['name'] == 'kopf-example-1'
        wait_for(lambda: status(cluster).get('create_children'), within=30)
        assert status(cluster)['create_children'] == {'children': ['ServiceAccount', 'Role', 'RoleBinding', 'Job']}
    assert 'Created a service account, a role, a role binding and a job for kopf-example-1.' in operator.output
    assert "The server selects the job's pods by batch.kubernetes.io/controller-uid=" in operator.output


def _available(cluster: Cluster, name: str) -> Obj | None:
    conditions = ((kex(cluster, name) or {}).get('status') or {}).get('conditions') or []
    settled = conditions and conditions[0]['reason'] not in ('Pending', 'NewReplicaSetCreated', 'ReplicaSetUpdated')
    return conditions[0] if settled else None


def _kex(name: str, **spec: Any) -> Obj:
    return {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': name, 'namespace': 'default'},
            'spec': spec}


@pytest.mark.emulator_only(reason='Pods run only in the local cluster (envtest has no scheduler or kubelet)')
def test_22_workloads_available(cluster: Cluster, kubeconfig: pathlib.Path) -> None:
    with runner('22-workloads', cluster) as operator:
        assert operator.wait_ready(20)
        cluster.apply(_kex('web', image='nginx:1.27', replicas=3))
        condition = wait_for(lambda: _available(cluster, 'web'), within=30)
        deployment = cluster.get('apps/v1', 'Deployment', 'web', 'default')
    assert condition == {'type': 'Available', 'status': 'True', 'reason': 'MinimumReplicasAvailable'}
    assert deployment is not None and deployment['status']['availableReplicas'] == 3
    assert deployment['metadata']['ownerReferences'][0]['name'] == 'web'
    assert 'Created the deployment web of nginx:1.27.' in operator.output


@pytest.mark.emulator_only(reason='injects a crash loop with the local cluster\'s workload knobs')
def test_22_workloads_crash_loop(cluster: Cluster, kubeconfig: pathlib.Path) -> None:
    cluster.set_workloads(crashing_images=['*:broken'])  # type: ignore[union-attr]
    with runner('22-workloads', cluster) as operator:
        assert operator.wait_ready(20)
        cluster.apply(_kex('crashy', image='busybox:broken', replicas=1))
        condition = wait_for(lambda: _available(cluster, 'crashy'), within=30)
    assert condition == {'type': 'Available', 'status': 'False', 'reason': 'CrashLoopBackOff'}
    [pod_] = [p for p in cluster.list('v1', 'Pod', 'default') if p['metadata']['name'].startswith('crashy-')]
    state = pod_['status']['containerStatuses'][0]
    assert pod_['status']['phase'] == 'Running' and state['restartCount'] >= 1
    assert state['state']['waiting']['reason'] == 'CrashLoopBackOff'


@pytest.mark.emulator_only(reason='the example\'s own test starts its own LocalCluster')
def test_22_workloads_own_test() -> None:
    """The example's own test (the one in docs/local-cluster.md) passes, run by pytest as a user would run it."""
    args = [sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', str(EXAMPLES / '22-workloads')]
    result = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert '1 passed' in result.stdout


@pytest.mark.emulator_only(reason='the example\'s own test starts its own LocalCluster')
def test_23_cel_own_test() -> None:
    """The example's own test passes: CEL rules refuse a bad object, a changed immutable field, a bad status."""
    args = [sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', str(EXAMPLES / '23-cel')]
    result = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert '1 passed' in result.stdout


def test_99_all_at_once(cluster: Cluster, kubeconfig: pathlib.Path) -> None:
    with runner('99-all-at-once', cluster) as operator:
        assert operator.wait_ready(20)
        cluster.apply(OBJ)
        wait_for(lambda: LAST_HANDLED in annotations(kex(cluster)))
        obj = kex(cluster)
        assert obj is not None
        assert obj['metadata']['finalizers'] == ['kopf.zalando.org/KopfFinalizerMarker']
        assert obj['status']['create_1'] == {'job1-status': 100}
        child = obj['status']['create_2']['child']
        assert obj['status']['create_2'] == {'job2-status': 100, 'child': child}
        [pod_] = pods(cluster)
        assert pod_['metadata']['name'] == child and child.startswith('kopf-example-1-')
        assert pod_['metadata']['labels'] == {'somelabel': 'somevalue'}
        assert pod_['metadata']['ownerReferences'][0]['uid'] == obj['metadata']['uid']

        def job_events() -> dict[str, str]:  # Events are posted in the background: maybe after the last patch
            found = {e['reason']: e['message'] for e in cluster.list('v1', 'Event', 'default')}
            return found if {'Job1', 'Job2'} <= set(found) else {}
        reasons = wait_for(job_events)
        assert reasons['Job1'] == 'The first job has started.'
        assert reasons['Job2'] == f'The child pod {child} is created.'
        patch_kex(cluster, {'spec': {'field': 'changed'}})
        wait_for(lambda: '"changed"' in annotations(kex(cluster))[LAST_HANDLED])
        delete_kex(cluster)
        wait_for(lambda: kex(cluster) is None and not pods(cluster))
    output = operator.output
    assert 'The operator is configured.' in output
    assert "Handler 'create_2' failed temporarily: The second job is not ready yet." in output
    assert "spec.field: None -> 'value'" in output and "spec.field: 'value' -> 'changed'" in output
    assert 'Updated: 1 change(s).' in output
    assert 'Deleting kopf-example-1' in output
    assert f'A labelled pod {child}: ' in output
    assert 'The operator is exiting; it has created 1 object(s).' in output


def test_20_leases(cluster: Cluster) -> None:
    with runner('20-leases', cluster, '--lease', 'example-operator', '--lease-namespace', 'default') as operator:
        assert operator.wait_ready(20)
        lease = wait_for(lambda: cluster.get('coordination.k8s.io/v1', 'Lease', 'example-operator', 'default'))
        assert lease['spec']['leaseDurationSeconds'] == 6
        cluster.apply(OBJ)
        assert wait_for(lambda: status(cluster)) == {
            'create_fn': {'message': 'kopf-example-1 is handled by the Lease holder'}}
    lease = cluster.get('coordination.k8s.io/v1', 'Lease', 'example-operator', 'default') or {}
    assert not lease['spec'].get('holderIdentity')  # released on exit
    assert 'The lease default/example-operator is released.' in operator.output


def test_21_shards(cluster: Cluster) -> None:
    args = ('--lease', 'example-operator', '--lease-namespace', 'default', '--shards', '3')
    with runner('21-shards', cluster, *args) as operator:
        assert operator.wait_ready(20)
        wait_for(lambda: all((cluster.get('coordination.k8s.io/v1', 'Lease', f'example-operator-{i}', 'default')
                              or {}).get('spec', {}).get('holderIdentity') for i in range(3)))  # alone: all 3
        cluster.apply(OBJ)
        assert wait_for(lambda: status(cluster)) == {
            'create_fn': {'message': 'kopf-example-1 is handled by this replica'}}
    for i in range(3):
        lease = cluster.get('coordination.k8s.io/v1', 'Lease', f'example-operator-{i}', 'default') or {}
        assert not lease['spec'].get('holderIdentity')  # released on exit
    assert "the shards held: [0, 1, 2] of 3." in operator.output


TYPED = EXAMPLES / '24-typed'


def test_24_typed_crds_yaml_is_what_kopf_crd_prints() -> None:
    """The checked-in CRD has no drift from the models (a fresh interpreter: the module is named `models`)."""
    proc = subprocess.run([sys.executable, '-m', 'kopf', 'crd', str(TYPED / 'models.py')],
                          capture_output=True, text=True, check=True)
    assert proc.stdout == (TYPED / 'crds.yaml').read_text()


def _database(cluster: Cluster, name: str = 'db1', api_version: str = 'typed.kopf.dev/v2') -> Obj:
    return cluster.get(api_version, 'Database', name, 'default') or {}


def test_24_typed(cluster: Cluster, request: pytest.FixtureRequest) -> None:
    spec = {'engine': 'mysql', 'users': [{'name': 'alice', 'role': 'owner'}],
            'scaling': {'minReplicas': 2, 'maxReplicas': 4}}
    with runner('24-typed', cluster, '--install-crds') as operator:
        assert operator.wait_ready(20)
        cluster.apply({'apiVersion': 'typed.kopf.dev/v2', 'kind': 'Database',
                       'metadata': {'name': 'db1', 'namespace': 'default'}, 'spec': spec})
        wait_for(lambda: (_database(cluster).get('status') or {}).get('phase') == 'Ready')
        assert _database(cluster)['status'] == {'phase': 'Ready', 'replicas': 2}
        import kubernetes  # the same object in the deprecated version, as a client reads it (over HTTP)
        v1 = kubernetes.client.CustomObjectsApi(k8s(cluster)).get_namespaced_custom_object(
            'typed.kopf.dev', 'v1', 'default', 'databases', 'db1')
        assert v1['apiVersion'] == 'typed.kopf.dev/v1' and v1['spec']['users'] == [{'name': 'alice', 'role': 'owner'}]
        if backends.is_envtest(cluster):   # v2's field pruned when read as v1 (the local cluster keeps it so far)
            assert 'backups' not in v1['spec']
        bad = {'apiVersion': 'typed.kopf.dev/v2', 'kind': 'Database', 'metadata': {'name': 'db2'},
               'spec': {'scaling': {'minReplicas': 5, 'maxReplicas': 2}}}
        if backends.is_envtest(cluster):   # the CEL rule: the real server refuses the object
            with pytest.raises(Exception, match='minReplicas must not exceed maxReplicas'):
                cluster.apply(bad)
    output = operator.output
    assert 'Created the CRD databases.typed.kopf.dev (versions: v2, v1).' in output
    assert 'Creating a mysql database db1 with 2 replicas, alice (owner).' in output
    assert 'Scaling to 2 replicas (between 2 and 4).' in output
