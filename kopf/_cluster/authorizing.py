"""Authorisation rules: allow-all by default; `forbid()` rules produce the exact 403 of real servers."""
import dataclasses
import fnmatch

from kopf._cluster import errors
from kopf._cluster.routing import Target

DEFAULT_USER = 'kubernetes-admin'


@dataclasses.dataclass(frozen=True)
class Denial:
    """Deny `verb` on `resource` (plural, or `plural/sub`; globs allowed) to `user`, optionally in a namespace."""

    verb: str = '*'
    resource: str = '*'
    group: str = '*'
    namespace: str | None = None
    user: str = '*'

    def matches(self, user: str, verb: str, target: Target) -> bool:
        resource = target.resource
        plural = resource.plural + (f'/{target.subresource}' if target.subresource else '')
        return (fnmatch.fnmatchcase(user, self.user) and fnmatch.fnmatchcase(verb, self.verb)
                and fnmatch.fnmatchcase(plural, self.resource) and fnmatch.fnmatchcase(resource.group, self.group)
                and (self.namespace is None or self.namespace == (target.namespace or '')))


def check(denials: list[Denial], user: str, verb: str, target: Target) -> None:
    if any(denial.matches(user, verb, target) for denial in denials):
        raise forbidden(user, verb, target)


def forbidden(user: str, verb: str, target: Target) -> errors.ApiError:
    resource = target.resource
    plural = resource.plural + (f'/{target.subresource}' if target.subresource else '')
    subject = f'{resource.qualified} "{target.name}"' if target.name else resource.qualified
    where = f' in the namespace "{target.namespace}"' if target.namespace else ''
    message = (f'{subject} is forbidden: User "{user}" cannot {verb} resource "{plural}" '
               f'in API group "{resource.group}"{where}')
    details = {'name': target.name, 'group': resource.group, 'kind': resource.plural} if target.name else \
        {'group': resource.group, 'kind': resource.plural}
    return errors.ApiError(403, 'Forbidden', message, {k: v for k, v in details.items() if v or k == 'kind'})
