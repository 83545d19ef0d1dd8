"""RBAC's own guard against privilege escalation: writes of roles and bindings, as the registry checks them.

A Role or ClusterRole may be created or changed only by a user who holds every permission it
grants (or may `escalate` it); a RoleBinding or ClusterRoleBinding only by a user who holds every
permission of the role it binds (or may `bind` that role). `system:masters` is exempt, and so are
changes of nothing but the garbage collector's fields (ownerReferences, finalizers). A refusal is a
403 naming what is missing (`user "u" (groups=["g"]) is attempting to grant RBAC permissions not
currently held:` and the rules, compacted as upstream's `CompactRules`, sorted); a binding of a
missing role is that role's 404.

    check(authorizer, user, target plural, namespace, obj, old)   # raises ApiError, or returns
"""
from collections.abc import Mapping
from typing import Any

from kopf._cluster import statuses
from kopf._cluster.rbac import policyrules, refusals, resolver
from kopf._cluster.rbac.authorizer import Authorizer
from kopf._cluster.rbac.policyrules import go_strings
from kopf._cluster.rbac.requestinfo import Attributes
from kopf._cluster.rbac.subjects import User

GROUP = resolver.GROUP
ROLE_KINDS = ('roles', 'clusterroles')
BINDING_KINDS = ('rolebindings', 'clusterrolebindings')
GC_FIELDS = ('ownerReferences', 'finalizers', 'managedFields', 'selfLink', 'resourceVersion')


def guarded(plural: str, group: str) -> bool:
    return group == GROUP and plural in ROLE_KINDS + BINDING_KINDS


def check(authorizer: Authorizer, user: User, plural: str, namespace: str, obj: Mapping[str, Any],
          old: Mapping[str, Any] | None) -> None:
    if user.privileged or (old is not None and _only_gc_fields(obj, old)):
        return
    name = str((obj.get('metadata') or {}).get('name') or '')
    if plural in ROLE_KINDS:
        escalate = Attributes(user, 'escalate', True, GROUP, '*', plural, '', namespace, name)
        if authorizer.authorize(escalate).allowed:
            return
        rules = [rule for rule in obj.get('rules') or () if isinstance(rule, Mapping)]
    else:
        ref = obj.get('roleRef') or {}
        kind = 'clusterroles' if ref.get('kind') == 'ClusterRole' else 'roles'
        bind = Attributes(user, 'bind', True, str(ref.get('apiGroup') or ''), '*', kind, '', namespace,
                          str(ref.get('name') or ''))
        if ref.get('kind') in ('Role', 'ClusterRole') and authorizer.authorize(bind).allowed:
            return
        if ref.get('kind') not in ('Role', 'ClusterRole'):
            return   # validation refuses it
        rules, error = resolver.role_rules(authorizer.policy, ref, namespace, registry=True)
        if error is not None:   # a real server words it by the binding's resource, not the role's
            raise statuses.not_found(f'{plural}.{GROUP}', GROUP, plural, str(ref.get('name') or ''))
    owned, errors = authorizer.rules_for(user, namespace, registry=True)
    missing = policyrules.covers(owned, rules)
    if missing:
        raise refusals.qualified_forbidden(GROUP, plural, name, _message(user, missing, errors))


def _message(user: User, missing: list[dict[str, list[str]]], errors: list[str]) -> str:
    described = sorted({policyrules.compact_string(rule) for rule in policyrules.compact(missing)})
    text = (f'user {policyrules.go_quote(user.name)} (groups={go_strings(user.groups)}) is attempting to grant '
            'RBAC permissions not currently held:\n' + '\n'.join(described))
    if errors:
        text += f'; resolution errors: [{resolver.aggregate(errors)}]'
    return text


def _only_gc_fields(obj: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    def stripped(value: Mapping[str, Any]) -> dict[str, Any]:
        meta = {k: v for k, v in (value.get('metadata') or {}).items() if k not in GC_FIELDS}
        return {**value, 'metadata': meta}
    return stripped(obj) == stripped(old)
