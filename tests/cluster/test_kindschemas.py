"""Built-in kinds are pruned as a real API server does: by their real schemas (kopf._cluster.openapi.kindschemas)."""
import copy
import importlib.util
import json
import pathlib
from collections.abc import Mapping
from typing import Any

import pytest

from kopf._cluster.openapi import kindschemas, validation
from kopf._shared import schemas


def _tool(name: str) -> Any:
    """A generator under `tools/` (not in the installed package), imported by its path."""
    path = pathlib.Path(__file__).parent.parent.parent / 'tools' / f'{name}.py'
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate = _tool('generate_builtin_schemas')

SERVED = [kind for kind in generate.KINDS if kind[2] != 'Scale']  # Scale is a subresource's kind


@pytest.mark.parametrize('group, version, kind', SERVED)
def test_every_served_builtin_has_a_schema(group: str, version: str, kind: str) -> None:
    schema = kindschemas.schema_for(group, version, kind)
    assert schema is not None
    assert schema['type'] == 'object'
    assert 'metadata' in schema['properties']


def test_kinds_lists_the_served_builtins() -> None:
    assert set(SERVED) <= set(kindschemas.kinds())


@pytest.mark.parametrize('group, version, kind', [
    ('', 'v1', 'Nope'), ('kopf.dev', 'v1', 'KopfExample'), ('apps', 'v2', 'Deployment'), ('', 'apps/v1', 'Pod'),
])
def test_unknown_kinds_have_no_schema(group: str, version: str, kind: str) -> None:
    assert kindschemas.schema_for(group, version, kind) is None


def test_schemas_are_loaded_once_and_shared() -> None:
    assert kindschemas.schema_for('', 'v1', 'Pod') is kindschemas.schema_for('', 'v1', 'Pod')
    pod = kindschemas.schema_for('', 'v1', 'Pod')
    deployment = kindschemas.schema_for('apps', 'v1', 'Deployment')
    assert pod is not None and deployment is not None
    pod_spec = pod['properties']['spec']
    template_spec = deployment['properties']['spec']['properties']['template']['properties']['spec']
    assert pod_spec is template_spec


def test_recursive_crd_schema_is_linked_into_a_cycle() -> None:
    crd = kindschemas.schema_for('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition')
    assert crd is not None
    version = crd['properties']['spec']['properties']['versions']['items']
    props = version['properties']['schema']['properties']['openAPIV3Schema']
    assert props['properties']['properties']['additionalProperties'] is props


def test_data_file_has_no_unresolved_references() -> None:
    path = pathlib.Path(kindschemas.__file__).parent / 'data' / kindschemas.DATA_FILE
    data = json.loads(path.read_text())
    refs: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get('$ref'), str):
                refs.add(node['$ref'])
            for key, value in node.items():
                if key == 'properties':
                    for sub in value.values():
                        walk(sub)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(data['definitions'])
    assert refs <= set(data['definitions'])
    assert set(data['kinds'].values()) <= set(data['definitions'])


def _prune(group: str, version: str, kind: str, obj: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    obj = copy.deepcopy(obj)
    pruned = schemas.prune(obj, kindschemas.schema_for(group, version, kind))
    pruned += schemas.normalise_metadata(obj)
    return obj, [schemas.format_path(path) for path in pruned]


# (id, group, version, kind, object before, object after, pruned paths as the server writes them)
CASES: list[tuple[str, str, str, str, dict[str, Any], dict[str, Any], list[str]]] = [
    (
        'configmap-status-dropped', '', 'v1', 'ConfigMap',
        {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'c'},
         'data': {'a': 'b'}, 'status': {'kopf': {'progress': {'fn': {'started': 'x'}}}}},
        {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'c'}, 'data': {'a': 'b'}},
        ['status'],
    ),
    (
        'configmap-keeps-data-binarydata-immutable', '', 'v1', 'ConfigMap',
        {'metadata': {'name': 'c', 'labels': {'l': 'v'}, 'annotations': {'kopf.zalando.org/fn': '{}'}},
         'data': {'x.y': 'z'}, 'binaryData': {'b': 'AAA='}, 'immutable': True},
        {'metadata': {'name': 'c', 'labels': {'l': 'v'}, 'annotations': {'kopf.zalando.org/fn': '{}'}},
         'data': {'x.y': 'z'}, 'binaryData': {'b': 'AAA='}, 'immutable': True},
        [],
    ),
    (
        'configmap-unknown-metadata-dropped', '', 'v1', 'ConfigMap',
        {'metadata': {'name': 'c', 'junk': 1, 'finalizers': ['a/b']}},
        {'metadata': {'name': 'c', 'finalizers': ['a/b']}},
        ['metadata.junk'],
    ),
    (
        'pod-status-keeps-phase-loses-kopf', '', 'v1', 'Pod',
        {'metadata': {'name': 'p'}, 'spec': {'containers': [{'name': 'c', 'image': 'i'}]},
         'status': {'phase': 'Running', 'podIP': '10.0.0.1', 'kopf': {'progress': {}}, 'create_fn': {'a': 1}}},
        {'metadata': {'name': 'p'}, 'spec': {'containers': [{'name': 'c', 'image': 'i'}]},
         'status': {'phase': 'Running', 'podIP': '10.0.0.1'}},
        ['status.kopf', 'status.create_fn'],
    ),
    (
        'pod-container-unknown-field-dropped', '', 'v1', 'Pod',
        {'spec': {'containers': [{'name': 'c', 'image': 'i', 'junk': 1,
                                  'ports': [{'containerPort': 80, 'protocol': 'TCP', 'x': 1}],
                                  'resources': {'limits': {'cpu': '100m', 'memory': 1024}}}]}},
        {'spec': {'containers': [{'name': 'c', 'image': 'i',
                                  'ports': [{'containerPort': 80, 'protocol': 'TCP'}],
                                  'resources': {'limits': {'cpu': '100m', 'memory': 1024}}}]}},
        ['spec.containers[0].junk', 'spec.containers[0].ports[0].x'],
    ),
    (
        'pod-conditions-and-times-kept', '', 'v1', 'Pod',
        {'status': {'conditions': [{'type': 'Ready', 'status': 'True', 'lastTransitionTime': '2024-05-01T12:00:00Z'}],
                    'startTime': '2024-05-01T12:00:00Z'}},
        {'status': {'conditions': [{'type': 'Ready', 'status': 'True', 'lastTransitionTime': '2024-05-01T12:00:00Z'}],
                    'startTime': '2024-05-01T12:00:00Z'}},
        [],
    ),
    (
        'deployment-replicas-kept-unknown-spec-dropped', 'apps', 'v1', 'Deployment',
        {'spec': {'replicas': 3, 'junk': True, 'selector': {'matchLabels': {'app': 'x'}},
                  'strategy': {'rollingUpdate': {'maxSurge': '25%', 'maxUnavailable': 1}},
                  'template': {'metadata': {'labels': {'app': 'x'}},
                               'spec': {'containers': [{'name': 'c', 'image': 'i'}], 'typo': 1}}}},
        {'spec': {'replicas': 3, 'selector': {'matchLabels': {'app': 'x'}},
                  'strategy': {'rollingUpdate': {'maxSurge': '25%', 'maxUnavailable': 1}},
                  'template': {'metadata': {'labels': {'app': 'x'}},
                               'spec': {'containers': [{'name': 'c', 'image': 'i'}]}}}},
        ['spec.junk', 'spec.template.spec.typo'],
    ),
    (
        'deployment-status-keeps-typed-fields', 'apps', 'v1', 'Deployment',
        {'status': {'replicas': 3, 'readyReplicas': 2, 'kopf': {}}},
        {'status': {'replicas': 3, 'readyReplicas': 2}},
        ['status.kopf'],
    ),
    (
        'secret-keeps-data-stringdata-type', '', 'v1', 'Secret',
        {'type': 'Opaque', 'data': {'a': 'Yg=='}, 'stringData': {'b': 'c'}, 'status': {}},
        {'type': 'Opaque', 'data': {'a': 'Yg=='}, 'stringData': {'b': 'c'}},
        ['status'],
    ),
    (
        'namespace-spec-status', '', 'v1', 'Namespace',
        {'spec': {'finalizers': ['kubernetes']}, 'status': {'phase': 'Active', 'kopf': {}}},
        {'spec': {'finalizers': ['kubernetes']}, 'status': {'phase': 'Active'}},
        ['status.kopf'],
    ),
    (
        'service-ports-and-int-or-string-target', '', 'v1', 'Service',
        {'spec': {'ports': [{'port': 80, 'targetPort': 'http'}, {'port': 81, 'targetPort': 8081, 'x': 0}]}},
        {'spec': {'ports': [{'port': 80, 'targetPort': 'http'}, {'port': 81, 'targetPort': 8081}]}},
        ['spec.ports[1].x'],
    ),
    (
        'core-event-as-kopf-posts-it', '', 'v1', 'Event',
        {'metadata': {'generateName': 'kopf-event-', 'namespace': 'default'},
         'action': 'Action', 'reason': 'Logging', 'message': 'hello', 'type': 'Normal',
         'reportingComponent': 'kopf', 'reportingInstance': 'dev',
         'source': {'component': 'kopf'}, 'firstTimestamp': '2024-05-01T12:00:00Z',
         'lastTimestamp': '2024-05-01T12:00:00Z', 'eventTime': '2024-05-01T12:00:00.123456Z',
         'involvedObject': {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'name': 'x',
                            'uid': 'u', 'namespace': 'default'}},
        {'metadata': {'generateName': 'kopf-event-', 'namespace': 'default'},
         'action': 'Action', 'reason': 'Logging', 'message': 'hello', 'type': 'Normal',
         'reportingComponent': 'kopf', 'reportingInstance': 'dev',
         'source': {'component': 'kopf'}, 'firstTimestamp': '2024-05-01T12:00:00Z',
         'lastTimestamp': '2024-05-01T12:00:00Z', 'eventTime': '2024-05-01T12:00:00.123456Z',
         'involvedObject': {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'name': 'x',
                            'uid': 'u', 'namespace': 'default'}},
        [],
    ),
    (
        'lease-spec-kept', 'coordination.k8s.io', 'v1', 'Lease',
        {'spec': {'holderIdentity': 'me', 'leaseDurationSeconds': 15, 'renewTime': '2024-05-01T12:00:00.000000Z',
                  'extra': 1}},
        {'spec': {'holderIdentity': 'me', 'leaseDurationSeconds': 15, 'renewTime': '2024-05-01T12:00:00.000000Z'}},
        ['spec.extra'],
    ),
    (
        'webhook-configuration', 'admissionregistration.k8s.io', 'v1', 'ValidatingWebhookConfiguration',
        {'webhooks': [{'name': 'x.y.z', 'admissionReviewVersions': ['v1'], 'sideEffects': 'None',
                       'clientConfig': {'url': 'https://h/p', 'caBundle': 'AAA='}, 'failurePolicy': 'Fail',
                       'rules': [{'apiGroups': ['kopf.dev'], 'apiVersions': ['v1'], 'operations': ['CREATE'],
                                  'resources': ['kopfexamples'], 'scope': '*'}], 'junk': 1}]},
        {'webhooks': [{'name': 'x.y.z', 'admissionReviewVersions': ['v1'], 'sideEffects': 'None',
                       'clientConfig': {'url': 'https://h/p', 'caBundle': 'AAA='}, 'failurePolicy': 'Fail',
                       'rules': [{'apiGroups': ['kopf.dev'], 'apiVersions': ['v1'], 'operations': ['CREATE'],
                                  'resources': ['kopfexamples'], 'scope': '*'}]}]},
        ['webhooks[0].junk'],
    ),
    (
        'crd-schema-content-kept-typos-dropped', 'apiextensions.k8s.io', 'v1', 'CustomResourceDefinition',
        {'spec': {'group': 'kopf.dev', 'scope': 'Namespaced', 'names': {'kind': 'K', 'plural': 'ks'},
                  'versions': [{'name': 'v1', 'served': True, 'storage': True,
                                'subresources': {'status': {}},
                                'schema': {'openAPIV3Schema': {
                                    'type': 'object',
                                    'properties': {
                                        'spec': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True,
                                                 'default': {'a': {'b': 1}}},
                                        'status': {'type': 'object', 'properties': {
                                            'phase': {'type': 'string', 'enum': ['a', 'b'], 'typo': 1}}},
                                    }}}}]}},
        {'spec': {'group': 'kopf.dev', 'scope': 'Namespaced', 'names': {'kind': 'K', 'plural': 'ks'},
                  'versions': [{'name': 'v1', 'served': True, 'storage': True,
                                'subresources': {'status': {}},
                                'schema': {'openAPIV3Schema': {
                                    'type': 'object',
                                    'properties': {
                                        'spec': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True,
                                                 'default': {'a': {'b': 1}}},
                                        'status': {'type': 'object', 'properties': {
                                            'phase': {'type': 'string', 'enum': ['a', 'b']}}},
                                    }}}}]}},
        ['spec.versions[0].schema.openAPIV3Schema.properties.status.properties.phase.typo'],
    ),
    (
        'managed-fields-content-kept', '', 'v1', 'ConfigMap',
        {'metadata': {'name': 'c', 'managedFields': [{'manager': 'kubectl', 'operation': 'Update',
                                                      'fieldsV1': {'f:data': {'f:a': {}}}}]}},
        {'metadata': {'name': 'c', 'managedFields': [{'manager': 'kubectl', 'operation': 'Update',
                                                      'fieldsV1': {'f:data': {'f:a': {}}}}]}},
        [],
    ),
]


@pytest.mark.parametrize('group, version, kind, before, after, expected', [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_builtin_pruning(group: str, version: str, kind: str,
                         before: dict[str, Any], after: dict[str, Any], expected: list[str]) -> None:
    obj, pruned = _prune(group, version, kind, before)
    assert pruned == expected
    assert obj == after


@pytest.mark.parametrize('group, version, kind, path, expected', [
    ('', 'v1', 'ConfigMap', ('status', 'kopf'), False),
    ('', 'v1', 'ConfigMap', ('data', 'anything'), True),
    ('', 'v1', 'ConfigMap', ('metadata', 'annotations', 'kopf.zalando.org/last-handled-configuration'), True),
    ('', 'v1', 'Pod', ('status', 'phase'), True),
    ('', 'v1', 'Pod', ('status', 'kopf', 'progress', 'create_fn'), False),
    ('apps', 'v1', 'Deployment', ('spec', 'replicas'), True),
    ('apps', 'v1', 'Deployment', ('spec', 'template', 'spec', 'containers', '0', 'image'), True),
])
def test_builtin_survival(group: str, version: str, kind: str, path: tuple[str, ...], expected: bool) -> None:
    assert schemas.survives(kindschemas.schema_for(group, version, kind), path) is expected


@pytest.mark.parametrize('field, strategy, key', [
    (('spec', 'containers'), 'merge', 'name'),
    (('spec', 'volumes'), 'merge,retainKeys', 'name'),
    (('spec', 'nodeName'), None, None),
])
def test_patch_strategies_of_pod_spec(field: tuple[str, ...], strategy: str | None, key: str | None) -> None:
    node: Any = kindschemas.schema_for('', 'v1', 'Pod')
    for name in field:
        node = node['properties'][name]
    assert kindschemas.patch_strategy(node) == (strategy, key)


def test_patch_strategies_of_metadata() -> None:
    meta = kindschemas.definition('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta')
    assert meta is not None
    assert kindschemas.patch_strategy(meta['properties']['finalizers']) == ('merge', None)
    assert kindschemas.patch_strategy(meta['properties']['ownerReferences']) == ('merge', 'uid')
    assert kindschemas.patch_strategy(None) == (None, None)


@pytest.mark.parametrize('_id, group, version, kind, before, after, _pruned', CASES, ids=[c[0] for c in CASES])
def test_realistic_builtins_are_valid_after_pruning(_id: str, group: str, version: str, kind: str,
                                                    before: Any, after: Any, _pruned: Any) -> None:
    schema = kindschemas.schema_for(group, version, kind)
    obj = copy.deepcopy(after)
    validation.apply_defaults(obj, schema)
    assert validation.validate(obj, schema) == []


@pytest.mark.parametrize('group, version, kind, obj', [
    ('', 'v1', 'Pod', {'status': {'phase': 'Running', 'containerStatuses': [{'name': 'c'}]}}),
    ('apps', 'v1', 'ReplicaSet', {'status': {'readyReplicas': 1}}),
    ('', 'v1', 'Pod', {'spec': {'restartPolicy': 'SomethingNew', 'containers': [{'name': 'c'}]}}),
    ('', 'v1', 'Event', {'reason': 'r'}),
    ('', 'v1', 'ConfigMap', {'data': {'a': 'b'}, 'immutable': None}),
])
def test_builtins_do_not_enforce_openapi_required_or_enums(group: str, version: str, kind: str, obj: Any) -> None:
    schema = kindschemas.schema_for(group, version, kind)
    validation.apply_defaults(obj, schema)
    assert validation.validate(obj, schema) == []


@pytest.mark.parametrize('group, version, kind, obj, reason, field', [
    ('apps', 'v1', 'Deployment', {'spec': {'replicas': '3'}}, 'FieldValueTypeInvalid', 'spec.replicas'),
    ('', 'v1', 'ConfigMap', {'data': {'a': 1}}, 'FieldValueTypeInvalid', 'data.a'),
    ('', 'v1', 'Secret', {'data': {'a': 'not base64!'}}, 'FieldValueInvalid', 'data.a'),
    ('coordination.k8s.io', 'v1', 'Lease', {'spec': {'renewTime': 'now'}}, 'FieldValueInvalid', 'spec.renewTime'),
    ('', 'v1', 'Service', {'spec': {'ports': [{'port': 80, 'targetPort': 1.5}]}},
     'FieldValueTypeInvalid', 'spec.ports[0].targetPort'),
])
def test_builtin_type_errors(group: str, version: str, kind: str, obj: Any, reason: str, field: str) -> None:
    causes = validation.validate(obj, kindschemas.schema_for(group, version, kind))
    assert [(cause['reason'], cause['field']) for cause in causes] == [(reason, field)]


def _patch_strategy_at(group: str, version: str, kind: str, path: tuple[str, ...]) -> tuple[str | None, str | None]:
    """The strategic-merge metadata at a path of a built-in kind's schema (array positions step into items)."""
    node: Mapping[str, Any] | None = kindschemas.schema_for(group, version, kind)
    for key in path:
        if node is None:
            break
        properties = node.get('properties') or {}
        if key in properties:
            node = properties[key]
        elif isinstance(node.get('additionalProperties'), Mapping):
            node = node['additionalProperties']
        elif key.isdigit() and isinstance(node.get('items'), Mapping):
            node = node['items']
        else:
            node = None
    return kindschemas.patch_strategy(node)


@pytest.mark.parametrize('group, version, kind, path, expected', [
    ('', 'v1', 'Pod', ('spec', 'containers'), ('merge', 'name')),
    ('', 'v1', 'Pod', ('spec', 'containers', '0', 'env'), ('merge', 'name')),
    ('', 'v1', 'Pod', ('spec', 'containers', '0', 'volumeMounts'), ('merge', 'mountPath')),
    ('', 'v1', 'Pod', ('spec', 'containers', '0', 'ports'), ('merge', 'containerPort')),
    ('', 'v1', 'Service', ('spec', 'ports'), ('merge', 'port')),
    ('', 'v1', 'ConfigMap', ('metadata', 'finalizers'), ('merge', None)),
    ('', 'v1', 'ConfigMap', ('metadata', 'ownerReferences'), ('merge', 'uid')),
    ('apps', 'v1', 'Deployment', ('spec', 'template', 'spec', 'imagePullSecrets'), ('merge', 'name')),
    ('', 'v1', 'ConfigMap', ('data', 'key'), (None, None)),
    ('', 'v1', 'Pod', ('spec', 'nope', 'deeper'), (None, None)),
    ('kopf.dev', 'v1', 'KopfExample', ('spec',), (None, None)),
])
def test_patch_strategy_at(group: str, version: str, kind: str, path: tuple[str, ...],
                           expected: tuple[str | None, str | None]) -> None:
    assert _patch_strategy_at(group, version, kind, path) == expected


def test_generator_compaction_rules() -> None:

    source = {
        'description': 'dropped', 'type': ['object', 'null'], 'required': ['a'],
        'x-kubernetes-group-version-kind': [{'group': '', 'version': 'v1', 'kind': 'X'}],
        'properties': {
            'port': {'$ref': '#/$defs/io.k8s.apimachinery.pkg.util.intstr.IntOrString'},
            'time': {'$ref': '#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.Time', 'description': 'x'},
            'raw': {'$ref': '#/$defs/io.k8s.apimachinery.pkg.runtime.RawExtension'},
            'spec': {'$ref': '#/$defs/io.k8s.api.core.v1.PodSpec'},
            'mode': {'type': 'string', 'enum': ['a', 'b']},
            'list': {'type': ['array', 'null'], 'items': {'type': ['string', 'null']},
                     'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-list-type': 'set'},
            '$ref': {'type': 'string'},  # a property may be called "$ref" (JSONSchemaProps has one)
        },
    }
    assert generate.compact(source) == {
        'type': 'object',
        'properties': {
            'port': {'x-kubernetes-int-or-string': True},
            'time': {'type': 'string', 'format': 'date-time'},
            'raw': {'x-kubernetes-preserve-unknown-fields': True},
            'spec': {'$ref': 'io.k8s.api.core.v1.PodSpec'},
            'mode': {'type': 'string'},
            'list': {'type': 'array', 'items': {'type': 'string'},
                     'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-list-type': 'set'},
            '$ref': {'type': 'string'},
        },
    }
    assert list(generate._refs(source)) == [
        'io.k8s.apimachinery.pkg.util.intstr.IntOrString', 'io.k8s.apimachinery.pkg.apis.meta.v1.Time',
        'io.k8s.apimachinery.pkg.runtime.RawExtension', 'io.k8s.api.core.v1.PodSpec',
    ]
