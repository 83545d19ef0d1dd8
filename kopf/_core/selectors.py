"""Resource selectors: what the decorators' positional and keyword arguments say about resources.

Forms accepted: `'plural'`, `'plural.group'`, `'plural.vN.group'` (kubectl style),
`'group', 'plural'`, `'group/version', 'plural'`, `'v1', 'pods'` (the core group),
`'group', 'version', 'plural'`, `kopf.EVERYTHING` (alone or as the last positional), a callable
`fn(resource) -> bool`, and the keywords `group`, `version`, `kind`, `plural`, `singular`,
`shortcut`, `category`. Exactly one "name" is required; empty strings are rejected.

Matching a selector against the resources discovered in a cluster is the API client's job;
`Selector.check()` and `Selector.select()` are the pure parts of it.
"""
import dataclasses
import enum
import re
from collections.abc import Callable, Iterable
from typing import Any, Final

from kopf._core.resources import Resource

ResourceFn = Callable[[Resource], bool]

_VERSION_RE = re.compile(r'^v\d+(?:(?:alpha|beta)\d+)?$')

# Never served unless selected explicitly: watching them would echo our own event posting.
_EVENTS = (Resource('', 'v1', 'events'), Resource('events.k8s.io', 'v1', 'events'))


class Marker(enum.Enum):
    EVERYTHING = 'EVERYTHING'

    def __repr__(self) -> str:
        return f'kopf.{self.value}'


#: A selector of every served resource (core and `events.k8s.io` Events aside): `@kopf.on.event(kopf.EVERYTHING)`.
EVERYTHING: Final = Marker.EVERYTHING

SelectorArg = str | Marker | ResourceFn | None


@dataclasses.dataclass(frozen=True)
class Selector:
    """A parsed resource selector; None fields are not constrained."""

    group: str | None = None
    version: str | None = None
    plural: str | None = None
    kind: str | None = None
    singular: str | None = None
    shortcut: str | None = None
    category: str | None = None
    any_name: str | Marker | None = None
    callable: ResourceFn | None = None

    def __post_init__(self) -> None:
        names = [self.plural, self.kind, self.singular, self.shortcut, self.category, self.any_name, self.callable]
        given = [name for name in names if name is not None]
        if len(given) > 1:
            raise TypeError(f'Ambiguous resource selector: {self._describe()}; specify only one name.')
        if not given:
            raise TypeError(f'Empty resource selector: {self._describe()}; specify a name (e.g. the plural).')

    def _describe(self) -> str:
        pairs = [f'{f.name}={getattr(self, f.name)!r}' for f in dataclasses.fields(self)]
        return ', '.join(pair for pair in pairs if not pair.endswith('=None')) or 'nothing'

    def __str__(self) -> str:
        if self.callable is not None:
            return getattr(self.callable, '__qualname__', repr(self.callable))
        name = self.plural or self.kind or self.singular or self.shortcut or self.category or self.any_name
        name_str = name.value if isinstance(name, Marker) else str(name)
        return '.'.join(part for part in (name_str, self.version, self.group) if part)

    @property
    def title(self) -> str:
        """How upstream's log lines name a selector: `Selector(any_name='widgets')`."""
        return f'Selector({self._describe()})'

    def ambiguous(self, selected: Iterable[Resource]) -> bool:
        """A name without a group that several non-core groups serve (`select` prefers the core group):
        not served, as upstream (which of them was meant cannot be told)."""
        return self.is_specific and self.group is None and len({resource.group for resource in selected}) > 1

    @property
    def is_specific(self) -> bool:
        """Selects (at most) one kind of resource by its name, not a class of them."""
        return self.callable is None and self.category is None and self.any_name is not EVERYTHING

    def check(self, resource: Resource) -> bool:
        """Whether the resource is selected (without the cluster-wide disambiguation of `select`)."""
        if self.callable is not None:
            return resource not in _EVENTS and bool(self.callable(resource))
        if self.group is not None and self.group != resource.group:
            return False
        if self.version is not None and self.version != resource.version:
            return False
        if self.version is None and not resource.preferred:
            return False
        if self.any_name is EVERYTHING:
            return resource not in _EVENTS
        return (
            (self.plural is None or self.plural == resource.plural) and
            (self.kind is None or self.kind == resource.kind) and
            (self.singular is None or self.singular == resource.singular) and
            (self.shortcut is None or self.shortcut in resource.shortcuts) and
            (self.category is None or self.category in resource.categories) and
            (self.any_name is None or self.any_name in
             {resource.plural, resource.kind, resource.singular, *resource.shortcuts})
        )

    def select(self, resources: Iterable[Resource]) -> set[Resource]:
        """The selected resources; for a specific name found in several groups, the core group wins."""
        selected = {resource for resource in resources if self.check(resource)}
        if self.is_specific and self.group is None and any(r.group == '' for r in selected):
            selected = {resource for resource in selected if resource.group == ''}
        return selected


def parse_selector(
        arg1: SelectorArg = None,
        arg2: SelectorArg = None,
        arg3: SelectorArg = None,
        *,
        group: str | None = None,
        version: str | None = None,
        kind: str | None = None,
        plural: str | None = None,
        singular: str | None = None,
        shortcut: str | None = None,
        category: str | None = None,
) -> Selector:
    """Build a selector from the decorators' positional and keyword arguments."""
    args = [arg1, arg2, arg3]
    keywords = dict(group=group, version=version, kind=kind, plural=plural, singular=singular,
                    shortcut=shortcut, category=category)
    empty = [repr(arg) for arg in args if arg == ''] + [f'{key}=\'\'' for key, val in keywords.items() if val == '']
    if empty:
        raise TypeError(f'Empty strings are not allowed in resource selectors: {", ".join(empty)}.')
    while args and args[-1] is None:
        args.pop()
    if any(arg is None for arg in args):
        raise TypeError(f'Resource selectors cannot have None between positional arguments: {args!r}.')
    pos_group, pos_version, any_name, fn = _parse_positionals(args)
    if pos_group is not None and group is not None:
        raise TypeError(f'The group is given twice: {pos_group!r} positionally and {group!r} by keyword.')
    if pos_version is not None and version is not None:
        raise TypeError(f'The version is given twice: {pos_version!r} positionally and {version!r} by keyword.')
    return Selector(
        group=group if group is not None else pos_group,
        version=version if version is not None else pos_version,
        kind=kind, plural=plural, singular=singular, shortcut=shortcut, category=category,
        any_name=any_name, callable=fn,
    )


def _parse_positionals(args: list[Any]) -> tuple[str | None, str | None, str | Marker | None, ResourceFn | None]:
    """(group, version, any name, callable) from 0-3 positional arguments."""
    if not args:
        return None, None, None, None
    *heads, last = args
    if callable(last) and not isinstance(last, (str, Marker)):
        if heads:
            raise TypeError('A callable resource selector must be the only positional argument.')
        return None, None, None, last
    for arg in args[:-1]:
        if not isinstance(arg, str):
            raise TypeError(f'Only the last positional selector argument can be {arg!r}.')
    if not isinstance(last, (str, Marker)):
        raise TypeError(f'A resource selector must be a string, kopf.EVERYTHING, or a callable; got {last!r}.')
    if len(args) == 3:
        return args[0], args[1], last, None
    if len(args) == 2:
        first: str = args[0]
        if '/' in first:
            group, _, version = first.partition('/')
            return group, version, last, None
        if _VERSION_RE.match(first):
            return '', first, last, None  # 'v1', 'pods': the core group
        return first, None, last, None
    if isinstance(last, str) and '.' in last:  # kubectl style: plural.group or plural.vN.group
        name, _, rest = last.partition('.')
        maybe_version, _, maybe_group = rest.partition('.')
        if _VERSION_RE.match(maybe_version) and maybe_group:
            return maybe_group, maybe_version, name, None
        return rest, None, name, None
    return None, None, last, None
