"""`kopf rbac`: resolve the handlers' resources offline and make the RBAC YAML for the framework's requests.

The CLI loads the handlers as `kopf run` loads them (files, then modules) into a fresh registry; their
selectors are resolved against the built-in resources of the local cluster's table and the CRDs of
the `--crd` manifests (no cluster is contacted); the rules come from `kopf._rbac.rules`.
"""
import dataclasses
import inspect
from collections.abc import Iterable, Sequence
from typing import Any

import yaml

from kopf._api import namespaces as namespaces_
from kopf._core import registries, resources
from kopf._rbac import rules as rbac
from kopf._shared import resourcetable

HEADER = ('# RBAC for the framework\'s own requests (kopf rbac). What the handlers request themselves\n'
          '# (children, Secrets, ...) is not here: add it with --extra rules.yaml.\n')


@dataclasses.dataclass(frozen=True)
class Generated:
    docs: list[dict[str, Any]]
    grants: list[rbac.Grant]
    warnings: list[str]

    def dump(self) -> str:
        explained = ''.join(f'#   {line}\n' for line in rbac.explain(self.grants))
        return HEADER + explained + yaml.safe_dump_all(self.docs, sort_keys=False, explicit_start=True,
                                                         default_flow_style=None, width=120)


def generate(registry: registries.OperatorRegistry, options: rbac.Options, *,
             crds: Sequence[str] = (), extra: Sequence[str] = (), declared: Sequence[type] = ()) -> Generated:
    """The manifests for the registry's handlers (ValueError naming the file if a manifest is bad).

    `declared`: the resource classes of the loaded code (typed resources): they resolve without a `--crd`.
    """
    known = [*builtin_resources(), *crd_resources(crds), *declared_resources(declared)]
    grants, warnings = rbac.grants(registry, known, options)
    extra_cluster: list[dict[str, Any]] = []
    extra_namespaced: list[dict[str, Any]] = []
    for path in extra:
        cluster, namespaced = rbac.split_extra(_load_yaml(path), path)
        extra_cluster += cluster
        extra_namespaced += namespaced
    docs = rbac.manifests(grants, options, extra_cluster=extra_cluster, extra_namespaced=extra_namespaced)
    return Generated(docs=docs, grants=grants, warnings=warnings)


def options_for(namespaces: Iterable[str], **kwargs: Any) -> rbac.Options:
    """`-n` patterns as `kopf run` takes them: exact names get Roles; globs or exclusions: cluster-wide rules."""

    patterns = tuple(namespaces)
    exact = namespaces_.exact_names(patterns) if patterns else None
    if patterns and exact is None:
        return rbac.Options(globs=patterns, **kwargs)
    return rbac.Options(namespaces=tuple(sorted(exact or ())), **kwargs)


def builtin_resources() -> list[resources.Resource]:
    """The built-in resources the local cluster serves (the core ones that handlers usually select)."""
    return _converted(resourcetable.BUILTINS)


def crd_resources(paths: Iterable[str]) -> list[resources.Resource]:
    """The resources that the CRDs in these YAML files define (other documents are skipped)."""
    served = []
    for path in paths:
        for doc in _load_yaml(path):
            if isinstance(doc, dict) and doc.get('kind') == 'CustomResourceDefinition':
                try:
                    served.extend(resourcetable.served_resources(doc))
                except (KeyError, TypeError) as exc:
                    name = (doc.get('metadata') or {}).get('name')
                    raise ValueError(f'{path}: the CRD {name!r} is incomplete: {exc!r} is missing.') from None
    return _converted(served)


def declared_resources(classes: Iterable[type]) -> list[resources.Resource]:
    """The resources of the resource classes (`@kopf.custom_resource`), as their CRDs will serve them."""
    from kopf._typed import declaring, versioning

    found = [(cls, declaration) for cls in classes if (declaration := declaring.declaration_of(cls)) is not None]
    preferred: dict[str, str] = {}
    for _, d in found:
        best = preferred.get(d.crd_name)
        if d.served and (best is None or versioning.priority(d.version) > versioning.priority(best)):
            preferred[d.crd_name] = d.version
    verbs = frozenset({'create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'})
    return [resources.Resource(group=d.group, version=d.version, plural=d.plural, kind=d.kind, singular=d.singular,
                               shortcuts=frozenset(d.shortnames), categories=frozenset(d.categories),
                               subresources=frozenset(_subresources(cls, d)), namespaced=d.scope == 'Namespaced',
                               preferred=preferred.get(d.crd_name) == d.version, verbs=verbs)
            for cls, d in found if d.served]


def _subresources(cls: type, declaration: Any) -> list[str]:
    has_status = any('status' in inspect.get_annotations(base) for base in cls.__mro__)
    status = declaration.status_subresource or (declaration.status_subresource is None and has_status)
    return [*(['status'] if status else []), *(['scale'] if declaration.scale else [])]


def _converted(served: Iterable[Any]) -> list[resources.Resource]:
    served = list(served)
    preferred: dict[str, str] = {}
    for item in served:
        best = preferred.get(item.group)
        if best is None or resourcetable.version_priority(item.version) > resourcetable.version_priority(best):
            preferred[item.group] = item.version
    return [resources.Resource(group=item.group, version=item.version, plural=item.plural, kind=item.kind,
                               singular=item.singular or None, shortcuts=frozenset(item.short_names),
                               categories=frozenset(item.categories), subresources=frozenset(item.subresources),
                               namespaced=item.namespaced, preferred=preferred[item.group] == item.version,
                               verbs=frozenset(item.verbs))
            for item in served]


def _load_yaml(path: str) -> list[Any]:
    try:
        with open(path, encoding='utf-8') as file:
            return list(yaml.safe_load_all(file))
    except OSError as exc:
        raise ValueError(f'Cannot read {path}: {exc.strerror or exc}') from None
    except yaml.YAMLError as exc:
        raise ValueError(f'{path} is not valid YAML: {exc}') from None

