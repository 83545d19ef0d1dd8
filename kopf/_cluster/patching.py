"""PATCH media types: JSON merge-patch (RFC 7386), JSON-patch (RFC 6902) and strategic merge (built-ins).

All functions return a new document and never mutate their inputs (stored objects are shared
with the watch history).
"""
from collections.abc import Mapping
from typing import Any

import jsonpatch

from kopf._cluster import encoding, errors

MERGE = 'application/merge-patch+json'
JSON = 'application/json-patch+json'
STRATEGIC = 'application/strategic-merge-patch+json'
APPLY = 'application/apply-patch+yaml'
CUSTOM_TYPES = (JSON, MERGE, APPLY)
BUILTIN_TYPES = (JSON, MERGE, STRATEGIC, APPLY)

# Strategic-merge list keys by field name (the patch metadata of the served built-ins).
MERGE_KEYS = {
    'containers': 'name', 'initContainers': 'name', 'ephemeralContainers': 'name', 'env': 'name',
    'volumes': 'name', 'imagePullSecrets': 'name', 'volumeMounts': 'mountPath', 'volumeDevices': 'devicePath',
    'ownerReferences': 'uid', 'conditions': 'type', 'hostAliases': 'ip', 'topologySpreadConstraints':
    'topologyKey', 'containerStatuses': 'name', 'initContainerStatuses': 'name', 'secrets': 'name',
}
SET_LISTS = frozenset({'finalizers'})
DIRECTIVES = ('$patch', '$retainKeys')


def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, Mapping):
        return encoding.clone(patch)
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def json_patch(target: Any, ops: Any) -> Any:
    if not isinstance(ops, list):
        raise errors.bad_request('json: cannot unmarshal object into Go value of type jsonpatch.Patch')
    if len(ops) > 10000:
        raise errors.ApiError(413, 'RequestEntityTooLarge', 'The request is too large: too many operations', {})
    try:
        return jsonpatch.JsonPatch(ops).apply(encoding.clone(target))
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, KeyError, IndexError, TypeError):
        raise errors.json_patch_failed() from None


def strategic_merge(target: Any, patch: Any, field: str = '') -> Any:
    """Strategic merge: merge-patch plus list merging by key, finalizers as a set, `$` directives."""
    if not isinstance(patch, Mapping):
        return encoding.clone(patch)
    if patch.get('$patch') == 'replace':
        return {k: encoding.clone(v) for k, v in patch.items() if k != '$patch'}
    if patch.get('$patch') == 'delete':
        return None
    result = dict(target) if isinstance(target, Mapping) else {}
    retain = patch.get('$retainKeys')
    for key, value in patch.items():
        if key in DIRECTIVES:
            continue
        if key.startswith('$deleteFromPrimitiveList/'):
            name = key.split('/', 1)[1]
            result[name] = [v for v in result.get(name) or [] if v not in (value or [])]
        elif key.startswith('$setElementOrder/'):
            continue
        elif key.startswith('$'):
            raise errors.bad_request(f'unknown patch directive: {key}')
        elif value is None:
            result.pop(key, None)
        elif isinstance(value, list):
            result[key] = _merge_list(key, result.get(key), value)
        else:
            result[key] = strategic_merge(result.get(key), value, key)
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _merge_list(field: str, current: Any, patch: list[Any]) -> list[Any]:
    current = current if isinstance(current, list) else []
    if field in SET_LISTS:
        return list(current) + [v for v in patch if v not in current]
    key = MERGE_KEYS.get(field) or _ports_key(field, patch)
    if key is None or not all(isinstance(item, Mapping) for item in patch):
        return [encoding.clone(v) for v in patch if not (isinstance(v, Mapping) and '$patch' in v)]
    if any(isinstance(item, Mapping) and item.get('$patch') == 'replace' for item in patch):
        return [encoding.clone(v) for v in patch if v.get('$patch') != 'replace']
    result = list(current)
    for item in patch:
        index = next((i for i, old in enumerate(result) if isinstance(old, Mapping) and old.get(key) == item.get(key)),
                     None)
        if item.get('$patch') == 'delete':
            if index is not None:
                del result[index]
        elif index is None:
            result.append(strategic_merge(None, item, field))
        else:
            result[index] = strategic_merge(result[index], item, field)
    return result


def _ports_key(field: str, patch: list[Any]) -> str | None:
    if field != 'ports':
        return None
    if any(isinstance(item, Mapping) and 'containerPort' in item for item in patch):
        return 'containerPort'
    return 'port'


def apply_patch(content_type: str, target: Any, patch: Any) -> Any:
    if content_type == JSON:
        return json_patch(target, patch)
    if not isinstance(patch, Mapping):
        raise errors.bad_request('json: cannot unmarshal array into Go value of type map[string]interface {}')
    if content_type == STRATEGIC:
        return strategic_merge(target, patch)
    return merge_patch(target, patch)
