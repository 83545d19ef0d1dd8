"""The rules that apply to a user in a namespace: bindings matched by subject, roles looked up by reference.

A `Policy` is a snapshot of the four RBAC kinds' objects; `visit(policy, user, namespace)` yields what
upstream's DefaultRuleResolver visits, in its order: every ClusterRoleBinding's rules, then (in a
namespace) every RoleBinding's of that namespace, each with its source described as upstream's
messages describe it (`ClusterRoleBinding "x" of ClusterRole "y" to User "u"`), and the errors of
references to missing roles (`clusterrole.rbac.authorization.k8s.io "y" not found`). Pure: no I/O.
"""
import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from kopf._cluster.rbac import subjects
from kopf._cluster.rbac.policyrules import Rule, go_quote
from kopf._cluster.rbac.subjects import User

GROUP = 'rbac.authorization.k8s.io'
ROLES, CLUSTER_ROLES = (GROUP, 'roles'), (GROUP, 'clusterroles')
ROLE_BINDINGS, CLUSTER_ROLE_BINDINGS = (GROUP, 'rolebindings'), (GROUP, 'clusterrolebindings')
KEYS = (ROLES, CLUSTER_ROLES, ROLE_BINDINGS, CLUSTER_ROLE_BINDINGS)
Obj = Mapping[str, Any]
Visit = tuple[str, Rule | None, str | None]   # (the source described, a rule, or an error's message)


@dataclasses.dataclass(frozen=True)
class Policy:
    """The RBAC objects at one moment: roles by (namespace, name), bindings sorted by name."""

    roles: Mapping[tuple[str, str], Obj] = dataclasses.field(default_factory=dict)
    cluster_roles: Mapping[str, Obj] = dataclasses.field(default_factory=dict)
    role_bindings: Mapping[str, list[Obj]] = dataclasses.field(default_factory=dict)
    cluster_role_bindings: list[Obj] = dataclasses.field(default_factory=list)

    @classmethod
    def of(cls, objects: Mapping[tuple[str, str], Iterable[Obj]]) -> 'Policy':
        """From the objects of each kind (by storage key: `KEYS`)."""
        roles = {_located(obj): obj for obj in objects.get(ROLES, ())}
        cluster_roles = {obj['metadata']['name']: obj for obj in objects.get(CLUSTER_ROLES, ())}
        role_bindings: dict[str, list[Obj]] = {}
        for binding in sorted(objects.get(ROLE_BINDINGS, ()), key=_located):
            role_bindings.setdefault(_located(binding)[0], []).append(binding)
        cluster_role_bindings = sorted(objects.get(CLUSTER_ROLE_BINDINGS, ()), key=lambda o: o['metadata']['name'])
        return cls(roles, cluster_roles, role_bindings, cluster_role_bindings)


def _located(obj: Obj) -> tuple[str, str]:
    meta = obj['metadata']
    return str(meta.get('namespace') or ''), str(meta['name'])


def visit(policy: Policy, user: User, namespace: str, *, registry: bool = False) -> Iterator[Visit]:
    """Every rule that applies (with its source), and every error met on the way (with an empty source).

    `registry`: word missing roles as the registry does (`roles.rbac…`), not as the authorizer's
    informers do (`role.rbac…`): the escalation checks resolve through the registry.
    """
    for binding in policy.cluster_role_bindings:
        yield from _bound(policy, user, binding, '', registry)
    if namespace:
        for binding in policy.role_bindings.get(namespace, ()):
            yield from _bound(policy, user, binding, namespace, registry)


def _bound(policy: Policy, user: User, binding: Obj, namespace: str, registry: bool) -> Iterator[Visit]:
    subject = next((s for s in binding.get('subjects') or () if applies(user, s, namespace)), None)
    if subject is None:
        return
    ref = binding.get('roleRef') or {}
    rules, error = role_rules(policy, ref, namespace, registry=registry)
    if error is not None:
        yield '', None, error
        return
    name = binding['metadata']['name']
    if namespace:
        source = f'RoleBinding {go_quote(name + "/" + namespace)}'
    else:
        source = f'ClusterRoleBinding {go_quote(name)}'
    source += f' of {ref.get("kind", "")} {go_quote(str(ref.get("name", "")))} to {describe(subject, namespace)}'
    for rule in rules:
        yield source, rule, None


def role_rules(policy: Policy, ref: Mapping[str, Any], namespace: str, *,
               registry: bool = False) -> tuple[list[Rule], str | None]:
    """GetRoleReferenceRules: the rules of a binding's role (a Role in the binding's namespace), or an error."""
    kind, name = ref.get('kind'), str(ref.get('name') or '')
    if kind == 'Role':
        role = policy.roles.get((namespace, name))
        resource = 'roles' if registry else 'role'
    elif kind == 'ClusterRole':
        role = policy.cluster_roles.get(name)
        resource = 'clusterroles' if registry else 'clusterrole'
    else:
        return [], f'unsupported role reference kind: {go_quote(str(kind))}'
    if role is None:
        return [], f'{resource}.{GROUP} {go_quote(name)} not found'
    return [rule for rule in role.get('rules') or () if isinstance(rule, Mapping)], None


def applies(user: User, subject: Mapping[str, Any], namespace: str) -> bool:
    kind, name = subject.get('kind'), str(subject.get('name') or '')
    if kind == 'User':
        return user.name == name
    if kind == 'Group':
        return name in user.groups
    if kind == 'ServiceAccount':
        sa_namespace = str(subject.get('namespace') or '') or namespace
        return bool(sa_namespace) and subjects.matches_service_account(sa_namespace, name, user.name)
    return False


def describe(subject: Mapping[str, Any], namespace: str) -> str:
    kind, name = str(subject.get('kind') or ''), str(subject.get('name') or '')
    if kind == 'ServiceAccount':
        return f'{kind} {go_quote(name + "/" + (str(subject.get("namespace") or "") or namespace))}'
    return f'{kind} {go_quote(name)}'


def aggregate(errors: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message alone, several (each once) in brackets."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else '[' + ', '.join(unique) + ']'
