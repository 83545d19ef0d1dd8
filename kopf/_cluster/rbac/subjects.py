"""Who a request is from: a user name, its groups, its uid and extra attributes, as upstream's `user.Info`.

The well-known groups and the ServiceAccount user names (`system:serviceaccount:<ns>:<name>`) are
spelled and matched as k8s.io/apiserver does.
"""
import dataclasses
import re

MASTERS = 'system:masters'                 # the privileged group: allowed everything, before RBAC
AUTHENTICATED = 'system:authenticated'
UNAUTHENTICATED = 'system:unauthenticated'
ANONYMOUS = 'system:anonymous'
SERVICE_ACCOUNTS = 'system:serviceaccounts'
SA_PREFIX = 'system:serviceaccount:'
SA_GROUP_PREFIX = 'system:serviceaccounts:'
CREDENTIAL_ID = 'authentication.kubernetes.io/credential-id'
_NAMESPACE = re.compile(r'[a-z0-9]([-a-z0-9]*[a-z0-9])?')
_SUBDOMAIN = re.compile(r'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')


@dataclasses.dataclass(frozen=True)
class User:
    """An authenticated (or impersonated) identity; `extra` as sorted (key, values) pairs."""

    name: str
    groups: tuple[str, ...] = (AUTHENTICATED,)
    uid: str = ''
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def privileged(self) -> bool:
        return MASTERS in self.groups

    def info(self) -> dict[str, object]:
        """As a review's `userInfo` (`auth whoami`) shows it."""
        shown: dict[str, object] = {'username': self.name}
        if self.uid:
            shown['uid'] = self.uid
        shown['groups'] = list(self.groups)
        if self.extra:
            shown['extra'] = {key: list(values) for key, values in self.extra}
        return shown


ADMIN = User('kubernetes-admin', (MASTERS, AUTHENTICATED))


def service_account_name(namespace: str, name: str) -> str:
    return f'{SA_PREFIX}{namespace}:{name}'


def service_account_groups(namespace: str) -> tuple[str, ...]:
    return SERVICE_ACCOUNTS, f'{SA_GROUP_PREFIX}{namespace}'


def service_account(namespace: str, name: str, uid: str = '', credential: str = '') -> User:
    """A ServiceAccount's user, as its tokens authenticate it (with `system:authenticated`)."""
    extra = ((CREDENTIAL_ID, (credential,)),) if credential else ()
    return User(service_account_name(namespace, name), (*service_account_groups(namespace), AUTHENTICATED), uid, extra)


def split_service_account(username: str) -> tuple[str, str] | None:
    """(namespace, name) of a ServiceAccount's user name, or None (as upstream's SplitUsername)."""
    if not username.startswith(SA_PREFIX):
        return None
    parts = username[len(SA_PREFIX):].split(':')
    if len(parts) != 2:
        return None
    namespace, name = parts
    if len(namespace) > 63 or not _NAMESPACE.fullmatch(namespace):
        return None
    if len(name) > 253 or not _SUBDOMAIN.fullmatch(name):
        return None
    return namespace, name


def matches_service_account(namespace: str, name: str, username: str) -> bool:
    return username == f'{SA_PREFIX}{namespace}:{name}'
