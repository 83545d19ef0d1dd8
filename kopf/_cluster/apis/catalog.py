"""The catalog of served resources: the built-in table plus whatever the stored CRDs declare."""
from collections.abc import Iterable
from typing import Any

from kopf._shared import resourcetable
from kopf._shared.resourcetable import Resource

GVR = tuple[str, str, str]  # (group, version, plural)


class Catalog:
    """Resources by (group, version, plural); CRD-defined ones are replaced as their CRDs change."""

    def __init__(self, builtins: Iterable[Resource] = resourcetable.BUILTINS) -> None:
        self._builtins = {(r.group, r.version, r.plural): r for r in builtins}
        self._custom: dict[str, list[Resource]] = {}  # CRD name -> its served resources
        self._index: dict[GVR, Resource] = dict(self._builtins)
        self.routes: dict[Any, Any] = {}   # request path -> what it addresses (`web.endpoints`); valid until a rebuild

    def lookup(self, group: str, version: str, plural: str) -> Resource | None:
        return self._index.get((group, version, plural))

    def set_custom(self, crd_name: str, served: list[Resource]) -> None:
        self._custom[crd_name] = served
        self._rebuild()

    def drop_custom(self, crd_name: str) -> None:
        if self._custom.pop(crd_name, None) is not None:
            self._rebuild()

    def _rebuild(self) -> None:
        index = dict(self._builtins)
        for served in self._custom.values():
            index.update({(r.group, r.version, r.plural): r for r in served})
        self._index = index
        self.routes = {}

    def all(self) -> list[Resource]:
        return list(self._index.values())

    def groups(self) -> dict[str, list[str]]:
        """Group name -> served versions, preferred (highest priority) first."""
        found: dict[str, set[str]] = {}
        for group, version, _ in self._index:
            found.setdefault(group, set()).add(version)
        return {g: sorted(vs, key=resourcetable.version_priority, reverse=True) for g, vs in found.items()}

    def in_group_version(self, group: str, version: str) -> list[Resource]:
        return [r for (g, v, _), r in self._index.items() if g == group and v == version]

    def by_kind(self, api_version: str, kind: str) -> Resource | None:
        group, _, version = api_version.rpartition('/')
        for (g, v, _), resource in self._index.items():
            if g == group and v == version and resource.kind == kind:
                return resource
        return None

    def by_key(self, key: tuple[str, str]) -> Resource | None:
        """Any served version of a stored kind (group, plural)."""
        for (group, _, plural), resource in self._index.items():
            if (group, plural) == key:
                return resource
        return None
