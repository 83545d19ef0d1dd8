"""What the emulator serves: one `Resource` per group-version-plural, and the table of built-in kinds.

Built-ins are described by data (plural, kind, scope, subresources, short names, verbs), not by code:
the store and the write pipeline treat every kind alike, reading only these flags.
"""
import dataclasses
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
    name_rule: str = 'subdomain'               # 'subdomain' or 'label' (RFC 1123)
    fields: tuple[str, ...] = ()               # extra field-selector labels
    schema: Mapping[str, Any] | None = dataclasses.field(default=None, compare=False, hash=False)
    printer_columns: tuple[Mapping[str, Any], ...] = dataclasses.field(default=(), compare=False, hash=False)
    scale: Mapping[str, str] | None = dataclasses.field(default=None, compare=False, hash=False)  # CRD scale paths

    @property
    def api_version(self) -> str:
        return f'{self.group}/{self.version}' if self.group else self.version

    @property
    def qualified(self) -> str:
        """The name used in error messages: `plural.group`, or just `plural` for the core group."""
        return f'{self.plural}.{self.group}' if self.group else self.plural

    @property
    def key(self) -> tuple[str, str]:
        """The storage key: all versions of one group/plural share their objects."""
        return (self.group, self.plural)

    @property
    def list_kind(self) -> str:
        return f'{self.kind}List'

    @property
    def has_status(self) -> bool:
        return 'status' in self.subresources

    def selectable_fields(self) -> tuple[str, ...]:
        scope = ('metadata.name', 'metadata.namespace') if self.namespaced else ('metadata.name',)
        return scope + self.fields


def _builtin(group: str, version: str, plural: str, kind: str, namespaced: bool = True, **kw: Any) -> Resource:
    return Resource(group=group, version=version, plural=plural, kind=kind, namespaced=namespaced, **kw)


BUILTINS: tuple[Resource, ...] = (
    _builtin('', 'v1', 'namespaces', 'Namespace', False, short_names=('ns',), subresources=('status', 'finalize'),
             verbs=NO_COLLECTION_DELETE, returns_object_on_delete=True, name_rule='label',
             fields=('status.phase',)),
    _builtin('', 'v1', 'configmaps', 'ConfigMap', short_names=('cm',)),
    _builtin('', 'v1', 'secrets', 'Secret', fields=('type',)),
    _builtin('', 'v1', 'pods', 'Pod', short_names=('po',), categories=('all',), subresources=('status',),
             returns_object_on_delete=True, fields=('spec.nodeName', 'spec.restartPolicy', 'status.phase')),
    _builtin('', 'v1', 'services', 'Service', short_names=('svc',), categories=('all',), subresources=('status',),
             returns_object_on_delete=True, name_rule='label'),
    _builtin('', 'v1', 'serviceaccounts', 'ServiceAccount', short_names=('sa',)),
    _builtin('', 'v1', 'events', 'Event', short_names=('ev',), fields=EVENT_FIELDS),
    _builtin('events.k8s.io', 'v1', 'events', 'Event', short_names=('ev',)),
    _builtin('coordination.k8s.io', 'v1', 'leases', 'Lease'),
    _builtin('apps', 'v1', 'deployments', 'Deployment', short_names=('deploy',), categories=('all',),
             subresources=('status', 'scale'), generation=True),
    _builtin('apps', 'v1', 'replicasets', 'ReplicaSet', short_names=('rs',), categories=('all',),
             subresources=('status', 'scale'), generation=True),
    _builtin('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', False,
             short_names=('crd', 'crds'), categories=('api-extensions',), subresources=('status',), generation=True),
    _builtin('admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations',
             'ValidatingWebhookConfiguration', False, categories=('api-extensions',), generation=True),
    _builtin('admissionregistration.k8s.io', 'v1', 'mutatingwebhookconfigurations',
             'MutatingWebhookConfiguration', False, categories=('api-extensions',), generation=True),
    # The access reviews: create-only, answered by `web.accessreviews` from the access rules, never stored.
    _builtin('authentication.k8s.io', 'v1', 'selfsubjectreviews', 'SelfSubjectReview', False, verbs=('create',)),
    _builtin('authentication.k8s.io', 'v1', 'tokenreviews', 'TokenReview', False, verbs=('create',)),
    _builtin('authorization.k8s.io', 'v1', 'localsubjectaccessreviews', 'LocalSubjectAccessReview',
             verbs=('create',)),
    _builtin('authorization.k8s.io', 'v1', 'selfsubjectaccessreviews', 'SelfSubjectAccessReview', False,
             verbs=('create',)),
    _builtin('authorization.k8s.io', 'v1', 'selfsubjectrulesreviews', 'SelfSubjectRulesReview', False,
             verbs=('create',)),
    _builtin('authorization.k8s.io', 'v1', 'subjectaccessreviews', 'SubjectAccessReview', False, verbs=('create',)),
)

NAMESPACES = BUILTINS[0]
CRDS = next(r for r in BUILTINS if r.plural == 'customresourcedefinitions')
INITIAL_NAMESPACES = ('default', 'kube-system', 'kube-public', 'kube-node-lease')
