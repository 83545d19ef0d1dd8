"""Every built-in kind of a real 1.34 server: the generated table, discovery, defaults, per-kind rules, Tables,
OpenAPI documents (pure functions over dicts; the fidelity suite drives the same through real clients)."""
import base64
import ipaddress
from typing import Any

import pytest

from kopf._cluster.apis.catalog import Catalog
from kopf._cluster.openapi import documents
from kopf._cluster.pipeline import kind_defaults, kindrules, metadata
from kopf._cluster.web import apidiscovery, printers
from kopf._shared import resourcetable

UID = '0f3a4bde-1c2d-4e5f-8a9b-0c1d2e3f4a5b'


def _resource(group: str, plural: str, version: str = 'v1') -> resourcetable.Resource:
    return next(r for r in resourcetable.BUILTINS if (r.group, r.version, r.plural) == (group, version, plural))


def test_the_table_is_every_resource_of_the_real_server() -> None:
    data = resourcetable.data()
    assert data['version']['gitVersion'] == 'v1.34.4'
    assert len(resourcetable.BUILTINS) == len(data['resources']) >= 60
    assert {(r.group, r.version) for r in resourcetable.BUILTINS} >= {
        ('', 'v1'), ('apps', 'v1'), ('batch', 'v1'), ('autoscaling', 'v1'), ('autoscaling', 'v2'), ('policy', 'v1'),
        ('networking.k8s.io', 'v1'), ('rbac.authorization.k8s.io', 'v1'), ('storage.k8s.io', 'v1'),
        ('coordination.k8s.io', 'v1'), ('discovery.k8s.io', 'v1'), ('events.k8s.io', 'v1'), ('node.k8s.io', 'v1'),
        ('scheduling.k8s.io', 'v1'), ('certificates.k8s.io', 'v1'), ('admissionregistration.k8s.io', 'v1'),
        ('apiregistration.k8s.io', 'v1'), ('flowcontrol.apiserver.k8s.io', 'v1'), ('authorization.k8s.io', 'v1')}


@pytest.mark.parametrize('group, plural, namespaced, short, categories, subresources', [
    ('', 'pods', True, ('po',), ('all',), ('binding', 'eviction', 'status')),
    ('', 'namespaces', False, ('ns',), (), ('finalize', 'status')),
    ('', 'replicationcontrollers', True, ('rc',), ('all',), ('scale', 'status')),
    ('apps', 'statefulsets', True, ('sts',), ('all',), ('scale', 'status')),
    ('batch', 'cronjobs', True, ('cj',), ('all',), ('status',)),
    ('rbac.authorization.k8s.io', 'clusterroles', False, (), (), ()),
    ('networking.k8s.io', 'networkpolicies', True, ('netpol',), (), ()),
])
def test_kinds_as_the_real_server_serves_them(group: str, plural: str, namespaced: bool, short: tuple[str, ...],
                                              categories: tuple[str, ...], subresources: tuple[str, ...]) -> None:
    resource = _resource(group, plural)
    assert (resource.namespaced, resource.short_names, resource.categories) == (namespaced, short, categories)
    assert tuple(sorted(resource.subresources)) == subresources
    assert resource.verbs == resourcetable.ALL_VERBS or plural == 'namespaces'


def test_review_kinds_are_create_only_and_unstored_kinds_read_only() -> None:
    assert _resource('authorization.k8s.io', 'selfsubjectaccessreviews').verbs == ('create',)
    assert _resource('', 'componentstatuses').verbs == ('get', 'list')
    assert _resource('', 'bindings').verbs == ('create',)


def test_behaviour_flags_from_the_real_server_and_the_overrides() -> None:
    assert _resource('batch', 'jobs').generation and not _resource('', 'configmaps').generation
    assert _resource('', 'services').returns_object_on_delete and not _resource('', 'secrets').returns_object_on_delete
    assert _resource('rbac.authorization.k8s.io', 'roles').name_rule == 'path'
    assert 'status.successful' in _resource('batch', 'jobs').selectable_fields()


def test_discovery_lists_subresources_as_the_real_server() -> None:
    entries = {e['name']: e for e in apidiscovery.resource_list(Catalog(), '', 'v1')['resources']}
    assert entries['pods/eviction'] == {'name': 'pods/eviction', 'singularName': '', 'namespaced': True,
                                        'kind': 'Eviction', 'verbs': ['create'], 'group': 'policy', 'version': 'v1'}
    assert entries['pods/log']['verbs'] == ['get'] and entries['serviceaccounts/token']['kind'] == 'TokenRequest'
    apps = {e['name']: e for e in apidiscovery.resource_list(Catalog(), 'apps', 'v1')['resources']}
    assert (apps['statefulsets/scale']['group'], apps['statefulsets/scale']['kind']) == ('autoscaling', 'Scale')
    assert Catalog().groups()['autoscaling'] == ['v2', 'v1']


def test_version_is_the_real_servers() -> None:
    info = apidiscovery.version_info()
    assert (info['major'], info['minor'], info['gitVersion']) == ('1', '34', 'v1.34.4')
    assert apidiscovery.version_info('v1.33.2')['minor'] == '33'


def _job(**spec: Any) -> dict[str, Any]:
    return {'apiVersion': 'batch/v1', 'kind': 'Job', 'metadata': {'name': 'j', 'uid': UID},
            'spec': {'template': {'spec': {'restartPolicy': 'Never', 'containers': [{'name': 'c', 'image': 'x:1'}]}},
                     **spec}}


def test_job_defaults_with_the_generated_selector_and_labels() -> None:
    job = _job()
    kind_defaults.apply(('batch', 'jobs'), job)
    spec = job['spec']
    assert spec['selector'] == {'matchLabels': {'batch.kubernetes.io/controller-uid': UID}}
    assert spec['template']['metadata']['labels'] == job['metadata']['labels'] == {
        'batch.kubernetes.io/controller-uid': UID, 'batch.kubernetes.io/job-name': 'j',
        'controller-uid': UID, 'job-name': 'j'}
    assert (spec['completions'], spec['parallelism'], spec['backoffLimit'], spec['completionMode']) == (
        1, 1, 6, 'NonIndexed')
    assert spec['template']['spec']['restartPolicy'] == 'Never'


def test_job_with_a_manual_selector_keeps_it() -> None:
    job = _job(manualSelector=True, selector={'matchLabels': {'a': 'b'}}, parallelism=3)
    kind_defaults.apply(('batch', 'jobs'), job)
    assert job['spec']['selector'] == {'matchLabels': {'a': 'b'}} and 'completions' not in job['spec']
    assert 'labels' not in job['spec']['template'].get('metadata', {})


def test_statefulset_and_replicaset_defaults() -> None:
    sts: dict[str, Any] = {'metadata': {'name': 's'}, 'spec': {'template': {'spec': {'containers': []}}}}
    kind_defaults.apply(('apps', 'statefulsets'), sts)
    assert (sts['spec']['podManagementPolicy'], sts['spec']['replicas'], sts['spec']['revisionHistoryLimit']) == (
        'OrderedReady', 1, 10)
    rs: dict[str, Any] = {'metadata': {'name': 'r'}, 'spec': {'template': {'spec': {'containers': []}}}}
    kind_defaults.apply(('apps', 'replicasets'), rs)
    assert 'revisionHistoryLimit' not in rs['spec'] and rs['status'] == {'replicas': 0}


def test_service_defaults_allocate_a_cluster_ip() -> None:
    svc: dict[str, Any] = {'metadata': {'name': 's'}, 'spec': {'ports': [{'port': 80}], 'selector': {'a': 'b'}}}
    kind_defaults.apply(('', 'services'), svc)
    spec = svc['spec']
    assert ipaddress.ip_address(spec['clusterIP']) in kind_defaults.SERVICE_RANGE
    assert spec['clusterIPs'] == [spec['clusterIP']] and spec['ipFamilies'] == ['IPv4']
    assert spec['ports'] == [{'port': 80, 'protocol': 'TCP', 'targetPort': 80}]
    headless: dict[str, Any] = {'metadata': {'name': 'h'}, 'spec': {'clusterIP': 'None', 'ports': []}}
    kind_defaults.apply(('', 'services'), headless)
    assert headless['spec']['clusterIPs'] == ['None']


def test_job_template_is_immutable_but_for_a_suspended_jobs_scheduling() -> None:
    current = _job()
    kind_defaults.apply(('batch', 'jobs'), current)
    changed = _job(selector=current['spec']['selector'], completions=1)
    changed['spec']['template'] = {**current['spec']['template'], 'spec': {
        **current['spec']['template']['spec'], 'containers': [{'name': 'c', 'image': 'x:2'}]}}
    [cause] = kindrules.on_update(('batch', 'jobs'), current, changed)
    assert cause['field'] == 'spec.template' and cause['message'].endswith('field is immutable')
    suspended = {**current, 'spec': {**current['spec'], 'suspend': True}}
    template = suspended['spec']['template']
    scheduled = {**suspended, 'spec': {**suspended['spec'], 'template': {
        **template, 'spec': {**template['spec'], 'nodeSelector': {'a': 'b'}}}}}
    assert kindrules.on_update(('batch', 'jobs'), suspended, scheduled) == []


def test_service_cluster_ip_is_kept_and_immutable() -> None:
    current = {'spec': {'clusterIP': '10.96.0.10', 'clusterIPs': ['10.96.0.10'], 'ports': []}}
    omitted: dict[str, Any] = {'spec': {'ports': [{'port': 81}]}}
    assert kindrules.on_update(('', 'services'), current, omitted) == []
    assert omitted['spec']['clusterIP'] == '10.96.0.10'
    [cause] = kindrules.on_update(('', 'services'), current, {'spec': {'clusterIP': '10.96.0.11'}})
    assert (cause['field'], cause['message']) == (
        'spec.clusterIPs[0]', 'Invalid value: ["10.96.0.11"]: may not change once set')
    only_singular = {'spec': {'clusterIP': '10.96.0.12', 'clusterIPs': ['10.96.0.10']}}   # a merge patch of clusterIP
    [cause] = kindrules.on_update(('', 'services'), current, only_singular)
    assert cause['message'] == 'Invalid value: ["10.96.0.12"]: may not change once set'


def test_secret_string_data_is_merged_into_data() -> None:
    secret = {'metadata': {'name': 's'}, 'data': {'a': 'QQ=='}, 'stringData': {'b': 'text'}}
    assert kindrules.prepare(('', 'secrets'), secret, kindrules.Settings()) == []
    assert secret == {'metadata': {'name': 's'}, 'type': 'Opaque',
                      'data': {'a': 'QQ==', 'b': base64.b64encode(b'text').decode()}}


@pytest.mark.parametrize('name, valid', [('system:aggregate-to-edit', True), ('a/b', False), ('..', False),
                                         ('50%', False), ('UPPER_case', True)])
def test_rbac_names_are_path_segments(name: str, valid: bool) -> None:
    assert (metadata.name_causes(name, 'path') == []) == valid


def _cells(key: tuple[str, str], obj: dict[str, Any]) -> dict[str, Any]:
    return {definition['name']: cell(obj) for definition, cell in printers.builtin_columns(key)}


def test_tables_have_the_real_servers_columns() -> None:
    columns = [d['name'] for d, _ in printers.builtin_columns(('batch', 'jobs'))]
    assert columns == ['Name', 'Status', 'Completions', 'Duration', 'Age', 'Containers', 'Images', 'Selector']
    events = [d['name'] for d, _ in printers.builtin_columns(('', 'events'))]
    assert events[:4] == ['Last Seen', 'Type', 'Reason', 'Object'] and events[-1] == 'Name'


def test_cells_of_new_kinds() -> None:
    job = _job()
    job['metadata']['creationTimestamp'] = metadata.now()
    kind_defaults.apply(('batch', 'jobs'), job)
    cells = _cells(('batch', 'jobs'), job)
    assert (cells['Status'], cells['Completions'], cells['Duration'], cells['Containers'], cells['Images']) == (
        'Running', '0/1', '', 'c', 'x:1')
    assert cells['Selector'] == f'batch.kubernetes.io/controller-uid={UID}'
    node = {'metadata': {'name': 'n', 'labels': {'node-role.kubernetes.io/control-plane': ''}},
            'spec': {'unschedulable': True}, 'status': {'conditions': [{'type': 'Ready', 'status': 'True'}]}}
    assert _cells(('', 'nodes'), node)['Status'] == 'Ready,SchedulingDisabled'
    assert _cells(('', 'nodes'), node)['Roles'] == 'control-plane'
    binding = {'metadata': {'name': 'b'}, 'roleRef': {'kind': 'Role', 'name': 'r'},
               'subjects': [{'kind': 'ServiceAccount', 'name': 'sa', 'namespace': 'ns'}, {'kind': 'User', 'name': 'u'}]}
    cells = _cells(('rbac.authorization.k8s.io', 'rolebindings'), binding)
    assert (cells['Role'], cells['Users'], cells['ServiceAccounts']) == ('Role/r', 'u', 'ns/sa')
    hpa: dict[str, Any] = {'apiVersion': 'autoscaling/v2', 'metadata': {'name': 'h'},
                           'spec': {'scaleTargetRef': {'kind': 'Deployment', 'name': 'd'}, 'maxReplicas': 3}}
    kind_defaults.apply(('autoscaling', 'horizontalpodautoscalers'), hpa)
    cells = _cells(('autoscaling', 'horizontalpodautoscalers'), hpa)
    assert (cells['Reference'], cells['Targets'], cells['MinPods']) == ('Deployment/d', 'cpu: <unknown>/80%', '1')
    endpoints = {'metadata': {'name': 'e'}, 'subsets': [{'addresses': [{'ip': f'10.0.0.{i}'} for i in range(5)],
                                                         'ports': [{'port': 80}]}]}
    assert _cells(('', 'endpoints'), endpoints)['Endpoints'] == '10.0.0.0:80,10.0.0.1:80,10.0.0.2:80 + 2 more...'


def _crd(scope: str = 'Namespaced', subresources: dict[str, Any] | None = None) -> dict[str, Any]:
    version: dict[str, Any] = {'name': 'v1', 'served': True, 'storage': True, 'schema': {'openAPIV3Schema': {
        'type': 'object', 'properties': {'spec': {'type': 'object', 'properties': {'size': {'type': 'integer'}}}}}}}
    if subresources is not None:
        version['subresources'] = subresources
    return {'metadata': {'name': 'things.example.com'},
            'spec': {'group': 'example.com', 'scope': scope, 'names': {'plural': 'things', 'kind': 'Thing'},
                     'versions': [version, {**version, 'name': 'v2beta1', 'served': False}]}}


def test_custom_document_of_a_namespaced_crd_without_subresources() -> None:
    document = documents.v3_document('apis/example.com/v1', [_crd()])
    assert document is not None
    assert set(document['paths']) == {'/apis/example.com/v1/things',
                                      '/apis/example.com/v1/namespaces/{namespace}/things',
                                      '/apis/example.com/v1/namespaces/{namespace}/things/{name}'}
    item = document['paths']['/apis/example.com/v1/namespaces/{namespace}/things/{name}']
    assert item['patch']['operationId'] == 'patchExampleComV1NamespacedThing'
    schema = document['components']['schemas']['com.example.v1.Thing']
    assert schema['properties']['spec']['properties']['size'] == {'type': 'integer'}
    assert set(schema['properties']) == {'apiVersion', 'kind', 'metadata', 'spec'}
    assert schema['x-kubernetes-group-version-kind'] == [{'group': 'example.com', 'kind': 'Thing', 'version': 'v1'}]
    assert 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' in document['components']['schemas']
    assert documents.v3_document('apis/example.com/v2beta1', [_crd()]) is None   # not served


def test_custom_document_of_a_cluster_crd_with_status() -> None:
    document = documents.v3_document('apis/example.com/v1', [_crd('Cluster', {'status': {}})])
    assert document is not None
    assert set(document['paths']) == {'/apis/example.com/v1/things', '/apis/example.com/v1/things/{name}',
                                      '/apis/example.com/v1/things/{name}/status'}


def test_the_index_hashes_follow_the_documents() -> None:
    index = documents.v3_index([_crd()])['paths']
    assert {'api/v1', 'apis/apps/v1', 'apis/batch/v1', 'apis/example.com/v1'} <= set(index)
    changed = _crd()
    changed['spec']['versions'][0]['schema']['openAPIV3Schema']['properties']['spec']['properties']['x'] = {
        'type': 'string'}
    again = documents.v3_index([changed])['paths']
    assert again['apis/example.com/v1'] != index['apis/example.com/v1'] and again['api/v1'] == index['api/v1']
    swagger = documents.v2_document([_crd()])
    metadata = swagger['definitions']['com.example.v1.Thing']['properties']['metadata']
    assert metadata['$ref'] == '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'   # no allOf in v2


@pytest.mark.parametrize('key, valid', [
    ('a', True), ('a.b-c_D9', True), ('.hidden', True), ('a b', False), ('a/b', False), ('.', False),
    ('..', False), ('..x', False), ('x' * 253, True), ('x' * 254, False), ('ключ', False),
])
def test_configmap_and_secret_keys_are_config_keys(key: str, valid: bool) -> None:
    settings = kindrules.Settings()
    for field in ('data', 'binaryData'):
        causes = kindrules.prepare(('', 'configmaps'), {'metadata': {'name': 'x'}, field: {key: 'dg=='}}, settings)
        assert (causes == []) is valid, (field, causes)
        assert all(cause['field'] == f'{field}[{key}]' for cause in causes)
    for field in ('data', 'stringData'):
        causes = kindrules.prepare(('', 'secrets'), {'metadata': {'name': 'x'}, field: {key: 'dg=='}}, settings)
        assert (causes == []) is valid, (field, causes)


@pytest.mark.parametrize('accept, aggregated', [
    ('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,'
     'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json', True),  # kubectl
    ('application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json', False),
    ('application/json', False), ('', False), ('*/*', False),
    ('application/json, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList', False),
    ('application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,'
     'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList', True),
])
def test_aggregated_discovery_when_asked_first(accept: str, aggregated: bool) -> None:
    assert apidiscovery.wants_aggregated(accept) is aggregated


def test_aggregated_discovery_of_builtins_and_custom_resources() -> None:
    catalog = Catalog()
    core = apidiscovery.aggregated(catalog, core=True)
    assert (core['kind'], core['apiVersion']) == ('APIGroupDiscoveryList', 'apidiscovery.k8s.io/v2')
    [item] = core['items']
    assert item['metadata'] == {'creationTimestamp': None} and [v['version'] for v in item['versions']] == ['v1']
    pods = next(r for r in item['versions'][0]['resources'] if r['resource'] == 'pods')
    assert pods['responseKind'] == {'group': '', 'version': '', 'kind': 'Pod'} and pods['scope'] == 'Namespaced'
    eviction = next(sub for sub in pods['subresources'] if sub['subresource'] == 'eviction')
    assert eviction == {'subresource': 'eviction', 'verbs': ['create'],
                        'responseKind': {'group': 'policy', 'version': 'v1', 'kind': 'Eviction'}}
    custom = resourcetable.Resource(group='example.com', version='v1', plural='things', kind='Thing', namespaced=False,
                                    singular='thing', custom=True, subresources=('status', 'scale'))
    catalog.set_custom('things.example.com', [custom])
    groups = apidiscovery.aggregated(catalog, core=False)['items']
    assert [g['metadata']['name'] for g in groups][:2] == ['apiregistration.k8s.io', 'apps']
    [thing] = groups[-1]['versions'][0]['resources']
    assert (groups[-1]['metadata']['name'], thing['scope'], thing['responseKind']['group']) == (
        'example.com', 'Cluster', 'example.com')
    assert [(s['subresource'], s['responseKind']['kind']) for s in thing['subresources']] == [
        ('status', 'Thing'), ('scale', 'Scale')]
