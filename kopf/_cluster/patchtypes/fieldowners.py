"""Field ownership for server-side apply: which field manager set which fields of an object.

A field is a path in upstream's `fieldpath` notation, rendered as in conflict messages:
`.spec.replicas`, `.spec.containers[name="app"].image`, `.metadata.finalizers[="x/y"]`.
Lists are associative (`x-kubernetes-list-type: map` — items by their keys, each item also owned
as itself, `…[name="app"].`), sets (`set`, or strategic `merge` of primitives — by value), or atomic
(the whole list is one field). Only leaves are owned; maps are containers, except empty ones.

Managers are identified as upstream does: `(manager, "Apply")` for appliers (any version),
`(manager, "Update", apiVersion[, subresource])` for all other writes. Each write records what it
changed, lazily: the stored objects are immutable, so the log keeps (identity, before, after)
references and computes the changed fields only when an apply needs them (or the log grows long);
consecutive writes of one manager fold into one entry (a field it changed and changed back within
such a run is not taken from its other owners: an approximation that keeps writes cheap).
"""
import dataclasses
import json
from collections.abc import Iterator, Mapping
from typing import Any

from kopf._cluster.openapi import conforming, kindschemas
from kopf._shared.resourcetable import Resource

Path = tuple[str, ...]
Fields = dict[Path, Any]           # leaf path -> value
Identity = tuple[str, ...]         # (manager, 'Apply') or (manager, 'Update', apiVersion[, subresource])
SERVER_META = frozenset({'name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
                         'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields', 'selfLink'})
OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'
LOG_LIMIT = 16
#: The list-map keys the built-ins' schemas default and their objects may omit (kube-apiserver 1.34's
#: OpenAPI: Container/EphemeralContainer `ports` and ServiceSpec `ports`; its other keys' defaults are the
#: zero values of required fields, which validation makes every item set).
KEY_DEFAULTS = {'protocol': 'TCP'}


@dataclasses.dataclass
class Managers:
    """The owners of one object's fields, plus the writes not yet attributed."""
    owned: dict[Identity, set[Path]] = dataclasses.field(default_factory=dict)
    log: list[tuple[Identity, Any, Any, Resource]] = dataclasses.field(default_factory=list)

    def record(self, identity: Identity, before: Any, after: Any, resource: Resource) -> None:
        """Log a write; consecutive writes of one manager fold into one (the hot path: an operator's patches)."""
        if self.log and self.log[-1][0] == identity and self.log[-1][2] is before:
            self.log[-1] = (identity, self.log[-1][1], after, resource)
        else:
            self.log.append((identity, before, after, resource))
        if len(self.log) > LOG_LIMIT:
            self.settle()

    def settle(self) -> None:
        """Attribute the logged writes: changed fields go to the writer (taken from others), removed ones go."""
        cache: dict[int, Fields] = {}
        for identity, before, after, resource in self.log:
            old = cache.get(id(before)) if before is not None else {}
            old = old if old is not None else flatten(before, resource)
            new = cache[id(after)] = flatten(after, resource)
            changed = {path for path, value in new.items() if path not in old or old[path] != value}
            removed = old.keys() - new.keys()
            for other, paths in self.owned.items():
                if other != identity:
                    paths -= changed
                paths -= removed
            self.owned.setdefault(identity, set()).update(changed)
        self.log.clear()
        self.owned = {identity: paths for identity, paths in self.owned.items() if paths}


def identity_of(manager: str, operation: str, api_version: str, subresource: str | None) -> Identity:
    if operation == 'Apply':
        return (manager, 'Apply') + ((subresource,) if subresource else ())
    return (manager, 'Update', api_version) + ((subresource,) if subresource else ())


def encoded(identity: Identity) -> str:
    """The manager identifier as upstream encodes it (a ManagedFieldsEntry's JSON): conflicts are sorted by it."""
    entry = {'manager': identity[0], 'operation': identity[1]}
    if identity[1] == 'Update':
        entry['apiVersion'] = identity[2]
    subresource = identity[3] if identity[1] == 'Update' and len(identity) > 3 else (
        identity[2] if identity[1] == 'Apply' and len(identity) > 2 else None)
    if subresource:
        entry['subresource'] = subresource
    return json.dumps(entry, separators=(',', ':'))


def describe(identity: Identity) -> str:
    """As upstream's printManager: `"kubectl"`, `"kubectl-edit" using v1`, `"x" with subresource "status" …`."""
    text = json.dumps(identity[0])
    subresource = identity[3] if identity[1] == 'Update' and len(identity) > 3 else (
        identity[2] if identity[1] == 'Apply' and len(identity) > 2 else None)
    if subresource:
        text += f' with subresource {json.dumps(subresource)}'
    if identity[1] == 'Update':
        text += f' using {identity[2]}'
    return text


def render(path: Path) -> str:
    return ''.join(element for element in path if element != '.')


def flatten(obj: Any, resource: Resource, *, with_status: bool = True) -> Fields:
    """Every owned leaf of an object, with its value (`.` entries of list items carry their keys)."""
    fields: Fields = {}
    if not isinstance(obj, Mapping):
        return fields
    schema = conforming.schema_of(resource)
    properties = (schema or {}).get('properties') or {}
    for key, value in obj.items():
        if key in ('apiVersion', 'kind') or (key == 'status' and not with_status):
            continue
        if key == 'metadata' and isinstance(value, Mapping):
            meta = {k: v for k, v in value.items() if k not in SERVER_META}
            if meta:   # the server's own fields stripped, an empty metadata is no field (as upstream's)
                fields.update(_walk(meta, kindschemas.definition(OBJECT_META), ('.metadata',)))
        else:
            fields.update(_walk(value, properties.get(key), (f'.{key}',)))
    return fields


def _walk(value: Any, node: Mapping[str, Any] | None, path: Path) -> Iterator[tuple[Path, Any]]:
    if isinstance(value, Mapping) and value:
        properties = (node or {}).get('properties') or {}
        additional = (node or {}).get('additionalProperties')
        for key, child in value.items():
            sub = properties.get(key, additional if isinstance(additional, Mapping) else None)
            yield from _walk(child, sub, path + (f'.{key}',))
    elif isinstance(value, list) and value and list_type(node)[0] != 'atomic':
        kind, keys = list_type(node)
        items = (node or {}).get('items')
        for item in value:
            if kind == 'set':
                yield path + (f'[={json.dumps(item)}]',), item
            elif isinstance(item, Mapping):
                key = element_key(item, keys, items if isinstance(items, Mapping) else None)
                element = path + (key,)
                yield element + ('.',), key   # the item itself: its keys (defaults included) are its value
                yield from _walk(item, items if isinstance(items, Mapping) else None, element)
    else:
        yield path, value


def list_type(node: Mapping[str, Any] | None) -> tuple[str, list[str]]:
    """('map', keys), ('set', []) or ('atomic', []) for a list's schema node."""
    if node is None:
        return 'atomic', []
    declared = node.get('x-kubernetes-list-type')
    keys = node.get('x-kubernetes-list-map-keys')
    if declared == 'map' and isinstance(keys, list) and keys:
        return 'map', keys
    if declared == 'set':
        return 'set', []
    strategy, merge_key = kindschemas.patch_strategy(node)
    if declared is None and 'merge' in (strategy or '').split(','):
        return ('map', [merge_key]) if merge_key else ('set', [])
    return 'atomic', []


def element_key(item: Mapping[str, Any], keys: list[str], items: Mapping[str, Any] | None = None) -> str:
    """`[name="x"]`; a missing key takes its default, as structured-merge-diff does: the schema's `default`
    of that key (the items' schema, for custom resources), else the built-ins' (ports' protocol: TCP);
    a key with no default is left out (another item than one that sets it)."""
    properties = (items or {}).get('properties') or {}
    values = {key: item[key] if key in item else _key_default(properties.get(key), key) for key in sorted(keys)}
    return '[' + ','.join(f'{key}={json.dumps(value)}' for key, value in values.items() if value is not None) + ']'


def _key_default(node: Any, key: str) -> Any:
    if isinstance(node, Mapping) and 'default' in node:
        return node['default']
    return KEY_DEFAULTS.get(key)
