"""The RBAC category: requests allowed and refused per verb, binding kinds, aggregation, impersonation,
TokenRequest, escalation and the RBAC kinds' validation — each as a real server answers it.

The admin acts as other users by impersonation (`Impersonate-User`, `-Group`), or with a
ServiceAccount's token from TokenRequest (sent without the admin's client certificate: `bare`).
RBAC takes a moment to follow a change on a real server (its informers): a step that expects a
new permission to hold waits for it (`until`); the refusals need no wait.
"""
from typing import Any

from .harness import MERGE, Step

NS = 'd-rbac'
RBAC = 'rbac.authorization.k8s.io'
RBAC_V1 = f'/apis/{RBAC}/v1'
ROBOT = f'system:serviceaccount:{NS}:robot'
AUTHZ = '/apis/authorization.k8s.io/v1'


def ok(code: int, body: Any) -> bool:
    return code < 300


def allowed(code: int, body: Any) -> bool:
    return code < 300 and bool((body.get('status') or {}).get('allowed'))


def as_user(name: str, *groups: str) -> dict[str, str]:
    """Impersonation headers (one group only: the harness's headers are a plain mapping)."""
    return {'Impersonate-User': name, **({'Impersonate-Group': groups[0]} if groups else {})}


BEARER = {'Authorization': 'Bearer {robot_token}'}


def cms(name: str = '', query: str = '', ns: str = NS) -> str:
    return f'/api/v1/namespaces/{ns}/configmaps' + (f'/{name}' if name else '') + (f'?{query}' if query else '')


def rules(*pairs: tuple[str, str, list[str]], names: list[str] | None = None) -> list[dict[str, Any]]:
    return [{'apiGroups': [group], 'resources': [resource], 'verbs': verbs,
             **({'resourceNames': names} if names else {})} for group, resource, verbs in pairs]


def role(name: str, found: list[dict[str, Any]], kind: str = 'Role', **meta: Any) -> dict[str, Any]:
    return {'apiVersion': f'{RBAC}/v1', 'kind': kind, 'metadata': {'name': name, **meta}, 'rules': found}


def binding(name: str, ref: tuple[str, str], *subjects: dict[str, str], kind: str = 'RoleBinding') -> dict[str, Any]:
    return {'apiVersion': f'{RBAC}/v1', 'kind': kind, 'metadata': {'name': name},
            'roleRef': {'apiGroup': RBAC, 'kind': ref[0], 'name': ref[1]}, 'subjects': list(subjects)}


def user(name: str) -> dict[str, str]:
    return {'kind': 'User', 'apiGroup': RBAC, 'name': name}


def group(name: str) -> dict[str, str]:
    return {'kind': 'Group', 'apiGroup': RBAC, 'name': name}


def robot() -> dict[str, str]:
    return {'kind': 'ServiceAccount', 'name': 'robot', 'namespace': NS}


def ssar(verb: str, resource: str, ns: str = NS, name: str = '') -> dict[str, Any]:
    return {'apiVersion': 'authorization.k8s.io/v1', 'kind': 'SelfSubjectAccessReview',
            'spec': {'resourceAttributes': {'verb': verb, 'resource': resource, 'namespace': ns, 'name': name}}}


def sorted_rules(body: Any) -> Any:
    """The rules review's rules in a fixed order (a real server visits its bindings in its cache's order)."""
    status = body.get('status') or {}
    return {**body, 'status': {**status, **{key: sorted(status.get(key) or [], key=repr)
                                            for key in ('resourceRules', 'nonResourceRules')}}}


def diff_rules(body: Any) -> Any:
    """Only the rules of the suite's own resource (the rest of an aggregated role is the bootstrap policy's)."""
    return {'rules': [rule for rule in body.get('rules') or [] if 'diffs' in rule.get('resources', ())]}


def has_rules_for(resource: str) -> Any:
    return lambda code, body: code == 200 and any(resource in rule.get('resources', ())
                                                  for rule in body.get('rules') or ())


CLUSTER_ROLE = f'{RBAC_V1}/clusterroles'
CLUSTER_BINDING = f'{RBAC_V1}/clusterrolebindings'
ROLES = f'{RBAC_V1}/namespaces/{NS}/roles'
BINDINGS = f'{RBAC_V1}/namespaces/{NS}/rolebindings'
TOKEN = f'/api/v1/namespaces/{NS}/serviceaccounts/robot/token'
AGGREGATED = {'clusterRoleSelectors': [{'matchLabels': {'diff.kopf.dev/aggregate': 'true'}}]}

BOOTSTRAP: list[Step] = [   # the policy a real server starts with, and who wrote it
    Step('GET', f'{CLUSTER_ROLE}/cluster-admin'),
    Step('GET', f'{CLUSTER_ROLE}/system:discovery'),
    Step('GET', f'{CLUSTER_ROLE}/edit'),
    Step('GET', f'{CLUSTER_BINDING}/system:basic-user'),
    Step('GET', f'{RBAC_V1}/namespaces/kube-system/roles/system:controller:bootstrap-signer'),
]

SETUP: list[Step] = [
    Step('POST', '/api/v1/namespaces', {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': NS}}),
    Step('POST', cms(), {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'one'}, 'data': {'a': '1'}}),
    Step('POST', cms(), {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'two'}, 'data': {'b': '2'}}),
    Step('POST', ROLES, role('cm-reader', rules(('', 'configmaps', ['get', 'list', 'watch'])))),
    Step('POST', ROLES, role('cm-one', rules(('', 'configmaps', ['get']), names=['one']))),
    Step('POST', BINDINGS, binding('alice-reads', ('Role', 'cm-reader'), user('alice'))),
    Step('POST', BINDINGS, binding('bob-reads-one', ('Role', 'cm-one'), user('bob'))),
    Step('POST', CLUSTER_ROLE, role('diff-secrets-lister', rules(('', 'secrets', ['list'])), kind='ClusterRole')),
    Step('POST', CLUSTER_BINDING, binding('diff-auditors', ('ClusterRole', 'diff-secrets-lister'),
                                          group('diff-auditors'), kind='ClusterRoleBinding')),
    Step('POST', BINDINGS, binding('carol-lists', ('ClusterRole', 'diff-secrets-lister'), user('carol'))),
    Step('POST', BINDINGS, binding('eve-ghost', ('ClusterRole', 'diff-missing'), user('eve'))),
    Step('POST', f'/api/v1/namespaces/{NS}/serviceaccounts',
         {'apiVersion': 'v1', 'kind': 'ServiceAccount', 'metadata': {'name': 'robot'}}),
    Step('POST', BINDINGS, binding('robot-edits', ('ClusterRole', 'edit'), robot())),
]

VERBS: list[Step] = [
    Step('POST', f'{AUTHZ}/selfsubjectaccessreviews', ssar('list', 'configmaps'), headers=as_user('alice'),
         until=allowed),
    Step('GET', cms(), headers=as_user('alice'), until=ok),
    Step('GET', cms('one'), headers=as_user('alice')),
    Step('GET', cms(query='watch=true&timeoutSeconds=1&resourceVersion=0&fieldSelector=metadata.name%3Done'),
         headers=as_user('alice'), events=1),
    Step('POST', cms(), {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'new'}},
         headers=as_user('alice')),
    Step('PUT', cms('one'), {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'one'}},
         headers=as_user('alice')),
    Step('PATCH', cms('one'), {'data': {'a': '2'}}, MERGE, headers=as_user('alice')),
    Step('DELETE', cms('one'), headers=as_user('alice')),
    Step('DELETE', cms(), headers=as_user('alice')),
    Step('GET', cms(ns='default'), headers=as_user('alice')),
    Step('GET', f'/api/v1/namespaces/{NS}/secrets', headers=as_user('alice')),
    Step('GET', '/api/v1/nodes', headers=as_user('alice')),
    Step('GET', f'/api/v1/namespaces/{NS}', headers=as_user('alice')),
    Step('GET', f'/api/v1/namespaces/{NS}/pods/nope/log', headers=as_user('alice')),
    Step('GET', '/apis/nope.example.com/v1/namespaces/x/things', headers=as_user('alice')),
    Step('GET', '/metrics', headers=as_user('alice')),
    Step('GET', '/version', headers=as_user('alice'), pick=lambda body: sorted(body)),
    Step('GET', '/apis', headers=as_user('alice'), pick=lambda body: body.get('kind')),
    Step('GET', cms('one'), headers=as_user('bob'), until=ok),
    Step('GET', cms('two'), headers=as_user('bob')),
    Step('GET', cms(), headers=as_user('bob')),
    Step('GET', cms(query='fieldSelector=metadata.name%3Done'), headers=as_user('bob')),
]

BINDING_KINDS: list[Step] = [
    Step('GET', f'/api/v1/namespaces/{NS}/secrets', headers=as_user('dave', 'diff-auditors'), until=ok),
    Step('GET', '/api/v1/secrets?labelSelector=diff%3Dnone', headers=as_user('dave', 'diff-auditors')),
    Step('GET', f'/api/v1/namespaces/{NS}/secrets/x', headers=as_user('dave', 'diff-auditors')),
    Step('GET', f'/api/v1/namespaces/{NS}/secrets', headers=as_user('carol'), until=ok),
    Step('GET', '/api/v1/secrets', headers=as_user('carol')),
    Step('GET', cms(), headers=as_user('eve')),
    Step('POST', f'{AUTHZ}/subjectaccessreviews', {
        'apiVersion': 'authorization.k8s.io/v1', 'kind': 'SubjectAccessReview',
        'spec': {'user': 'eve', 'resourceAttributes': {'verb': 'list', 'resource': 'configmaps', 'namespace': NS}}}),
    Step('POST', f'{AUTHZ}/subjectaccessreviews', {
        'apiVersion': 'authorization.k8s.io/v1', 'kind': 'SubjectAccessReview',
        'spec': {'user': 'carol', 'groups': ['diff-auditors'],
                 'resourceAttributes': {'verb': 'list', 'resource': 'secrets', 'namespace': 'default'}}}),
    Step('POST', f'{AUTHZ}/namespaces/{NS}/localsubjectaccessreviews', {
        'apiVersion': 'authorization.k8s.io/v1', 'kind': 'LocalSubjectAccessReview', 'metadata': {'namespace': NS},
        'spec': {'user': 'bob', 'resourceAttributes': {'verb': 'get', 'resource': 'configmaps', 'namespace': NS,
                                                       'name': 'two'}}}),
    Step('POST', f'{AUTHZ}/selfsubjectrulesreviews', {
        'apiVersion': 'authorization.k8s.io/v1', 'kind': 'SelfSubjectRulesReview', 'spec': {'namespace': NS}},
        headers=as_user('bob'), pick=sorted_rules),
    Step('POST', cms(), {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'made-by-robot'}},
         headers=as_user(ROBOT), until=ok),
    Step('DELETE', cms('made-by-robot'), headers=as_user(ROBOT)),
    Step('POST', ROLES, role('robot-role', rules(('', 'configmaps', ['get']))), headers=as_user(ROBOT)),
]

AGGREGATION: list[Step] = [
    Step('POST', CLUSTER_ROLE, {**role('diff-agg', []), 'kind': 'ClusterRole', 'aggregationRule': AGGREGATED}),
    Step('POST', CLUSTER_ROLE, role('diff-agg-part', rules(('', 'pods', ['get'])), kind='ClusterRole',
                                    labels={'diff.kopf.dev/aggregate': 'true'})),
    Step('GET', f'{CLUSTER_ROLE}/diff-agg', until=has_rules_for('pods')),
    Step('PATCH', f'{CLUSTER_ROLE}/diff-agg-part', {'rules': rules(('', 'pods', ['get', 'list']))}, MERGE),
    Step('GET', f'{CLUSTER_ROLE}/diff-agg', until=lambda code, body: 'list' in str(body.get('rules'))),
    Step('POST', CLUSTER_ROLE, role('diff-to-view', rules(('kopf.dev', 'diffs', ['get', 'list'])), kind='ClusterRole',
                                    labels={'rbac.authorization.k8s.io/aggregate-to-view': 'true'})),
    Step('GET', f'{CLUSTER_ROLE}/view', until=has_rules_for('diffs'),
         pick=diff_rules),
    Step('GET', f'{CLUSTER_ROLE}/admin', until=has_rules_for('diffs'),
         pick=diff_rules),
    Step('POST', BINDINGS, binding('frank-views', ('ClusterRole', 'view'), user('frank'))),
    Step('GET', f'/apis/kopf.dev/v1/namespaces/{NS}/diffs', headers=as_user('frank'), until=ok),
    Step('DELETE', f'{CLUSTER_ROLE}/diff-to-view'),
    Step('GET', f'{CLUSTER_ROLE}/view', until=lambda code, body: not has_rules_for('diffs')(code, body),
         pick=diff_rules),
]

TOKENS: list[Step] = [
    Step('POST', TOKEN, {'apiVersion': 'authentication.k8s.io/v1', 'kind': 'TokenRequest', 'spec': {}},
         keep={'robot_token': 'status.token'}),
    Step('GET', cms(), headers=BEARER, bare=True, until=ok),
    Step('POST', cms(), {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'by-token'}},
         headers=BEARER, bare=True),
    Step('GET', '/api/v1/namespaces/default/configmaps', headers=BEARER, bare=True),
    Step('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews',
         {'apiVersion': 'authentication.k8s.io/v1', 'kind': 'SelfSubjectReview'}, headers=BEARER, bare=True),
    Step('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
        'apiVersion': 'authentication.k8s.io/v1', 'kind': 'TokenReview', 'spec': {'token': '{robot_token}'}}),
    Step('POST', TOKEN, {'apiVersion': 'authentication.k8s.io/v1', 'kind': 'TokenRequest',
                         'spec': {'expirationSeconds': 60}}),
    Step('POST', TOKEN, {'apiVersion': 'authentication.k8s.io/v1', 'kind': 'TokenRequest',
                         'metadata': {'name': 'other'}, 'spec': {}}),
    Step('POST', f'/api/v1/namespaces/{NS}/serviceaccounts/nobody/token',
         {'apiVersion': 'authentication.k8s.io/v1', 'kind': 'TokenRequest', 'spec': {}}),
    Step('POST', TOKEN, {'apiVersion': 'authentication.k8s.io/v1', 'kind': 'TokenRequest',
                         'spec': {'boundObjectRef': {'apiVersion': 'v1', 'kind': 'ConfigMap', 'name': 'one'}}}),
    Step('POST', TOKEN, {'apiVersion': 'authentication.k8s.io/v1', 'kind': 'TokenRequest', 'spec': {}},
         headers=as_user('alice')),
]

IMPERSONATION: list[Step] = [
    Step('GET', cms(), headers={**BEARER, 'Impersonate-User': 'alice'}, bare=True),
    Step('GET', cms(), headers={**BEARER, 'Impersonate-User': 'system:serviceaccount:other:sa'}, bare=True),
    Step('POST', CLUSTER_ROLE, role('diff-impersonator', rules(('', 'users', ['impersonate'])), kind='ClusterRole')),
    Step('POST', CLUSTER_BINDING, binding('diff-robot-impersonates', ('ClusterRole', 'diff-impersonator'), robot(),
                                          kind='ClusterRoleBinding')),
    Step('GET', cms(), headers={**BEARER, 'Impersonate-User': 'alice'}, bare=True, until=ok),
    Step('GET', cms(), headers={**BEARER, 'Impersonate-User': 'alice', 'Impersonate-Group': 'diff-auditors'},
         bare=True),
    Step('GET', f'/api/v1/namespaces/{NS}/secrets', headers={**BEARER, 'Impersonate-User': 'alice'}, bare=True),
]

ESCALATION: list[Step] = [
    Step('POST', ROLES, role('robot-maker', rules(('rbac.authorization.k8s.io', 'roles', ['create']),
                                                  ('rbac.authorization.k8s.io', 'rolebindings', ['create'])))),
    Step('POST', BINDINGS, binding('robot-makes', ('Role', 'robot-maker'), robot())),
    Step('POST', ROLES, role('robot-cm', rules(('', 'configmaps', ['get', 'list']))), headers=as_user(ROBOT),
         until=ok),
    Step('POST', ROLES, role('robot-nodes', rules(('', 'nodes', ['get', 'list']), ('', 'configmaps', ['get']))),
         headers=as_user(ROBOT)),
    Step('POST', BINDINGS, binding('robot-gives-view', ('ClusterRole', 'view'), user('gina')),
         headers=as_user(ROBOT)),
    Step('POST', BINDINGS, binding('robot-gives-admin', ('ClusterRole', 'admin'), user('gina')),
         headers=as_user(ROBOT)),
    Step('POST', BINDINGS, binding('robot-gives-ghost', ('ClusterRole', 'diff-missing'), user('gina')),
         headers=as_user(ROBOT)),
    Step('POST', ROLES, role('binder', [{'apiGroups': [RBAC], 'resources': ['clusterroles'], 'verbs': ['bind'],
                                         'resourceNames': ['admin']}])),
    Step('POST', BINDINGS, binding('robot-binds', ('Role', 'binder'), robot())),
    Step('POST', BINDINGS, binding('robot-gives-admin', ('ClusterRole', 'admin'), user('gina')),
         headers=as_user(ROBOT), until=ok),
]

VALIDATION: list[Step] = [
    Step('POST', BINDINGS, {**binding('bad-kind', ('Robot', 'x'), user('u'))}),
    Step('POST', CLUSTER_BINDING, binding('bad-sa', ('ClusterRole', 'view'), {'kind': 'ServiceAccount', 'name': 'x'},
                                          kind='ClusterRoleBinding')),
    Step('POST', ROLES, role('bad-urls', [{'nonResourceURLs': ['/x'], 'verbs': ['get']}])),
    Step('POST', CLUSTER_ROLE, role('bad-rule', [{'apiGroups': [''], 'resources': ['pods']}], kind='ClusterRole')),
    Step('PATCH', f'{BINDINGS}/alice-reads', {'roleRef': {'name': 'cm-one'}}, MERGE),
    Step('POST', BINDINGS, binding('defaults', ('ClusterRole', 'view'), {'kind': 'User', 'name': 'u'},
                                   {'kind': 'Group', 'name': 'g'})),
]

RBAC_STEPS: list[Step] = (BOOTSTRAP + SETUP + VERBS + BINDING_KINDS + AGGREGATION + TOKENS + IMPERSONATION + ESCALATION
                           + VALIDATION)
