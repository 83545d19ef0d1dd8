"""RBAC for the framework's own requests, derived from the registry and the options of `kopf rbac`. Pure.

What the framework requests (the code paths of kopf/_api, kopf/_engine and the features), and so what it needs:

| request (code path)                                        | needed when                  | verbs                  |
|------------------------------------------------------------|------------------------------|------------------------|
| list + watch a handled resource (`watching.watch_objs`)    | any resource handler         | list, watch            |
| patch the object (`objectwrites.patch_obj`), re-read it    | change handlers, daemons,    | get, patch             |
|   on a conflict of a guarded JSON-patch                    |   timers                     |                        |
| patch `<plural>/status` (results, status storages)         | the same, if it has status   | patch                  |
| post Events (`events.post_event`)                          | always (`kopf.info()`, ...)  | create                 |
| the schema of a resource (`discovery.schema`: GET its CRD) | any resource handler         | get                    |
| watch the CRDs (resources appearing later)                 | any resource handler         | list, watch            |
| watch the namespaces (`-n` with globs or exclusions)       | globs in `-n`                | list, watch            |
| managed webhook configurations                             | admission handlers           | create, patch          |
|   (`answering.Admission.configure`)                        |                              |                        |
| peering objects (`--peering NAME`)                         | the option                   | get list watch patch   |
| the typed resources' CRDs (`typed.installing`)              | `--install-crds`             | get create update      |
| leases (`--lease NAME`)                                    | the option                   | get create update watch|
| the shards' and the members' Leases (`--lease NAME         | `--shards`                   | + list                 |
|   --shards N`): one list + watch of them all by label      |                              |                        |

Discovery (`/api`, `/apis`, ...) and the health check (`GET /api`) are non-resource URLs, readable by
every authenticated user via the default `system:discovery` ClusterRoleBinding: no rules.

Where: cluster-wide (`-A`, or `-n` with globs: the namespaces are not known in advance) the rules go
into one ClusterRole; with `-n` naming namespaces exactly, the rules of namespaced resources go into
one Role per namespace and the cluster-level ones (CRDs, cluster-scoped resources, webhook
configurations) into the ClusterRole. Events of cluster-scoped objects go to the client's default
namespace (the service account's, in a pod) or to `default`: both get the rule.

A selector is resolved against the known resources (the built-in ones and the given CRDs); one that
resolves to nothing is granted as it is written (its group, or every group `*` if it names none;
its name as the plural; `*` for kinds, short names, categories, callables and `kopf.EVERYTHING`),
with a warning naming it. What the handlers themselves request (children, Secrets, ...) is the
user's to add (`extra`).
"""
import dataclasses
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from kopf._core import handlers as handlers_
from kopf._core import registries, resources, selectors

RBAC_API = 'rbac.authorization.k8s.io'
PEERING_GROUPS = ('kopf.dev', 'zalando.org')  # the legacy group: looked up when kopf.dev has no such peering
READ = frozenset({'list', 'watch'})
WRITE = frozenset({'get', 'patch'})
PEERING_VERBS = frozenset({'get', 'list', 'watch', 'patch'})
LEASE_VERBS = frozenset({'get', 'create', 'update', 'watch'})
WEBHOOK_VERBS = frozenset({'create', 'patch'})
WEBHOOK_CONFIGS = ('validatingwebhookconfigurations', 'mutatingwebhookconfigurations')


@dataclasses.dataclass(frozen=True)
class Grant:
    """Verbs on a resource (`plural` or `plural/subresource`) of an API group; `namespace` None: cluster-wide."""
    group: str
    resource: str
    verbs: frozenset[str]
    namespace: str | None
    why: str


@dataclasses.dataclass(frozen=True)
class Options:
    """What `kopf run` will be given (`-n`/`-A`, `--peering`, the lease), and what to bind to."""
    namespaces: tuple[str, ...] = ()     # `-n` naming namespaces exactly (Roles in them)
    globs: tuple[str, ...] = ()          # `-n` patterns with globs or exclusions (cluster-wide rules)
    peering: str | None = None
    lease: str | None = None             # `NAME` or `NAMESPACE/NAME`
    shards: bool = False                 # `--shards N` too: the sharding's Leases are listed (one watch by label)
    name: str = 'kopf'                   # of the (Cluster)Role(Binding)s
    service_accounts: tuple[str, ...] = ()  # `NAMESPACE/NAME` each
    users: tuple[str, ...] = ()
    posting: bool = True                 # settings.posting.enabled
    scanning: bool = True                # not settings.scanning.disabled
    installed_crds: tuple[str, ...] = ()  # `--install-crds`: the CRDs of the typed resources (their names)


@dataclasses.dataclass(frozen=True)
class Target:
    """A resource as granted: resolved (from the known resources) or as its selector names it."""
    group: str
    plural: str
    namespaced: bool | None  # None: unknown (granted where namespaced resources are)
    status: bool             # has (or may have) the status subresource

    @property
    def title(self) -> str:
        return f'{self.plural}.{self.group}' if self.group else self.plural


def resolve(selector: selectors.Selector, known: Collection[resources.Resource]) -> tuple[list[Target], bool]:
    """The targets of a selector, and whether it was resolved (False: granted as it is written)."""
    if selector.is_specific:
        found = selector.select(known)
        if found:
            targets = {Target(r.group, r.plural, r.namespaced, 'status' in r.subresources) for r in found}
            return sorted(targets, key=lambda t: (t.group, t.plural)), True
    name = selector.plural or selector.any_name
    plural = name if isinstance(name, str) and selector.is_specific else '*'
    return [Target('*' if selector.group is None else selector.group, plural, None, True)], False


def places(options: Options, namespaced: bool | None) -> list[str | None]:
    """Where a resource's rules go: None (the ClusterRole) or each namespace named exactly by `-n`."""
    if not options.namespaces or options.globs or namespaced is False:
        return [None]
    return [*sorted(set(options.namespaces))]


def grants(registry: registries.OperatorRegistry, known: Collection[resources.Resource],
           options: Options) -> tuple[list[Grant], list[str]]:
    """Every grant the framework's requests need, sorted; and the warnings (unresolved selectors)."""
    found: dict[Target, list[handlers_.ResourceHandler]] = {}
    warnings: list[str] = []
    for handler in registry.handlers:
        if not isinstance(handler, handlers_.ResourceHandler) or handler.selector is None:
            continue
        targets, resolved = resolve(handler.selector, known)
        if not resolved and handler.selector.is_specific:
            warning = (f'The resource {handler.selector} is not among the known resources (give its CRD with '
                       f'--crd); granted as {", ".join(t.title for t in targets)}.')
            if warning not in warnings:
                warnings.append(warning)
        for target in targets:
            found.setdefault(target, []).append(handler)

    result: list[Grant] = []
    for target, handlers in found.items():
        writers = [h for h in handlers if isinstance(h, (handlers_.ChangingHandler, handlers_.SpawningHandler))]
        for place in places(options, target.namespaced):
            result.append(Grant(target.group, target.plural, READ, place, f'watched for {_ids(handlers)}'))
            if writers:
                why = f'the progress, finalizers, results of {_ids(writers)}'
                result.append(Grant(target.group, target.plural, WRITE, place, why))
                if target.status:
                    result.append(Grant(target.group, f'{target.plural}/status', frozenset({'patch'}), place, why))
    result.extend(_framework_grants(registry, options, found))
    return sorted(result, key=_order), warnings


def _framework_grants(registry: registries.OperatorRegistry, options: Options,
                      found: Mapping[Target, Any]) -> list[Grant]:
    result: list[Grant] = []
    if found:
        crds = frozenset({'get', *(READ if options.scanning else ())})
        result.append(Grant('apiextensions.k8s.io', 'customresourcedefinitions', crds, None,
                            'the resources\' schemas; CRDs appearing later'))
    if options.installed_crds:
        result.append(Grant('apiextensions.k8s.io', 'customresourcedefinitions', frozenset({'get', 'create', 'update'}),
                            None, f'--install-crds: {", ".join(options.installed_crds)}'))
    if options.posting:
        event_places = set(places(options, True))
        if None not in event_places and any(t.namespaced is False for t in found):
            # Events of cluster-scoped objects: in the client's default namespace (in a pod: its service
            # account's), or in `default` if the server refuses them there.
            event_places.update({'default', *(sa.partition('/')[0] for sa in options.service_accounts)})
        for place in event_places:
            result.append(Grant('', 'events', frozenset({'create'}), place, 'kopf.event() and the handlers\' events'))
    if options.globs:
        result.append(Grant('', 'namespaces', READ, None, f'the namespaces matching {", ".join(options.globs)}'))
    if registry.webhooks:
        for plural in WEBHOOK_CONFIGS:
            result.append(Grant('admissionregistration.k8s.io', plural, WEBHOOK_VERBS, None,
                                'the managed webhook configurations (settings.admission.managed)'))
    if options.peering:
        cluster = not options.namespaces and not options.globs
        plural = 'clusterkopfpeerings' if cluster else 'kopfpeerings'
        for place in places(options, False if cluster else True):
            for group in PEERING_GROUPS:
                result.append(Grant(group, plural, PEERING_VERBS, place, f'the peering {options.peering!r}'))
    if options.lease:
        namespace, _, name = options.lease.rpartition('/')
        lease_places: list[str | None] = [namespace] if namespace else places(options, True)
        for place in lease_places:
            verbs = LEASE_VERBS | {'list'} if options.shards else LEASE_VERBS
            what = f'the shards of {name!r} and their members' if options.shards else f'the lease {name!r}'
            result.append(Grant('coordination.k8s.io', 'leases', verbs, place, what))
    return result


def _ids(handlers: Iterable[handlers_.BaseHandler]) -> str:
    ids = sorted({str(h.id) for h in handlers})
    return ', '.join(ids[:5]) + (f' (+{len(ids) - 5})' if len(ids) > 5 else '')


def _order(grant: Grant) -> tuple[str, str, str, tuple[str, ...]]:
    return (grant.namespace or '', grant.group, grant.resource, tuple(sorted(grant.verbs)))


def rules(grants: Iterable[Grant], extra: Iterable[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """PolicyRules: the verbs of each resource united, then one rule per (group, verbs); the extra ones as given."""
    verbs: dict[tuple[str, str], set[str]] = {}
    for grant in grants:
        verbs.setdefault((grant.group, grant.resource), set()).update(grant.verbs)
    merged: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for (group, resource), united in sorted(verbs.items()):
        merged.setdefault((group, tuple(sorted(united))), []).append(resource)
    result = [{'apiGroups': [group], 'resources': names, 'verbs': list(verbs_)}
              for (group, verbs_), names in merged.items()]
    return result + [dict(rule) for rule in extra]


def subjects(options: Options) -> list[dict[str, str]]:
    """The ServiceAccounts (`NAMESPACE/NAME`) and Users bound; `default/kopf` if none is given."""
    accounts = options.service_accounts or (() if options.users else ('default/kopf',))
    result: list[dict[str, str]] = []
    for account in accounts:
        namespace, slash, name = account.partition('/')
        if not slash or not namespace or not name:
            raise ValueError(f'A service account is NAMESPACE/NAME, not {account!r}.')
        result.append({'kind': 'ServiceAccount', 'name': name, 'namespace': namespace})
    result.extend({'kind': 'User', 'apiGroup': RBAC_API, 'name': user} for user in options.users)
    return result


def manifests(grants: Sequence[Grant], options: Options, *,
              extra_cluster: Iterable[Mapping[str, Any]] = (),
              extra_namespaced: Iterable[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """The ClusterRole and its binding, then a Role and its binding per namespace (only if it has rules).

    The extra rules go into the ClusterRole (`extra_cluster`) and, for the namespaced ones, into every
    Role (or into the ClusterRole when there are no Roles: cluster-wide).
    """
    by_place: dict[str | None, list[Grant]] = {}
    for grant in grants:
        by_place.setdefault(grant.namespace, []).append(grant)
    role_places = sorted({place for place in [*by_place, *places(options, True)] if place is not None})
    extra_namespaced = list(extra_namespaced)
    cluster_extra = [*extra_cluster, *([] if role_places else extra_namespaced)]
    meta = {'name': options.name}
    bound = subjects(options)
    docs: list[dict[str, Any]] = []
    cluster_rules = rules(by_place.get(None, []), cluster_extra)
    if cluster_rules:
        docs.append({'apiVersion': f'{RBAC_API}/v1', 'kind': 'ClusterRole', 'metadata': meta, 'rules': cluster_rules})
        docs.append({'apiVersion': f'{RBAC_API}/v1', 'kind': 'ClusterRoleBinding', 'metadata': meta,
                     'roleRef': {'apiGroup': RBAC_API, 'kind': 'ClusterRole', 'name': options.name},
                     'subjects': bound})
    for place in role_places:
        ns_meta = {**meta, 'namespace': place}
        role_rules = rules(by_place.get(place, []), extra_namespaced)
        if not role_rules:
            continue
        docs.append({'apiVersion': f'{RBAC_API}/v1', 'kind': 'Role', 'metadata': ns_meta, 'rules': role_rules})
        docs.append({'apiVersion': f'{RBAC_API}/v1', 'kind': 'RoleBinding', 'metadata': ns_meta,
                     'roleRef': {'apiGroup': RBAC_API, 'kind': 'Role', 'name': options.name},
                     'subjects': bound})
    return docs


def explain(grants: Iterable[Grant]) -> list[str]:
    """One line per grant (for the comment above the YAML): verbs, resource, where, and why."""
    lines = []
    for grant in grants:
        plural, slash, sub = grant.resource.partition('/')
        name = (f'{plural}.{grant.group}' if grant.group else plural) + slash + sub
        where = f'in {grant.namespace}' if grant.namespace else 'cluster-wide'
        lines.append(f'{",".join(sorted(grant.verbs))} {name} {where}: {grant.why}')
    return lines


def split_extra(docs: Iterable[Any], source: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The extra rules of a YAML file: (for the ClusterRole, for the Roles).

    A document is a list of PolicyRules (they go where the handled resources' rules go), or a
    Role/ClusterRole (its `rules` go into ours of that kind); anything else is an error naming the file.
    """
    cluster: list[dict[str, Any]] = []
    namespaced: list[dict[str, Any]] = []
    for doc in docs:
        if doc is None:
            continue
        kind = doc.get('kind') if isinstance(doc, Mapping) else None
        found = doc.get('rules') if isinstance(doc, Mapping) else doc
        if not isinstance(found, list) or not all(isinstance(rule, Mapping) and 'verbs' in rule for rule in found):
            raise ValueError(f'{source}: expected a list of RBAC rules (each with verbs) or a Role/ClusterRole.')
        (cluster if kind == 'ClusterRole' else namespaced).extend(dict(rule) for rule in found)
    return cluster, namespaced
