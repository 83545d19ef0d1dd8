"""What the emulator serves: one `Resource` per group-version-plural, and the table of built-in kinds.

Built-ins are described by data (plural, kind, scope, subresources, short names, verbs), not by code:
the store and the write pipeline treat every kind alike, reading only these flags. The data is
`data/builtin_resources.json`, generated from a real kube-apiserver's discovery by
`tools/generate_builtin_resources.py`; `OVERRIDES` adds what discovery does not tell.
"""
import dataclasses
import functools
import importlib.resources
import json
import re
from collections.abc import Mapping
from typing import Any

ALL_VERBS = ('create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch')
NO_COLLECTION_DELETE = ('create', 'delete', 'get', 'list', 'patch', 'update', 'watch')
SUBRESOURCE_VERBS = ('get', 'patch', 'update')

# Field selectors every kind supports; namespaced kinds add metadata.namespace.
EVENT_FIELDS = (
    'involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid',
    'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath',
    'reason', 'reportingComponent', 'source', 'type',
)


@dataclasses.dataclass(frozen=True)
class Subresource:
    """A subresource as discovery lists it: its verbs and the kind of its answers (e.g. `autoscaling/v1 Scale`)."""

    name: str
    verbs: tuple[str, ...]
    group: str
    version: str
    kind: str


@dataclasses.dataclass(frozen=True)
class Resource:
    """One served resource at one group-version, with the flags that drive its generic handling."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    singular: str = ''
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    custom: bool = False                       # a custom resource (CRD-defined)
    generation: bool = False                   # maintains metadata.generation
    returns_object_on_delete: bool = False     # pods, services, namespaces answer DELETE with the object
    name_rule: str = 'subdomain'               # 'subdomain', 'label' (RFC 1123), 'dns1035' or 'path' (a segment)
    fields: tuple[str, ...] = ()               # extra field-selector labels
    schema: Mapping[str, Any] | None = dataclasses.field(default=None, compare=False, hash=False)
    printer_columns: tuple[Mapping[str, Any], ...] = dataclasses.field(default=(), compare=False, hash=False)
    scale: Mapping[str, str] | None = dataclasses.field(default=None, compare=False, hash=False)  # CRD scale paths
    listed_subresources: tuple[Subresource, ...] = dataclasses.field(default=(), compare=False, hash=False)
    table_columns: tuple[Mapping[str, Any], ...] = dataclasses.field(default=(), compare=False, hash=False)

    @functools.cached_property   # asked on every write: made once (a frozen dataclass keeps it in its __dict__)
    def api_version(self) -> str:
        return f'{self.group}/{self.version}' if self.group else self.version

    @property
    def qualified(self) -> str:
        """The name used in error messages: `plural.group`, or just `plural` for the core group."""
        return f'{self.plural}.{self.group}' if self.group else self.plural

    @functools.cached_property
    def key(self) -> tuple[str, str]:
        """The storage key: all versions of one group/plural share their objects."""
        return (self.group, self.plural)

    @property
    def list_kind(self) -> str:
        return f'{self.kind}List'

    @functools.cached_property
    def has_status(self) -> bool:
        return 'status' in self.subresources

    def selectable_fields(self) -> tuple[str, ...]:
        scope = ('metadata.name', 'metadata.namespace') if self.namespaced else ('metadata.name',)
        return scope + self.fields


# What discovery does not say, per (group, plural): name rules and field selectors of the real registries.
OVERRIDES: dict[tuple[str, str], dict[str, Any]] = {
    ('', 'namespaces'): {'name_rule': 'label', 'fields': ('status.phase',), 'returns_object_on_delete': True},
    ('', 'services'): {'name_rule': 'dns1035'},
    ('', 'secrets'): {'fields': ('type',)},
    ('', 'events'): {'fields': EVENT_FIELDS},
    ('', 'nodes'): {'fields': ('spec.unschedulable',)},
    ('', 'pods'): {'fields': ('spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName',
                              'spec.hostNetwork', 'status.phase', 'status.podIP', 'status.nominatedNodeName')},
    ('', 'replicationcontrollers'): {'fields': ('status.replicas',)},
    ('apps', 'replicasets'): {'fields': ('status.replicas',)},
    ('batch', 'jobs'): {'fields': ('status.successful',)},
    ('certificates.k8s.io', 'certificatesigningrequests'): {'fields': ('spec.signerName',)},
    **{('rbac.authorization.k8s.io', plural): {'name_rule': 'path'}
       for plural in ('roles', 'rolebindings', 'clusterroles', 'clusterrolebindings')},
}
# The subresources the write pipeline implements; discovery lists all of the real server's.
SERVED_SUBRESOURCES = ('status', 'scale', 'finalize', 'binding', 'eviction', 'token')
DATA_FILE = 'builtin_resources.json'


@functools.cache
def data() -> Mapping[str, Any]:
    """The generated table (`tools/generate_builtin_resources.py`): what a real kube-apiserver serves."""
    raw = importlib.resources.files('kopf._shared.data').joinpath(DATA_FILE).read_bytes()
    loaded: Mapping[str, Any] = json.loads(raw)
    return loaded


def _from_data(entry: Mapping[str, Any]) -> Resource:
    listed = tuple(Subresource(sub['name'], tuple(sub['verbs']), sub['kind']['group'], sub['kind']['version'],
                               sub['kind']['kind']) for sub in entry['subresources'])
    flags: dict[str, Any] = {'generation': bool(entry.get('generation'))}
    if entry.get('deleteReturnsObject') is not None:
        flags['returns_object_on_delete'] = bool(entry['deleteReturnsObject'])
    flags.update(OVERRIDES.get((entry['group'], entry['plural']), {}))
    return Resource(
        group=entry['group'], version=entry['version'], plural=entry['plural'], kind=entry['kind'],
        namespaced=entry['namespaced'], singular=entry['singular'], short_names=tuple(entry['shortNames']),
        categories=tuple(entry['categories']), verbs=tuple(entry['verbs']),
        subresources=tuple(sub.name for sub in listed if sub.name in SERVED_SUBRESOURCES),
        listed_subresources=listed, table_columns=tuple(entry.get('columns') or ()), **flags)


BUILTINS: tuple[Resource, ...] = tuple(_from_data(entry) for entry in data()['resources'])

NAMESPACES = next(r for r in BUILTINS if (r.group, r.plural) == ('', 'namespaces'))
CRDS = next(r for r in BUILTINS if r.plural == 'customresourcedefinitions')
INITIAL_NAMESPACES = ('default', 'kube-system', 'kube-public', 'kube-node-lease')


CUSTOM_VERBS = ('delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch')


def served_resources(crd: Mapping[str, Any]) -> list[Resource]:
    """The resources that a CRD serves (one per served version), as the local cluster and `kopf rbac` see them."""
    spec = crd['spec']
    names = spec['names']
    result = []
    for version in spec['versions']:
        if not version.get('served'):
            continue
        subresources = version.get('subresources') or {}
        result.append(Resource(
            group=spec['group'], version=version['name'], plural=names['plural'], kind=names['kind'],
            namespaced=spec['scope'] == 'Namespaced', singular=names.get('singular') or names['kind'].lower(),
            short_names=tuple(names.get('shortNames') or ()), categories=tuple(names.get('categories') or ()),
            subresources=tuple(sub for sub in ('status', 'scale') if sub in subresources),
            verbs=CUSTOM_VERBS, custom=True, generation=True,
            schema=(version.get('schema') or {}).get('openAPIV3Schema'),
            printer_columns=tuple(version.get('additionalPrinterColumns') or ()),
            scale=subresources.get('scale') if isinstance(subresources.get('scale'), dict) else None,
        ))
    return result


def version_priority(version: str) -> tuple[int, int, int]:
    """Kubernetes version ordering: GA > beta > alpha > other; higher numbers first (as a sort key, descending)."""
    match = re.fullmatch(r'v(\d+)(?:(alpha|beta)(\d+))?', version)
    if not match:
        return (0, 0, 0)
    major, stage, minor = match.groups()
    rank = {None: 3, 'beta': 2, 'alpha': 1}[stage]
    return (rank, int(major), int(minor or 0))
