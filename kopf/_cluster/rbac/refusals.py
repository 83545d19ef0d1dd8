"""The 403 answers of authorization, word for word as k8s.io/apiserver renders them.

    forbidden(attributes, reason) -> ApiError
    `pods "x" is forbidden: User "u" cannot get resource "pods" in API group "" in the namespace "ns"`
    `forbidden: User "u" cannot get path "/apis"`
    … `: <reason>` when the authorizer gave one (RBAC: references to missing roles).
"""
from kopf._cluster import statuses
from kopf._cluster.rbac.policyrules import go_quote
from kopf._cluster.rbac.requestinfo import Attributes

_SANITIZED = str.maketrans({'&': '&amp;', '<': '&lt;', '>': '&gt;'})


def message(attributes: Attributes) -> str:
    """forbiddenMessage: who cannot do what, where (the user's name as Go's `%q` writes it)."""
    user = go_quote(attributes.user.name)
    verb = attributes.verb
    if not attributes.resource_request:
        return f'User {user} cannot {verb} path {go_quote(attributes.path)}'
    resource, group = go_quote(attributes.combined), go_quote(attributes.group)
    what = f'User {user} cannot {verb} resource {resource} in API group {group}'
    if attributes.namespace:
        return f'{what} in the namespace {go_quote(attributes.namespace)}'
    return f'{what} at the cluster scope'


def forbidden(attributes: Attributes, reason: str = '') -> statuses.ApiError:
    """ForbiddenStatusError: the message (HTML-escaped), then the reason; details name the resource."""
    text = message(attributes).translate(_SANITIZED)
    if reason:
        text = f'{text}: {reason}'
    return qualified_forbidden(attributes.group, attributes.resource, attributes.name, text)


def qualified_forbidden(group: str, resource: str, name: str, text: str) -> statuses.ApiError:
    """NewForbidden: `<resource>.<group> "<name>" is forbidden: <text>` (or `forbidden: <text>` for paths)."""
    qualified = f'{resource}.{group}' if group else resource
    if not group and not resource:
        return statuses.ApiError(403, 'Forbidden', f'forbidden: {text}', {})
    details = {'name': name, 'group': group, 'kind': resource}
    subject = f'{qualified} {go_quote(name)}' if name else qualified
    return statuses.ApiError(403, 'Forbidden', f'{subject} is forbidden: {text}',
                             {key: value for key, value in details.items() if value})
