"""Validation and defaults of the four RBAC kinds, as k8s.io/kubernetes `pkg/apis/rbac` has them.

Defaults: a binding's `roleRef.apiGroup` and a User's or Group's `apiGroup` are
`rbac.authorization.k8s.io`. Validation: every rule has verbs; resource rules name API groups and
resources; non-resource URLs only in ClusterRoles and never with resources; a roleRef names a Role
(RoleBindings only) or a ClusterRole of this group; subjects are Users, Groups (of this group) or
ServiceAccounts (with a valid name, of the core group, with a namespace in ClusterRoleBindings);
an aggregating ClusterRole has selectors; a binding's roleRef never changes. The texts are the
real server's (other values than strings and numbers printed as JSON: `["/x"]`, `{"APIGroup":…}`).

    prepare(plural, obj) -> causes (defaults applied in place); on_update(old, new) -> causes
"""
import json
import re
from collections.abc import Mapping
from typing import Any

from kopf._cluster.openapi import fielderrors
from kopf._cluster.openapi.fielderrors import Cause

GROUP = 'rbac.authorization.k8s.io'
SUBDOMAIN = r'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'
SUBDOMAIN_TEXT = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                  "and must start and end with an alphanumeric character (e.g. 'example.com', "
                  f"regex used for validation is '{SUBDOMAIN}')")


def prepare(plural: str, obj: dict[str, Any]) -> list[Cause]:
    if plural in ('roles', 'clusterroles'):
        causes = [cause for index, rule in enumerate(obj.get('rules') or ())
                  for cause in _rule(rule if isinstance(rule, Mapping) else {}, plural == 'roles', f'rules[{index}]')]
        aggregation = obj.get('aggregationRule')
        if plural == 'clusterroles' and isinstance(aggregation, Mapping) and \
                not aggregation.get('clusterRoleSelectors'):
            causes.append(fielderrors.required(
                'aggregationRule.clusterRoleSelectors',
                'at least one clusterRoleSelector required if aggregationRule is non-nil'))
        return causes
    ref = obj.get('roleRef')
    if isinstance(ref, dict) and not ref.get('apiGroup'):
        ref['apiGroup'] = GROUP
    for subject in obj.get('subjects') or ():
        if isinstance(subject, dict) and not subject.get('apiGroup') and subject.get('kind') in ('User', 'Group'):
            subject['apiGroup'] = GROUP
    return _binding(obj, plural == 'rolebindings')


def on_update(plural: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Cause]:
    if plural not in ('rolebindings', 'clusterrolebindings') or _ref(old) == _ref(new):
        return []
    group, kind, name = _ref(new)
    shown = json.dumps({'APIGroup': group, 'Kind': kind, 'Name': name}, separators=(',', ':'))
    message = f'Invalid value: {shown}: cannot change roleRef'
    return [{'reason': 'FieldValueInvalid', 'message': message, 'field': 'roleRef'}]


def _ref(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    ref = obj.get('roleRef') or {}
    return str(ref.get('apiGroup') or ''), str(ref.get('kind') or ''), str(ref.get('name') or '')


def _rule(rule: Mapping[str, Any], namespaced: bool, path: str) -> list[Cause]:
    causes: list[Cause] = []
    if not rule.get('verbs'):
        causes.append(fielderrors.required(f'{path}.verbs', 'verbs must contain at least one value'))
    urls = rule.get('nonResourceURLs')
    if urls:
        shown = f'Invalid value: {json.dumps([str(url) for url in urls], separators=(",", ":"))}: '
        if namespaced:
            causes.append({'reason': 'FieldValueInvalid',
                           'message': shown + 'namespaced rules cannot apply to non-resource URLs',
                           'field': f'{path}.nonResourceURLs'})
        if rule.get('apiGroups') or rule.get('resources') or rule.get('resourceNames'):
            causes.append({'reason': 'FieldValueInvalid',
                           'message': shown + 'rules cannot apply to both regular resources and non-resource URLs',
                           'field': f'{path}.nonResourceURLs'})
        return causes
    if not rule.get('apiGroups'):
        causes.append(fielderrors.required(f'{path}.apiGroups', 'resource rules must supply at least one api group'))
    if not rule.get('resources'):
        causes.append(fielderrors.required(f'{path}.resources', 'resource rules must supply at least one resource'))
    return causes


def _binding(obj: Mapping[str, Any], namespaced: bool) -> list[Cause]:
    group, kind, name = _ref(obj)
    causes: list[Cause] = []
    if group != GROUP:
        causes.append(_not_supported('roleRef.apiGroup', group, [GROUP]))
    kinds = ['Role', 'ClusterRole'] if namespaced else ['ClusterRole']
    if kind not in kinds:
        causes.append(_not_supported('roleRef.kind', kind, kinds))
    if not name:
        causes.append(fielderrors.required('roleRef.name'))
    else:
        causes += [fielderrors.invalid('roleRef.name', name, text) for text in _segment(name)]
    for index, subject in enumerate(obj.get('subjects') or ()):
        causes += _subject(subject if isinstance(subject, Mapping) else {}, namespaced, f'subjects[{index}]')
    return causes


def _subject(subject: Mapping[str, Any], namespaced: bool, path: str) -> list[Cause]:
    name, kind, group = str(subject.get('name') or ''), subject.get('kind'), str(subject.get('apiGroup') or '')
    causes = [] if name else [fielderrors.required(f'{path}.name')]
    if kind == 'ServiceAccount':
        if name and (len(name) > 253 or not re.fullmatch(SUBDOMAIN, name)):
            causes.append(fielderrors.invalid(f'{path}.name', name, SUBDOMAIN_TEXT))
        if group:
            causes.append(_not_supported(f'{path}.apiGroup', group, ['']))
        if not namespaced and not subject.get('namespace'):
            causes.append(fielderrors.required(f'{path}.namespace'))
    elif kind in ('User', 'Group'):
        if group != GROUP:
            causes.append(_not_supported(f'{path}.apiGroup', group, [GROUP]))
    else:
        causes.append(_not_supported(f'{path}.kind', str(kind or ''), ['ServiceAccount', 'User', 'Group']))
    return causes


def _segment(name: str) -> list[str]:
    found = [f"may not be '{name}'"] if name in ('.', '..') else []
    return found + [f"may not contain '{char}'" for char in ('/', '%') if char in name]


def _not_supported(path: str, value: str, allowed: list[str]) -> Cause:
    cause = fielderrors.not_supported((), value, allowed)
    return {**cause, 'field': path}
