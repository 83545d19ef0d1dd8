"""ValidatingAdmissionPolicies applied to writes: over HTTP on a local cluster (matching, params, actions)."""
from collections.abc import Iterator
from typing import Any

import pytest

from kopf.testing import LocalCluster

from ..fidelity.conftest import Http

VAP = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies'
BINDINGS = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings'
CMS = '/api/v1/namespaces/default/configmaps'
RULES = [{'apiGroups': [''], 'apiVersions': ['v1'], 'operations': ['CREATE', 'UPDATE'], 'resources': ['configmaps']}]


def policy(name: str, **spec: Any) -> dict[str, Any]:
    return {'apiVersion': 'admissionregistration.k8s.io/v1', 'kind': 'ValidatingAdmissionPolicy',
            'metadata': {'name': name}, 'spec': {'matchConstraints': {'resourceRules': RULES}, **spec}}


def binding(name: str, policy_name: str, *actions: str, **spec: Any) -> dict[str, Any]:
    return {'apiVersion': 'admissionregistration.k8s.io/v1', 'kind': 'ValidatingAdmissionPolicyBinding',
            'metadata': {'name': name}, 'spec': {'policyName': policy_name, 'validationActions': list(actions), **spec}}


def cm(name: str, labels: dict[str, str] | None = None, **data: str) -> dict[str, Any]:
    return {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': name, 'labels': labels or {}}, 'data': data}


@pytest.fixture()
def http() -> Iterator[Http]:
    with LocalCluster() as cluster:
        yield Http(cluster.url)


def test_deny_refuses_with_the_policys_message_and_reason(http: Http) -> None:
    http.request('POST', VAP, policy('small', validations=[{'expression': 'size(object.data) < 2',
                                                            'message': 'too big', 'reason': 'Forbidden'}]))
    http.request('POST', BINDINGS, binding('small-b', 'small', 'Deny'))
    assert http.request('POST', CMS, cm('ok', a='1'))[0] == 201
    code, _, body = http.request('POST', CMS, cm('big', a='1', b='2'))
    assert code == 403
    assert body['reason'] == 'Forbidden'
    assert body['message'] == ("configmaps \"big\" is forbidden: ValidatingAdmissionPolicy 'small' with binding "
                               "'small-b' denied request: too big")
    assert body['details'] == {'name': 'big', 'kind': 'configmaps', 'causes': [
        {'message': "ValidatingAdmissionPolicy 'small' with binding 'small-b' denied request: too big"}]}


def test_warn_adds_a_warning_and_admits(http: Http) -> None:
    http.request('POST', VAP, policy('named', validations=[{'expression': "object.metadata.name != 'x'"}]))
    http.request('POST', BINDINGS, binding('named-b', 'named', 'Warn'))
    code, headers, _ = http.request('POST', CMS, cm('x'))
    assert code == 201
    assert "Validation failed for ValidatingAdmissionPolicy 'named' with binding 'named-b': failed expression: " \
           "object.metadata.name != 'x'" in headers.get('Warning', '')


def test_params_and_object_selectors(http: Http) -> None:
    assert http.request('POST', CMS, cm('limits', max='1'))[0] == 201
    http.request('POST', VAP, policy('limit', paramKind={'apiVersion': 'v1', 'kind': 'ConfigMap'},
                                     validations=[{'expression': 'size(object.data) <= int(params.data.max)'}]))
    http.request('POST', BINDINGS, binding('limit-b', 'limit', 'Deny', paramRef={
        'name': 'limits', 'namespace': 'default', 'parameterNotFoundAction': 'Deny'}, matchResources={
        'resourceRules': RULES, 'objectSelector': {'matchLabels': {'checked': 'yes'}}}))
    assert http.request('POST', CMS, cm('free', a='1', b='2'))[0] == 201
    assert http.request('POST', CMS, cm('checked', {'checked': 'yes'}, a='1', b='2'))[0] == 422
    assert http.request('POST', CMS, cm('fine', {'checked': 'yes'}, a='1'))[0] == 201


def test_a_missing_param_denies_when_asked_to(http: Http) -> None:
    http.request('POST', VAP, policy('p', paramKind={'apiVersion': 'v1', 'kind': 'ConfigMap'},
                                     validations=[{'expression': 'true'}]))
    http.request('POST', BINDINGS, binding('p-b', 'p', 'Deny', paramRef={
        'name': 'absent', 'namespace': 'default', 'parameterNotFoundAction': 'Deny'}))
    code, _, body = http.request('POST', CMS, cm('any'))
    assert code == 422
    assert body['message'].endswith('denied request: failed to configure binding: no params found for policy '
                                    'binding with `Deny` parameterNotFoundAction')


def test_policies_with_bad_expressions_are_refused(http: Http) -> None:
    code, _, body = http.request('POST', VAP, policy('bad', validations=[{'expression': 'object.x +'}]))
    assert code == 422
    assert body['details']['causes'][0]['field'] == 'spec.validations[0].expression'


def test_bindings_with_bad_actions_are_refused(http: Http) -> None:
    code, _, body = http.request('POST', BINDINGS, binding('b', 'p', 'Deny', 'Warn'))
    assert code == 422
    assert 'must not contain both Deny and Warn' in body['message']
