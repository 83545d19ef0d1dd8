"""Every built-in API of a real 1.34 kube-apiserver, through real clients: kubectl and the `kubernetes` client.

The samples (`data/builtins.yaml`, one object of every kind that can be created and deleted) go
through the official client's typed APIs and `utils.create_from_yaml`, and through kubectl's
apply/get/describe/delete; `kubectl api-resources` must list what the committed resource table
(generated from a real server: `tools/generate_builtin_resources.py`) lists — on envtest, that
checks the table against the real server; on the emulator, the emulator against the table.
"""
import json
import pathlib
import re
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from kopf._cluster.apis import resourcetable
from tests import backends
from tests.backends import Cluster
from tests.fidelity.conftest import Http, Kubectl

SAMPLES: list[dict[str, Any]] = [doc for doc in yaml.safe_load_all(
    (pathlib.Path(__file__).parent / 'data' / 'builtins.yaml').read_text()) if doc]
NAMESPACE = 'default'
# The groups whose describers an older kubectl (the machine's 1.32) knows only in a pre-GA version: it
# reads e.g. `networking.k8s.io/v1beta1 ServiceCIDR`, which a 1.34 server no longer serves (real or not).
NEWER_THAN_KUBECTL = {'ServiceCIDR': 33, 'IPAddress': 33, 'VolumeAttributesClass': 34, 'DeviceClass': 34,
                      'ResourceClaim': 34, 'ResourceClaimTemplate': 34, 'ResourceSlice': 34}


def _id(sample: dict[str, Any]) -> str:
    return f'{sample["apiVersion"]}/{sample["kind"]}'


def _resource(sample: dict[str, Any]) -> resourcetable.Resource:
    group, _, version = sample['apiVersion'].rpartition('/')
    return next(r for r in resourcetable.BUILTINS if (r.group, r.version, r.kind) == (group, version, sample['kind']))


def _typed_name(resource: resourcetable.Resource) -> str:
    """How kubectl names objects of a kind: `deployment.apps`, `pod`."""
    return f'{resource.kind.lower()}{"." + resource.group if resource.group else ""}'


def _snake(kind: str) -> str:
    return re.sub(r'(?<=[a-z0-9])([A-Z])|(?<=[A-Z])([A-Z])(?=[a-z])', r'_\1\2', kind).lower()


def _typed_api(api_client: Any, api_version: str) -> Any:
    import kubernetes
    group, _, version = api_version.rpartition('/')
    prefix = ''.join(part.capitalize() for part in group.removesuffix('.k8s.io').split('.')) or 'Core'
    return getattr(kubernetes.client, f'{prefix}{version.capitalize()}Api')(api_client)


def _table_rows() -> set[tuple[str, ...]]:
    """`kubectl api-resources -o wide` as the committed table says it: the preferred version of each group."""
    preferred = {group['name']: group['versions'][0] for group in resourcetable.data()['groups']}
    rows = set()
    for r in resourcetable.BUILTINS:
        if preferred.get(r.group) == r.version:
            rows.add((r.plural, ','.join(r.short_names), r.api_version, str(r.namespaced).lower(), r.kind,
                      ','.join(r.verbs), ','.join(r.categories)))
    return rows


def _listed_rows(output: str) -> set[tuple[str, ...]]:
    lines = output.splitlines()
    header = lines[0]
    starts = [match.start() for match in re.finditer(r'\S+', header)]
    rows = set()
    for line in lines[1:]:
        cells = [line[start:end].strip() for start, end in zip(starts, [*starts[1:], None], strict=True)]
        rows.add(tuple(cells))
    return rows


def test_api_resources_as_the_real_server(kubectl: Kubectl) -> None:
    result = kubectl('api-resources', '-o', 'wide')
    assert result.returncode == 0, result.stderr
    listed = {row for row in _listed_rows(result.stdout) if not row[2].endswith('kopf.dev/v1')}   # the suite's CRDs
    assert listed == _table_rows()


@pytest.fixture()
def cleanup(kubectl: Kubectl) -> Iterator[list[dict[str, Any]]]:
    """Samples to delete after the test, whatever it did, and to wait for (finalizers may hold them a while)."""
    made: list[dict[str, Any]] = []
    yield made
    if made:
        manifest = yaml.safe_dump_all(made)
        result = kubectl('delete', '-f', '-', '--ignore-not-found', '--wait=true', '--timeout=60s', input=manifest,
                         timeout=90)
        assert result.returncode == 0, result.stderr


@pytest.mark.parametrize('sample', SAMPLES, ids=_id)
def test_typed_api_create_read_patch_delete(api_client: Any, sample: dict[str, Any],
                                            cleanup: list[dict[str, Any]]) -> None:
    import kubernetes
    resource = _resource(sample)
    api = _typed_api(api_client, sample['apiVersion'])
    kind, name = _snake(sample['kind']), sample['metadata']['name']
    scope = ('namespaced_' if resource.namespaced else '')
    where = {'namespace': NAMESPACE} if resource.namespaced else {}
    cleanup.append(sample)
    created = getattr(api, f'create_{scope}{kind}')(body=sample, **where)
    assert created.metadata.name == name and created.metadata.uid
    read = getattr(api, f'read_{scope}{kind}')(name=name, **where)
    assert read.metadata.uid == created.metadata.uid
    patched = getattr(api, f'patch_{scope}{kind}')(name=name, body={'metadata': {'labels': {'patched': 'yes'}}},
                                                   **where)
    assert patched.metadata.labels['patched'] == 'yes'
    assert int(patched.metadata.resource_version) > int(created.metadata.resource_version)
    # Raw: a real cluster's core Events lack eventTime, which the client's events.k8s.io model requires.
    listed = json.loads(getattr(api, f'list_{scope}{kind}')(**where, _preload_content=False).data)
    assert name in [item['metadata']['name'] for item in listed['items']]
    getattr(api, f'delete_{scope}{kind}')(name=name, **where)
    try:
        after = getattr(api, f'read_{scope}{kind}')(name=name, **where)
    except kubernetes.client.ApiException as exc:
        assert exc.status == 404
    else:   # kept a while by a finalizer (namespaces, CRDs, volumes) or by orphaning (Jobs)
        assert after.metadata.deletion_timestamp is not None


@pytest.mark.parametrize('sample', SAMPLES, ids=_id)
def test_create_from_yaml(api_client: Any, sample: dict[str, Any], cleanup: list[dict[str, Any]]) -> None:
    from kubernetes import utils
    cleanup.append(sample)
    [created] = utils.create_from_yaml(api_client, yaml_objects=[sample], namespace=NAMESPACE)
    [obj] = created if isinstance(created, list) else [created]
    assert obj.metadata.name == sample['metadata']['name']


@pytest.mark.parametrize('sample', SAMPLES, ids=_id)
def test_kubectl_apply_get_describe_delete(kubectl: Kubectl, sample: dict[str, Any],
                                           cleanup: list[dict[str, Any]]) -> None:
    resource = _resource(sample)
    what = f'{resource.plural}.{resource.group}' if resource.group else resource.plural
    name = sample['metadata']['name']
    cleanup.append(sample)
    applied = kubectl('apply', '-f', '-', input=json.dumps(sample))
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.strip() == f'{_typed_name(resource)}/{name} created'
    again = kubectl('apply', '-f', '-', input=json.dumps({**sample, 'metadata': {**sample['metadata'],
                                                                               'labels': {'applied': 'again'}}}))
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip().endswith(f'/{name} configured'), again.stdout
    got = kubectl('get', what, name)
    assert got.returncode == 0, got.stderr
    first = resource.table_columns[0]['name']   # Name, but for Events (Last Seen)
    assert got.stdout.splitlines()[0].startswith(first.upper()), got.stdout
    assert got.stdout.splitlines()[1].startswith(name) or first != 'Name', got.stdout
    assert kubectl('get', what, name, '-o', 'wide').returncode == 0
    if kubectl.minor() >= NEWER_THAN_KUBECTL.get(sample['kind'], 0):
        described = kubectl('describe', what, name)
        assert described.returncode == 0, described.stderr
        assert name in described.stdout
    deleted = kubectl('delete', what, name, '--wait=false')
    assert deleted.returncode == 0, deleted.stderr
    assert f'"{name}" deleted' in deleted.stdout


def test_get_all_as_a_real_cluster(kubectl: Kubectl, cluster: Cluster, cleanup: list[dict[str, Any]]) -> None:
    everything = [s for s in SAMPLES if 'all' in _resource(s).categories]
    assert {s['kind'] for s in everything} == {'Pod', 'Service', 'ReplicationController', 'DaemonSet', 'Deployment',
                                               'ReplicaSet', 'StatefulSet', 'HorizontalPodAutoscaler', 'CronJob', 'Job'}
    cleanup.extend(everything)
    cluster.apply(*everything)
    result = kubectl('get', 'all', '-o', 'name')
    assert result.returncode == 0, result.stderr
    names = set(result.stdout.split())
    for sample in everything:
        resource = _resource(sample)
        assert f'{_typed_name(resource)}/{sample["metadata"]["name"]}' in names
    kinds = {name.split('/')[0] for name in names}
    allowed = {_typed_name(r) for r in resourcetable.BUILTINS if 'all' in r.categories}
    assert kinds <= allowed
    if backends.is_envtest(cluster):
        return
    printed = kubectl('get', 'all')
    assert printed.returncode == 0, printed.stderr
    headers = [line for line in printed.stdout.splitlines() if line.startswith('NAME')]
    assert len(headers) == len({s['kind'] for s in everything})


@pytest.mark.emulator_only(reason='runs the documented example, which starts its own LocalCluster')
def test_the_documented_example_runs() -> None:
    from tests import docs_blocks
    page = pathlib.Path(__file__).parent.parent.parent / 'docs' / 'local-cluster.md'
    [code] = [block for block in docs_blocks.blocks(page) if 'create_from_yaml' in block]
    exec(compile(code, 'docs/local-cluster.md', 'exec'), {'__name__': '__docs__'})


def _pod(name: str) -> dict[str, Any]:   # another scheduler's: the local cluster's does not bind it first
    return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': name},
            'spec': {'schedulerName': 'none', 'containers': [{'name': 'main', 'image': 'busybox:1.36'}]}}


def test_pod_binding_and_eviction(raw: Http, cluster: Cluster) -> None:
    pods = '/api/v1/namespaces/default/pods'
    cluster.apply(_pod('bound'), _pod('bound-too'), _pod('evicted'))
    try:
        binding = {'apiVersion': 'v1', 'kind': 'Binding', 'metadata': {'name': 'bound'},
                   'target': {'kind': 'Node', 'name': 'node-1'}}
        status, _, body = raw.request('POST', f'{pods}/bound/binding', binding)
        assert (status, body['status'], body['code']) == (201, 'Success', 201)
        assert raw.request('GET', f'{pods}/bound')[2]['spec']['nodeName'] == 'node-1'
        status, _, body = raw.request('POST', f'{pods}/bound/binding', {**binding, 'target': {'name': 'node-2'}})
        assert (status, body['reason']) == (409, 'Conflict')
        assert body['message'] == ('Operation cannot be fulfilled on pods/binding "bound": '
                                   'pod bound is already assigned to node "node-1"')
        other = {**binding, 'metadata': {'name': 'bound-too'}}
        assert raw.request('POST', '/api/v1/namespaces/default/bindings', other)[0] == 201
        assert raw.request('GET', f'{pods}/bound-too')[2]['spec']['nodeName'] == 'node-1'
        status, _, body = raw.request('POST', f'{pods}/evicted/binding', binding)
        assert (status, body['message']) == (400, 'name in URL does not match name in Binding object')
        eviction = {'apiVersion': 'policy/v1', 'kind': 'Eviction', 'metadata': {'name': 'evicted'}}
        status, _, body = raw.request('POST', f'{pods}/evicted/eviction', eviction)
        assert (status, body['status']) == (201, 'Success')
        assert raw.request('GET', f'{pods}/evicted')[0] == 404   # never scheduled: gone at once
        assert raw.request('POST', f'{pods}/nope/eviction', {**eviction, 'metadata': {'name': 'nope'}})[0] == 404
        assert raw.request('GET', f'{pods}/evicted/eviction')[0] == 405
    finally:
        for name in ('bound', 'bound-too', 'evicted'):
            raw.request('DELETE', f'{pods}/{name}?gracePeriodSeconds=0')


def test_evicting_through_the_official_client(core: Any, cluster: Cluster) -> None:
    cluster.apply(_pod('evicted-by-client'))
    core.create_namespaced_pod_eviction('evicted-by-client', 'default', {
        'apiVersion': 'policy/v1', 'kind': 'Eviction', 'metadata': {'name': 'evicted-by-client'}})
    assert cluster.get('v1', 'Pod', 'evicted-by-client', 'default') is None


@pytest.mark.parametrize('kind, name, field_error', [
    ('Service', '1-service', 'a DNS-1035 label must consist of lower case alphanumeric characters or \'-\''),
    ('ConfigMap', 'Bad_Name', 'a lowercase RFC 1123 subdomain must consist of'),
    ('Role', 'a%b', "may not contain '%'"),
])
def test_names_by_the_rules_of_each_kind(raw: Http, kind: str, name: str, field_error: str) -> None:
    resource = next(r for r in resourcetable.BUILTINS if r.kind == kind and r.version == 'v1')
    path = f'/apis/{resource.group}/v1' if resource.group else '/api/v1'
    body: dict[str, Any] = {'metadata': {'name': name}}
    if kind == 'Service':
        body['spec'] = {'ports': [{'port': 80}]}
    status, _, answer = raw.request('POST', f'{path}/namespaces/default/{resource.plural}', body)
    assert (status, answer['reason']) == (422, 'Invalid'), answer
    [cause] = [c for c in answer['details']['causes'] if c['field'] == 'metadata.name']
    assert field_error in cause['message']
    assert raw.request('POST', f'{path}/namespaces/default/{resource.plural}', {'metadata': {'name': 'system:x'}})[0] \
        == (201 if kind == 'Role' else 422)
    raw.request('DELETE', f'{path}/namespaces/default/{resource.plural}/system:x')


@pytest.mark.parametrize('what, args', [
    ('job.batch/made', ['job', 'made', '--image=busybox:1.36', '--', 'echo', 'hi']),
    ('cronjob.batch/made', ['cronjob', 'made', '--image=busybox:1.36', '--schedule=*/5 * * * *']),
    ('role.rbac.authorization.k8s.io/made', ['role', 'made', '--verb=get', '--resource=pods']),
    ('rolebinding.rbac.authorization.k8s.io/made', ['rolebinding', 'made', '--role=made', '--user=someone']),
    ('clusterrole.rbac.authorization.k8s.io/made', ['clusterrole', 'made', '--verb=get', '--resource=nodes']),
    ('clusterrolebinding.rbac.authorization.k8s.io/made', ['clusterrolebinding', 'made', '--clusterrole=view',
                                                           '--group=somebody']),
    ('poddisruptionbudget.policy/made', ['poddisruptionbudget', 'made', '--selector=app=x', '--min-available=1']),
    ('priorityclass.scheduling.k8s.io/made', ['priorityclass', 'made', '--value=100']),
    ('resourcequota/made', ['quota', 'made', '--hard=pods=2']),
    ('ingress.networking.k8s.io/made', ['ingress', 'made', '--rule=example.com/=svc:80']),
    ('service/made', ['service', 'nodeport', 'made', '--tcp=80:8080']),
])
def test_kubectl_create_subcommands(kubectl: Kubectl, what: str, args: list[str]) -> None:
    """These send protobuf bodies: the emulator decodes every kind (tables from kubectl's own descriptors)."""
    try:
        created = kubectl('create', *args)
        assert created.returncode == 0, created.stderr
        assert created.stdout.strip() == f'{what} created'
        got = kubectl('get', what, '-o', 'json')
        assert got.returncode == 0, got.stderr
        obj = json.loads(got.stdout)
        if what.startswith('ingress'):
            assert obj['spec']['rules'][0]['http']['paths'][0]['backend']['service']['name'] == 'svc'
        if what.startswith('job'):
            selector = obj['spec']['selector']['matchLabels']
            assert selector['batch.kubernetes.io/controller-uid'] == obj['metadata']['uid']
        if what.startswith('service'):
            assert 30000 <= obj['spec']['ports'][0]['nodePort'] <= 32767 and obj['spec']['clusterIP']
    finally:
        kubectl('delete', what, '--ignore-not-found', '--wait=false')


TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io'


@pytest.mark.parametrize('resource', [r for r in resourcetable.BUILTINS if 'list' in r.verbs],
                         ids=lambda r: f'{r.api_version}/{r.plural}')
def test_table_columns_as_the_real_server(raw: Http, resource: resourcetable.Resource) -> None:
    prefix = f'/apis/{resource.group}/{resource.version}' if resource.group else f'/api/{resource.version}'
    status, _, table = raw.request('GET', f'{prefix}/{resource.plural}', headers={'Accept': TABLE})
    assert status == 200
    assert table['columnDefinitions'] == list(resource.table_columns)


@pytest.mark.parametrize('sample', SAMPLES, ids=_id)
def test_table_cells_as_the_real_servers_printers(raw: Http, cluster: Cluster, sample: dict[str, Any],
                                                  cleanup: list[dict[str, Any]]) -> None:
    """On a real server: our printers' cells of the very object it stored are the cells its printers made."""
    if not backends.is_envtest(cluster):
        pytest.skip('compares with a real kube-apiserver (--backend=envtest)')
    from kopf._cluster.web import tables
    resource = _resource(sample)
    prefix = f'/apis/{resource.group}/{resource.version}' if resource.group else f'/api/{resource.version}'
    path = f'{prefix}{"/namespaces/" + NAMESPACE if resource.namespaced else ""}/{resource.plural}'
    cleanup.append(sample)
    status, _, stored = raw.request('POST', path, sample)
    assert status == 201, stored
    status, _, table = raw.request('GET', f'{path}/{sample["metadata"]["name"]}?includeObject=Object',
                                   headers={'Accept': TABLE})
    assert status == 200
    shown = table['rows'][0]['object']   # as its controllers left it by then (volumes bound, quotas counted)
    ours = [cell(shown) for _, cell in tables.columns(resource)]
    names = [column['name'] for column in table['columnDefinitions']]
    theirs = table['rows'][0]['cells'][:len(names)]   # IPAddresses' rows have an Age cell their columns lack
    timed = {'Age', 'Last Seen', 'First Seen', 'Duration', 'Created At'}
    assert len(names) == len(theirs) == len(ours), (names, theirs)
    assert {n: c for n, c in zip(names, ours, strict=True) if n not in timed} == \
        {n: c for n, c in zip(names, theirs, strict=True) if n not in timed}
