"""`kopf.Resource`: one served API resource (group, version, plural) as discovered in the cluster."""
import dataclasses
import urllib.parse
from collections.abc import Mapping


@dataclasses.dataclass(frozen=True)
class Resource:
    """A resource kind served by the API; equal and hashable by (group, version, plural) only."""

    group: str
    version: str
    plural: str
    kind: str | None = dataclasses.field(default=None, compare=False)
    singular: str | None = dataclasses.field(default=None, compare=False)
    shortcuts: frozenset[str] = dataclasses.field(default=frozenset(), compare=False)
    categories: frozenset[str] = dataclasses.field(default=frozenset(), compare=False)
    subresources: frozenset[str] = dataclasses.field(default=frozenset(), compare=False)
    namespaced: bool | None = dataclasses.field(default=None, compare=False)
    preferred: bool = dataclasses.field(default=True, compare=False)
    verbs: frozenset[str] = dataclasses.field(default=frozenset(), compare=False)

    def __post_init__(self) -> None:
        for name in ('shortcuts', 'categories', 'subresources', 'verbs'):  # accept any iterable
            object.__setattr__(self, name, frozenset(getattr(self, name)))

    def __str__(self) -> str:
        return f'{self.plural}.{self.version}.{self.group}'.rstrip('.')

    @property
    def name(self) -> str:
        """The kubectl-style name: `plural.group`, or `plural` for the core group."""
        return f'{self.plural}.{self.group}' if self.group else self.plural

    @property
    def api_version(self) -> str:
        """The `apiVersion` of the objects: `group/version`, or `version` for the core group."""
        return f'{self.group}/{self.version}' if self.group else self.version

    def get_url(self, server: str | None = None, namespace: str | None = None, name: str | None = None,
                subresource: str | None = None, params: Mapping[str, str] | None = None) -> str:
        """The URL (or only its path if no server) of the list, of one object, or of its subresource."""
        if subresource is not None and name is None:
            raise ValueError('Subresources can be addressed only for a named object.')
        if namespace is not None and self.namespaced is False:
            raise ValueError(f'A cluster-scoped resource {self} cannot be addressed in a namespace.')
        # Per request (every patch): formatted at once, not joined from a list of parts.
        prefix = f'/apis/{self.group}/{self.version}' if self.group else f'/api/{self.version}'
        url = f'{prefix}/namespaces/{namespace}/{self.plural}' if namespace is not None else f'{prefix}/{self.plural}'
        if name is not None:
            url = f'{url}/{name}' if subresource is None else f'{url}/{name}/{subresource}'
        query = urllib.parse.urlencode(params, doseq=True) if params else ''
        return (server or '').rstrip('/') + url + ('?' + query if query else '')
