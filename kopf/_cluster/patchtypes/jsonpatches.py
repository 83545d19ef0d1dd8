"""PATCH media types: JSON merge-patch (RFC 7386), JSON-patch (RFC 6902), strategic merge (`strategic.py`).

All functions return a new document and never mutate their inputs (stored objects are shared
with the watch history). Only `json_patch`'s result shares nothing with its target (a deep copy).
"""
from collections.abc import Mapping
from typing import Any

import jsonpatch

from kopf._cluster import jsoncodec, statuses
from kopf._cluster.patchtypes import strategic
from kopf._shared import mergepatch

MERGE = 'application/merge-patch+json'
JSON = 'application/json-patch+json'
STRATEGIC = 'application/strategic-merge-patch+json'
APPLY = 'application/apply-patch+yaml'
CUSTOM_TYPES = (JSON, MERGE, APPLY)
BUILTIN_TYPES = (JSON, MERGE, STRATEGIC, APPLY)


merge_patch = mergepatch.merge_value  # RFC 7386: the one implementation, shared with the framework


def json_patch(target: Any, ops: Any) -> Any:
    if not isinstance(ops, list):
        raise statuses.bad_request('json: cannot unmarshal object into Go value of type jsonpatch.Patch')
    if len(ops) > 10000:
        raise statuses.ApiError(413, 'RequestEntityTooLarge', 'The request is too large: too many operations')
    result = jsoncodec.clone(target)
    if _apply_simply(result, ops):
        return result
    try:   # anything else (arrays, escapes, move/copy, malformed ops): the library, on a fresh copy
        return jsonpatch.JsonPatch(ops).apply(jsoncodec.clone(target), in_place=True)   # a copy already
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, KeyError, IndexError, TypeError):
        raise statuses.json_patch_failed() from None


SIMPLE_OPS = frozenset({'test', 'add', 'remove', 'replace'})


def _apply_simply(doc: Any, ops: list[Any]) -> bool:
    """Apply the usual ops (an operator's finalizer edits) in place, as `jsonpatch` would; False if unsure.

    Handled: test (of strings), add, remove, replace, at paths through objects only, without escapes.
    A failure that the library would also report raises the same 422; anything else (arrays on the
    way, `~` escapes, other ops or values, malformed ops) returns False, possibly half-applied: the
    caller starts over on a fresh copy with the library. Differential test: tests/cluster/test_patchtypes.py.
    """
    for op in ops:
        if type(op) is not dict:
            return False
        kind, path = op.get('op'), op.get('path')
        if type(kind) is not str or kind not in SIMPLE_OPS or type(path) is not str or not path.startswith('/') \
                or '~' in path:
            return False
        if kind != 'remove' and 'value' not in op:
            return False
        *way, last = path[1:].split('/')
        parent = doc
        for token in way:
            if type(parent) is not dict:
                return False
            if token not in parent:
                raise statuses.json_patch_failed()
            parent = parent[token]
        if type(parent) is not dict:
            return False
        if kind == 'test':
            value = op['value']
            if type(value) is not str:
                return False
            if last not in parent or type(parent[last]) is not str or parent[last] != value:
                raise statuses.json_patch_failed()
        elif kind == 'remove' or kind == 'replace':
            if last not in parent:
                raise statuses.json_patch_failed()
            if kind == 'remove':
                del parent[last]
            else:
                parent[last] = _copy(op['value'])
        else:
            parent[last] = _copy(op['value'])
    return True


def _copy(value: Any) -> Any:
    """Values are inserted as copies (as the library does): a value added twice is two values."""
    return jsoncodec.clone(value) if isinstance(value, dict | list) else value


def apply_patch(content_type: str, target: Any, patch: Any, schema: Mapping[str, Any] | None = None) -> Any:
    """Apply a patch of a media type; `schema` (the kind's) drives strategic merges (`strategic.py`)."""
    if content_type == JSON:
        return json_patch(target, patch)
    if not isinstance(patch, Mapping):
        raise statuses.bad_request('json: cannot unmarshal array into Go value of type map[string]interface {}')
    if content_type == STRATEGIC:
        return strategic.merge(target, patch, schema)
    return merge_patch(target, patch)
