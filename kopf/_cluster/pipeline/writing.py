"""The write pipeline: create, replace, patch, delete — server-set metadata, scope, status rules,
finalizers and the scale subresource.

Pure with respect to I/O: functions take the state and decoded inputs, and return an `Outcome`.
Stored objects are never mutated: every write builds a fresh dict (watch history shares them).
"""
import dataclasses
import json
import uuid
from collections.abc import Mapping
from typing import Any

from kopf._cluster import jsoncodec, statuses
from kopf._cluster.apis.routing import Target
from kopf._cluster.openapi import conforming, fieldorder
from kopf._cluster.patchtypes import jsonpatches
from kopf._cluster.pipeline import crds, kind_defaults, kindrules, metadata, scaling, writeguards
from kopf._cluster.pipeline.state import State
from kopf._cluster.rbac.subjects import User
from kopf._cluster.store.objectstore import Obj
from kopf._shared import resourcetable
from kopf._shared.resourcetable import Resource

PROPAGATION_FINALIZERS = {'Foreground': 'foregroundDeletion', 'Orphan': 'orphan'}


@dataclasses.dataclass(frozen=True)
class Options:
    validation: str = 'Warn'      # fieldValidation: Strict | Warn | Ignore
    dry_run: bool = False
    propagation: str = ''
    preconditions: dict[str, Any] = dataclasses.field(default_factory=dict)
    manager: str = ''             # fieldManager (or the User-Agent's product); '' for untracked writes
    force: bool = False           # server-side apply: take conflicting fields over
    duplicates: tuple[str, ...] = ()   # the body's duplicate fields (strict decoding: 400 or warnings)
    user: User | None = None      # who writes (None: the server itself): RBAC's escalation checks, admission
    applier: str = ''             # server-side apply: the manager (its ownership is the applied configuration's)
    applied: Any = None           # server-side apply: the applied configuration (for `managedFields`)
    entries: Any = None           # `managedFields` as computed before mutating admission (which owns nothing)


QUOTA_OPTIONS = Options(manager='kube-apiserver')   # the admission plugin writes the usage through the server


@dataclasses.dataclass
class Outcome:
    code: int
    data: bytes
    warnings: list[str] = dataclasses.field(default_factory=list)
    obj: Obj | None = None


def create(state: State, target: Target, body: Any, options: Options) -> Outcome:
    resource = target.resource
    if resource.custom and _crd_terminating(state, resource):
        raise statuses.method_not_allowed()
    obj = as_object(body)
    _check_type(obj, resource)
    meta = obj['metadata'] = metadata.normalise(obj.get('metadata') or {})
    if meta.get('resourceVersion'):
        raise statuses.bad_request('resourceVersion should not be set on objects to be created')
    namespace = _scope(meta, target)
    name = meta.get('name') or ''
    generated = not name and meta.get('generateName')
    if generated:
        name = meta['name'] = metadata.generate_name(str(meta['generateName']))
    if not name:
        raise statuses.invalid(resource.kind, resource.group, '', [statuses.cause(
            'FieldValueRequired', 'metadata.name', 'Required value: name or generateName is required')])
    _check_namespace(state, resource, namespace, name, str(meta['generateName']) if generated else '')
    if resource.has_status:
        obj.pop('status', None)
    for field in metadata.SERVER_FIELDS:
        meta.pop(field, None)
    meta.update(uid=str(uuid.uuid4()), creationTimestamp=metadata.now())
    kind_defaults.apply(resource.key, obj)
    writeguards.guard(state, target, obj, None, options.user)
    warnings = _conform(state, obj, resource, options)
    if state.store.get(resource.key, namespace, name) is not None:
        raise statuses.already_exists(resource.qualified, resource.group, resource.plural, name)
    if resource.generation:
        meta['generation'] = 1
    writeguards.manage(target, None, obj, options.manager, options.applier, options.applied, options.entries)
    writeguards.as_stored(resource.key, obj)
    _charge(state, target, obj, None, options)
    if options.dry_run:
        fieldorder.arrange(obj)   # as the store would (the answer is what it would store)
        return Outcome(201, jsoncodec.dumps(obj), warnings, obj)
    change = state.store.save(resource.key, obj, None)
    if options.manager:
        state.record_write(target, options.manager, None, obj)
    if resource.key == resourcetable.CRDS.key:
        _establish(state, obj)
    return Outcome(201, change.data, warnings, obj)


def replace(state: State, target: Target, body: Any, options: Options) -> Outcome:
    if target.subresource == 'scale':
        return scale(state, target, None, body, options)
    current = existing(state, target)
    candidate = as_object(body)
    require_rv(target, candidate)
    return update(state, target, current, candidate, options)


def require_rv(target: Target, candidate: dict[str, Any]) -> None:
    """Custom resources (and their status) cannot be updated unconditionally (PUT without a resourceVersion)."""
    rv = (candidate.get('metadata') or {}).get('resourceVersion')
    if not rv and target.resource.custom and target.subresource in (None, 'status'):
        # A real server names the resource here (`diffs.kopf.dev`), not the Kind as in schema errors.
        raise statuses.invalid(target.resource.plural, target.resource.group, target.name or '', [statuses.cause(
            'FieldValueInvalid', 'metadata.resourceVersion', 'Invalid value: 0: must be specified for an update')])


def patch(state: State, target: Target, content_type: str, body: Any, options: Options) -> Outcome:
    resource = target.resource
    if target.subresource == 'scale':
        return scale(state, target, content_type, body, options)
    allowed = jsonpatches.CUSTOM_TYPES if resource.custom else jsonpatches.BUILTIN_TYPES
    if content_type not in allowed:
        raise statuses.unsupported_media(allowed)
    current = state.store.get(resource.key, target.namespace or '', target.name or '')
    if current is None and content_type == jsonpatches.APPLY:
        writeguards.authorize_creation(state, target, options.user)
        return create(state, _collection(target), body, options)
    if current is None:
        raise statuses.not_found(resource.qualified, resource.group, resource.plural, target.name or '')
    candidate = jsonpatches.apply_patch(content_type, current, body, conforming.schema_of(resource))
    if content_type != jsonpatches.JSON and not shares(resource):   # merges share the stored object's subtrees
        candidate = jsoncodec.clone(candidate)
    if options.validation != 'Strict':
        return update(state, target, current, candidate, options)
    patched = {key: candidate[key] for key in sorted(candidate)} if isinstance(candidate, dict) else candidate
    shown = _go_map(body) if content_type == jsonpatches.STRATEGIC else jsoncodec.dumps(patched).decode()
    try:
        return update(state, target, current, candidate, options)
    except statuses.ApiError as exc:   # a patch with unknown fields is an invalid patch (422), not a bad body
        if exc.code != 400 or 'strict decoding error' not in exc.message:
            raise
        tail = exc.message[exc.message.index('strict decoding error'):]
        text = f'Invalid value: {json.dumps(shown)}: {tail}'
        raise statuses.ApiError(422, 'Invalid', f' "" is invalid: patch: {text}',
                                {'causes': [statuses.cause('FieldValueInvalid', 'patch', text)]}) from None


def _go_map(value: Any) -> str:
    """A patch as Go's `%v` prints a decoded JSON value (`map[a:1 b:[x y]]`), as in real strict-patch errors."""
    if isinstance(value, dict):
        return 'map[' + ' '.join(f'{key}:{_go_map(value[key])}' for key in sorted(value)) + ']'
    if isinstance(value, list):
        return '[' + ' '.join(_go_map(item) for item in value) + ']'
    if value is None:
        return '<nil>'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    return str(value)


def shares(resource: Resource) -> bool:
    """Whether a write's new object may share the stored object's unchanged parts (not copy them): when no hook
    of the kind changes values in place. The rest of the pipeline changes only its own top level and metadata
    (fresh dicts); defaulting, pruning and the field order leave a stored part as it is (it went through them
    when it was stored), and the store never changes a stored object (`Store.save` makes it a new version)."""
    key = resource.key
    return key not in kind_defaults.ON_UPDATE and key not in kindrules.HOOKS and key not in kindrules.UPDATES


def scale(state: State, target: Target, content_type: str | None, body: Any, options: Options) -> Outcome:
    """PUT or PATCH of `/scale`: only the spec replicas of the object change; the answer is a Scale."""
    resource = target.resource
    current = existing(state, target)
    if content_type is not None:
        body = scaling.patched_view(resource, current, content_type, body)
    candidate = scaling.applied(resource, current, body)
    outcome = update(state, target, current, candidate, options)   # owned "with subresource scale"
    obj = outcome.obj if outcome.obj is not None else current
    return Outcome(outcome.code, jsoncodec.dumps(scaling.view(resource, obj)), outcome.warnings, obj)


def update(state: State, target: Target, current: Obj, candidate: Any, options: Options) -> Outcome:
    """The shared tail of PUT and PATCH: rules, status split, no-op detection, finalization."""
    resource = target.resource
    candidate = as_object(candidate)
    _check_type(candidate, resource, current)
    given = candidate.get('metadata') or {}
    # The stored metadata itself (a patch that leaves it): normalised when stored; only copied to be changed.
    meta = candidate['metadata'] = dict(given) if given is current['metadata'] else metadata.normalise(given)
    _check_identity(meta, target)
    rv = meta.get('resourceVersion')
    old_meta = current['metadata']
    if meta.get('uid') and meta['uid'] != old_meta.get('uid'):  # twice, as a real server reports it
        raise statuses.invalid(resource.kind, resource.group, target.name or '', [statuses.cause(
            'FieldValueInvalid', 'metadata.uid', f'Invalid value: "{meta["uid"]}": field is immutable')] * 2)
    if rv and rv != old_meta['resourceVersion']:
        raise statuses.conflict(resource.qualified, resource.group, resource.plural, target.name or '')
    candidate = _split_subresource(target, current, candidate)
    kind_defaults.on_update(resource.key, candidate)
    meta = candidate['metadata']
    for field in metadata.SERVER_FIELDS:
        meta.pop(field, None)
        if field in old_meta:
            meta[field] = old_meta[field]
    meta['resourceVersion'] = old_meta['resourceVersion']
    _check_finalizers(resource, current, candidate)
    writeguards.guard(state, target, candidate, current, options.user)
    warnings = _conform(state, candidate, resource, options, current)
    writeguards.manage(target, current, candidate, options.manager, options.applier, options.applied,
                       options.entries)
    writeguards.as_stored(resource.key, candidate)
    if candidate == current:
        return Outcome(200, jsoncodec.dumps(current), warnings, current)
    if resource.generation and _content_changed(candidate, current, resource):
        meta['generation'] = int(old_meta.get('generation') or 0) + 1
    _charge(state, target, candidate, current, options)
    if options.dry_run or (meta.get('deletionTimestamp') and not meta.get('finalizers')):
        fieldorder.arrange(candidate, current)   # as the store would (what it answers is not stored)
    if options.dry_run:
        return Outcome(200, jsoncodec.dumps(candidate), warnings, candidate)
    if meta.get('deletionTimestamp') and not meta.get('finalizers') and not _holds(candidate, resource):
        data = jsoncodec.dumps(candidate)
        state.store.delete(resource.key, candidate)
        return Outcome(200, data, warnings, candidate)
    change = state.store.save(resource.key, candidate, current)
    if options.manager:
        state.record_write(target, options.manager, current, candidate)
    return Outcome(200, change.data, warnings, candidate)


def delete(state: State, target: Target, options: Options) -> Outcome:
    resource = target.resource
    current = existing(state, target)
    _check_preconditions(resource, current, options)
    meta = current['metadata']
    marker = PROPAGATION_FINALIZERS.get(options.propagation)
    if options.dry_run:
        if meta.get('finalizers') or _holds(current, resource) or marker or resource.returns_object_on_delete:
            return Outcome(200, jsoncodec.dumps(current), [], current)
        body = statuses.success(meta['name'], resource.group, resource.plural, meta.get('uid', ''))
        return Outcome(200, jsoncodec.dumps(body), [], None)  # as the real delete answers
    if meta.get('finalizers') or _holds(current, resource) or marker:
        if meta.get('deletionTimestamp'):
            return Outcome(200, jsoncodec.dumps(current), [], current)
        marked = jsoncodec.clone(current)
        marked_meta = marked['metadata']
        if marker and marker not in marked_meta.get('finalizers', []):
            marked_meta['finalizers'] = [*marked_meta.get('finalizers', []), marker]
        marked_meta['deletionTimestamp'] = metadata.now()
        marked_meta['deletionGracePeriodSeconds'] = 0
        if resource.generation and marked_meta.get('generation'):
            marked_meta['generation'] = int(marked_meta['generation']) + 1
        if resource.key == resourcetable.NAMESPACES.key:
            marked.setdefault('status', {})['phase'] = 'Terminating'
        change = state.store.save(resource.key, marked, current)
        return Outcome(200, change.data, [], marked)
    change = state.store.delete(resource.key, current)
    if resource.returns_object_on_delete:
        return Outcome(200, change.data, [], change.obj)
    body = statuses.success(meta['name'], resource.group, resource.plural, meta.get('uid', ''))
    return Outcome(200, jsoncodec.dumps(body), [], None)


def _holds(obj: Obj, resource: Resource) -> bool:
    """Whether something other than metadata.finalizers keeps a deleted object: namespace content, CRs."""
    if resource.key == resourcetable.NAMESPACES.key:
        return bool((obj.get('spec') or {}).get('finalizers'))
    if resource.key == resourcetable.CRDS.key:
        return True   # the cleanup controller removes CRDs after their objects are gone
    return False


def _crd_terminating(state: State, resource: Resource) -> bool:
    crd = state.store.get(resourcetable.CRDS.key, '', f'{resource.plural}.{resource.group}')
    return crd is not None and bool(crd['metadata'].get('deletionTimestamp'))


def _establish(state: State, crd: Obj) -> None:
    """The apiextensions controllers' conditions, written as `kube-apiserver` through the status subresource."""
    established = jsoncodec.clone(crd)
    established['status'] = crds.established_status(crd, metadata.now())
    target = Target(resourcetable.CRDS, None, crd['metadata']['name'], 'status')
    stored = established['status'].get('storedVersions')   # as a real server has stored it: the empty status, typed
    before = {**crd, 'status': {'acceptedNames': {}, 'conditions': [], 'storedVersions': stored}}
    writeguards.manage(target, before, established, 'kube-apiserver', '', None)
    state.store.save(resourcetable.CRDS.key, established, crd)


def _collection(target: Target) -> Target:
    return dataclasses.replace(target, name=None, subresource=None)


def existing(state: State, target: Target) -> Obj:
    """The stored object at the target, or a 404 NotFound."""
    resource = target.resource
    stored = state.store.get(resource.key, target.namespace or '', target.name or '')
    if stored is None:
        raise statuses.not_found(resource.qualified, resource.group, resource.plural, target.name or '')
    return stored


def as_object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise statuses.bad_request('the body of the request must be a JSON object')
    if not isinstance(body.get('metadata', {}), dict):
        raise statuses.bad_request('metadata must be an object')
    return body


def _check_type(obj: dict[str, Any], resource: Resource, current: Obj | None = None) -> None:
    """Default apiVersion/kind for built-ins (and updates); a mismatch with the URL is a 400."""
    if resource.custom and current is None and not obj.get('kind'):
        raise statuses.bad_request(f"Object 'Kind' is missing in '{jsoncodec.dumps(obj).decode()}'")
    if current is not None and obj.get('apiVersion') == current.get('apiVersion'):
        obj['apiVersion'] = resource.api_version   # written through another served version (conversion: None)
    obj.setdefault('apiVersion', resource.api_version)
    obj.setdefault('kind', resource.kind)
    if obj['apiVersion'] != resource.api_version:
        raise statuses.bad_request(f'the API version in the data ({obj["apiVersion"]}) does not match '
                                   f'the expected API version ({resource.api_version})')
    if obj['kind'] != resource.kind and resource.custom:  # a schema error there, named by the wrong kind
        raise statuses.invalid(str(obj['kind']), resource.group, str((obj.get('metadata') or {}).get('name') or ''),
                               [statuses.cause('FieldValueInvalid', 'kind',
                                               f'Invalid value: "{obj["kind"]}": must be {resource.kind}')])
    if obj['kind'] != resource.kind:
        raise statuses.bad_request(f'the kind in the data ({obj["kind"]}) does not match '
                                   f'the expected kind ({resource.kind})')
    meta = obj.get('metadata') or {}
    if current is not None and meta is current['metadata']:   # the stored one (a patch that leaves it): checked
        return
    error = metadata.type_error(meta, resource.kind, resource.version, resource.custom)
    if error is not None:
        raise error


def _scope(meta: dict[str, Any], target: Target) -> str:
    if not target.resource.namespaced:
        meta.pop('namespace', None)
        return ''
    namespace = target.namespace or ''
    if meta.get('namespace') and meta['namespace'] != namespace:
        raise statuses.bad_request('the namespace of the provided object does not match the namespace sent '
                                   'on the request')
    meta['namespace'] = namespace
    return namespace


def _check_identity(meta: dict[str, Any], target: Target) -> None:
    name = target.name or ''
    if meta.get('name') and meta['name'] != name:
        raise statuses.bad_request(f'the name of the object ({meta["name"]}) does not match the name on the URL '
                                   f'({name})')
    meta['name'] = name
    _scope(meta, target)


def _check_namespace(state: State, resource: Resource, namespace: str, name: str, prefix: str = '') -> None:
    # A generateName is checked as a name (its trailing dash aside), before the name generated from it.
    causes = metadata.name_causes(prefix[:-1] if prefix.endswith('-') else prefix, resource.name_rule,
                                  'metadata.generateName') if prefix else []
    causes += metadata.name_causes(name, resource.name_rule)
    if causes:
        raise statuses.invalid(resource.kind, resource.group, name, causes)
    if not resource.namespaced:
        return
    found = state.store.get(resourcetable.NAMESPACES.key, '', namespace)
    if found is None:
        raise statuses.namespace_not_found(namespace)
    if found['metadata'].get('deletionTimestamp'):
        raise statuses.namespace_terminating(resource.plural, name, namespace)


def _split_subresource(target: Target, current: Obj, candidate: dict[str, Any]) -> dict[str, Any]:
    """With a status subresource, each endpoint changes only its own part: the main one keeps the stored status,
    `/status` changes only the status, a namespace's `/finalize` only `spec.finalizers`."""
    sub = target.subresource
    if sub == 'status' and target.resource.key == ('', 'namespaces'):   # its status strategy resets the spec only
        kept = {**candidate, 'spec': jsoncodec.clone(current['spec'])} if 'spec' in current else dict(candidate)
        return kept if 'spec' in current else {k: v for k, v in kept.items() if k != 'spec'}
    shared = shares(target.resource)
    if sub == 'status' or sub == 'finalize':
        result: dict[str, Any] = {**current, 'metadata': dict(current['metadata'])} if shared else \
            jsoncodec.clone(current)
        if sub == 'finalize':
            result['spec'] = {**(result.get('spec') or {}),
                              'finalizers': (candidate.get('spec') or {}).get('finalizers') or []}
        elif 'status' in candidate:
            result['status'] = candidate['status']
        else:
            result.pop('status', None)
        return result
    if target.resource.has_status:
        if 'status' in current:
            candidate['status'] = current['status'] if shared else jsoncodec.clone(current['status'])
        else:
            candidate.pop('status', None)
    return candidate


def _check_finalizers(resource: Resource, current: Obj, candidate: Obj) -> None:
    if not current['metadata'].get('deletionTimestamp'):
        return
    old = set(current['metadata'].get('finalizers') or [])
    new = [f for f in candidate['metadata'].get('finalizers') or [] if f not in old]
    if new:
        listed = ', '.join(f'"{f}"' for f in new)
        message = ('Forbidden: no new finalizers can be added if the object is being deleted, '
                   f'found new finalizers []string{{{listed}}}')
        # Twice, as a real server reports it (its metadata and its finalizer checks both see it).
        raise statuses.invalid(resource.kind, resource.group, current['metadata']['name'],
                               [statuses.cause('FieldValueForbidden', 'metadata.finalizers', message)] * 2)


def _check_preconditions(resource: Resource, current: Obj, options: Options) -> None:
    meta = current['metadata']
    pre = options.preconditions
    if pre.get('uid') and pre['uid'] != meta.get('uid'):
        text = (f"the UID in the precondition ({pre['uid']}) does not match the UID in record ({meta.get('uid')}). "
                'The object might have been deleted and then recreated')
    elif pre.get('resourceVersion') and pre['resourceVersion'] != meta.get('resourceVersion'):
        text = (f"the ResourceVersion in the precondition ({pre['resourceVersion']}) does not match the "
                f"ResourceVersion in record ({meta.get('resourceVersion')}). The object might have been modified")
    else:
        return
    # A real server names the Kind here, not the resource.
    raise statuses.conflict(resource.kind, resource.group, resource.kind, meta['name'], text)


def _conform(state: State, obj: dict[str, Any], resource: Resource, options: Options,
             current: Obj | None = None) -> list[str]:
    warnings = _conform_repeated(obj, resource, options, current)
    meta = obj['metadata']
    causes = metadata.label_causes(meta, current['metadata'] if current is not None else None) + \
        kindrules.prepare(resource.key, obj, state.settings)
    if current is not None:
        causes += kindrules.on_update(resource.key, current, obj)
    if causes:
        raise statuses.invalid(resource.kind, resource.group, meta.get('name') or '', causes)
    return warnings


def _conform_repeated(obj: dict[str, Any], resource: Resource, options: Options,
                      current: Mapping[str, Any] | None) -> list[str]:
    """Conform, with the body's duplicate fields told as a real server's strict decoding tells them."""
    repeated = [f'duplicate field "{path}"' for path in options.duplicates]
    try:
        warnings = conforming.conform(obj, resource, options.validation, current)
    except statuses.ApiError as exc:
        if repeated and exc.code == 400 and 'strict decoding error: ' in exc.message:
            exc.message += ', ' + ', '.join(repeated)
            raise statuses.bad_request(exc.message) from None
        raise
    if repeated and options.validation == 'Strict':
        raise statuses.bad_request(f'{resource.kind} in version "{resource.version}" cannot be handled as a '
                                   f'{resource.kind}: strict decoding error: ' + ', '.join(repeated))
    return warnings + (repeated if options.validation == 'Warn' else [])
def _charge(state: State, target: Target, obj: Obj, current: Obj | None, options: Options) -> None:
    """The ResourceQuota admission check; the charged quotas' new usage is stored before the object."""
    for quota_target, quota, candidate in writeguards.charges(state, target, obj, current):
        if not options.dry_run:
            update(state, quota_target, quota, candidate, QUOTA_OPTIONS)


_NOT_CONTENT = frozenset({'metadata', 'apiVersion', 'kind'})
_NOT_CONTENT_WITH_STATUS = _NOT_CONTENT | {'status'}


def _content_changed(obj: Obj, old: Obj, resource: Resource) -> bool:
    """Whether what counts for `generation` differs: all but metadata, apiVersion, kind (and a status subresource's
    status); the very same values (a shared part) are equal at once."""
    skip = _NOT_CONTENT_WITH_STATUS if resource.has_status else _NOT_CONTENT
    if obj.keys() - skip != old.keys() - skip:
        return True
    return any(value is not old[key] and value != old[key] for key, value in obj.items() if key not in skip)
