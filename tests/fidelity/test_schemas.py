"""CRD schemas through the API: defaulting and the OpenAPI v3 constraints kubectl users meet,
embedded resources, int-or-string; several versions with served/storage. Via kubectl and the `kubernetes` client."""
import json
from typing import Any

import pytest
import yaml

from kopf.testing import LocalCluster
from tests.fidelity.conftest import Http, Kubectl

SPEC = {'type': 'object', 'properties': {
    'size': {'type': 'integer', 'minimum': 1, 'maximum': 10, 'default': 3},
    'name': {'type': 'string', 'pattern': '^[a-z]+$', 'maxLength': 8},
    'when': {'type': 'string', 'format': 'date-time'},
    'id': {'type': 'string', 'format': 'uuid'},
    'port': {'x-kubernetes-int-or-string': True},
    'mode': {'type': 'string', 'enum': ['a', 'b'], 'default': 'a'},
    'tags': {'type': 'array', 'items': {'type': 'string'}, 'maxItems': 2, 'x-kubernetes-list-type': 'set'},
    'template': {'type': 'object', 'x-kubernetes-embedded-resource': True,
                 'x-kubernetes-preserve-unknown-fields': True},
}}
CRD = {
    'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
    'metadata': {'name': 'constraineds.kopf.dev'},
    'spec': {'group': 'kopf.dev', 'scope': 'Namespaced', 'names': {'plural': 'constraineds', 'kind': 'Constrained'},
             'versions': [{'name': 'v1', 'served': True, 'storage': True,
                           'schema': {'openAPIV3Schema': {'type': 'object', 'properties': {'spec': SPEC}}}},
                          {'name': 'v1beta1', 'served': True, 'storage': False,
                           'schema': {'openAPIV3Schema': {'type': 'object', 'properties': {'spec': SPEC}}}},
                          {'name': 'v1alpha1', 'served': False, 'storage': False,
                           'schema': {'openAPIV3Schema': {'type': 'object', 'properties': {'spec': SPEC}}}}]},
}
BAD = {'size': 0, 'name': 'ABC', 'when': 'yesterday', 'id': 'nope', 'port': 1.5, 'mode': 'c', 'tags': ['a', 'a', 'b'],
       'template': {'metadata': {'name': 'a/b'}}}
EXPECTED = [
    ('FieldValueInvalid', 'spec.size', 'Invalid value: 0: spec.size in body should be greater than or equal to 1'),
    ('FieldValueInvalid', 'spec.name', 'Invalid value: "ABC": spec.name in body should match \'^[a-z]+$\''),
    ('FieldValueInvalid', 'spec.when',
     'Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"'),
    ('FieldValueInvalid', 'spec.id', 'Invalid value: "nope": spec.id in body must be of type uuid: "nope"'),
    ('FieldValueTypeInvalid', 'spec.port',
     'Invalid value: "number": spec.port in body must be of type integer,string: "number"'),
    ('FieldValueNotSupported', 'spec.mode', 'Unsupported value: "c": supported values: "a", "b"'),
    ('FieldValueTooMany', 'spec.tags', 'Too many: 3: must have at most 2 items'),
    ('FieldValueDuplicate', 'spec.tags[1]', 'Duplicate value: "a"'),
    ('FieldValueRequired', 'spec.template.apiVersion', 'Required value: must not be empty'),
    ('FieldValueRequired', 'spec.template.kind', 'Required value: must not be empty'),
    ('FieldValueInvalid', 'spec.template.metadata.name', 'Invalid value: "a/b": may not contain \'/\''),
]


REAL_CAUSES = pytest.mark.envtest_xfail(
    reason='kube-apiserver: a format error (date-time, uuid) is FieldValueTypeInvalid (the emulator: '
           'FieldValueInvalid); a missing embedded apiVersion/kind is "Required value" (the emulator: '
           '"Required value: must not be empty"); its causes come in no fixed order')


def _obj(name: str, spec: dict[str, Any], version: str = 'v1') -> dict[str, Any]:
    return {'apiVersion': f'kopf.dev/{version}', 'kind': 'Constrained', 'metadata': {'name': name}, 'spec': spec}


@pytest.fixture(scope='module', autouse=True)
def crd(cluster: LocalCluster) -> None:
    cluster.apply(CRD)


@REAL_CAUSES
def test_client_sees_every_constraint(custom: Any) -> None:
    kubernetes = pytest.importorskip('kubernetes')
    with pytest.raises(kubernetes.client.ApiException) as exc:
        custom.create_namespaced_custom_object('kopf.dev', 'v1', 'default', 'constraineds', _obj('bad', BAD))
    status = json.loads(exc.value.body)
    assert exc.value.status == 422 and status['reason'] == 'Invalid'
    assert [(c['reason'], c['field'], c['message']) for c in status['details']['causes']] == EXPECTED
    assert status['message'].startswith('Constrained.kopf.dev "bad" is invalid: [spec.size: Invalid value: 0')


def test_client_gets_defaults_int_or_string_and_embedded_pruning(custom: Any) -> None:
    template = {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'x', 'junk': 1}, 'spec': {'any': 'thing'}}
    created = custom.create_namespaced_custom_object('kopf.dev', 'v1', 'default', 'constraineds',
                                                     _obj('good', {'port': 'http', 'template': template}))
    assert created['spec']['size'] == 3 and created['spec']['mode'] == 'a'        # defaults
    assert created['spec']['template']['metadata'] == {'name': 'x'}             # ObjectMeta-pruned
    patched = custom.patch_namespaced_custom_object('kopf.dev', 'v1', 'default', 'constraineds', 'good',
                                                    {'spec': {'port': 8080, 'size': None}})
    assert patched['spec']['port'] == 8080 and patched['spec']['size'] == 3       # null: defaulted again


@REAL_CAUSES
def test_kubectl_prints_the_causes(kubectl: Kubectl) -> None:
    result = kubectl('create', '-f', '-', input=yaml.safe_dump(_obj('bad-kubectl', BAD)))
    assert result.returncode == 1
    assert 'The Constrained "bad-kubectl" is invalid:' in result.stderr
    for _, field, message in EXPECTED:
        assert f'* {field}: {message}' in result.stderr
    result = kubectl('create', '-f', '-', input=yaml.safe_dump(_obj('fine', {'size': 10, 'port': 443})))
    assert result.returncode == 0, result.stderr


def test_versions_served_and_not(kubectl: Kubectl, raw: Http) -> None:
    assert kubectl('create', '-f', '-', input=yaml.safe_dump(_obj('beta', {}, 'v1beta1'))).returncode == 0
    got = kubectl('get', 'constraineds.v1beta1.kopf.dev', 'beta', '-o', 'jsonpath={.apiVersion} {.spec.size}')
    assert got.stdout == 'kopf.dev/v1beta1 3'
    _, _, stored = raw.request('GET', '/apis/kopf.dev/v1/namespaces/default/constraineds/beta')
    assert stored['apiVersion'] == 'kopf.dev/v1'
    assert raw.request('GET', '/apis/kopf.dev/v1alpha1/namespaces/default/constraineds/beta')[0] == 404
    _, _, group = raw.request('GET', '/apis/kopf.dev')
    assert 'v1alpha1' not in {version['version'] for version in group['versions']}
    _, _, crd = raw.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/constraineds.kopf.dev')
    assert crd['status']['storedVersions'] == ['v1']


def test_a_changed_schema_shows_on_read(kubectl: Kubectl, cluster: LocalCluster, raw: Http) -> None:
    def crd(properties: dict[str, Any]) -> dict[str, Any]:
        root = {'type': 'object', 'properties': {'spec': {'type': 'object', 'properties': properties}}}
        return {'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
                'metadata': {'name': 'evolvings.kopf.dev'},
                'spec': {'group': 'kopf.dev', 'scope': 'Namespaced',
                         'names': {'plural': 'evolvings', 'kind': 'Evolving'},
                         'versions': [{'name': 'v1', 'served': True, 'storage': True,
                                       'schema': {'openAPIV3Schema': root}}]}}

    cluster.apply(crd({'old': {'type': 'string'}}))
    cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'Evolving', 'metadata': {'name': 'e1'}, 'spec': {'old': 'x'}})
    _, _, before = raw.request('GET', '/apis/kopf.dev/v1/namespaces/default/evolvings/e1')
    cluster.apply(crd({'new': {'type': 'integer', 'default': 7}}))
    got = kubectl('get', 'evolvings', 'e1', '-o', 'jsonpath={.spec} {.metadata.resourceVersion}')
    assert got.stdout == f'{{"new":7}} {before["metadata"]["resourceVersion"]}'   # defaulted, pruned, not written
