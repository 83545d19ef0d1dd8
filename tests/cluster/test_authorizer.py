"""The authorizer: forbid() rules, system:masters, then RBAC with the real server's reasons."""
from collections import defaultdict
from typing import Any

from kopf._cluster.rbac import authorizer, bootstrap
from kopf._cluster.rbac.authorizer import Authorizer
from kopf._cluster.rbac.forbidding import Denial
from kopf._cluster.rbac.requestinfo import Attributes
from kopf._cluster.rbac.resolver import Policy
from kopf._cluster.rbac.subjects import ADMIN, User, service_account

RBAC = 'rbac.authorization.k8s.io'


def objects(*extra: dict[str, Any]) -> dict[tuple[str, str], list[Any]]:
    found: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for key, obj in [*bootstrap.objects(), *((bootstrap.PLURALS[o['kind']], o) for o in extra)]:
        found[key].append(obj)
    return found


def binding(kind: str, name: str, role: tuple[str, str], *subjects: dict[str, str], ns: str = '') -> dict[str, Any]:
    meta = {'name': name, **({'namespace': ns} if ns else {})}
    return {'kind': kind, 'metadata': meta, 'roleRef': {'apiGroup': RBAC, 'kind': role[0], 'name': role[1]},
            'subjects': list(subjects)}


def ask(policy: Policy, user: User, verb: str, resource: str, ns: str = '', name: str = '',
        denials: tuple[Denial, ...] = ()) -> authorizer.Decision:
    return authorizer.decide(policy, denials, Attributes(user, verb, True, '', 'v1', resource, '', ns, name))


POLICY = Policy.of(objects(
    binding('RoleBinding', 'view', ('ClusterRole', 'view'), {'kind': 'ServiceAccount', 'name': 'op'}, ns='ns1'),
    binding('ClusterRoleBinding', 'devs', ('ClusterRole', 'edit'), {'kind': 'Group', 'name': 'devs'}),
    binding('RoleBinding', 'broken', ('Role', 'missing'), {'kind': 'User', 'name': 'bob'}, ns='ns1'),
    {'kind': 'Role', 'metadata': {'name': 'cm', 'namespace': 'ns2'},
     'rules': [{'verbs': ['get'], 'apiGroups': [''], 'resources': ['configmaps'], 'resourceNames': ['one']}]},
    binding('RoleBinding', 'cm', ('Role', 'cm'), {'kind': 'User', 'name': 'bob'}, ns='ns2'),
))


def test_masters_and_the_forbid_rules() -> None:
    assert ask(POLICY, ADMIN, 'delete', 'nodes') == authorizer.Decision(True)
    denial = Denial(verb='delete', resource='nodes')
    assert ask(POLICY, ADMIN, 'delete', 'nodes', denials=(denial,)) == authorizer.Decision(
        False, 'denied by a forbid() rule of the local cluster', denied=True)


def test_service_account_bound_in_its_namespace() -> None:
    op = service_account('ns1', 'op')
    assert ask(POLICY, op, 'list', 'pods', 'ns1').reason == \
        'RBAC: allowed by RoleBinding "view/ns1" of ClusterRole "view" to ServiceAccount "op/ns1"'
    assert ask(POLICY, op, 'create', 'pods', 'ns1') == authorizer.Decision(False)
    assert ask(POLICY, op, 'list', 'pods', 'ns2').allowed is False


def test_groups_and_cluster_bindings() -> None:
    dev = User('carol', ('devs', 'system:authenticated'))
    assert ask(POLICY, dev, 'create', 'configmaps', 'any').reason == \
        'RBAC: allowed by ClusterRoleBinding "devs" of ClusterRole "edit" to Group "devs"'
    assert ask(POLICY, dev, 'create', 'configmaps').allowed   # all namespaces at once: a cluster binding allows it
    assert ask(POLICY, dev, 'delete', 'nodes').allowed is False


def test_missing_roles_are_the_reason_and_names_narrow() -> None:
    bob = User('bob')
    assert ask(POLICY, bob, 'get', 'pods', 'ns1') == authorizer.Decision(
        False, 'RBAC: role.rbac.authorization.k8s.io "missing" not found')
    assert ask(POLICY, bob, 'get', 'configmaps', 'ns2', 'one').allowed
    assert not ask(POLICY, bob, 'get', 'configmaps', 'ns2', 'two').allowed


def test_discovery_and_self_reviews_for_every_authenticated_user() -> None:
    anyone = User('anyone')
    assert authorizer.decide(POLICY, (), Attributes(anyone, 'get', False, path='/apis/apps/v1')).allowed
    assert authorizer.decide(POLICY, (), Attributes(
        anyone, 'create', True, 'authorization.k8s.io', 'v1', 'selfsubjectaccessreviews')).allowed
    assert not authorizer.decide(POLICY, (), Attributes(anyone, 'get', False, path='/metrics')).allowed


def test_the_authorizer_follows_changes_and_answers_cel() -> None:
    stored = objects()
    cached = Authorizer(lambda key: stored[key])
    bob = User('bob')
    assert not cached.allows(bob, 'get', '', 'configmaps', namespace='ns2', name='one')
    stored[('rbac.authorization.k8s.io', 'roles')].append(
        {'kind': 'Role', 'metadata': {'name': 'r', 'namespace': 'ns2'},
         'rules': [{'verbs': ['get'], 'apiGroups': [''], 'resources': ['configmaps']}]})
    stored[('rbac.authorization.k8s.io', 'rolebindings')].append(
        binding('RoleBinding', 'r', ('Role', 'r'), {'kind': 'User', 'name': 'bob'}, ns='ns2'))
    assert not cached.allows(bob, 'get', '', 'configmaps', namespace='ns2', name='one')   # not told yet
    cached.follow(('rbac.authorization.k8s.io', 'rolebindings'))
    assert cached.allows(bob, 'get', '', 'configmaps', namespace='ns2', name='one')
    assert cached.allows(bob, 'get', path='/version')
