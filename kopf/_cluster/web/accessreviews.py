"""The authentication and authorization reviews (create-only, never stored), answered by the authorizer.

`kubectl auth can-i` (SelfSubjectAccessReview), `auth can-i --list` (SelfSubjectRulesReview) and
`auth whoami` (SelfSubjectReview) work, and so do SubjectAccessReview, LocalSubjectAccessReview and
TokenReview: the answer to "may user U do verb V on resource R in namespace N?" is exactly what a
request of that kind would get (`rbac.authorizer`: the `forbid()` rules, `system:masters`, RBAC),
with the real server's reasons (`RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to
User "u"`). The rules review lists the RBAC rules that apply in the namespace; `forbid()` rules make
it incomplete, naming them. Requests that a real server rejects (no attributes, no user, a namespace
other than the URL's, no token) get its 422 or 400 in its wording.

    review(kind, body, requester, access, namespace) -> the answered review (pure: no I/O)
"""
from collections.abc import Mapping
from typing import Any

from kopf._cluster import statuses
from kopf._cluster.openapi import fieldorder, kindschemas
from kopf._cluster.patchtypes import managedfields
from kopf._cluster.pipeline import metadata
from kopf._cluster.rbac import resolver, satokens
from kopf._cluster.rbac.requestinfo import Attributes
from kopf._cluster.rbac.subjects import User
from kopf._cluster.web import accessrules

AUTHORIZATION = 'authorization.k8s.io'
AUTHENTICATION = 'authentication.k8s.io'
KINDS = {   # (group, plural) -> kind
    (AUTHORIZATION, 'selfsubjectaccessreviews'): 'SelfSubjectAccessReview',
    (AUTHORIZATION, 'subjectaccessreviews'): 'SubjectAccessReview',
    (AUTHORIZATION, 'localsubjectaccessreviews'): 'LocalSubjectAccessReview',
    (AUTHORIZATION, 'selfsubjectrulesreviews'): 'SelfSubjectRulesReview',
    (AUTHENTICATION, 'tokenreviews'): 'TokenReview',
    (AUTHENTICATION, 'selfsubjectreviews'): 'SelfSubjectReview',
}


def review(kind: str, body: Any, requester: User, access: accessrules.Access,
           namespace: str | None = None, manager: str = 'unknown') -> dict[str, Any]:
    """The review with its `status` filled in, as a real API server answers its creation."""
    answered = _answered(kind, body, requester, access, namespace, manager)
    fieldorder.arrange(answered)   # in the Go structs' order, as the real server encodes it
    return answered


def _answered(kind: str, body: Any, requester: User, access: accessrules.Access,
              namespace: str | None, manager: str) -> dict[str, Any]:
    group = AUTHENTICATION if kind in ('TokenReview', 'SelfSubjectReview') else AUTHORIZATION
    if body is None and kind == 'SelfSubjectReview':
        body = {}
    if not isinstance(body, Mapping):
        raise statuses.bad_request(f'the object provided is unrecognized (must be of type {kind})')
    if body.get('kind') not in (None, '', kind) or body.get('apiVersion') not in (None, '', f'{group}/v1'):
        raise statuses.bad_request(f'the object provided is unrecognized (must be of type {kind}): '
                                   f'{body.get("apiVersion")}, Kind={body.get("kind")}')
    given = body.get('spec')
    spec: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    answered: dict[str, Any] = {'kind': kind, 'apiVersion': f'{group}/v1', 'metadata': {}}
    if kind == 'SelfSubjectReview':
        answered['metadata'] = {'creationTimestamp': metadata.now()}
        answered['status'] = {'userInfo': requester.info()}
        return answered
    if kind == 'SelfSubjectRulesReview':   # a new object is answered, not the one sent
        answered['spec'] = {}
        answered['status'] = _rules_status(requester, access, str(spec.get('namespace') or ''))
        return answered
    answered['spec'] = _omitted(spec)
    answered['metadata'] = _echoed(answered, body.get('metadata'), group, kind, manager)
    if kind == 'TokenReview':
        answered['status'] = _token_status(spec, access)
    else:
        subject = requester if kind == 'SelfSubjectAccessReview' else _subject(spec, group)
        attributes = _attributes(kind, spec, namespace)
        answered['status'] = _access_status(subject, attributes, spec, access)
    return answered


def _omitted(value: Any) -> Any:
    """As the typed review echoes what was sent: empty values of its (all `omitempty`) fields are gone."""
    if isinstance(value, Mapping):
        return {key: _omitted(item) for key, item in value.items() if item not in (None, '', [], {})}
    return value


def _echoed(answered: Mapping[str, Any], given: Any, group: str, kind: str, manager: str) -> dict[str, Any]:
    """The metadata sent, with the field manager's entry a real server's create handler adds to it."""
    meta = {key: value for key, value in (given if isinstance(given, Mapping) else {}).items()
            if key not in ('managedFields', 'resourceVersion', 'uid', 'creationTimestamp') and value not in (None, '')}
    obj = {**answered, 'metadata': meta}
    entries = managedfields.updated(managedfields.empty_object(f'{group}/v1', kind, False), obj, manager=manager,
                                    api_version=f'{group}/v1', subresource='', ignored=[('f:status',)],
                                    schema=kindschemas.schema_for(group, 'v1', kind), now=metadata.now(),
                                    creating=True)
    return {**meta, **({'managedFields': entries} if entries else {})}


def _token_status(spec: Mapping[str, Any], access: accessrules.Access) -> dict[str, Any]:
    token = spec.get('token')
    if not isinstance(token, str) or not token:
        raise statuses.bad_request('token is required for TokenReview in authentication')
    user = access.token_user(token)
    if user is None:
        return {'user': {}, 'error': 'invalid bearer token'}
    audiences = [str(a) for a in spec.get('audiences') or ()] or list(satokens.AUDIENCES)
    return {'authenticated': True, 'user': user.info(), 'audiences': audiences}


def _rules_status(subject: User, access: accessrules.Access, namespace: str) -> dict[str, Any]:
    """RBAC's rules in the namespace; `forbid()` rules cannot be said as rules: named, the list marked incomplete."""
    if not namespace:
        raise statuses.bad_request('no namespace on request')
    rules, errors = access.authorizer.rules_for(subject, namespace)
    resource_rules = [_rule(rule, ('verbs', 'apiGroups', 'resources', 'resourceNames'))
                      for rule in rules if rule.get('resources')]
    url_rules = [_rule(rule, ('verbs', 'nonResourceURLs')) for rule in rules if rule.get('nonResourceURLs')]
    status: dict[str, Any] = {'resourceRules': resource_rules, 'nonResourceRules': url_rules, 'incomplete': False}
    denials = list(access.authorizer.visible_denials(subject))
    if errors:
        status['evaluationError'] = resolver.aggregate(errors)
    if denials:
        status['incomplete'] = True
        status['evaluationError'] = 'except what forbid() rules of the local cluster deny: ' + '; '.join(
            denial.describe() for denial in denials)
    return status


def _rule(rule: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {key: list(rule.get(key) or []) for key in keys if key == 'verbs' or rule.get(key)}


def _subject(spec: Mapping[str, Any], group: str) -> User:
    user, groups = spec.get('user') or '', spec.get('groups') or []
    if not user and not groups:
        raise _invalid(group, 'spec.user', 'Invalid value: "": at least one of user or group must be specified')
    given = spec.get('extra')
    extra: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    listed = tuple(str(g) for g in groups) if isinstance(groups, list) else ()
    return User(str(user), listed, str(spec.get('uid') or ''),
                tuple(sorted((str(k), tuple(str(v) for v in vs or ())) for k, vs in extra.items())))


def _attributes(kind: str, spec: Mapping[str, Any], namespace: str | None) -> Mapping[str, Any] | None:
    """The resource attributes to check (None for non-resource ones), validated as a real server does."""
    resource, non_resource = spec.get('resourceAttributes'), spec.get('nonResourceAttributes')
    if (resource is None) == (non_resource is None):
        raise _invalid(AUTHORIZATION, 'spec.resourceAttributes', 'Invalid value: null: exactly one of '
                       'nonResourceAttributes or resourceAttributes must be specified')
    if resource is not None and not isinstance(resource, Mapping):
        raise statuses.bad_request(f'the object provided is unrecognized (must be of type {kind}): '
                                   'spec.resourceAttributes must be an object')
    if kind == 'LocalSubjectAccessReview':
        if resource is None:
            raise _invalid(AUTHORIZATION, 'spec.nonResourceAttributes',
                           'Forbidden: disallowed on this kind of request', 'FieldValueForbidden')
        given = resource.get('namespace') or ''
        if given != namespace:
            raise _invalid(AUTHORIZATION, 'spec.resourceAttributes.namespace',
                           f'Invalid value: "{given}": must match metadata.namespace')
    return resource


def _access_status(subject: User, attributes: Mapping[str, Any] | None, spec: Mapping[str, Any],
                   access: accessrules.Access) -> dict[str, Any]:
    if attributes is None:
        url = spec.get('nonResourceAttributes')
        url = url if isinstance(url, Mapping) else {}
        return _decided(access, Attributes(subject, str(url.get('verb') or ''), resource_request=False,
                                           path=str(url.get('path') or '')))
    return _decided(access, Attributes(
        subject, str(attributes.get('verb') or ''), True, str(attributes.get('group') or ''),
        str(attributes.get('version') or '') or '*', str(attributes.get('resource') or ''),
        str(attributes.get('subresource') or ''), str(attributes.get('namespace') or ''),
        str(attributes.get('name') or '')))


def _decided(access: accessrules.Access, attributes: Attributes) -> dict[str, Any]:
    decision = access.authorizer.authorize(attributes)
    status: dict[str, Any] = {'allowed': decision.allowed}
    if decision.denied:
        status['denied'] = True
    if decision.reason:
        status['reason'] = decision.reason
    return status


def _invalid(group: str, field: str, message: str, reason: str = 'FieldValueInvalid') -> statuses.ApiError:
    error = statuses.invalid('', group, '', [statuses.cause(reason, field, message)])
    error.details = {'group': group, 'causes': (error.details or {}).get('causes', [])}
    return error
