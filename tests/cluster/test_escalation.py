"""Escalation checks: writing roles and bindings needs their permissions held (or `escalate`/`bind`)."""
from collections import defaultdict
from typing import Any

import pytest

from kopf._cluster import statuses
from kopf._cluster.rbac import bootstrap, escalation
from kopf._cluster.rbac.authorizer import Authorizer
from kopf._cluster.rbac.subjects import ADMIN, User

RBAC = 'rbac.authorization.k8s.io'
ALICE = User('alice')
PODS = {'verbs': ['get', 'list'], 'apiGroups': [''], 'resources': ['pods']}
SECRETS = {'verbs': ['get'], 'apiGroups': [''], 'resources': ['secrets']}


def authorizer(*rules: dict[str, Any], verbs: tuple[str, ...] = ()) -> Authorizer:
    stored: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for key, obj in bootstrap.objects():
        stored[key].append(obj)
    grants = [*rules] + ([{'verbs': list(verbs), 'apiGroups': [RBAC], 'resources': ['roles', 'clusterroles']}]
                         if verbs else [])
    stored[(RBAC, 'roles')].append({'metadata': {'name': 'alice', 'namespace': 'ns'}, 'rules': grants})
    stored[(RBAC, 'rolebindings')].append({'metadata': {'name': 'alice', 'namespace': 'ns'},
                                           'roleRef': {'apiGroup': RBAC, 'kind': 'Role', 'name': 'alice'},
                                           'subjects': [{'kind': 'User', 'name': 'alice'}]})
    return Authorizer(lambda key: stored[key])


def role(*rules: dict[str, Any]) -> dict[str, Any]:
    return {'metadata': {'name': 'r', 'namespace': 'ns'}, 'rules': list(rules)}


def test_holding_the_permissions_is_enough() -> None:
    escalation.check(authorizer(PODS), ALICE, 'roles', 'ns', role(PODS), None)


def test_masters_and_escalate_are_exempt() -> None:
    escalation.check(authorizer(), ADMIN, 'roles', 'ns', role(SECRETS), None)
    escalation.check(authorizer(verbs=('escalate',)), ALICE, 'roles', 'ns', role(SECRETS), None)


def test_granting_more_is_refused_with_what_is_missing() -> None:
    with pytest.raises(statuses.ApiError) as error:
        escalation.check(authorizer(PODS), ALICE, 'roles', 'ns', role(PODS, SECRETS), None)
    assert (error.value.code, error.value.reason) == (403, 'Forbidden')
    assert error.value.message == (
        'roles.rbac.authorization.k8s.io "r" is forbidden: user "alice" (groups=["system:authenticated"]) is '
        'attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], '
        'Verbs:["get"]}')
    assert error.value.details == {'name': 'r', 'group': RBAC, 'kind': 'roles'}


def test_bindings_need_the_role_or_bind() -> None:
    bound = {'metadata': {'name': 'b', 'namespace': 'ns'}, 'roleRef': {'apiGroup': RBAC, 'kind': 'ClusterRole',
                                                                       'name': 'view'}}
    with pytest.raises(statuses.ApiError) as error:
        escalation.check(authorizer(PODS), ALICE, 'rolebindings', 'ns', bound, None)
    assert error.value.message.startswith('rolebindings.rbac.authorization.k8s.io "b" is forbidden: user "alice"')
    escalation.check(authorizer(verbs=('bind',)), ALICE, 'rolebindings', 'ns', bound, None)
    missing = {**bound, 'roleRef': {'apiGroup': RBAC, 'kind': 'ClusterRole', 'name': 'nope'}}
    with pytest.raises(statuses.ApiError) as error:
        escalation.check(authorizer(PODS), ALICE, 'rolebindings', 'ns', missing, None)
    assert (error.value.code, error.value.message) == (
        404, 'rolebindings.rbac.authorization.k8s.io "nope" not found')   # sic: a real server's wording


def test_garbage_collector_fields_alone_need_nothing() -> None:
    old = role(SECRETS)
    new = {**old, 'metadata': {**old['metadata'], 'finalizers': ['x'], 'ownerReferences': [{'uid': '1'}]}}
    escalation.check(authorizer(), ALICE, 'roles', 'ns', new, old)
