"""Validation and defaults of the RBAC kinds."""
from typing import Any

from kopf._cluster.rbac import validating


def fields(causes: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(cause['field'], cause['message']) for cause in causes]


def test_rules() -> None:
    bad = {'rules': [{'apiGroups': [''], 'resources': ['pods']}, {'verbs': ['get']},
                     {'verbs': ['get'], 'nonResourceURLs': ['/x'], 'resources': ['pods']}]}
    assert fields(validating.prepare('clusterroles', bad)) == [
        ('rules[0].verbs', 'Required value: verbs must contain at least one value'),
        ('rules[1].apiGroups', 'Required value: resource rules must supply at least one api group'),
        ('rules[1].resources', 'Required value: resource rules must supply at least one resource'),
        ('rules[2].nonResourceURLs', 'Invalid value: ["/x"]: rules cannot apply to both regular resources '
                                     'and non-resource URLs')]
    assert fields(validating.prepare('roles', {'rules': [{'verbs': ['get'], 'nonResourceURLs': ['/x']}]})) == [
        ('rules[0].nonResourceURLs',
             'Invalid value: ["/x"]: namespaced rules cannot apply to non-resource URLs')]


def test_bindings_defaults_and_refs() -> None:
    obj: dict[str, Any] = {'roleRef': {'kind': 'Role', 'name': 'r'}, 'subjects': [{'kind': 'User', 'name': 'u'}]}
    assert validating.prepare('rolebindings', obj) == []
    assert obj['roleRef']['apiGroup'] == obj['subjects'][0]['apiGroup'] == 'rbac.authorization.k8s.io'
    assert fields(validating.prepare('clusterrolebindings', {'roleRef': {'kind': 'Role', 'name': 'r'}, 'subjects': [
        {'kind': 'ServiceAccount', 'name': 'sa'}, {'kind': 'Robot', 'name': 'x'}]})) == [
        ('roleRef.kind', 'Unsupported value: "Role": supported values: "ClusterRole"'),
        ('subjects[0].namespace', 'Required value'),
        ('subjects[1].kind', 'Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"')]
    old = {'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'ClusterRole', 'name': 'view'}}
    new = {'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'ClusterRole', 'name': 'edit'}}
    assert fields(validating.on_update('rolebindings', old, new)) == [('roleRef', 'Invalid value: {'
        '"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}: cannot change roleRef')]
