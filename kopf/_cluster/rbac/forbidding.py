"""The `forbid()` rules of the local cluster: explicit denials, checked before anything else allows.

A `Denial` matches requests by verb, resource (plural or `plural/sub`), API group, user (globs
allowed) and optionally a namespace. It denies even `system:masters` (unlike anything in RBAC), so
that a test can take one permission away from the admin. Pure: no I/O.
"""
import dataclasses
import fnmatch

from kopf._cluster.rbac.requestinfo import Attributes

REASON = 'denied by a forbid() rule of the local cluster'
SELF_REVIEWS = {('authorization.k8s.io', 'selfsubjectaccessreviews'),
                ('authorization.k8s.io', 'selfsubjectrulesreviews'),
                ('authentication.k8s.io', 'selfsubjectreviews')}   # never denied: every user may ask about itself


@dataclasses.dataclass(frozen=True)
class Denial:
    """Deny `verb` on `resource` (plural, or `plural/sub`; globs allowed) to `user`, optionally in a namespace."""

    verb: str = '*'
    resource: str = '*'
    group: str = '*'
    namespace: str | None = None
    user: str = '*'

    def matches(self, attributes: Attributes) -> bool:
        """For a resource request's or a review's attributes (never for non-resource URLs)."""
        if not attributes.resource_request or (attributes.group, attributes.resource) in SELF_REVIEWS:
            return False
        return self.denies(
            attributes.user.name, attributes.verb, attributes.group, attributes.combined, attributes.namespace)

    def denies(self, user: str, verb: str, group: str, resource: str, namespace: str) -> bool:
        """For the attributes one by one (`resource`: plural or `plural/sub`; namespace `''`: none)."""
        return (self.applies_to(user) and fnmatch.fnmatchcase(verb, self.verb)
                and fnmatch.fnmatchcase(resource, self.resource) and fnmatch.fnmatchcase(group, self.group)
                and (self.namespace is None or self.namespace == namespace))

    def applies_to(self, user: str) -> bool:
        return fnmatch.fnmatchcase(user, self.user)

    def describe(self) -> str:
        where = f' in namespace {self.namespace}' if self.namespace is not None else ''
        return f'verb={self.verb} resource={self.resource} group={self.group} user={self.user}{where}'
