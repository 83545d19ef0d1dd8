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

from kopf._shared import resourcetable
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


# Kinds served at a second version: their samples go through the typed API of that version too.
OTHER_VERSIONS: list[dict[str, Any]] = [
    {'apiVersion': 'autoscaling/v1', 'kind': 'HorizontalPodAutoscaler', 'metadata': {'name': 'sample-hpa-v1'},
     'spec': {'scaleTargetRef': {'apiVersion': 'apps/v1', 'kind': 'Deployment', 'name': 'sample-deployment'},
              'minReplicas': 1, 'maxReplicas': 3, 'targetCPUUtilizationPercentage': 80}},
]
# Kinds that are not stored: only created (the reviews, a Pod's binding) or only read (ComponentStatus).
UNSTORED = {('v1', 'Binding'), ('v1', 'ComponentStatus'), ('authentication.k8s.io/v1', 'SelfSubjectReview'),
            ('authentication.k8s.io/v1', 'TokenReview'), ('authorization.k8s.io/v1', 'LocalSubjectAccessReview'),
            ('authorization.k8s.io/v1', 'SelfSubjectAccessReview'),
            ('authorization.k8s.io/v1', 'SelfSubjectRulesReview'), ('authorization.k8s.io/v1', 'SubjectAccessReview')}


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


def test_the_samples_cover_every_kind() -> None:
    """One object of every kind goes through the clients below: a sample of each stored kind at each version."""
    sampled = {(s['apiVersion'], s['kind']) for s in SAMPLES + OTHER_VERSIONS}
    served = {(r.api_version, r.kind) for r in resourcetable.BUILTINS}
    assert served - sampled == UNSTORED
    assert sampled <= served
    for resource in resourcetable.BUILTINS:
        stored = {'create', 'get', 'delete'} <= set(resource.verbs)
        assert stored is ((resource.api_version, resource.kind) not in UNSTORED), resource


def _legacy(entry: dict[str, Any], group: str, version: str) -> tuple[Any, ...]:
    """A legacy discovery entry (`/api/v1`, `/apis/GROUP/VERSION`) as a row: what kubectl reads from it."""
    return (entry['name'], entry.get('singularName', ''), entry['namespaced'], entry.get('group', group),
            entry.get('version', version), entry['kind'], tuple(sorted(entry['verbs'])),
            tuple(entry.get('shortNames', ())),
            tuple(entry.get('categories', ())))


def _table_legacy(group: str, version: str) -> set[tuple[Any, ...]]:
    rows = set()
    for r in resourcetable.BUILTINS:
        if (r.group, r.version) == (group, version):
            rows.add((r.plural, r.singular, r.namespaced, group, version, r.kind, r.verbs, r.short_names,
                      r.categories))
            rows |= {(f'{r.plural}/{sub.name}', '', r.namespaced, sub.group, sub.version, sub.kind, sub.verbs, (), ())
                     for sub in r.listed_subresources}
    return rows


@pytest.mark.parametrize('group, version', sorted({(r.group, r.version) for r in resourcetable.BUILTINS}),
                         ids=lambda value: value or 'core')
def test_legacy_discovery_as_the_real_server(raw: Http, group: str, version: str) -> None:
    """Aggregated discovery is what `kubectl api-resources` reads; clients of the older kind read these lists."""
    status, _, listed = raw.request('GET', f'/apis/{group}/{version}' if group else f'/api/{version}')
    assert status == 200 and listed['kind'] == 'APIResourceList' and listed['groupVersion'] == (
        f'{group}/{version}' if group else version)
    assert {_legacy(entry, group, version) for entry in listed['resources']} == _table_legacy(group, version)


AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'


def test_aggregated_discovery_as_the_real_server(raw: Http) -> None:
    """`/api` and `/apis` as `APIGroupDiscoveryList`: every group, version, resource and subresource of the table."""
    groups = {group['name'] for group in resourcetable.data()['groups']}
    listed: set[tuple[Any, ...]] = set()
    for path in ('/api', '/apis'):
        status, _, answer = raw.request('GET', path, headers={'Accept': AGGREGATED})
        assert status == 200 and answer['kind'] == 'APIGroupDiscoveryList', answer
        for item in answer['items']:
            group = item['metadata'].get('name', '')
            if group not in groups:   # the suite's CRDs
                continue
            for served in item['versions']:
                version = served['version']
                for entry in served['resources']:
                    listed.add((entry['resource'], entry.get('singularResource', ''), entry['scope'] == 'Namespaced',
                                group, version, entry['responseKind']['kind'], tuple(sorted(entry['verbs'])),
                                tuple(entry.get('shortNames', ())), tuple(entry.get('categories', ()))))
                    for sub in entry.get('subresources', []):
                        kind = sub.get('responseKind') or {}
                        same = not kind.get('group') and not kind.get('version')
                        listed.add((f'{entry["resource"]}/{sub["subresource"]}', '', entry['scope'] == 'Namespaced',
                                    group if same else kind.get('group', ''), version if same else kind['version'],
                                    kind.get('kind', ''), tuple(sorted(sub.get('verbs', []))), (), ()))
    expected = set().union(*(_table_legacy(g, v) for g, v in {(r.group, r.version) for r in resourcetable.BUILTINS}))
    assert listed == expected


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


@pytest.mark.parametrize('sample', SAMPLES + OTHER_VERSIONS, ids=_id)
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


@pytest.mark.parametrize('sample', SAMPLES + OTHER_VERSIONS, ids=_id)
def test_create_from_yaml(api_client: Any, sample: dict[str, Any], cleanup: list[dict[str, Any]]) -> None:
    from kubernetes import utils
    cleanup.append(sample)
    [created] = utils.create_from_yaml(api_client, yaml_objects=[sample], namespace=NAMESPACE)
    [obj] = created if isinstance(created, list) else [created]
    assert obj.metadata.name == sample['metadata']['name']


ATTRIBUTES = {'verb': 'list', 'resource': 'pods', 'namespace': 'default'}
REVIEWS: list[tuple[dict[str, Any], str]] = [   # (the body, what its answer's status must have)
    ({'apiVersion': 'authorization.k8s.io/v1', 'kind': 'SelfSubjectAccessReview',
      'spec': {'resourceAttributes': ATTRIBUTES}}, 'allowed'),
    ({'apiVersion': 'authorization.k8s.io/v1', 'kind': 'SubjectAccessReview',
      'spec': {'user': 'someone', 'resourceAttributes': ATTRIBUTES}}, 'allowed'),
    ({'apiVersion': 'authorization.k8s.io/v1', 'kind': 'LocalSubjectAccessReview',
      'metadata': {'namespace': NAMESPACE}, 'spec': {'user': 'someone', 'resourceAttributes': ATTRIBUTES}}, 'allowed'),
    ({'apiVersion': 'authorization.k8s.io/v1', 'kind': 'SelfSubjectRulesReview', 'spec': {'namespace': NAMESPACE}},
     'resource_rules'),
    ({'apiVersion': 'authentication.k8s.io/v1', 'kind': 'TokenReview', 'spec': {'token': 'no-such-token'}}, 'error'),
    ({'apiVersion': 'authentication.k8s.io/v1', 'kind': 'SelfSubjectReview'}, 'user_info'),
]


@pytest.mark.parametrize('body, answered', REVIEWS, ids=[body['kind'] for body, _ in REVIEWS])
def test_reviews_through_the_typed_api_create_from_yaml_and_kubectl(api_client: Any, kubectl: Kubectl,
                                                                     body: dict[str, Any], answered: str) -> None:
    """Create-only kinds: answered with their status filled in, and never stored (nothing to read or delete)."""
    from kubernetes import utils
    api = _typed_api(api_client, body['apiVersion'])
    kind = _snake(body['kind'])
    namespaced = 'namespace' in body.get('metadata', {})
    create = getattr(api, f'create_{"namespaced_" if namespaced else ""}{kind}')
    review = create(NAMESPACE, body) if namespaced else create(body)
    assert review.kind == body['kind'] and getattr(review.status, answered) is not None
    [created] = utils.create_from_yaml(api_client, yaml_objects=[{'metadata': {}, **body}], namespace=NAMESPACE)
    [again] = created if isinstance(created, list) else [created]
    assert again.kind == body['kind'] and getattr(again.status, answered) is not None
    assert not hasattr(api, f'read_{kind}') and not hasattr(api, f'delete_{kind}')
    created_by_kubectl = kubectl('create', '-f', '-', '-o', 'json', input=json.dumps(body))
    assert created_by_kubectl.returncode == 0, created_by_kubectl.stderr
    assert json.loads(created_by_kubectl.stdout)['status']


def test_binding_and_component_statuses_through_the_typed_api(core: Any, cluster: Cluster) -> None:
    cluster.apply(_pod('bound-by-client'))
    try:
        binding = {'apiVersion': 'v1', 'kind': 'Binding', 'metadata': {'name': 'bound-by-client'},
                   'target': {'apiVersion': 'v1', 'kind': 'Node', 'name': 'node-1'}}
        # The client cannot read its own answer (a Status, not a Binding: kubernetes-client/python#825).
        answer = json.loads(core.create_namespaced_binding(NAMESPACE, binding, _preload_content=False).data)
        assert (answer['kind'], answer['status']) == ('Status', 'Success')
        assert core.read_namespaced_pod('bound-by-client', NAMESPACE).spec.node_name == 'node-1'
    finally:
        core.delete_namespaced_pod('bound-by-client', NAMESPACE, grace_period_seconds=0)
    statuses = core.list_component_status()   # deprecated since 1.19, still served
    assert statuses.kind == 'ComponentStatusList'
    for item in statuses.items:
        assert core.read_component_status(item.metadata.name).metadata.name == item.metadata.name


def _scale_samples() -> list[dict[str, Any]]:
    return [s for s in SAMPLES if 'scale' in _resource(s).subresources]


def test_every_scalable_kind_is_sampled() -> None:
    assert {s['kind'] for s in _scale_samples()} == {'Deployment', 'ReplicaSet', 'StatefulSet',
                                                     'ReplicationController'}


@pytest.mark.parametrize('sample', _scale_samples(), ids=_id)
def test_scale_subresource_of_every_scalable_kind(api_client: Any, kubectl: Kubectl, sample: dict[str, Any],
                                                  cleanup: list[dict[str, Any]]) -> None:
    resource = _resource(sample)
    api = _typed_api(api_client, sample['apiVersion'])
    kind, name = _snake(sample['kind']), sample['metadata']['name']
    cleanup.append(sample)
    getattr(api, f'create_namespaced_{kind}')(NAMESPACE, sample)
    scaled = getattr(api, f'patch_namespaced_{kind}_scale')(name, NAMESPACE, {'spec': {'replicas': 2}})
    assert (scaled.kind, scaled.api_version, scaled.spec.replicas) == ('Scale', 'autoscaling/v1', 2)
    assert getattr(api, f'read_namespaced_{kind}')(name, NAMESPACE).spec.replicas == 2
    read = getattr(api, f'read_namespaced_{kind}_scale')(name, NAMESPACE)
    assert read.spec.replicas == 2 and read.metadata.name == name
    result = kubectl('scale', f'{resource.plural}{"." + resource.group if resource.group else ""}', name,
                     '--replicas=0')
    assert (result.returncode, result.stdout.strip()) == (0, f'{_typed_name(resource)}/{name} scaled'), result.stderr
    assert getattr(api, f'read_namespaced_{kind}')(name, NAMESPACE).spec.replicas == 0


def _status_samples() -> list[dict[str, Any]]:
    return [s for s in SAMPLES + OTHER_VERSIONS if 'status' in _resource(s).subresources]


@pytest.mark.parametrize('sample', _status_samples(), ids=_id)
def test_status_subresource_of_every_kind_that_has_one(api_client: Any, sample: dict[str, Any],
                                                       cleanup: list[dict[str, Any]]) -> None:
    resource = _resource(sample)
    api = _typed_api(api_client, sample['apiVersion'])
    kind, name = _snake(sample['kind']), sample['metadata']['name']
    scope = 'namespaced_' if resource.namespaced else ''
    where = {'namespace': NAMESPACE} if resource.namespaced else {}
    cleanup.append(sample)
    created = getattr(api, f'create_{scope}{kind}')(body=sample, **where)
    read = json.loads(getattr(api, f'read_{scope}{kind}_status')(name=name, **where, _preload_content=False).data)
    assert (read['kind'], read['metadata']['uid']) == (sample['kind'], created.metadata.uid)
    body = {'status': read['status']} if read.get('status') else {}   # as read: the client's models require fields
    patched = getattr(api, f'patch_{scope}{kind}_status')(name=name, body=body, **where)
    assert patched.metadata.uid == created.metadata.uid


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
    got = kubectl('get', what, name, '-o', 'wide')   # the wide table starts with the plain one's columns
    assert got.returncode == 0, got.stderr
    first = resource.table_columns[0]['name']   # Name, but for Events (Last Seen)
    assert got.stdout.splitlines()[0].startswith(first.upper()), got.stdout
    assert got.stdout.splitlines()[1].startswith(name) or first != 'Name', got.stdout
    if kubectl.minor() >= NEWER_THAN_KUBECTL.get(sample['kind'], 0):
        described = kubectl('describe', what, name)
        assert described.returncode == 0, described.stderr
        assert name in described.stdout
    deleted = kubectl('delete', what, name, '--wait=false')
    assert deleted.returncode == 0, deleted.stderr
    assert f'"{name}" deleted' in deleted.stdout


@pytest.mark.parametrize('sample', [s for s in SAMPLES if s['kind'] in NEWER_THAN_KUBECTL], ids=_id)
def test_describe_newer_kinds_with_a_kubectl_of_the_servers_version(cluster: Cluster, sample: dict[str, Any],
                                                                    tmp_path: pathlib.Path,
                                                                    cleanup: list[dict[str, Any]]) -> None:
    """The kinds the machine's kubectl cannot describe, described by the kubectl built with the envtest binaries."""
    from kopf._kits import envassets, envtest
    try:
        binary = envassets.binary(envassets.find_assets(), 'kubectl')
    except envtest.EnvtestError as exc:   # no envtest binaries on this machine
        pytest.skip(f'no kubectl of the server\'s version: {exc}')
    kubectl = Kubectl(str(binary), pathlib.Path(cluster.kubeconfig), tmp_path / 'cache')
    if kubectl.minor() < NEWER_THAN_KUBECTL[sample['kind']]:
        pytest.skip(f'{binary} is older than 1.{NEWER_THAN_KUBECTL[sample["kind"]]}')
    resource = _resource(sample)
    cleanup.append(sample)
    applied = kubectl('apply', '-f', '-', input=json.dumps(sample))
    assert applied.returncode == 0, applied.stderr
    described = kubectl('describe', f'{resource.plural}.{resource.group}', sample['metadata']['name'])
    assert described.returncode == 0, described.stderr
    assert re.search(rf'^Name:\s+{re.escape(sample["metadata"]["name"])}$', described.stdout, re.M), described.stdout


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


def _container() -> dict[str, Any]:
    return {'name': 'main', 'image': 'busybox:1.36'}


def test_defaults_that_clients_read_back(raw: Http) -> None:
    """A Job's selector and labels, a StatefulSet's podManagementPolicy, a Service's clusterIP and port protocol."""
    pod_spec = {'restartPolicy': 'Never', 'containers': [_container()]}
    made = [('/apis/batch/v1/namespaces/default/jobs', 'defaulted', {
                'apiVersion': 'batch/v1', 'kind': 'Job', 'metadata': {'name': 'defaulted'},
                'spec': {'suspend': True, 'template': {'spec': pod_spec}}}),
            ('/apis/apps/v1/namespaces/default/statefulsets', 'defaulted', {
                'apiVersion': 'apps/v1', 'kind': 'StatefulSet', 'metadata': {'name': 'defaulted'},
                'spec': {'replicas': 0, 'selector': {'matchLabels': {'app': 'd'}}, 'template': {
                    'metadata': {'labels': {'app': 'd'}}, 'spec': {'containers': [_container()]}}}}),
            ('/api/v1/namespaces/default/services', 'defaulted', {
                'apiVersion': 'v1', 'kind': 'Service', 'metadata': {'name': 'defaulted'},
                'spec': {'selector': {'app': 'd'}, 'ports': [{'port': 80}]}})]
    try:
        answers = []
        for path, _, body in made:
            status, _, answer = raw.request('POST', path, body)
            assert status == 201, answer
            answers.append(answer)
        job, sts, svc = answers
        uid = job['metadata']['uid']
        assert job['spec']['selector'] == {'matchLabels': {'batch.kubernetes.io/controller-uid': uid}}
        assert job['spec']['template']['metadata']['labels'] == {
            'batch.kubernetes.io/controller-uid': uid, 'batch.kubernetes.io/job-name': 'defaulted',
            'controller-uid': uid, 'job-name': 'defaulted'}
        assert job['metadata']['labels'] == job['spec']['template']['metadata']['labels']
        assert sts['spec']['podManagementPolicy'] == 'OrderedReady'
        assert svc['spec']['clusterIP'] and svc['spec']['clusterIPs'] == [svc['spec']['clusterIP']]
        assert svc['spec']['ports'] == [{'port': 80, 'protocol': 'TCP', 'targetPort': 80}]
    finally:
        for path, name, _ in made:
            raw.request('DELETE', f'{path}/{name}?propagationPolicy=Background')


def test_immutable_fields_that_users_trip_over(raw: Http) -> None:
    """A Job's template and a Service's clusterIP: a 422 naming the field, as a real server's."""
    jobs, services = '/apis/batch/v1/namespaces/default/jobs', '/api/v1/namespaces/default/services'
    job = {'apiVersion': 'batch/v1', 'kind': 'Job', 'metadata': {'name': 'immutable'},
           'spec': {'suspend': True, 'template': {'spec': {'restartPolicy': 'Never', 'containers': [_container()]}}}}
    svc = {'apiVersion': 'v1', 'kind': 'Service', 'metadata': {'name': 'immutable'}, 'spec': {'ports': [{'port': 80}]}}
    try:
        assert raw.request('POST', jobs, job)[0] == 201
        status, _, svc_made = raw.request('POST', services, svc)
        assert status == 201, svc_made
        image = {'spec': {'template': {'spec': {'containers': [{**_container(), 'image': 'busybox:1.37'}]}}}}
        status, _, answer = raw.request('PATCH', f'{jobs}/immutable', image, 'application/strategic-merge-patch+json')
        assert (status, answer['reason']) == (422, 'Invalid'), answer
        assert 'spec.template' in [cause['field'] for cause in answer['details']['causes']]
        assert answer['message'].startswith('Job.batch "immutable" is invalid: spec.template: Invalid value: ')
        assert answer['message'].endswith('field is immutable')
        other = '10.96.0.' + ('11' if svc_made['spec']['clusterIP'] != '10.96.0.11' else '12')
        status, _, answer = raw.request('PATCH', f'{services}/immutable', {'spec': {'clusterIP': other}},
                                        'application/merge-patch+json')
        assert (status, answer['reason']) == (422, 'Invalid'), answer
        [cause] = answer['details']['causes']
        assert (cause['field'], cause['reason']) == ('spec.clusterIPs[0]', 'FieldValueInvalid')
        assert cause['message'] == f'Invalid value: ["{other}"]: may not change once set'
    finally:
        raw.request('DELETE', f'{jobs}/immutable?propagationPolicy=Background')
        raw.request('DELETE', f'{services}/immutable')


@pytest.mark.emulator_only(reason='what the emulator does not serve (docs/local-cluster.md#what-is-not-emulated)')
def test_listed_but_unserved_subresources_answer_404(raw: Http, cluster: Cluster, kubectl: Kubectl,
                                                     cleanup: list[dict[str, Any]]) -> None:
    [csr] = [s for s in SAMPLES if s['kind'] == 'CertificateSigningRequest']
    cleanup.extend([_pod('unserved'), csr])
    cluster.apply(_pod('unserved'), csr)
    objects = {('', 'pods'): '/api/v1/namespaces/default/pods/unserved',
               ('', 'serviceaccounts'): '/api/v1/namespaces/default/serviceaccounts/default',
               ('', 'services'): '/api/v1/namespaces/default/services/kubernetes',
               ('certificates.k8s.io', 'certificatesigningrequests'):
                   f'/apis/certificates.k8s.io/v1/certificatesigningrequests/{csr["metadata"]["name"]}'}
    unserved = [(r, sub) for r in resourcetable.BUILTINS if r.key in objects
                for sub in r.listed_subresources if sub.name not in resourcetable.SERVED_SUBRESOURCES]
    assert {f'{r.plural}/{sub.name}' for r, sub in unserved} >= {
        'pods/log', 'pods/exec', 'pods/resize', 'certificatesigningrequests/approval'}   # serviceaccounts/token: served
    for resource, sub in unserved:
        assert raw.request('GET', objects[resource.key])[0] == 200
        method = 'GET' if 'get' in sub.verbs else 'POST' if 'create' in sub.verbs else 'PUT'
        status, _, _ = raw.request(method, f'{objects[resource.key]}/{sub.name}', {} if method != 'GET' else None)
        assert status == 404, (resource.plural, sub.name, method)
    logs = kubectl('logs', 'unserved')
    assert logs.returncode != 0 and 'NotFound' in logs.stderr, logs.stderr
    top = kubectl('top', 'pods')
    assert top.returncode != 0 and 'Metrics API not available' in top.stderr, top.stderr
