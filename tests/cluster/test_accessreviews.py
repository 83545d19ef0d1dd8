"""The access reviews as pure functions: a review body, the requester, the rules -> the answered review."""
from collections import defaultdict
from typing import Any

import pytest

from kopf._cluster import statuses
from kopf._cluster.rbac import bootstrap
from kopf._cluster.rbac.authorizer import Authorizer
from kopf._cluster.rbac.forbidding import Denial
from kopf._cluster.web import accessreviews
from kopf._cluster.web.accessrules import ADMIN_GROUPS, Access, User

ADMIN = User('kubernetes-admin', ADMIN_GROUPS)
ALICE = User('alice')
EDITORS = {'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'ClusterRoleBinding', 'metadata': {'name': 'editors'},
           'subjects': [{'kind': 'User', 'name': 'alice'}, {'kind': 'User', 'name': 'bob'}],
           'roleRef': {'kind': 'ClusterRole', 'name': 'edit'}}


def _access(*objects: dict[str, Any], denials: bool = True) -> Access:
    stored: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for key, obj in [*bootstrap.objects(), *((bootstrap.PLURALS[o['kind']], o) for o in objects)]:
        stored[key].append(obj)
    access = Access(tokens={'t1': ('alice', ())}, authorizer=Authorizer(lambda key: stored[key]))
    if denials:
        access.denials.extend([Denial(verb='delete', resource='configmaps', namespace='prod'),
                               Denial(resource='secrets', user='alice')])
    return access


RULES = _access(EDITORS)


def _attrs(verb: str, resource: str, namespace: str = '', **more: str) -> dict[str, Any]:
    return {'spec': {'resourceAttributes': {'verb': verb, 'resource': resource, 'namespace': namespace, **more}}}


@pytest.mark.parametrize('subject, body, allowed', [
    (ADMIN, _attrs('delete', 'configmaps', 'prod'), False),
    (ADMIN, _attrs('delete', 'configmaps', 'dev'), True),
    (ADMIN, _attrs('get', 'configmaps', 'prod'), True),
    (ADMIN, _attrs('get', 'secrets'), True),
    (ALICE, _attrs('get', 'secrets'), False),
    (ALICE, _attrs('get', 'pods', subresource='log'), True),
    (ALICE, {'spec': {'nonResourceAttributes': {'path': '/healthz', 'verb': 'get'}}}, True),
])
def test_self_subject_access_review(subject: User, body: dict[str, Any], allowed: bool) -> None:
    review = accessreviews.review('SelfSubjectAccessReview', body, subject, RULES)
    assert review['kind'] == 'SelfSubjectAccessReview' and review['apiVersion'] == 'authorization.k8s.io/v1'
    sent = {key: {k: v for k, v in value.items() if v} for key, value in body['spec'].items()}
    assert review['spec'] == sent and review['status']['allowed'] is allowed   # empty values are not echoed
    assert review['status'].get('denied', False) is not allowed


def test_subject_access_review_is_about_the_named_user() -> None:
    body = {'spec': {'user': 'alice', **_attrs('list', 'secrets', 'default')['spec']}}
    assert accessreviews.review('SubjectAccessReview', body, ADMIN, RULES)['status']['allowed'] is False
    body['spec']['user'] = 'bob'
    assert accessreviews.review('SubjectAccessReview', body, ADMIN, RULES)['status']['allowed'] is True


def test_local_subject_access_review_in_its_namespace() -> None:
    body = {'spec': {'user': 'bob', **_attrs('delete', 'configmaps', 'prod')['spec']}}
    assert accessreviews.review('LocalSubjectAccessReview', body, ADMIN, RULES, 'prod')['status']['allowed'] is False
    with pytest.raises(statuses.ApiError) as error:
        accessreviews.review('LocalSubjectAccessReview', body, ADMIN, RULES, 'dev')
    assert error.value.code == 422 and 'must match metadata.namespace' in error.value.message


def test_rules_review_lists_the_rbac_rules_and_is_incomplete_when_forbid_rules_deny() -> None:
    plain = accessreviews.review('SelfSubjectRulesReview', {'spec': {'namespace': 'x'}}, ADMIN,
         _access(denials=False))['status']
    assert plain['incomplete'] is False and {'verbs': ['*'], 'apiGroups': ['*'], 'resources': ['*']} in \
        plain['resourceRules']
    assert {'verbs': ['*'], 'nonResourceURLs': ['*']} in plain['nonResourceRules']
    denied = accessreviews.review('SelfSubjectRulesReview', {'spec': {'namespace': 'x'}}, ALICE, RULES)['status']
    assert denied['incomplete'] is True and 'resource=secrets' in denied['evaluationError']
    with pytest.raises(statuses.ApiError) as error:
        accessreviews.review('SelfSubjectRulesReview', {'spec': {}}, ALICE, RULES)
    assert (error.value.code, error.value.message) == (400, 'no namespace on request')


def test_token_review_and_self_subject_review() -> None:
    known = accessreviews.review('TokenReview', {'spec': {'token': 't1'}}, ADMIN, RULES)['status']
    known['user'].pop('uid', None)
    assert known == {'authenticated': True, 'user': {'username': 'alice', 'groups': ['system:authenticated']},
                     'audiences': ['https://kubernetes.default.svc.cluster.local']}
    unknown = accessreviews.review('TokenReview', {'spec': {'token': 'zz'}}, ADMIN, RULES)['status']
    assert unknown == {'user': {}, 'error': 'invalid bearer token'}
    me = accessreviews.review('SelfSubjectReview', None, ADMIN, RULES)
    assert me['status']['userInfo'] == {'username': 'kubernetes-admin', 'groups': list(ADMIN_GROUPS)}
    assert me['metadata']['creationTimestamp']


@pytest.mark.parametrize('kind, body, code', [
    ('SelfSubjectAccessReview', [1], 400),
    ('SelfSubjectAccessReview', {'kind': 'Pod', 'spec': {}}, 400),
    ('SelfSubjectAccessReview', {'spec': {}}, 422),
    ('SelfSubjectAccessReview', {'spec': {'resourceAttributes': 'x'}}, 400),
    ('SubjectAccessReview', _attrs('get', 'pods'), 422),
    ('LocalSubjectAccessReview', {'spec': {'user': 'u', 'nonResourceAttributes': {'path': '/'}}}, 422),
    ('TokenReview', {'spec': {}}, 400),
])
def test_invalid_reviews(kind: str, body: Any, code: int) -> None:
    with pytest.raises(statuses.ApiError) as error:
        accessreviews.review(kind, body, ADMIN, RULES, 'default')
    assert error.value.code == code


def test_no_table_of_an_access_review() -> None:
    """Kubernetes' conformance: a Table of what is never stored (a backend without metadata) is a 406."""
    from kopf.testing import LocalCluster
    from tests.fidelity.conftest import Http
    with LocalCluster() as cluster:
        body = {'apiVersion': 'authorization.k8s.io/v1', 'kind': 'SelfSubjectAccessReview',
                'spec': {'nonResourceAttributes': {'path': '/', 'verb': 'get'}}}
        path = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews'
        table = {'Accept': 'application/json;as=Table;v=v1;g=meta.k8s.io'}
        assert Http(cluster.url).request('POST', path, body, headers=table)[0] == 406
        assert Http(cluster.url).request('POST', path, body)[0] == 201
