"""The authentication and authorization reviews (create-only, never stored), answered by the access rules.

`kubectl auth can-i` (SelfSubjectAccessReview), `auth can-i --list` (SelfSubjectRulesReview) and
`auth whoami` (SelfSubjectReview) work; SubjectAccessReview, LocalSubjectAccessReview and TokenReview
answer as a real server does for its admin. Everything is allowed unless a `forbid()` rule
(`accessrules.Denial`) matches: the answer to "may user U do verb V on resource R in namespace N?" is
exactly what a request of that kind would get. Non-resource URLs are always allowed. Requests that a
real server rejects (no attributes, no user, a namespace other than the URL's, no token) get its
422 or 400 in its wording.

    review(kind, body, requester, access, namespace) -> the answered review (pure: no I/O)
"""
from collections.abc import Mapping
from typing import Any

from kopf._cluster import statuses
from kopf._cluster.pipeline import metadata
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
SELF_RULES = [   # what every authenticated user may do in a real cluster (system:basic-user)
    {'verbs': ['create'], 'apiGroups': [AUTHORIZATION], 'resources': ['selfsubjectaccessreviews',
                                                                       'selfsubjectrulesreviews']},
    {'verbs': ['create'], 'apiGroups': [AUTHENTICATION], 'resources': ['selfsubjectreviews']},
]
DENIED_REASON = 'denied by a forbid() rule of the local cluster'


def review(kind: str, body: Any, requester: accessrules.Subject, access: accessrules.Access,
           namespace: str | None = None) -> dict[str, Any]:
    """The review with its `status` filled in, as a real API server answers its creation."""
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
        answered['status'] = {'userInfo': _user_info(requester)}
        return answered
    answered['spec'] = dict(spec)
    if kind == 'TokenReview':
        answered['status'] = _token_status(spec, access)
    elif kind == 'SelfSubjectRulesReview':
        answered['status'] = _rules_status(requester, access)
    else:
        subject = requester if kind == 'SelfSubjectAccessReview' else _subject(spec, group)
        attributes = _attributes(kind, spec, namespace)
        answered['status'] = _access_status(subject, attributes, access)
    return answered


def _user_info(subject: accessrules.Subject) -> dict[str, Any]:
    return {'username': subject.user, 'groups': list(subject.groups)}


def _token_status(spec: Mapping[str, Any], access: accessrules.Access) -> dict[str, Any]:
    token = spec.get('token')
    if not isinstance(token, str) or not token:
        raise statuses.bad_request('token is required for TokenReview in authentication')
    user = (access.tokens or {}).get(token)
    if user is None:
        return {'user': {}, 'error': 'invalid bearer token'}
    return {'authenticated': True, 'user': _user_info(accessrules.Subject(user, accessrules.AUTHENTICATED))}


def _rules_status(subject: accessrules.Subject, access: accessrules.Access) -> dict[str, Any]:
    """Rules cannot say "all but": with denials for this user, the list is marked incomplete and they are named."""
    denials = [denial for denial in access.denials if denial.applies_to(subject.user)]
    status: dict[str, Any] = {
        'resourceRules': [{'verbs': ['*'], 'apiGroups': ['*'], 'resources': ['*']}, *SELF_RULES],
        'nonResourceRules': [{'verbs': ['*'], 'nonResourceURLs': ['*']}],
        'incomplete': bool(denials),
    }
    if denials:
        status['evaluationError'] = 'except what forbid() rules of the local cluster deny: ' + '; '.join(
            denial.describe() for denial in denials)
    return status


def _subject(spec: Mapping[str, Any], group: str) -> accessrules.Subject:
    user, groups = spec.get('user') or '', spec.get('groups') or []
    if not user and not groups:
        raise _invalid(group, 'spec.user', 'Invalid value: "": at least one of user or group must be specified')
    return accessrules.Subject(str(user), tuple(str(g) for g in groups) if isinstance(groups, list) else ())


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


def _access_status(subject: accessrules.Subject, attributes: Mapping[str, Any] | None,
                   access: accessrules.Access) -> dict[str, Any]:
    if attributes is None:   # non-resource URLs: nothing denies them here
        return {'allowed': True}
    resource = str(attributes.get('resource') or '')
    subresource = str(attributes.get('subresource') or '')
    allowed = access.allows(subject.user, str(attributes.get('verb') or ''), str(attributes.get('group') or ''),
                            f'{resource}/{subresource}' if subresource else resource,
                            str(attributes.get('namespace') or ''))
    return {'allowed': True} if allowed else {'allowed': False, 'denied': True, 'reason': DENIED_REASON}


def _invalid(group: str, field: str, message: str, reason: str = 'FieldValueInvalid') -> statuses.ApiError:
    error = statuses.invalid('', group, '', [statuses.cause(reason, field, message)])
    error.details = {'group': group, 'causes': (error.details or {}).get('causes', [])}
    return error
