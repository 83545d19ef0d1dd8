"""PolicyRules as upstream's RBAC reads them: does a rule allow a request, does a set of rules cover another.

Pure functions over the rules' JSON (`{"verbs": [...], "apiGroups": [...], "resources": [...],
"resourceNames": [...], "nonResourceURLs": [...]}`), after k8s.io/kubernetes `pkg/apis/rbac/v1`
(evaluation helpers) and k8s.io/component-helpers `auth/rbac/validation` (Covers, BreakdownRule),
and the escalation message's compaction and rendering (`CompactRules`, `CompactString`).
"""
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kopf._cluster.rbac.requestinfo import Attributes

Rule = Mapping[str, Any]


def strings(rule: Rule, key: str) -> list[str]:
    values = rule.get(key)
    return [str(value) for value in values] if isinstance(values, list) else []


def allows(attributes: Attributes, rule: Rule) -> bool:
    """RuleAllows: the verb, the API group, the resource (`plural/sub`, or `*/sub`) and the name, or the path."""
    verbs = strings(rule, 'verbs')
    if '*' not in verbs and attributes.verb not in verbs:
        return False
    if not attributes.resource_request:
        return any(url == '*' or url == attributes.path or (url.endswith('*') and attributes.path.startswith(
            url.rstrip('*'))) for url in strings(rule, 'nonResourceURLs'))
    groups = strings(rule, 'apiGroups')
    if '*' not in groups and attributes.group not in groups:
        return False
    subresource = attributes.subresource
    combined = f'{attributes.resource}/{subresource}' if subresource else attributes.resource
    if not any(resource == '*' or resource == combined or (subresource and resource == f'*/{subresource}')
               for resource in strings(rule, 'resources')):
        return False
    names = strings(rule, 'resourceNames')
    return not names or attributes.name in names


def breakdown(rule: Rule) -> list[dict[str, list[str]]]:
    """BreakdownRule: one rule per group x resource x verb (x name), and per URL x verb."""
    names = strings(rule, 'resourceNames')
    verbs = strings(rule, 'verbs')
    subrules: list[dict[str, list[str]]] = []
    for group in strings(rule, 'apiGroups'):
        for resource in strings(rule, 'resources'):
            for verb in verbs:
                base = {'apiGroups': [group], 'resources': [resource], 'verbs': [verb]}
                subrules.extend([{**base, 'resourceNames': [name]} for name in names] if names else [base])
    for url in strings(rule, 'nonResourceURLs'):
        subrules.extend({'nonResourceURLs': [url], 'verbs': [verb]} for verb in verbs)
    return subrules


def covers(owner: Sequence[Rule], servant: Iterable[Rule]) -> list[dict[str, list[str]]]:
    """The parts of `servant` that no rule of `owner` covers (none: covered), as upstream's Covers."""
    return [sub for rule in servant for sub in breakdown(rule) if not any(_rule_covers(o, sub) for o in owner)]


def _rule_covers(owner: Rule, sub: Mapping[str, list[str]]) -> bool:
    verbs, groups = strings(owner, 'verbs'), strings(owner, 'apiGroups')
    names = strings(owner, 'resourceNames')
    wanted_names = sub.get('resourceNames') or []
    return (('*' in verbs or set(sub.get('verbs') or []) <= set(verbs))
            and ('*' in groups or set(sub.get('apiGroups') or []) <= set(groups))
            and _resources_cover(strings(owner, 'resources'), sub.get('resources') or [])
            and all(any(_url_covers(mine, url) for mine in strings(owner, 'nonResourceURLs'))
                    for url in sub.get('nonResourceURLs') or [])
            and (not names or set(wanted_names) <= set(names)) and (bool(wanted_names) or not names))


def _resources_cover(owned: list[str], wanted: list[str]) -> bool:
    if '*' in owned or set(wanted) <= set(owned):
        return True
    return all(path in owned or ('/' in path and f'*/{path.split("/", 1)[1]}' in owned) for path in wanted)


def _url_covers(owner: str, path: str) -> bool:
    return owner == path or (owner.endswith('*') and path.startswith(owner.rstrip('*')))


def compact(rules: list[dict[str, list[str]]]) -> list[dict[str, list[str]]]:
    """CompactRules: simple rules (one group, one resource, at most one name) of one resource merge their verbs."""
    compacted: list[dict[str, list[str]]] = []
    simple: dict[tuple[str, str, bool, str], dict[str, list[str]]] = {}
    for rule in rules:
        names = rule.get('resourceNames') or []
        groups, resources = rule.get('apiGroups') or [], rule.get('resources') or []
        if len(names) > 1 or rule.get('nonResourceURLs') or len(groups) != 1 or len(resources) != 1:
            compacted.append(rule)
            continue
        key = (groups[0], resources[0], bool(names), names[0] if names else '')
        if key in simple:
            simple[key]['verbs'] = [*simple[key]['verbs'], *(rule.get('verbs') or [])]
        else:
            simple[key] = {k: list(v) for k, v in rule.items()}
    return compacted + list(simple.values())


def compact_string(rule: Mapping[str, list[str]]) -> str:
    """CompactString: `{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}`."""
    parts = [f'{label}:{go_strings(rule.get(key) or [])}'
             for label, key in (('APIGroups', 'apiGroups'), ('Resources', 'resources'),
                                ('NonResourceURLs', 'nonResourceURLs'), ('ResourceNames', 'resourceNames'),
                                ('Verbs', 'verbs')) if rule.get(key)]
    return '{' + ', '.join(parts) + '}'


def go_quote(text: str) -> str:
    """Go's `%q` of a string (strconv.Quote) for the printable text that names and verbs are."""
    return json.dumps(text, ensure_ascii=False).replace('\\u007f', '\\x7f')


def go_strings(values: Iterable[str]) -> str:
    """Go's `%q` of a []string: `["a" "b"]`."""
    return '[' + ' '.join(go_quote(value) for value in values) + ']'
