"""The kubectl binary (1.32) against the emulator: version, api-resources, CRDs until Established, create and
AlreadyExists, apply and patch types, deletion with and without finalizers, paging, field selectors, events,
protobuf creates, scale, tables, throttling retries, cascading deletion."""
import re
import time

import pytest
import yaml

from kopf.testing import LocalCluster
from tests import backends
from tests.backends import Cluster
from tests.fidelity.conftest import EXAMPLES, Http, Kubectl

KEX = '/apis/kopf.dev/v1/namespaces/default/kopfexamples'
# kubectl 1.32 (with the emulator) says the first, kubectl 1.34 (built with envtest's apiserver) the second.
DELETED = 'kopfexample.kopf.dev "{name}" deleted\nkopfexample.kopf.dev "{name}" deleted from default namespace'


def _requests(cluster: Cluster, since: int = 0) -> list[dict[str, str]]:
    """The emulator's request log (what kubectl sent); on envtest nothing (callers check `_logged` first)."""
    return [] if backends.is_envtest(cluster) else cluster.request_log()[since:]  # type: ignore[union-attr]


def _logged(cluster: Cluster) -> bool:
    """Whether the wire-level checks (the emulator's request log) can run: not on a real server."""
    return not backends.is_envtest(cluster)


def _await_watch(cluster: LocalCluster, name: str, timeout: float = 20) -> None:
    """Block until kubectl has opened a watch on the named object (robust against a slow kubectl start)."""
    if backends.is_envtest(cluster):  # no request log: give kubectl the time to open its watch
        time.sleep(3)
        return
    deadline = time.monotonic() + timeout
    while not any('watch=true' in r['query'] and f'metadata.name%3D{name}' in r['query']
                  for r in cluster.request_log()):
        assert time.monotonic() < deadline, f'kubectl never watched {name}'
        time.sleep(0.05)


def test_version(kubectl: Kubectl, raw: Http) -> None:
    result = kubectl('version')
    assert result.returncode == 0, result.stderr
    status, _, body = raw.request('GET', '/version')
    assert f'Server Version: {body["gitVersion"]}' in result.stdout  # the emulator's v1.31.0, or envtest's
    assert status == 200 and '+k3s' not in body['gitVersion']


def test_api_resources(kubectl: Kubectl) -> None:
    result = kubectl('api-resources')
    assert result.returncode == 0, result.stderr
    assert 'unable to retrieve' not in result.stderr
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines()[1:]}
    assert 'po' in rows['pods']
    assert 'kex' in rows['kopfexamples'][1].split(',')
    assert 'true' in rows['kopfexamples']


def test_crd_established(kubectl: Kubectl, tmp_path) -> None:  # type: ignore[no-untyped-def]
    crd = yaml.safe_load((EXAMPLES / 'crd.yaml').read_text())
    crd['metadata']['name'] = 'widgets.check3.kopf.dev'
    crd['spec'].update(group='check3.kopf.dev')
    crd['spec']['names'] = {'kind': 'Widget', 'plural': 'widgets', 'singular': 'widget', 'shortNames': ['wdg']}
    path = tmp_path / 'crd.yaml'
    path.write_text(yaml.safe_dump(crd))
    assert kubectl('create', '-f', str(path)).returncode == 0
    waited = kubectl('wait', '--for', 'condition=established', 'crd/widgets.check3.kopf.dev', '--timeout=5s')
    assert waited.returncode == 0, waited.stderr
    listed = kubectl('get', 'wdg')
    assert listed.returncode == 0, listed.stderr
    assert 'No resources found in default namespace.' in listed.stderr


def test_create_with_validation_then_already_exists(kubectl: Kubectl, cluster: LocalCluster) -> None:
    mark = len(_requests(cluster))
    created = kubectl('create', '-f', str(EXAMPLES / 'obj.yaml'))
    assert created.returncode == 0, created.stderr
    assert created.stdout.strip() == 'kopfexample.kopf.dev/kopf-example-1 created'
    openapi = [r for r in _requests(cluster, mark) if r['path'].startswith('/openapi/v3')]   # the index, the GV
    assert (openapi and all(r['code'] == 200 for r in openapi)) or not _logged(cluster)
    again = kubectl('create', '-f', str(EXAMPLES / 'obj.yaml'))
    assert again.returncode == 1
    path = EXAMPLES / 'obj.yaml'
    assert again.stderr.strip() == (f'Error from server (AlreadyExists): error when creating "{path}": '
                                    'kopfexamples.kopf.dev "kopf-example-1" already exists')


def test_create_strict_rejects_unknown_fields(kubectl: Kubectl) -> None:
    manifest = 'apiVersion: kopf.dev/v1\nkind: Strict\nmetadata: {name: junky}\nspec: {size: 1, junk: 2}\n'
    result = kubectl('create', '-f', '-', input=manifest)
    assert result.returncode == 1
    assert 'strict decoding error: unknown field "spec.junk"' in result.stderr
    relaxed = kubectl('create', '--validate=false', '-f', '-', input=manifest)
    assert relaxed.returncode == 0, relaxed.stderr


def test_apply_custom_resource(kubectl: Kubectl, cluster: LocalCluster) -> None:
    manifest = 'apiVersion: kopf.dev/v1\nkind: KopfExample\nmetadata: {name: applied}\nspec: {a: 1}\n'
    assert kubectl('apply', '-f', '-', input=manifest).stdout.strip() == 'kopfexample.kopf.dev/applied created'
    mark = len(_requests(cluster))
    result = kubectl('apply', '-f', '-', input=manifest.replace('a: 1', 'a: 2'))
    assert result.stdout.strip() == 'kopfexample.kopf.dev/applied configured'
    if _logged(cluster):
        patches = [r for r in _requests(cluster, mark) if r['method'] == 'PATCH']
        assert [p['contentType'] for p in patches] == ['application/merge-patch+json']
        assert 'fieldManager=kubectl-client-side-apply' in patches[0]['query']
    obj = cluster.get('kopf.dev/v1', 'KopfExample', 'applied', 'default')
    assert obj is not None and obj['spec'] == {'a': 2}
    assert 'kubectl.kubernetes.io/last-applied-configuration' in obj['metadata']['annotations']


def test_patch_custom_resource(kubectl: Kubectl, cluster: LocalCluster) -> None:
    cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': 'patched'}, 'spec': {}})
    mark = len(_requests(cluster))
    strategic = kubectl('patch', 'kex', 'patched', '-p', '{"spec":{"x":1}}')
    assert strategic.returncode == 1
    # kubectl 1.32 words it client-side; 1.20 printed `Error from server (UnsupportedMediaType): ...`.
    assert 'the body of the request was in an unknown format' in strategic.stderr
    assert [r['code'] for r in _requests(cluster, mark) if r['method'] == 'PATCH'] == [415] or not _logged(cluster)
    merged = kubectl('patch', 'kex', 'patched', '--type', 'merge', '-p', '{"spec":{"x":1}}')
    assert merged.stdout.strip() == 'kopfexample.kopf.dev/patched patched'
    obj = cluster.get('kopf.dev/v1', 'KopfExample', 'patched', 'default')
    assert obj is not None and obj['metadata']['generation'] == 2


def test_delete_with_finalizer(kubectl: Kubectl, cluster: LocalCluster, raw: Http) -> None:
    obj = cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'spec': {},
                         'metadata': {'name': 'held', 'finalizers': ['kopf.dev/hold']}})[0]
    watch = raw.watch(f'{KEX}?watch=true&resourceVersion={obj["metadata"]["resourceVersion"]}')
    try:
        result = kubectl('delete', 'kex', 'held', '--wait=false')
        assert result.returncode == 0, result.stderr
        event = watch.next()
    finally:
        watch.close()
    held = cluster.get('kopf.dev/v1', 'KopfExample', 'held', 'default')
    assert held is not None
    assert re.fullmatch(r'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ', held['metadata']['deletionTimestamp'])
    assert held['metadata']['deletionGracePeriodSeconds'] == 0
    assert held['metadata']['generation'] == obj['metadata']['generation'] + 1
    assert event is not None and event['type'] == 'MODIFIED'
    assert event['object']['metadata']['deletionTimestamp'] == held['metadata']['deletionTimestamp']


def test_delete_without_finalizers(kubectl: Kubectl, cluster: LocalCluster, raw: Http) -> None:
    cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': 'ex2'}, 'spec': {}})
    mark = len(_requests(cluster))
    started = time.monotonic()
    result = kubectl('delete', 'kex', 'ex2')
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() in DELETED.format(name='ex2').splitlines()
    assert time.monotonic() - started < 10
    if _logged(cluster):
        seen = _requests(cluster, mark)
        deletes = [r for r in seen if r['method'] == 'DELETE']
        assert deletes[0]['contentType'] == 'application/json' and deletes[0]['code'] == 200
        # kubectl 1.32 then GETs the object itself (1.20 listed with fieldSelector=metadata.name=ex2).
        after = seen[seen.index(deletes[0]) + 1:]
        assert any(r['path'].endswith('/ex2') or 'metadata.name' in r['query'] for r in after)
    obj = cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': 'ex3'}})[0]
    status, _, body = raw.request('DELETE', f'{KEX}/ex3', {'propagationPolicy': 'Background'})
    assert status == 200
    assert body == {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Success',
                    'details': {'name': 'ex3', 'group': 'kopf.dev', 'kind': 'kopfexamples',
                                'uid': obj['metadata']['uid']}}


def test_get_with_limit_500(kubectl: Kubectl, cluster: LocalCluster) -> None:
    for index in range(3):
        cluster.apply({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': f'listed-{index}'}})
    mark = len(_requests(cluster))
    result = kubectl('get', 'cm')
    assert result.returncode == 0, result.stderr
    assert all(f'listed-{index}' in result.stdout for index in range(3))
    lists = [r for r in _requests(cluster, mark) if r['path'].endswith('/configmaps')]
    assert not _logged(cluster) or 'limit=500' in lists[0]['query']


def test_events_by_field_selector_and_describe(kubectl: Kubectl, cluster: LocalCluster, raw: Http) -> None:
    obj = cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': 'ex'}})[0]
    event = {
        'metadata': {'namespace': 'default', 'generateName': 'kopf-event-'},
        'action': 'Action', 'type': 'Normal', 'reason': 'Logging', 'message': 'Hello from kopf.',
        'reportingComponent': 'kopf', 'reportingInstance': 'dev', 'source': {'component': 'kopf'},
        'involvedObject': {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'name': 'ex',
                           'uid': obj['metadata']['uid'], 'namespace': 'default'},
        'firstTimestamp': '2024-05-01T12:00:00.123456+00:00', 'lastTimestamp': '2024-05-01T12:00:00.123456+00:00',
        'eventTime': '2024-05-01T12:00:00.123456+00:00',
    }
    status, _, body = raw.request('POST', '/api/v1/namespaces/default/events', event)
    assert status == 201 and body['metadata']['name'].startswith('kopf-event-')
    listed = kubectl('get', 'events', '--field-selector', 'involvedObject.name=ex')
    assert listed.returncode == 0, listed.stderr
    assert body['metadata']['name'] in listed.stdout or 'Hello from kopf.' in listed.stdout
    described = kubectl('describe', 'kex', 'ex')
    assert described.returncode == 0, described.stderr
    events_part = described.stdout.split('Events:', 1)[1]
    assert 'Logging' in events_part and 'Hello from kopf.' in events_part




def test_apply_builtin_uses_strategic_merge(kubectl: Kubectl, cluster: LocalCluster) -> None:
    manifest = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm10}\ndata: {k: "1"}\n'
    assert kubectl('apply', '-f', '-', input=manifest).stdout.strip() == 'configmap/cm10 created'
    mark = len(_requests(cluster))
    result = kubectl('apply', '-f', '-', input=manifest.replace('"1"', '"2"'))
    assert result.stdout.strip() == 'configmap/cm10 configured'
    if _logged(cluster):
        patches = [r for r in _requests(cluster, mark) if r['method'] == 'PATCH']
        assert [p['contentType'] for p in patches] == ['application/strategic-merge-patch+json']
        assert 'fieldManager=kubectl-client-side-apply' in patches[0]['query']
    obj = cluster.get('v1', 'ConfigMap', 'cm10', 'default')
    assert obj is not None and obj['data'] == {'k': '2'}


def test_delete_waits_for_finalizer_removal(kubectl: Kubectl, cluster: LocalCluster) -> None:
    import subprocess
    cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
                   'metadata': {'name': 'slow', 'finalizers': ['kopf.dev/slow']}})
    proc = subprocess.Popen([*kubectl.base, 'delete', 'kex', 'slow'], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    _await_watch(cluster, 'slow')
    assert proc.poll() is None     # still waiting for the object to go
    cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
                   'metadata': {'name': 'slow', 'finalizers': None}})
    stdout, stderr = proc.communicate(timeout=10)
    assert proc.returncode == 0, stderr
    assert stdout.strip() in DELETED.format(name='slow').splitlines()
    if _logged(cluster):
        watches = [r for r in _requests(cluster) if 'watch=true' in r['query'] and 'slow' in r['query']]
        assert watches and 'fieldSelector=metadata.name%3Dslow' in watches[-1]['query']


def test_typed_creates_send_protobuf(kubectl: Kubectl, cluster: LocalCluster) -> None:
    mark = len(_requests(cluster))
    assert kubectl('create', 'namespace', 'proto').returncode == 0
    assert kubectl('-n', 'proto', 'create', 'configmap', 'pc', '--from-literal=a=b').returncode == 0
    assert kubectl('-n', 'proto', 'create', 'secret', 'generic', 'ps', '--from-literal=k=v').returncode == 0
    created = kubectl('-n', 'proto', 'create', 'deployment', 'pd', '--image=nginx', '--replicas=2', '--port=80')
    assert created.returncode == 0, created.stderr
    posts = [r for r in _requests(cluster, mark) if r['method'] == 'POST']
    assert not _logged(cluster) or {r['contentType'] for r in posts} == {'application/vnd.kubernetes.protobuf'}
    ns = cluster.get('v1', 'Namespace', 'proto')
    assert ns is not None and ns['status'] == {'phase': 'Active'}
    assert ns['metadata']['labels'] == {'kubernetes.io/metadata.name': 'proto'}
    cm = cluster.get('v1', 'ConfigMap', 'pc', 'proto')
    assert cm is not None and cm['data'] == {'a': 'b'}
    secret = cluster.get('v1', 'Secret', 'ps', 'proto')
    assert secret is not None and secret['data'] == {'k': 'dg=='} and secret['type'] == 'Opaque'
    deployment = cluster.get('apps/v1', 'Deployment', 'pd', 'proto')
    assert deployment is not None and deployment['spec']['replicas'] == 2
    container = deployment['spec']['template']['spec']['containers'][0]
    assert container['image'] == 'nginx' and container['ports'] == [{'containerPort': 80, 'protocol': 'TCP'}]
    assert deployment['spec']['strategy']['type'] == 'RollingUpdate'   # server-side defaults


def test_scale_subresource(kubectl: Kubectl, cluster: LocalCluster) -> None:
    assert kubectl('create', 'deployment', 'scaled', '--image=nginx').returncode == 0
    result = kubectl('scale', 'deployment', 'scaled', '--replicas=3')
    assert result.stdout.strip() == 'deployment.apps/scaled scaled', result.stderr
    deployment = cluster.get('apps/v1', 'Deployment', 'scaled', 'default')
    assert deployment is not None
    assert deployment['spec']['replicas'] == 3 and deployment['metadata']['generation'] == 2
    raw = kubectl('get', '--raw', '/apis/apps/v1/namespaces/default/deployments/scaled/scale')
    assert '"kind":"Scale"' in raw.stdout and '"replicas":3' in raw.stdout


def test_get_prints_tables_with_printer_columns(kubectl: Kubectl, cluster: LocalCluster) -> None:
    cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': 'tabled'},
                   'spec': {'duration': '7m'}, 'status': {}})
    result = kubectl('get', 'kex', 'tabled')
    assert result.returncode == 0, result.stderr
    header, row = result.stdout.splitlines()
    assert header.split() == ['NAME', 'DURATION', 'CHILDREN', 'MESSAGE']
    assert row.split() == ['tabled', '7m']
    namespaces = kubectl('get', 'ns', 'default').stdout.splitlines()
    assert namespaces[0].split() == ['NAME', 'STATUS', 'AGE'] and namespaces[1].split()[:2] == ['default', 'Active']
    assert kubectl('get', 'kex', 'tabled', '-o', 'name').stdout.strip() == 'kopfexample.kopf.dev/tabled'


def test_get_watch_prints_table_rows(kubectl: Kubectl, cluster: LocalCluster) -> None:
    import subprocess
    cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': 'watched'},
                   'spec': {'duration': '1m'}})
    proc = subprocess.Popen([*kubectl.base, 'get', 'kex', 'watched', '--watch'],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _await_watch(cluster, 'watched')
    cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': 'watched'},
                   'spec': {'duration': '2m'}})
    time.sleep(1.0)
    proc.terminate()
    stdout, _ = proc.communicate(timeout=10)
    lines = [line.split() for line in stdout.splitlines()]
    assert lines[0] == ['NAME', 'DURATION', 'CHILDREN', 'MESSAGE']
    assert ['watched', '1m'] in lines and ['watched', '2m'] in lines


@pytest.mark.emulator_only(reason="injects a 429 with the emulator's fault injection")
def test_kubectl_retries_throttling(kubectl: Kubectl, cluster: LocalCluster) -> None:
    cluster.throttle('GET', '/api/v1/namespaces/default/configmaps', count=1, retry_after=1)
    mark = len(_requests(cluster))
    started = time.monotonic()
    result = kubectl('get', 'cm')
    assert result.returncode == 0, result.stderr
    codes = [r['code'] for r in _requests(cluster, mark) if r['path'] == '/api/v1/namespaces/default/configmaps']
    assert codes == [429, 200]
    assert time.monotonic() - started >= 1.0


def test_cascading_deletion_policies(kubectl: Kubectl, cluster: LocalCluster) -> None:
    for name in ('fg-owner', 'or-owner'):
        owner = cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': name}})[0]
        ref = {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'name': name, 'uid': owner['metadata']['uid']}
        cluster.apply({'apiVersion': 'v1', 'kind': 'ConfigMap',
                       'metadata': {'name': f'{name}-child', 'ownerReferences': [ref]}})
    result = kubectl('delete', 'kex', 'fg-owner', '--cascade=foreground')
    assert result.returncode == 0, result.stderr
    assert cluster.get('v1', 'ConfigMap', 'fg-owner-child', 'default') is None
    assert cluster.get('kopf.dev/v1', 'KopfExample', 'fg-owner', 'default') is None
    result = kubectl('delete', 'kex', 'or-owner', '--cascade=orphan')
    assert result.returncode == 0, result.stderr
    assert cluster.get('kopf.dev/v1', 'KopfExample', 'or-owner', 'default') is None
    orphan = cluster.get('v1', 'ConfigMap', 'or-owner-child', 'default')
    assert orphan is not None and 'ownerReferences' not in orphan['metadata']
