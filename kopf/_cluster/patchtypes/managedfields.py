"""`metadata.managedFields` as kube-apiserver keeps it: who set which fields, by which operation, when.

Each write names its manager (`fieldManager`, else the User-Agent's product; `unknown` if none).
An update (create, replace, patch; of the object or a subresource) gives that manager the fields it
added or changed, taking them from the others, and takes the removed fields from everyone; its
entry's time moves only when it changed something. An apply gives its manager exactly the fields of
its configuration, taking the fields it changed from the others (when forced). Then, as upstream:
the fields of server-set metadata are nobody's; empty entries go; more than 10 update entries fold
the oldest into `ancient-changes`; a client may replace the entries by sending its own, or clear
them with `[{}]` (after which updates record nothing until an apply). Entries are sorted by
operation (Apply first), time, manager, apiVersion, subresource.

A create compares against the kind's empty object (a built-in's Go zero value, as the server's
`New()` serialises it: `zero_objects.json`; a custom resource's `{apiVersion, kind}`), so the
fields that exist in an empty object (a Deployment's `spec`) are not owned as maps themselves.
Fields nested deeper than the local cluster's depth limit allows in `fieldsV1` are owned as their
ancestor at that depth (a real server parses 10,000 levels, the local cluster 200).

    updated(...) -> entries;  applied(...) -> entries      # pure: the objects and schema in, the entries out
"""
import dataclasses
import functools
import importlib.resources
import json
from collections.abc import Iterable, Mapping
from typing import Any

from kopf._cluster import jsoncodec
from kopf._cluster.patchtypes import fieldsets
from kopf._cluster.patchtypes.fieldsets import MISSING, Node, Path

Entry = dict[str, Any]
Identity = tuple[str, str, str, str]   # (manager, operation, apiVersion ('' for appliers), subresource)
STRIPPED: frozenset[Path] = frozenset({('f:apiVersion',), ('f:kind',), ('f:metadata',)} | {
    ('f:metadata', f'f:{name}') for name in ('name', 'namespace', 'creationTimestamp', 'selfLink', 'uid',
                                              'clusterName', 'generation', 'managedFields', 'resourceVersion')})
_STRIPPED_TOP = frozenset(path[0] for path in STRIPPED if len(path) == 1 and path != ('f:metadata',))
_STRIPPED_META = frozenset(path[1] for path in STRIPPED if len(path) == 2)
MAX_UPDATERS = 10
MAX_PATH = jsoncodec.MAX_DEPTH - 8   # deeper fields are owned as their ancestor: the entries stay storable
ANCIENT = 'ancient-changes'
CURRENT = ('current-operation', 'Update', '', '')


@dataclasses.dataclass
class Managed:
    fields: dict[Identity, set[Path]] = dataclasses.field(default_factory=dict)
    versions: dict[Identity, str] = dataclasses.field(default_factory=dict)
    times: dict[Identity, str | None] = dataclasses.field(default_factory=dict)
    encoded: dict[Identity, tuple[frozenset[Path], Entry]] = dataclasses.field(default_factory=dict)  # as decoded


@functools.cache
def _zero_objects() -> Mapping[str, Any]:
    raw = importlib.resources.files('kopf._cluster.patchtypes.data').joinpath('zero_objects.json').read_bytes()
    loaded: Mapping[str, Any] = json.loads(raw)
    return loaded


def empty_object(api_version: str, kind: str, custom: bool) -> Any:
    """What the server's `New()` of the kind serialises to: the base a create is compared against."""
    if custom:
        return {'apiVersion': api_version, 'kind': kind}
    zero = _zero_objects().get(f'{api_version}/{kind}')
    return json.loads(json.dumps(zero)) if zero is not None else {}


_DECODED: dict[int, tuple[Any, Managed]] = {}   # id(entries) -> (entries, decoded): stored lists are never mutated


def decode(entries: Any) -> Managed | None:
    """The entries as sets (None if they cannot be decoded: then the live object's are used)."""
    if not isinstance(entries, list):
        return None
    cached = _DECODED.get(id(entries))
    if cached is not None and cached[0] is entries:
        found = cached[1]
        return Managed({k: set(v) for k, v in found.fields.items()}, dict(found.versions), dict(found.times),
                       found.encoded)
    managed = _decode(entries)
    if managed is not None:
        if len(_DECODED) >= 1000:
            _DECODED.clear()
        _DECODED[id(entries)] = (entries, managed)
        return Managed({k: set(v) for k, v in managed.fields.items()}, dict(managed.versions), dict(managed.times),
                       managed.encoded)
    return None


def _remember(entries: list[Entry], managed: Managed) -> list[Entry]:
    """Keep what was just encoded as decoded: the next write of this object starts from it."""
    known = Managed(dict(managed.fields), dict(managed.versions), dict(managed.times))
    for entry in entries:
        operation = entry['operation']
        identity = (entry['manager'], operation, '' if operation == 'Apply' else entry['apiVersion'],
                    entry.get('subresource', ''))
        known.fields[identity] = set(managed.fields[identity])
        known.encoded[identity] = (frozenset(known.fields[identity]), entry)
    if len(_DECODED) >= 1000:
        _DECODED.clear()
    _DECODED[id(entries)] = (entries, known)
    return entries


def _decode(entries: list[Any]) -> Managed | None:
    managed = Managed()
    for entry in entries:
        if not isinstance(entry, Mapping) or entry.get('fieldsType', 'FieldsV1') != 'FieldsV1':
            return None
        operation = str(entry.get('operation') or '')
        version = str(entry.get('apiVersion') or '')
        identity = (str(entry.get('manager') or ''), operation, '' if operation == 'Apply' else version,
                    str(entry.get('subresource') or ''))
        if identity in managed.fields:
            return None   # upstream: "duplicate entries for manager"
        managed.fields[identity] = fieldsets.decode(entry.get('fieldsV1') or {})
        managed.versions[identity] = version
        managed.times[identity] = entry.get('time')
        managed.encoded[identity] = (frozenset(managed.fields[identity]), dict(entry))
    return managed


def encode(managed: Managed) -> list[Entry]:
    entries = []
    for identity, paths in managed.fields.items():
        before = managed.encoded.get(identity)
        if before is not None and before[0] == paths and before[1].get('time') == managed.times.get(identity) \
                and before[1].get('apiVersion', '') == managed.versions.get(identity, ''):
            entries.append(before[1])   # unchanged: the very same entry (no re-encoding)
            continue
        entries.append(_entry(identity, managed.versions.get(identity, ''), managed.times.get(identity), paths))
    return sorted(entries, key=lambda e: (e['operation'], e.get('time') or '', e['manager'], e['apiVersion'],
                                          e.get('subresource', '')))


def _entry(identity: Identity, api_version: str, time: Any, paths: set[Path], custom: bool = False) -> Entry:
    """An entry, its keys in ManagedFieldsEntry's field order; `custom`: sorted, as a custom resource keeps it."""
    manager, operation, _, subresource = identity
    deep = max(map(len, paths), default=0) > MAX_PATH
    fields = fieldsets.encode_shared({path[:MAX_PATH] for path in paths} if deep else paths)
    entry: Entry = {'manager': manager, 'operation': operation, 'apiVersion': api_version}
    if time:
        entry['time'] = time
    entry['fieldsType'] = 'FieldsV1'
    entry['fieldsV1'] = fields
    if subresource:
        entry['subresource'] = subresource
    return dict(sorted(entry.items())) if custom else entry   # custom: as the store arranges it (nothing to move)


def _is_reset(entries: Any) -> bool:
    return isinstance(entries, list) and len(entries) == 1 and entries[0] == {}


def _identity(manager: str, operation: str, api_version: str, subresource: str) -> Identity:
    return (manager or 'unknown', operation, '' if operation == 'Apply' else api_version, subresource)


def updated(live: Any, new: Mapping[str, Any], *, manager: str, api_version: str, subresource: str,
            schema: Node, ignored: Iterable[Path], now: str, creating: bool, custom: bool = False
            ) -> list[Entry] | None:
    """The entries after an update of `live` (the stored object, or the empty object) to `new` (None: none);
    `custom`: of a custom resource (its new entries are made in its field order)."""
    live_entries = (live.get('metadata') or {}).get('managedFields') \
        if type(live) is dict or isinstance(live, Mapping) else None
    new_entries = (new.get('metadata') or {}).get('managedFields')
    identity = _identity(manager, 'Update', api_version, subresource)
    time = now if subresource != 'scale' else None   # upstream's scale handler drops it
    same = subresource or new_entries is live_entries or new_entries == live_entries
    stored = _identified(live_entries) if same else None
    if stored is not None:   # the stored entries, well-formed: the usual update
        changed, removed = _changes(live, new, schema, ignored)
        entries = _updated_lazily(stored, identity, changed | removed | STRIPPED, changed - STRIPPED,
                                  api_version, time, custom)
        if entries is not None:
            return entries
    if same:   # the same entries: the stored ones are decoded already
        managed = decode(live_entries) or Managed()
    elif _is_reset(new_entries):
        managed = Managed()
    else:
        given = decode(new_entries)
        managed = given if given is not None and given.fields else decode(live_entries) or Managed()
    if not managed.fields and not creating:
        return None   # not tracked: cleared by a client, or never tracked
    changed, removed = _changes(live, new, schema, ignored)
    for other, paths in managed.fields.items():
        managed.fields[other] = paths - changed - removed
    mine = changed - STRIPPED
    for other in managed.fields:
        managed.fields[other] -= STRIPPED
    if mine:
        managed.fields[identity] = managed.fields.get(identity, set()) | mine
        managed.versions[identity] = api_version
        managed.times[identity] = time
    _drop_empty(managed)
    _cap(managed)
    return _remember(encode(managed), managed)


def _changes(live: Any, new: Any, schema: Node, ignored: Iterable[Path]) -> tuple[set[Path], set[Path]]:
    """The paths an update added or changed, and those it removed (those under `ignored` aside)."""
    added, modified, removed = fieldsets.compare(_bare(live), _bare(new), schema)
    ignored = list(ignored)
    return fieldsets.without_prefixes(added | modified, ignored), fieldsets.without_prefixes(removed, ignored)


def _identified(entries: Any) -> list[tuple[Entry, Identity]] | None:
    """Stored entries with their identities, if they are a non-empty list of distinct well-formed entries (else
    None: `decode` refuses them, or encoding them again would fail; `updated` then takes the general way)."""
    if not isinstance(entries, list) or not entries:
        return None
    found: list[tuple[Entry, Identity]] = []
    for entry in entries:
        if not isinstance(entry, dict) or entry.get('fieldsType', 'FieldsV1') != 'FieldsV1' or \
                not isinstance(entry.get('manager'), str) or not isinstance(entry.get('operation'), str) or \
                not isinstance(entry.get('apiVersion'), str):
            return None
        operation = entry['operation']
        found.append((entry, (entry['manager'], operation, '' if operation == 'Apply' else entry['apiVersion'],
                              str(entry.get('subresource') or ''))))
    return found if len({identity for _, identity in found}) == len(found) else None


def _owns_stripped(fields: dict[str, Any]) -> bool:
    """`fieldsets.owns(fields, STRIPPED)` by set operations: the top-level and metadata fields only."""
    if not _STRIPPED_TOP.isdisjoint(fields) and _owns_member(fields, _STRIPPED_TOP & fields.keys()):
        return True
    meta = fields.get('f:metadata')
    if meta is None:
        return False
    if not isinstance(meta, dict) or not meta or '.' in meta:
        return True   # `f:metadata` itself
    return not _STRIPPED_META.isdisjoint(meta) and _owns_member(meta, _STRIPPED_META & meta.keys())


def _owns_member(fields: dict[str, Any], keys: Iterable[str]) -> bool:
    """Whether any of these keys (present in `fields`) is a member itself (a leaf, or marked by `.`)."""
    return any(not isinstance(fields[key], dict) or not fields[key] or '.' in fields[key] for key in keys)


def _updated_lazily(stored: list[tuple[Entry, Identity]], identity: Identity, gone: set[Path], mine: set[Path],
                    api_version: str, time: str | None, custom: bool = False) -> list[Entry] | None:
    """What `decode` → the set operations → `encode` make of the stored entries, decoding only those that own a
    path gone from the others (`gone`) or that get `mine`: the others stay the very same entries. None if the
    updaters would be more than `MAX_UPDATERS` (the oldest fold: the general way does that)."""
    result: list[Entry] = []
    stripped = gone >= STRIPPED   # the usual: asked apart, at C speed (most entries own some metadata)
    rest = gone - STRIPPED if stripped else gone
    for entry, own in stored:
        fields = entry.get('fieldsV1') or {}
        ours = own == identity and bool(mine)
        if not ours and isinstance(fields, dict) and fields and not (stripped and _owns_stripped(fields)) and \
                not fieldsets.owns(fields, rest):
            result.append(entry)
            continue
        before = fieldsets.decode(fields)
        paths = before - gone | (mine if ours else set())
        version, when = (api_version, time) if ours else (str(entry.get('apiVersion') or ''), entry.get('time'))
        if paths and paths == before and entry.get('time') == when and entry['apiVersion'] == version:
            result.append(entry)   # unchanged: the very same entry, as `encode` keeps it
        elif paths:
            result.append(_entry(own, version, when, paths, custom))
    if mine and identity not in {own for _, own in stored}:
        result.append(_entry(identity, api_version, time, mine, custom))
    if len(result) > MAX_UPDATERS and sum(1 for entry in result if entry['operation'] != 'Apply') > MAX_UPDATERS:
        return None
    return sorted(result, key=_entry_order) if len(result) > 1 else result


def _entry_order(e: Entry) -> tuple[str, str, str, str, str]:
    return e['operation'], e.get('time') or '', e['manager'], e['apiVersion'], e.get('subresource', '')


def applied(live: Any, new: Mapping[str, Any], config: Any, *, manager: str, api_version: str, subresource: str,
            schema: Node, ignored: Iterable[Path], now: str) -> list[Entry]:
    """The entries after an apply of `config` that made `new` of `live` (forced, or without conflicts)."""
    live_entries = (live.get('metadata') or {}).get('managedFields') if isinstance(live, Mapping) else None
    managed = decode(live_entries) or Managed()
    identity = _identity(manager, 'Apply', api_version, subresource)
    ignored = list(ignored)
    mine = fieldsets.without_prefixes(fieldsets.of_config(config, schema), ignored)
    added, modified, removed = fieldsets.compare(_bare(live), _bare(new), schema)
    changed = fieldsets.without_prefixes(added | modified, ignored)
    removed = fieldsets.without_prefixes(removed, ignored)
    for other, paths in managed.fields.items():
        if other != identity:
            managed.fields[other] = paths - changed - removed
    managed.fields[identity] = mine
    managed.versions[identity] = api_version
    if _changed(live, new):   # a no-op apply leaves the time as it was (none for a new applier), as upstream
        managed.times[identity] = now
    for other in managed.fields:
        managed.fields[other] -= STRIPPED
    _drop_empty(managed)
    _cap(managed)
    return _remember(encode(managed), managed)


def _bare(obj: Any) -> Any:
    """The object as compared (its own managedFields differ, but are stripped as server-set metadata)."""
    return obj if obj is not None else MISSING


def _changed(live: Any, new: Any) -> bool:
    """Whether an apply changed the object (its managedFields aside)."""
    if not isinstance(live, Mapping) or not isinstance(new, Mapping):
        return bool(live != new)
    meta = {k: v for k, v in (live.get('metadata') or {}).items() if k != 'managedFields'}
    new_meta = {k: v for k, v in (new.get('metadata') or {}).items() if k != 'managedFields'}
    return meta != new_meta or {k: v for k, v in live.items() if k != 'metadata'} != \
        {k: v for k, v in new.items() if k != 'metadata'}


def _drop_empty(managed: Managed) -> None:
    for identity in [identity for identity, paths in managed.fields.items() if not paths]:
        del managed.fields[identity]
        managed.versions.pop(identity, None)
        managed.times.pop(identity, None)


def _cap(managed: Managed) -> None:
    """More than 10 update entries: the oldest fold into `ancient-changes` per apiVersion."""
    updaters = [identity for identity in managed.fields if identity[1] != 'Apply']
    if len(updaters) <= MAX_UPDATERS:
        return
    updaters.sort(key=lambda identity: (managed.times.get(identity) or '', json.dumps(identity)))
    first: dict[str, Identity] = {}
    count = len(updaters)
    for identity in updaters:
        if count <= MAX_UPDATERS:
            break
        version = managed.versions.get(identity, '')
        bucket = (ANCIENT, 'Update', version, '')
        if version not in first:
            first[version] = identity
            continue
        if bucket not in managed.fields:
            older = first[version]
            managed.fields[bucket] = managed.fields.pop(older)
            managed.versions[bucket] = managed.versions.pop(older, version)
            managed.times.pop(older, None)
        managed.fields[bucket] |= managed.fields.pop(identity)
        managed.times[bucket] = managed.times.pop(identity, None)
        managed.versions.pop(identity, None)
        count -= 1
