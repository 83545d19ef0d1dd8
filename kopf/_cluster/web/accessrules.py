"""Who a request comes from (401 if nobody), who it acts as (impersonation), and whether it may proceed (403).

Authentication, as kube-apiserver's union of authenticators: a client certificate signed by our CA
(the user is its CN, the groups its O fields), else a bearer token — one of the configured static
tokens, or a ServiceAccount token that TokenRequest issued (`rbac.satokens`). Without any
authentication configured (the default), a request without credentials is the admin
(`kubernetes-admin` in `system:masters`); with it, such a request gets a 401, but for the health
and version paths (as with `--anonymous-auth=false`, plus those public paths).

Static tokens map to a user name (that user is in `system:masters`, so that tests written before
RBAC was enforced keep working) or to `(name, groups)` (exactly those groups, plus
`system:authenticated`: RBAC decides what they may do).

Impersonation (`Impersonate-User`, `-Group`, `-Uid`, `-Extra-*`; kubectl's `--as`, `--as-group`)
is authorized per requested identity (`impersonate` on users, groups, serviceaccounts, uids,
userextras) before the request acts as it. Then the request itself is authorized
(`rbac.authorizer`: the `forbid()` rules, `system:masters`, RBAC) with the attributes its URL gives
(`rbac.requestinfo`), before any routing; a refusal is the exact 403 of a real server.
"""
import dataclasses
import secrets
import urllib.parse
from collections.abc import Callable, Mapping, Sequence

from aiohttp import web

from kopf._cluster import statuses
from kopf._cluster.rbac import refusals, requestinfo, subjects
from kopf._cluster.rbac.authorizer import Authorizer
from kopf._cluster.rbac.forbidding import Denial
from kopf._cluster.rbac.requestinfo import Attributes
from kopf._cluster.rbac.subjects import User

DEFAULT_USER = subjects.ADMIN.name
ADMIN_GROUPS = subjects.ADMIN.groups
PUBLIC_PATHS = ('/healthz', '/livez', '/readyz', '/version', '/version/')   # answered without credentials
IMPERSONATION = ('impersonate-user', 'impersonate-group', 'impersonate-uid')
EXTRA_PREFIX = 'impersonate-extra-'
USER_KEY = web.RequestKey('kopf.user', User)   # where the request's user is kept on the aiohttp request
Token = str | tuple[str, Sequence[str]]   # a user name (in system:masters), or (name, groups)

__all__ = ['ADMIN_GROUPS', 'DEFAULT_USER', 'Access', 'Denial', 'User', 'user_of']


def _no_tokens(token: str) -> User | None:
    return None


@dataclasses.dataclass
class Access:
    """The credentials the server accepts and its authorizer (with the `forbid()` rules).

    `tokens` maps static bearer tokens to users (None: no authentication, unless `client_certs`);
    with `client_certs`, a certificate signed by our CA also authenticates; `sa_tokens` recognises
    the tokens of ServiceAccounts (set by the emulator: it needs the state).
    """

    tokens: dict[str, Token] | None = None
    client_certs: bool = False
    issued: dict[str, User] = dataclasses.field(default_factory=dict)   # tokens of `user_kubeconfig()`: always valid
    authorizer: Authorizer = dataclasses.field(default_factory=lambda: Authorizer(lambda key: ()))
    sa_tokens: Callable[[str], User | None] = _no_tokens

    @property
    def required(self) -> bool:
        return self.tokens is not None or self.client_certs

    @property
    def denials(self) -> list[Denial]:
        return self.authorizer.denials

    def issue(self, name: str, groups: Sequence[str] = ()) -> str:
        """A new bearer token of this user (in these groups): accepted even without authentication configured."""
        token = secrets.token_urlsafe(24)
        self.issued[token] = User(name, (*[g for g in groups if g != subjects.AUTHENTICATED], subjects.AUTHENTICATED))
        return token

    def static_user(self, token: str) -> User | None:
        if token in self.issued:
            return self.issued[token]
        entry = (self.tokens or {}).get(token)
        if entry is None:
            return None
        if isinstance(entry, str):
            return User(entry, subjects.ADMIN.groups)
        name, groups = entry
        return User(name, (*[g for g in groups if g != subjects.AUTHENTICATED], subjects.AUTHENTICATED))

    def token_user(self, token: str) -> User | None:
        """The user of a bearer token: a static one, or a ServiceAccount's (None: not a token we accept)."""
        return self.static_user(token) or (self.sa_tokens(token) if token.count('.') == 2 else None)

    def authenticate(self, request: web.Request, path: str) -> User | None:
        """The request's user; None if it must get a 401."""
        name = common_name(request) if self.client_certs else None
        if name is not None:
            return User(name, (*organizations(request), subjects.AUTHENTICATED))
        scheme, _, token = request.headers.get('Authorization', '').partition(' ')
        if scheme.lower() == 'bearer' and token.strip():
            found = self.token_user(token.strip())
            if found is not None:
                return found
        if not self.required:
            return subjects.ADMIN
        if path in PUBLIC_PATHS:
            return User(subjects.ANONYMOUS, (subjects.UNAUTHENTICATED,))
        return None

    def admit(self, request: web.Request, path: str, user: User) -> User:
        """Impersonation, then authorization: the user the request acts as (or a 403 ApiError)."""
        headers = request.headers
        if any(key.lower() in IMPERSONATION or key.lower().startswith(EXTRA_PREFIX) for key in headers):
            user = self.impersonate(request, user)
        if not user.privileged or self.authorizer.denials:
            self.authorize(requestinfo.attributes(user, request.method, path, request.query))
        return user

    def authorize(self, attributes: Attributes) -> None:
        decision = self.authorizer.authorize(attributes)
        if not decision.allowed:
            raise refusals.forbidden(attributes, '' if decision.denied else decision.reason)

    def impersonate(self, request: web.Request, user: User) -> User:
        """As k8s.io/apiserver's impersonation filter: each requested identity is authorized, then assumed."""
        headers = request.headers
        name = headers.get('Impersonate-User', '')
        groups = list(headers.getall('Impersonate-Group', ()))
        uid = headers.get('Impersonate-Uid', '')
        extras = [(urllib.parse.unquote(key.lower()[len(EXTRA_PREFIX):]), value) for key in dict.fromkeys(headers)
                  if key.lower().startswith(EXTRA_PREFIX) for value in headers.getall(key)]
        if not name:
            raise statuses.internal('requested impersonation without impersonating a user')
        account = subjects.split_service_account(name)
        if account is not None:
            asked = [Attributes(user, 'impersonate', True, '', 'v1', 'serviceaccounts', '', account[0], account[1])]
        else:
            asked = [Attributes(user, 'impersonate', True, '', 'v1', 'users', '', '', name)]
        asked += [Attributes(user, 'impersonate', True, '', 'v1', 'groups', '', '', group) for group in groups]
        asked += [Attributes(user, 'impersonate', True, 'authentication.k8s.io', 'v1', 'userextras', key, '', value)
                  for key, value in extras]
        if uid:
            asked.append(Attributes(user, 'impersonate', True, 'authentication.k8s.io', 'v1', 'uids', '', '', uid))
        for attributes in asked:
            self.authorize(attributes)
        if account is not None and not groups:
            groups = list(subjects.service_account_groups(account[0]))
        if name == subjects.ANONYMOUS:
            groups += [] if subjects.UNAUTHENTICATED in groups else [subjects.UNAUTHENTICATED]
        elif not {subjects.AUTHENTICATED, subjects.UNAUTHENTICATED} & set(groups):
            groups.append(subjects.AUTHENTICATED)
        extra: dict[str, tuple[str, ...]] = {}
        for key, value in extras:
            extra[key] = (*extra.get(key, ()), value)
        return User(name, tuple(groups), uid, tuple(sorted(extra.items())))

    def rotate(self, old: str, new: str | None) -> None:
        """Replace a bearer token by a new one of the same user (`new=None` revokes it)."""
        if self.tokens is None or old not in self.tokens:
            raise ValueError('no such token')
        if new == '':
            raise ValueError('the new token is empty')
        if new is not None and new != old and new in self.tokens:
            raise ValueError('the new token is already in use')
        self.tokens = {(token if token != old else new or token): user for token, user in self.tokens.items()
                       if token != old or new is not None}


def user_of(request: web.Request) -> User:
    """The user a request acts as (set by the dispatcher; the admin if it did not run, as in unit tests)."""
    found: User = request.get(USER_KEY, subjects.ADMIN)
    return found


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


def tokens_of(given: Mapping[str, Token] | None) -> dict[str, Token] | None:
    return dict(given) if given is not None else None
