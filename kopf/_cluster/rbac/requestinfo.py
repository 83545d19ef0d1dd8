"""What a request asks for, as an authorizer sees it: upstream's `RequestInfo` and `authorizer.Attributes`.

`attributes(method, path, query)` parses a URL as k8s.io/apiserver's RequestInfoFactory does, before
any routing (so an unknown resource is refused before it is found missing): `/api/v1/...` and
`/apis/<group>/<version>/...` are resource requests (verb from the method; `get` without a name is
`list` or `watch`, `delete` without one is `deletecollection`; a `metadata.name=` field selector names
the object); everything else (`/api`, `/apis/apps`, `/version`, `/openapi/v2`) is a non-resource
request whose verb is the lower-cased method.
"""
import dataclasses
from collections.abc import Mapping

from kopf._cluster.rbac.subjects import User

NAMESPACE_SUBRESOURCES = ('status', 'finalize')
VERBS = {'POST': 'create', 'GET': 'get', 'HEAD': 'get', 'PUT': 'update', 'PATCH': 'patch', 'DELETE': 'delete'}
FALSE = ('0', 'f', 'F', 'false', 'FALSE', 'False', '')


@dataclasses.dataclass(frozen=True)
class Attributes:
    """One authorization question: may `user` do `verb` on this resource (or non-resource `path`)?"""

    user: User
    verb: str
    resource_request: bool = True
    group: str = ''
    version: str = ''
    resource: str = ''
    subresource: str = ''
    namespace: str = ''
    name: str = ''
    path: str = ''

    @property
    def combined(self) -> str:
        return f'{self.resource}/{self.subresource}' if self.subresource else self.resource


def attributes(user: User, method: str, path: str, query: Mapping[str, str]) -> Attributes:
    parts = [part for part in path.strip('/').split('/') if part]
    plain = Attributes(user, method.lower(), resource_request=False, path=path)
    if len(parts) < 3 or parts[0] not in ('api', 'apis') or (parts[0] == 'apis' and len(parts) < 4):
        return plain
    group = parts[1] if parts[0] == 'apis' else ''
    rest = parts[2:] if parts[0] == 'apis' else parts[1:]
    version, rest = rest[0], rest[1:]
    verb = VERBS.get(method, '')
    special = bool(rest) and rest[0] in ('watch', 'proxy') and len(rest) >= 2
    if special:
        verb, rest = rest[0], rest[1:]
    namespace = ''
    if rest and rest[0] == 'namespaces' and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0] if rest else ''
    name = rest[1] if len(rest) >= 2 else ''
    subresource = rest[2] if len(rest) >= 3 and verb != 'proxy' else ''
    if not name and verb == 'get':
        verb = 'list' if query.get('watch', 'false') in FALSE else 'watch'
        name = _selected_name(query.get('fieldSelector', ''))
    if not name and verb == 'delete':
        verb = 'deletecollection'
    return Attributes(user, verb, True, group, version, resource, subresource, namespace, name, path)


def _selected_name(selector: str) -> str:
    """The name a field selector requires exactly (`metadata.name=x` among its terms), if a valid path segment."""
    for term in selector.split(','):
        for operator in ('==', '='):
            field, found, value = term.partition(operator)
            if found and '!' not in field and field.strip() == 'metadata.name':
                value = value.strip()
                valid = value not in ('.', '..') and '/' not in value and '%' not in value
                return value if valid else ''
    return ''
