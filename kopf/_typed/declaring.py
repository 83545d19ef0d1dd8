"""`@kopf.custom_resource`: a class becomes one version of a custom resource (kube-rs's `#[kube(...)]`).

The decorator checks the names at once (a typo fails at import, naming the class), keeps them on the
class as a `Declaration`, and remembers the class in `DECLARED` (in the order of declaration), where
`kopf run --install-crds` and `kopf rbac` find the classes that the loaded code declared. No pydantic.
"""
import dataclasses
import re
from collections.abc import Callable, Iterable
from typing import Any, Literal, TypeVar

from kopf._typed import markers

ATTR = '__kopf_resource__'
DECLARED: list[type] = []   # every declared class of this process, in the order of declaration

DNS_LABEL = re.compile(r'^[a-z]([-a-z0-9]*[a-z0-9])?$')                 # DNS-1035: plurals, kinds, versions
DNS_SUBDOMAIN = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')
KIND = re.compile(r'^[A-Z][A-Za-z0-9]*$')
COLUMN_TYPES = {'string', 'integer', 'number', 'boolean', 'date'}

C = TypeVar('C', bound=type)


class DeclarationError(ValueError):
    """A resource class declared wrongly: the message names the class."""


@dataclasses.dataclass(frozen=True)
class Declaration:
    """One version of a custom resource, as declared; the kind-level fields must agree across versions."""
    group: str
    version: str
    kind: str
    plural: str
    singular: str
    scope: Literal['Namespaced', 'Cluster']
    shortnames: tuple[str, ...]
    categories: tuple[str, ...]
    printer_columns: tuple[markers.PrinterColumn, ...]
    selectable_fields: tuple[str, ...]
    status_subresource: bool | None
    scale: markers.Scale | None
    storage: bool | None
    served: bool
    deprecated: bool
    deprecation_warning: str | None

    @property
    def crd_name(self) -> str:
        return f'{self.plural}.{self.group}'


def custom_resource(
        group: str, version: str, *, kind: str, plural: str | None = None, singular: str | None = None,
        scope: Literal['Namespaced', 'Cluster'] = 'Namespaced', shortnames: Iterable[str] = (),
        categories: Iterable[str] = (), printer_columns: Iterable[markers.PrinterColumn] = (),
        selectable_fields: Iterable[str] = (), status_subresource: bool | None = None,
        scale: markers.Scale | None = None, storage: bool | None = None, served: bool = True,
        deprecated: bool = False, deprecation_warning: str | None = None) -> Callable[[C], C]:
    """Declare the decorated class (a pydantic model or a dataclass) as one version of a custom resource."""
    declaration = Declaration(
        group=group, version=version, kind=kind, plural=plural or pluralize(kind), singular=singular or kind.lower(),
        scope=scope, shortnames=tuple(shortnames), categories=tuple(categories),
        printer_columns=tuple(printer_columns), selectable_fields=tuple(selectable_fields),
        status_subresource=status_subresource, scale=scale, storage=storage, served=served,
        deprecated=deprecated, deprecation_warning=deprecation_warning)

    def decorate(cls: C) -> C:
        if not isinstance(cls, type):
            raise DeclarationError(f'@kopf.custom_resource decorates classes, not {cls!r}.')
        problems = check(declaration)
        if problems:
            raise DeclarationError(f'{qualname(cls)}: ' + '; '.join(problems) + '.')
        setattr(cls, ATTR, declaration)
        DECLARED.append(cls)
        return cls
    return decorate


def declaration_of(cls: Any) -> Declaration | None:
    """The class's own declaration (a subclass of a declared class is not declared by that)."""
    return cls.__dict__.get(ATTR) if isinstance(cls, type) else None


def resource_of(selector_args: tuple[Any, ...]) -> type | None:
    """The resource class named as a decorator's first positional argument (`@kopf.on.create(Database)`)."""
    first = selector_args[0] if selector_args else None
    return first if declaration_of(first) is not None else None


def qualname(cls: type) -> str:
    return f'{cls.__module__}:{cls.__qualname__}'


def pluralize(kind: str) -> str:
    """The English plural of a kind, lower-cased, as kubebuilder and kube-rs make it (`Policy` → `policies`)."""
    word = kind.lower()
    if re.search(r'(s|x|z|ch|sh)$', word):
        return word + 'es'
    if re.search(r'[^aeiou]y$', word):
        return word[:-1] + 'ies'
    return word + 's'


def check(d: Declaration) -> list[str]:
    """What the API server would refuse in these names (its CRD validation), said before it is asked."""
    problems = []
    if not DNS_SUBDOMAIN.match(d.group) or '.' not in d.group or len(d.group) > 253:
        problems.append(f'the group {d.group!r} must be a DNS subdomain with a dot, e.g. example.com')
    if not DNS_LABEL.match(d.version) or len(d.version) > 63:
        problems.append(f'the version {d.version!r} must be a lower-case DNS label, e.g. v1 or v1beta1')
    if not KIND.match(d.kind) or len(d.kind) > 63:
        problems.append(f'the kind {d.kind!r} must be CamelCase letters and digits, e.g. Database')
    for what, name in [('plural', d.plural), ('singular', d.singular),
                       *(('short name', name) for name in d.shortnames),
                       *(('category', name) for name in d.categories)]:
        if not DNS_LABEL.match(name) or len(name) > 63:
            problems.append(f'the {what} {name!r} must be a lower-case DNS label')
    if len(d.crd_name) > 253:
        problems.append(f'the CRD name {d.crd_name!r} is longer than 253 characters')
    if d.scope not in ('Namespaced', 'Cluster'):
        problems.append(f"the scope {d.scope!r} must be 'Namespaced' or 'Cluster'")
    for column in d.printer_columns:
        if not isinstance(column, markers.PrinterColumn):
            problems.append(f'printer columns are kopf.PrinterColumn(name, json_path), not {column!r}')
        elif column.type is not None and column.type not in COLUMN_TYPES:
            problems.append(f'the printer column {column.name!r} has the type {column.type!r}, '
                            f'not one of {", ".join(sorted(COLUMN_TYPES))}')
    if d.scale is not None and not isinstance(d.scale, markers.Scale):
        problems.append(f'scale= is kopf.Scale(spec_replicas, status_replicas, label_selector), not {d.scale!r}')
    if d.storage and not d.served:
        problems.append('the storage version must be served')
    return problems
