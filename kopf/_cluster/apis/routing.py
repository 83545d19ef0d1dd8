"""URL shapes of the Kubernetes API: which resource, namespace, name and subresource a path addresses."""
import dataclasses
from typing import Any

from kopf._cluster import statuses
from kopf._cluster.apis.catalog import Catalog
from kopf._shared.resourcetable import Resource

NAMESPACE_SUBRESOURCES = ('status', 'finalize')


@dataclasses.dataclass(frozen=True)
class Target:
    resource: Resource
    namespace: str | None      # None: cluster-scoped, or all namespaces of a namespaced kind
    name: str | None           # None: the collection
    subresource: str | None = None

    @property
    def is_collection(self) -> bool:
        return self.name is None


def split_group_version(parts: list[str]) -> tuple[str, str, list[str]] | None:
    """`['api','v1',...]` or `['apis','g','v',...]` -> (group, version, rest)."""
    if len(parts) >= 2 and parts[0] == 'api':
        return '', parts[1], parts[2:]
    if len(parts) >= 3 and parts[0] == 'apis':
        return parts[1], parts[2], parts[3:]
    return None


def legacy_watch(parts: list[str]) -> tuple[str, bool]:
    """`/api/v1/watch/...` and `/apis/g/v/watch/...` are the old spelling of `?watch=true`."""
    index = 2 if parts[:1] == ['api'] else 3
    if len(parts) > index and parts[index] == 'watch':
        return '/' + '/'.join(parts[:index] + parts[index + 1:]), True
    return '/' + '/'.join(parts), False


def resolve(catalog: Catalog, path: str) -> Target:
    """Parse a resource path; raises the generic 404 for unknown groups, resources and shapes."""
    parts = [p for p in path.split('/') if p]
    found = split_group_version(parts)
    if found is None:
        raise statuses.generic_not_found()
    group, version, rest = found
    namespace: str | None = None
    if len(rest) >= 3 and rest[0] == 'namespaces' and not (len(rest) == 3 and rest[2] in NAMESPACE_SUBRESOURCES):
        namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 3:
        raise statuses.generic_not_found()
    resource = catalog.lookup(group, version, rest[0])
    if resource is None:
        raise statuses.generic_not_found()
    if namespace is not None and not resource.namespaced:
        raise statuses.generic_not_found()
    name = rest[1] if len(rest) >= 2 else None
    subresource = rest[2] if len(rest) == 3 else None
    if subresource is not None and subresource not in resource.subresources:
        if resource.custom and name:   # the apiextensions server answers, naming the object (existing or not)
            raise statuses.not_found(resource.qualified, resource.group, resource.plural, name)
        raise statuses.generic_not_found()
    return Target(resource, namespace, name, subresource)


Routes = dict[Any, Any]   # a request path -> (its target, legacy watch); ('collection', path) -> a collection's target


def object_route(routes: Routes, path: str) -> tuple[Target, bool] | None:
    """An object's path (or its subresource's) routed by its collection's known route, if known: each of many
    objects is often asked for once (a restart's writes), so its own path is never among the routes yet."""
    head, _, name = path.rpartition('/')
    collection: Target | None = routes.get(('collection', head)) if name else None
    if collection is not None:
        return Target(collection.resource, collection.namespace, name), False
    head, _, name = head.rpartition('/')
    collection = routes.get(('collection', head)) if name else None
    subresource = path[len(head) + len(name) + 2:]
    if collection is not None and subresource in collection.resource.subresources:
        return Target(collection.resource, collection.namespace, name, subresource), False
    return None


def remember_collection(catalog: Catalog, routes: Routes, path: str, routed: tuple[Target, bool]) -> None:
    """After an object's path was resolved, its collection's route, for `object_route` (if it resolves alike)."""
    target, legacy = routed
    if legacy or target.name is None:
        return
    suffix = f'/{target.name}/{target.subresource}' if target.subresource else f'/{target.name}'
    if not path.endswith(suffix):
        return
    head = path[:-len(suffix)]
    if ('collection', head) in routes:
        return
    parts = [p for p in head.split('/') if p]
    if legacy_watch(parts)[1]:
        return
    try:
        collection = resolve(catalog, head)
    except statuses.ApiError:
        return
    if collection == Target(target.resource, target.namespace, None):
        routes[('collection', head)] = collection


def verb_of(method: str, target: Target, watch: bool) -> str:
    """The Kubernetes verb of a request (used for 405 checks and the request counters)."""
    if method == 'GET':
        return 'watch' if watch else ('list' if target.is_collection else 'get')
    if method == 'POST':
        return 'create'
    if method == 'PUT':
        return 'update'
    if method == 'PATCH':
        return 'patch'
    if method == 'DELETE':
        return 'deletecollection' if target.is_collection else 'delete'
    return method.lower()


def check_allowed(method: str, target: Target, verb: str) -> None:
    resource = target.resource
    if target.subresource is not None:
        listed = {sub.name: sub.verbs for sub in resource.listed_subresources}
        allowed = verb in listed.get(target.subresource, ('get', 'update', 'patch'))
    elif target.is_collection:
        allowed = verb in resource.verbs and verb in ('list', 'watch', 'create', 'deletecollection')
        allowed = allowed and not (verb == 'create' and resource.namespaced and target.namespace is None)
    else:
        allowed = verb in resource.verbs and verb in ('get', 'watch', 'update', 'patch', 'delete')
    if not allowed:
        raise statuses.method_not_allowed()
