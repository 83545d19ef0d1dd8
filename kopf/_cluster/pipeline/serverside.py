"""Server-side apply (`application/apply-patch+yaml`): merge by the schema, field managers, conflicts.

The common cases of `kubectl apply --server-side` as a real server answers them: an apply creates
a missing object; a manager's apply merges its configuration in (maps by key, associative lists by
their keys, sets by value, other lists whole) and removes the fields it applied before but no
longer does (unless another manager owns them too); a field owned by another manager with a
different value is a 409 conflict (`Apply failed with 1 conflict: conflict with "kubectl-edit"
using v1: .data.a`) unless `force=true`, which takes the field over. Other writes record their
managers (`fieldManager`, else the User-Agent's product) as upstream's "Update" operations.

The conflicts come from the ownership kept aside (`fieldowners`); the `metadata.managedFields` that
responses show are `managedfields`' (given the applied configuration). Not emulated: versions of
managers' field sets across CRD schema changes, and `x-kubernetes-map-type` in conflicts.
"""
import dataclasses
import json
import re
from collections.abc import Mapping
from typing import Any

from kopf._cluster import jsoncodec, statuses
from kopf._cluster.apis.routing import Target
from kopf._cluster.openapi import conforming, kindschemas, validation
from kopf._cluster.patchtypes import fieldowners, jsonpatches
from kopf._cluster.patchtypes.fieldowners import Identity, Managers, Path
from kopf._cluster.pipeline import writeguards, writing
from kopf._cluster.pipeline.state import State
from kopf._cluster.store.objectstore import Obj

MISSING = object()


def check(content_type: str, manager: str, force: bool) -> None:
    """PatchOptions validation: appliers must name themselves; only appliers may force."""
    if content_type == jsonpatches.APPLY and not manager:
        raise statuses.invalid('PatchOptions', 'meta.k8s.io', '', [statuses.cause(
            'FieldValueRequired', 'fieldManager', 'Required value: is required for apply patch')])
    if content_type != jsonpatches.APPLY and force:
        raise statuses.invalid('PatchOptions', 'meta.k8s.io', '', [statuses.cause(
            'FieldValueForbidden', 'force', 'Forbidden: may not be specified for non-apply patch')])


@dataclasses.dataclass
class Plan:
    """An apply's merged object, and the ownership changes to commit once that object is stored."""
    candidate: dict[str, Any]
    config: dict[str, Any]
    managers: Managers
    identity: Identity
    applied: set[Path]
    taken: set[Path]

    def commit(self) -> None:
        for other, paths in self.managers.owned.items():
            if other != self.identity:
                paths -= self.taken
        self.managers.owned[self.identity] = self.applied
        self.managers.owned = {owner: paths for owner, paths in self.managers.owned.items() if paths}


def apply(state: State, target: Target, body: Any, options: writing.Options) -> writing.Outcome:
    """PATCH with `application/apply-patch+yaml` (without admission webhooks; `admitting.calling` has its own)."""
    current = state.store.get(target.resource.key, target.namespace or '', target.name or '')
    if current is None:
        writeguards.authorize_creation(state, target, options.user)
        return create(state, target, body, options)
    planned = plan(state, target, current, body, options)
    outcome = writing.update(state, target, current, planned.candidate, quietly(options, planned.config))
    if not options.dry_run:
        planned.commit()
    return outcome


def quietly(options: writing.Options, config: Any = None) -> writing.Options:
    """The options for the write itself: an apply's ownership is set by its plan, not as an update
    (and its `managedFields` entry by the applied configuration: `applier`, `applied`)."""
    return dataclasses.replace(options, manager='', applier=options.manager, applied=config)


def create(state: State, target: Target, body: Any, options: writing.Options) -> writing.Outcome:
    config = creation_body(target, body)
    _check_items(config, target.resource)
    outcome = writing.create(state, dataclasses.replace(target, name=None, subresource=None),
                             jsoncodec.clone(config), quietly(options, config))
    own_created(state, target, config, options, outcome)
    return outcome


def configuration(body: Any) -> dict[str, Any]:
    """An apply's configuration: an object that names its apiVersion and kind (a real server: 400 if not)."""
    config = writing.as_object(body)
    api_version, kind = str(config.get('apiVersion') or ''), str(config.get('kind') or '')
    if not api_version or not kind:
        group, _, version = api_version.rpartition('/')
        raise statuses.bad_request(f'invalid object type: {group}/{version}, Kind={kind}')
    return config


def creation_body(target: Target, body: Any) -> dict[str, Any]:
    config = configuration(body)
    config.setdefault('metadata', {}).setdefault('name', target.name)
    return config


def own_created(state: State, target: Target, config: Any, options: writing.Options, outcome: writing.Outcome) -> None:
    if outcome.obj is not None and not options.dry_run:
        identity = fieldowners.identity_of(options.manager, 'Apply', target.resource.api_version, target.subresource)
        fields = set(fieldowners.flatten(config, target.resource, with_status=not target.resource.has_status))
        state.managers[outcome.obj['metadata']['uid']] = Managers(owned={identity: fields})


def plan(state: State, target: Target, current: Obj, body: Any, options: writing.Options) -> Plan:
    """Merge the configuration into the live object; 409 on others' fields with other values (unless forced)."""
    resource = target.resource
    config = configuration(body)
    _check_items(config, resource)
    identity = fieldowners.identity_of(options.manager, 'Apply', resource.api_version, target.subresource)
    with_status = target.subresource == 'status' or not resource.has_status
    managers = state.managers.setdefault(current['metadata'].get('uid', ''), Managers())
    managers.settle()
    applied = fieldowners.flatten(config, resource, with_status=with_status)
    live = fieldowners.flatten(current, resource, with_status=with_status)
    conflicts = [(other, path) for other, paths in managers.owned.items() if other != identity
                 for path in sorted(paths & applied.keys()) if live.get(path, MISSING) != applied[path]]
    if conflicts and not options.force:
        raise conflict_error(conflicts)
    taken = {path for _, path in conflicts}
    kept: set[Path] = set().union(*(paths - taken for other, paths in managers.owned.items() if other != identity))
    candidate = jsoncodec.clone(merge_object(current, config, conforming.schema_of(resource)))
    staying = applied.keys() | kept
    parents = {path[:index] for path in staying for index in range(1, len(path))}
    dropped = managers.owned.get(identity, set()) - staying - parents   # `spec: {}` once, `spec.x` now
    for path in sorted(dropped, key=lambda path: path[-1] != '.'):   # whole items first: their keys go with them
        _remove(candidate, path)
    return Plan(candidate, config, managers, identity, set(applied), taken)


def _check_items(config: dict[str, Any], resource: Any) -> None:
    """A configuration that a real server cannot make a typed patch of is its 500: a field a custom resource's
    schema does not declare (`.spec.x: field not declared in schema`), one list-map item named twice."""
    schema = conforming.schema_of(resource)
    unknown = validation.unknown_fields(config, schema) if resource.custom and schema is not None else []
    texts = [''.join(f'.{part}' if isinstance(part, str) else f'[{part}]' for part in path) +
             ': field not declared in schema' for path in unknown]
    found = ('errors:\n' + '\n'.join(f'  {text}' for text in texts) if len(texts) > 1 else texts[0]) if texts else (
        _repeated(config.get('spec'), ((schema or {}).get('properties') or {}).get('spec'), '.spec') or
        _repeated(config.get('template'), ((schema or {}).get('properties') or {}).get('template'), '.template'))
    if found:
        meta = config.get('metadata') or {}
        group, _, version = str(config.get('apiVersion')).rpartition('/')
        where = f'{meta.get("namespace") or ""}/{meta.get("name") or ""}; {group}/{version}, Kind={config.get("kind")}'
        raise statuses.ApiError(500, '', f'failed to create typed patch object ({where}): {found}')


def _repeated(value: Any, node: Any, path: str) -> str | None:
    """`<path>: duplicate entries for key [k=v]` for the first list-map item named twice, as structured-merge-diff."""
    if isinstance(value, Mapping) and isinstance(node, Mapping):
        properties = node.get('properties') or {}
        additional = node.get('additionalProperties')
        for key, item in value.items():
            sub = properties.get(key, additional if isinstance(additional, Mapping) else None)
            found = _repeated(item, sub, f'{path}.{key}')
            if found:
                return found
    elif isinstance(value, list) and isinstance(node, Mapping):
        kind, keys = fieldowners.list_type(node)
        items = node.get('items') if isinstance(node.get('items'), Mapping) else None
        seen: set[str] = set()
        for item in value:
            if kind != 'map' or not isinstance(item, Mapping):
                continue
            element = fieldowners.element_key(item, keys, items)
            if element in seen:
                return f'{path}: duplicate entries for key {element}'
            seen.add(element)
            found = _repeated(item, items, path + element)
            if found:
                return found
    return None


def conflict_error(conflicts: list[tuple[Identity, Path]]) -> statuses.ApiError:
    causes = [{'reason': 'FieldManagerConflict', 'message': f'conflict with {fieldowners.describe(owner)}',
               'field': fieldowners.render(path)} for owner, path in conflicts]
    if len(conflicts) == 1:
        owner, path = conflicts[0]
        conflict = f'{fieldowners.describe(owner)}: {fieldowners.render(path)}'
        message = f'Apply failed with 1 conflict: conflict with {conflict}'
    else:
        lines = []
        for owner in sorted({owner for owner, _ in conflicts}, key=fieldowners.encoded):
            lines.append(f'conflicts with {fieldowners.describe(owner)}:')
            lines.extend(f'- {fieldowners.render(path)}' for other, path in conflicts if other == owner)
        message = f'Apply failed with {len(conflicts)} conflicts: ' + '\n'.join(lines)
    return statuses.ApiError(409, 'Conflict', message, {'causes': causes})


def merge_object(live: Obj, config: Mapping[str, Any], schema: Mapping[str, Any] | None) -> Any:
    """The applied configuration merged into the live object; metadata merges as ObjectMeta."""
    root = dict(schema or {})
    root['properties'] = {**(root.get('properties') or {}), 'metadata': kindschemas.definition(fieldowners.OBJECT_META)}
    return merge(live, config, root)


def merge(live: Any, config: Any, node: Mapping[str, Any] | None) -> Any:
    """The applied configuration merged into the live value by the schema's list types."""
    if isinstance(config, Mapping) and isinstance(live, Mapping):
        properties = (node or {}).get('properties') or {}
        additional = (node or {}).get('additionalProperties')
        result = dict(live)
        for key, value in config.items():
            if value is None:
                result.pop(key, None)
                continue
            sub = properties.get(key, additional if isinstance(additional, Mapping) else None)
            result[key] = merge(live.get(key), value, sub)
        return result
    if isinstance(config, list) and isinstance(live, list):
        kind, keys = fieldowners.list_type(node)
        items = (node or {}).get('items')
        schema = items if isinstance(items, Mapping) else None
        if kind == 'set':
            return _merge_items(live, config, lambda item: json.dumps(item, sort_keys=True), lambda old, new: new)
        if kind == 'map' and all(isinstance(item, Mapping) for item in [*live, *config]):
            return _merge_items(live, config, lambda item: fieldowners.element_key(item, keys, schema),
                                lambda old, new: merge(old, new, schema))
    return config


def _merge_items(live: list[Any], config: list[Any], key: Any, merged: Any) -> list[Any]:
    """Associative lists merged in structured-merge-diff's order: shared items where the configuration puts
    them, the live object's others where they were, new ones where the configuration has them."""
    lhs, rhs = [(key(item), item) for item in live], [(key(item), item) for item in config]
    old, new = dict(reversed(lhs)), dict(reversed(rhs))
    shared = [k for k, _ in rhs if k in old]
    upcoming = shared.pop(0) if shared else None
    done: set[str] = set()
    out: list[Any] = []
    left = right = 0
    while left < len(lhs) or right < len(rhs):
        if left < len(lhs) and right < len(rhs):
            k = lhs[left][0]
            if k == rhs[right][0]:
                done.add(k)
                out.append(merged(old[k], new[k]))
                left, right = left + 1, right + 1
                upcoming = shared.pop(0) if shared else None
                continue
            if k in new and upcoming is not None and upcoming != k:
                left += 1
                continue
        if left < len(lhs):
            k = lhs[left][0]
            if k not in new:
                out.append(lhs[left][1])
                left += 1
                continue
            if k in done:
                left += 1
        if right < len(rhs):
            k = rhs[right][0]
            done.add(k)
            out.append(merged(old[k], new[k]) if k in old else new[k])
            right += 1
            if upcoming is not None and upcoming == k:
                upcoming = shared.pop(0) if shared else None
    return out


def _find(items: list[Any], element: str, keys: list[str], schema: Mapping[str, Any] | None = None) -> int | None:
    for index, item in enumerate(items):
        if isinstance(item, Mapping) and fieldowners.element_key(item, keys, schema) == element:
            return index
    return None


def _remove(obj: Any, path: Path) -> None:
    """Remove one owned leaf (or list item, for a `.` path) from a (cloned, mutable) object."""
    parent: Any = obj
    for position, element in enumerate(path):
        last = position == len(path) - 1 or path[position + 1] == '.'
        if element.startswith('.') and element != '.':
            if not isinstance(parent, dict) or element[1:] not in parent:
                return
            if last:
                del parent[element[1:]]
                return
            parent = parent[element[1:]]
        elif element.startswith('[=') and isinstance(parent, list):
            value = json.loads(element[2:-1])
            parent[:] = [item for item in parent if item != value]
            return
        elif element.startswith('[') and isinstance(parent, list):
            keys = re.findall(r'[\[,]([^=\[\],]+)=', element)
            index = _find(parent, element, keys)
            if index is None:
                return
            if last:
                del parent[index]
                return
            parent = parent[index]
        else:
            return
