"""Who a request comes from, and whether it may proceed: bearer tokens and client certificates (401),
then the `forbid()` rules (the exact 403 of real servers; allow-all by default).

The user is the token's, the client certificate's CN, or the default admin; `Impersonate-User`
(kubectl's `--as`) acts as that user, as an admin may on a real server. The self-reviews
(`kubectl auth can-i`, `auth whoami`) are never denied, as every user may create them on a real
server; their answers come from the same rules (`accessreviews`)."""
import dataclasses
import fnmatch

from aiohttp import web

from kopf._cluster import statuses
from kopf._cluster.apis.routing import Target

DEFAULT_USER = 'kubernetes-admin'
ADMIN_GROUPS = ('system:masters', 'system:authenticated')
AUTHENTICATED = ('system:authenticated',)
PUBLIC_PATHS = ('/healthz', '/livez', '/readyz')   # served without credentials, as real servers do
SELF_REVIEWS = {('authorization.k8s.io', 'selfsubjectaccessreviews'),
                ('authorization.k8s.io', 'selfsubjectrulesreviews'), ('authentication.k8s.io', 'selfsubjectreviews')}


@dataclasses.dataclass(frozen=True)
class Subject:
    """Who a request (or a review) is about: the user name and its groups."""

    user: str
    groups: tuple[str, ...] = AUTHENTICATED


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
        return self.denies(user, verb, resource.group, plural, target.namespace or '')

    def denies(self, user: str, verb: str, group: str, resource: str, namespace: str) -> bool:
        """For a request's or a review's attributes (`resource`: plural or `plural/sub`; namespace `''`: none)."""
        return (self.applies_to(user) and fnmatch.fnmatchcase(verb, self.verb)
                and fnmatch.fnmatchcase(resource, self.resource) and fnmatch.fnmatchcase(group, self.group)
                and (self.namespace is None or self.namespace == namespace))

    def applies_to(self, user: str) -> bool:
        return fnmatch.fnmatchcase(user, self.user)

    def describe(self) -> str:
        where = f' in namespace {self.namespace}' if self.namespace is not None else ''
        return f'verb={self.verb} resource={self.resource} group={self.group} user={self.user}{where}'


def check(denials: list[Denial], user: str, verb: str, target: Target) -> None:
    if any(denial.matches(user, verb, target) for denial in denials):
        raise forbidden(user, verb, target)


def forbidden(user: str, verb: str, target: Target) -> statuses.ApiError:
    resource = target.resource
    plural = resource.plural + (f'/{target.subresource}' if target.subresource else '')
    subject = f'{resource.qualified} "{target.name}"' if target.name else resource.qualified
    where = f' in the namespace "{target.namespace}"' if target.namespace else ''
    message = (f'{subject} is forbidden: User "{user}" cannot {verb} resource "{plural}" '
               f'in API group "{resource.group}"{where}')
    details = {'name': target.name, 'group': resource.group, 'kind': resource.plural} if target.name else \
        {'group': resource.group, 'kind': resource.plural}
    return statuses.ApiError(403, 'Forbidden', message, {k: v for k, v in details.items() if v or k == 'kind'})


@dataclasses.dataclass
class Access:
    """The credentials the server accepts and the denials it applies (both changeable by control operations).

    `tokens` maps bearer tokens to user names (None: no authentication, unless `client_certs`);
    with `client_certs`, a certificate signed by our CA also authenticates, as its CN.
    """

    tokens: dict[str, str] | None = None
    client_certs: bool = False
    denials: list[Denial] = dataclasses.field(default_factory=list)

    @property
    def required(self) -> bool:
        return self.tokens is not None or self.client_certs

    def authenticated(self, request: web.Request, path: str) -> bool:
        if path in PUBLIC_PATHS:
            return True
        scheme, _, token = request.headers.get('Authorization', '').partition(' ')
        if scheme.lower() == 'bearer' and self.tokens is not None and token.strip() in self.tokens:
            return True
        return self.client_certs and common_name(request) is not None

    def user_of(self, request: web.Request) -> str:
        """The user of a request: impersonated, by its bearer token or client certificate CN; else the default admin."""
        return self.subject_of(request).user

    def subject_of(self, request: web.Request) -> Subject:
        impersonated = request.headers.get('Impersonate-User')
        if impersonated:
            return Subject(impersonated, (*request.headers.getall('Impersonate-Group', ()), *AUTHENTICATED))
        _, _, token = request.headers.get('Authorization', '').partition(' ')
        if self.tokens and token.strip() in self.tokens:
            return Subject(self.tokens[token.strip()])
        name = common_name(request)
        if name is not None:
            return Subject(name, (*organizations(request), *AUTHENTICATED))
        return Subject(DEFAULT_USER, ADMIN_GROUPS)

    def authorize(self, request: web.Request, verb: str, target: Target) -> None:
        if self.denials and target.resource.key not in SELF_REVIEWS:
            check(self.denials, self.user_of(request), verb, target)

    def allows(self, user: str, verb: str, group: str, resource: str, namespace: str) -> bool:
        """Whether a request with these attributes would pass the denials (for the access reviews)."""
        return not any(denial.denies(user, verb, group, resource, namespace) for denial in self.denials)

    def rotate(self, old: str, new: str | None) -> None:
        """Replace a bearer token by a new one of the same user (`new=None` revokes it)."""
        if self.tokens is None or old not in self.tokens:
            raise ValueError('no such token')
        if new == '':
            raise ValueError('the new token is empty')
        if new is not None and new != old and new in self.tokens:
            raise ValueError('the new token is already in use')
        self.tokens = {(token if token != old else new or token): name for token, name in self.tokens.items()
                       if token != old or new is not None}


def common_name(request: web.Request) -> str | None:
    """The CN of a verified client certificate, if the client presented one."""
    names = _subject_fields(request, 'commonName')
    return names[0] if names else None


def organizations(request: web.Request) -> list[str]:
    """The O fields of a verified client certificate: the user's groups, as real servers read them."""
    return _subject_fields(request, 'organizationName')


def _subject_fields(request: web.Request, field: str) -> list[str]:
    transport = request.transport
    peer = transport.get_extra_info('peercert') if transport is not None else None
    return [str(value) for rdn in (peer or {}).get('subject', ()) for key, value in rdn if key == field]
