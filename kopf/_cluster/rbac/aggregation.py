"""ClusterRole aggregation, as kube-controller-manager's clusterrole-aggregation controller computes it.

A ClusterRole with an `aggregationRule` gets, as its rules, the rules of every other ClusterRole
whose labels one of its selectors matches: selector by selector, roles sorted by name, each rule
once (the first time it is met). The controller writes them by server-side apply as the field
manager `clusterrole-aggregation-controller` (forcing). Pure: no I/O.

    aggregated(role, cluster_roles) -> the rules it should have, or None if it aggregates nothing
"""
from collections.abc import Iterable, Mapping
from typing import Any

MANAGER = 'clusterrole-aggregation-controller'
RULE_FIELDS = ('verbs', 'apiGroups', 'resources', 'resourceNames', 'nonResourceURLs')


def aggregated(role: Mapping[str, Any], cluster_roles: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]] | None:
    rule = role.get('aggregationRule')
    if not isinstance(rule, Mapping):
        return None
    name = role['metadata']['name']
    others = sorted(cluster_roles, key=lambda other: str(other['metadata']['name']))
    rules: list[dict[str, Any]] = []
    for selector in rule.get('clusterRoleSelectors') or ():
        for other in others:
            if other['metadata']['name'] == name or not matches(selector, other['metadata'].get('labels') or {}):
                continue
            for found in other.get('rules') or ():
                normal = _normal(found)
                if normal not in (_normal(kept) for kept in rules):
                    rules.append({k: v for k, v in found.items() if k in RULE_FIELDS and v not in (None, [])})
    return rules


def _normal(rule: Mapping[str, Any]) -> tuple[tuple[str, ...], ...]:
    """Semantic equality of rules: absent, null and empty lists are the same."""
    return tuple(tuple(rule.get(key) or ()) for key in RULE_FIELDS)


def matches(selector: Any, labels: Mapping[str, Any]) -> bool:
    """A LabelSelector (matchLabels, matchExpressions) against labels; an empty selector matches everything."""
    if not isinstance(selector, Mapping):
        return False
    if any(labels.get(key) != value for key, value in (selector.get('matchLabels') or {}).items()):
        return False
    for expression in selector.get('matchExpressions') or ():
        key, operator, values = expression.get('key'), expression.get('operator'), expression.get('values') or ()
        present = key in labels
        if operator == 'In' and not (present and labels[key] in values):
            return False
        if operator == 'NotIn' and present and labels[key] in values:
            return False
        if (operator == 'Exists') != present and operator in ('Exists', 'DoesNotExist'):
            return False
    return True


def changed(current: Any, wanted: list[dict[str, Any]]) -> bool:
    """Whether the controller would write (`equality.Semantic.DeepEqual`: nil and empty lists are equal)."""
    return [_normal(rule) for rule in current or ()] != [_normal(rule) for rule in wanted]
