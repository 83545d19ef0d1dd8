"""Discovery documents: /version, /api, /api/v1, /apis, /apis/{g}, /apis/{g}/{v} (as kubectl and clients read them).

`/api` and `/apis` are also served as aggregated discovery (`apidiscovery.k8s.io/v2 APIGroupDiscoveryList`: every
group, version, resource and subresource in one document) to clients that ask for it first in their `Accept`, as
kubectl and client-go do since Kubernetes 1.30; others get the legacy `APIVersions`/`APIGroupList`.
"""
import base64
import hashlib
from typing import Any

from kopf._cluster import statuses
from kopf._cluster.apis.catalog import Catalog
from kopf._shared import resourcetable
from kopf._shared.resourcetable import SUBRESOURCE_VERBS, Resource

DEFAULT_VERSION = resourcetable.data()['version']['gitVersion']   # the real server's the table is from


def version_info(git_version: str = DEFAULT_VERSION) -> dict[str, str]:
    """The real server's `/version` (see `resourcetable.data`), with the version numbers of `git_version`."""
    numbers = git_version.lstrip('v').split('+')[0].split('.')
    major, minor = numbers[0], numbers[1] if len(numbers) > 1 else '0'
    info: dict[str, str] = dict(resourcetable.data()['version'])
    info.update(major=major, minor=minor, gitVersion=git_version)
    if 'emulationMajor' in info:
        info.update(emulationMajor=major, emulationMinor=minor, minCompatibilityMajor=major,
                    minCompatibilityMinor=str(max(int(minor) - 1, 0)) if minor.isdigit() else minor)
    return info


def core_versions(server_address: str) -> dict[str, Any]:
    return {'kind': 'APIVersions', 'versions': ['v1'],
            'serverAddressByClientCIDRs': [{'clientCIDR': '0.0.0.0/0', 'serverAddress': server_address}]}


def _group(name: str, versions: list[str]) -> dict[str, Any]:
    listed = [{'groupVersion': f'{name}/{v}', 'version': v} for v in versions]
    return {'name': name, 'versions': listed, 'preferredVersion': listed[0]}


def group_list(catalog: Catalog) -> dict[str, Any]:
    groups = [_group(name, versions) for name, versions in sorted(catalog.groups().items()) if name]
    return {'kind': 'APIGroupList', 'apiVersion': 'v1', 'groups': groups}


def group(catalog: Catalog, name: str) -> dict[str, Any]:
    versions = catalog.groups().get(name)
    if not name or not versions:
        raise statuses.generic_not_found()
    return {'kind': 'APIGroup', 'apiVersion': 'v1', **_group(name, versions)}


def resource_list(catalog: Catalog, group: str, version: str) -> dict[str, Any]:
    served = sorted(catalog.in_group_version(group, version), key=lambda r: r.plural)
    if not served:
        raise statuses.generic_not_found()
    entries: list[dict[str, Any]] = []
    for resource in served:
        entries.append(_entry(resource))
        if resource.listed_subresources:
            entries.extend(_listed_entry(resource, sub) for sub in resource.listed_subresources)
        else:
            entries.extend(_sub_entry(resource, sub) for sub in resource.subresources)
    group_version = f'{group}/{version}' if group else version
    return {'kind': 'APIResourceList', 'apiVersion': 'v1', 'groupVersion': group_version, 'resources': entries}


#: Kinds that a real server still stores in an older version than it serves (their `storageVersionHash` says so).
STORED_AS = {('apiextensions.k8s.io', 'CustomResourceDefinition'): 'v1beta1'}


def _entry(resource: Resource) -> dict[str, Any]:
    entry: dict[str, Any] = {
        'name': resource.plural, 'singularName': resource.singular, 'namespaced': resource.namespaced,
        'kind': resource.kind, 'verbs': list(resource.verbs),
    }
    if resource.short_names:
        entry['shortNames'] = list(resource.short_names)
    if resource.categories:
        entry['categories'] = list(resource.categories)
    stored = STORED_AS.get((resource.group, resource.kind), resource.version)  # the hash is of the storage version
    digest = hashlib.sha256(f'{resource.group}/{stored}/{resource.kind}'.encode()).digest()
    entry['storageVersionHash'] = base64.b64encode(digest[:8]).decode()
    return entry


def _sub_entry(resource: Resource, sub: str) -> dict[str, Any]:
    entry: dict[str, Any] = {'name': f'{resource.plural}/{sub}', 'singularName': '', 'namespaced': resource.namespaced,
                             'kind': resource.kind, 'verbs': list(SUBRESOURCE_VERBS)}
    if sub == 'scale':
        entry.update(group='autoscaling', version='v1', kind='Scale')
    if sub == 'finalize':
        entry['verbs'] = ['update']
    return entry


def _listed_entry(resource: Resource, sub: resourcetable.Subresource) -> dict[str, Any]:
    """A built-in's subresource as the real server lists it (`group`/`version` only for another group's kind)."""
    entry: dict[str, Any] = {'name': f'{resource.plural}/{sub.name}', 'singularName': '',
                             'namespaced': resource.namespaced, 'kind': sub.kind, 'verbs': list(sub.verbs)}
    if (sub.group, sub.version) != (resource.group, resource.version):
        entry.update(group=sub.group, version=sub.version)
    return entry


AGGREGATED_TYPE = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'


def wants_aggregated(accept: str) -> bool:
    """Whether the first media type of `Accept` that the emulator serves is aggregated discovery (v2)."""
    for media in accept.split(','):
        kind, *params = [part.strip() for part in media.split(';')]
        options = dict(param.partition('=')[::2] for param in params)
        if kind not in ('application/json', 'application/*', '*/*'):
            continue
        if options.get('as') == 'APIGroupDiscoveryList':
            if options.get('g') == 'apidiscovery.k8s.io' and options.get('v') == 'v2':
                return True
            continue   # v2beta1 (or another): not served, the next one may be
        if 'as' not in options:
            return False
    return False


def _ordered_groups(catalog: Catalog) -> list[tuple[str, list[str]]]:
    """The built-in groups in the real server's order (by priority), then the custom ones by name."""
    served = catalog.groups()
    builtin = [group['name'] for group in resourcetable.data()['groups'] if group['name'] in served]
    return [(name, served[name]) for name in builtin] + sorted(
        (name, versions) for name, versions in served.items() if name not in builtin)


def aggregated(catalog: Catalog, core: bool) -> dict[str, Any]:
    """`/api` (core=True) or `/apis` as an `APIGroupDiscoveryList`."""
    items = []
    for name, versions in _ordered_groups(catalog):
        if (name == '') is not core:
            continue
        listed = [{'version': version, 'freshness': 'Current',
                   'resources': [_aggregated_entry(r) for r in sorted(catalog.in_group_version(name, version),
                                                                      key=lambda r: r.plural)]}
                  for version in versions]
        metadata: dict[str, Any] = {'name': name, 'creationTimestamp': None} if name else {'creationTimestamp': None}
        items.append({'metadata': metadata, 'versions': listed})
    return {'kind': 'APIGroupDiscoveryList', 'apiVersion': 'apidiscovery.k8s.io/v2', 'metadata': {}, 'items': items}


def _response_kind(resource: Resource, group: str, version: str, kind: str) -> dict[str, str]:
    """A kind as aggregated discovery names it: group and version empty when they are the resource's own."""
    if (group, version) == (resource.group, resource.version) and not resource.custom:
        return {'group': '', 'version': '', 'kind': kind}
    return {'group': group, 'version': version, 'kind': kind}


def _aggregated_entry(resource: Resource) -> dict[str, Any]:
    entry: dict[str, Any] = {
        'resource': resource.plural, 'singularResource': resource.singular,
        'scope': 'Namespaced' if resource.namespaced else 'Cluster', 'verbs': list(resource.verbs),
        'responseKind': _response_kind(resource, resource.group, resource.version, resource.kind),
    }
    if resource.short_names:
        entry['shortNames'] = list(resource.short_names)
    if resource.categories:
        entry['categories'] = list(resource.categories)
    subs = [{'subresource': sub.name, 'verbs': list(sub.verbs),
             'responseKind': _response_kind(resource, sub.group, sub.version, sub.kind)}
            for sub in resource.listed_subresources]
    if not resource.listed_subresources:   # a custom resource's: status and scale
        for sub in resource.subresources:
            legacy = _sub_entry(resource, sub)
            subs.append({'subresource': sub, 'verbs': legacy['verbs'], 'responseKind': _response_kind(
                resource, legacy.get('group', resource.group), legacy.get('version', resource.version),
                legacy['kind'])})
    if subs:
        entry['subresources'] = subs
    return entry
