"""PATCH media types: JSON merge-patch (RFC 7386), JSON-patch (RFC 6902), strategic merge (`strategic.py`).

All functions return a new document and never mutate their inputs (stored objects are shared
with the watch history). Only `json_patch`'s result shares nothing with its target (a deep copy).
"""
from collections.abc import Mapping
from typing import Any

import jsonpatch

from kopf._cluster import encoding, errors, strategic

MERGE = 'application/merge-patch+json'
JSON = 'application/json-patch+json'
STRATEGIC = 'application/strategic-merge-patch+json'
APPLY = 'application/apply-patch+yaml'
CUSTOM_TYPES = (JSON, MERGE, APPLY)
BUILTIN_TYPES = (JSON, MERGE, STRATEGIC, APPLY)


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
        return jsonpatch.JsonPatch(ops).apply(encoding.clone(target), in_place=True)   # a copy already
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, KeyError, IndexError, TypeError):
        raise errors.json_patch_failed() from None


def apply_patch(content_type: str, target: Any, patch: Any, schema: Mapping[str, Any] | None = None) -> Any:
    """Apply a patch of a media type; `schema` (the kind's) drives strategic merges (`strategic.py`)."""
    if content_type == JSON:
        return json_patch(target, patch)
    if not isinstance(patch, Mapping):
        raise errors.bad_request('json: cannot unmarshal array into Go value of type map[string]interface {}')
    if content_type == STRATEGIC:
        return strategic.merge(target, patch, schema)
    return merge_patch(target, patch)
