"""Strategic merge patches of built-ins, as apimachinery's `strategicpatch.StrategicMergeMapPatch` applies them.

The list semantics come from the kind's schema (`kindschemas.schema_for`, the same schemas that prune
built-ins): `x-kubernetes-patch-strategy` (`merge`, `replace`, `retainKeys`, or `merge,retainKeys`)
and `x-kubernetes-patch-merge-key`. Lists without `merge` are replaced whole; maps are merged.

Directives: `$patch: replace|delete` in a map (`merge` there is an error, as upstream),
`$patch: replace|delete` items in a merged list of maps, `$retainKeys`, `$setElementOrder/<list>`,
`$deleteFromPrimitiveList/<list>`; any other `$` key is a 400. The order of merged lists follows
upstream: items named in the patch (or its `$setElementOrder`) in that order, items only on the
server interleaved by their old positions — so new items come first (`[a]` + `[b]` gives `[b, a]`).
"""
from collections.abc import Mapping
from typing import Any

from kopf._cluster import jsoncodec, statuses
from kopf._cluster.openapi import kindschemas

Node = Mapping[str, Any] | None
ORDER = '$setElementOrder/'
DELETE_FROM = '$deleteFromPrimitiveList/'
DIRECTIVES = ('$patch', '$retainKeys')


def merge(target: Any, patch: Any, schema: Node) -> Any:
    """The target (never mutated) with the patch applied; `schema` is the kind's root schema (or None)."""
    if not isinstance(patch, Mapping):
        raise statuses.bad_request('json: cannot unmarshal array into Go value of type map[string]interface {}')
    return _merge_map(target if isinstance(target, Mapping) else {}, patch, schema)


def _merge_map(original: Mapping[str, Any], patch: Mapping[str, Any], node: Node) -> dict[str, Any]:
    directive = patch.get('$patch')
    if directive == 'replace':
        return {k: _clean(v) for k, v in patch.items() if not k.startswith('$')}
    if directive == 'delete':
        return {}
    if directive is not None:
        raise statuses.bad_request(f'unknown patch type: {directive} in map: {jsoncodec.dumps(dict(patch)).decode()}')
    result = dict(original)
    if '$retainKeys' in patch:
        _retain(result, patch)
    handled: set[str] = set()
    for key, value in patch.items():
        if key.startswith(ORDER):
            field = key[len(ORDER):]
            ordered = _ordered(result.get(field), patch.get(field), value, _child(node, field), field in patch)
            if ordered is not None:
                result[field] = ordered
            handled.add(field)
    for key, value in patch.items():
        if key in DIRECTIVES or key.startswith(ORDER) or key in handled:
            continue
        if key.startswith(DELETE_FROM):
            field = key[len(DELETE_FROM):]
            if not isinstance(value, list):
                raise statuses.bad_request('invalid patch format of primitive list')
            if isinstance(result.get(field), list):
                result[field] = [item for item in result[field] if item not in value]
        elif key.startswith('$'):
            raise statuses.bad_request(f'unknown patch directive: {key}')
        elif value is None:
            result.pop(key, None)
        elif key not in result or type(result[key]) is not type(value):
            result[key] = _clean(value)
        elif isinstance(value, dict):
            strategy, _ = kindschemas.patch_strategy(_child(node, key))
            result[key] = _clean(value) if strategy == 'replace' else _merge_map(result[key], value, _child(node, key))
        elif isinstance(value, list):
            result[key] = _merge_list(result[key], value, _child(node, key))
        else:
            result[key] = value
    return result


def _retain(result: dict[str, Any], patch: Mapping[str, Any]) -> None:
    keys = patch['$retainKeys']
    if not isinstance(keys, list):
        raise statuses.bad_request('invalid patch format of retainKeys')
    for key, value in patch.items():
        if value is not None and not key.startswith('$') and key not in keys:
            raise statuses.bad_request('invalid patch format of retainKeys')
    for key in [key for key in result if key not in keys]:
        del result[key]


def _merge_list(original: list[Any], patch: list[Any], node: Node) -> list[Any]:
    strategy, key = kindschemas.patch_strategy(node)
    if 'merge' not in (strategy or '').split(','):
        return _clean(patch)  # type: ignore[no-any-return]
    merged = _merged(original, patch, node, key)
    return _normalise(merged, [item for item in patch if not _is_special(item)], original, key)


def _merged(original: list[Any], patch: list[Any], node: Node, key: str | None) -> list[Any]:
    if not any(isinstance(item, Mapping) for item in original + patch):
        return _dedup(original + patch)
    if key is None:
        raise statuses.bad_request('cannot merge lists without merge key')
    result = list(original)
    rest = []
    for item in patch:
        directive = item.get('$patch') if isinstance(item, Mapping) else None
        if directive == 'delete':
            result = [old for old in result if not (isinstance(old, Mapping) and old.get(key) == item.get(key))]
        elif directive == 'replace':
            return [_clean(item) for item in patch if not _is_special(item)]
        elif directive is not None:
            raise statuses.bad_request(f'unknown patch type: {directive}')
        elif not isinstance(item, Mapping) or key not in item:
            text = jsoncodec.dumps(item).decode()
            raise statuses.bad_request(f'map: {text} does not contain declared merge key: {key}')
        else:
            rest.append(item)
    items = node.get('items') if node is not None else None
    for item in rest:
        index = _index(result, item, key)
        if index is None:
            result.append(_clean(item))
        else:
            result[index] = _merge_map(result[index], item, items)
    return result


def _ordered(current: Any, patch: Any, order: Any, node: Node, in_patch: bool) -> Any:
    """`$setElementOrder/<field>`: merge the list (if patched), then order it by the directive."""
    if not isinstance(order, list):
        raise statuses.bad_request('invalid patch format of setElementOrder list')
    original = current if isinstance(current, list) else []
    if not in_patch:
        merged = original
    elif current is None:
        merged = _clean(patch)
    else:
        merged = _merged(original, patch, node, kindschemas.patch_strategy(node)[1])
    if current is None and not in_patch:
        return None
    return _normalise(merged, order, original, kindschemas.patch_strategy(node)[1])


def _normalise(merged: list[Any], order: list[Any], server: list[Any], key: str | None) -> list[Any]:
    """Items present in `order` sorted by it, the rest by `server`, interleaved as upstream's mergeSortedSlice."""
    named = [item for item in merged if _index(order, item, key) is not None]
    named.sort(key=lambda item: _index(order, item, key) or 0)
    others = [item for item in merged if _index(order, item, key) is None]
    others.sort(key=lambda item: _position(server, item, key))
    result = []
    i = j = 0
    while i < len(others) or j < len(named):
        if j >= len(named):
            result.append(others[i])
            i += 1
        elif i >= len(others):
            result.append(named[j])
            j += 1
        else:
            left, right = _index(server, others[i], key), _index(server, named[j], key)
            if left is not None and right is not None and left < right:
                result.append(others[i])
                i += 1
            else:
                result.append(named[j])
                j += 1
    return result


def _index(items: list[Any], value: Any, key: str | None) -> int | None:
    probe = value.get(key) if key is not None and isinstance(value, Mapping) else value
    for position, item in enumerate(items):
        if (item.get(key) if key is not None and isinstance(item, Mapping) else item) == probe:
            return position
    return None


def _position(items: list[Any], value: Any, key: str | None) -> int:
    found = _index(items, value, key)
    return len(items) if found is None else found


def _dedup(values: list[Any]) -> list[Any]:
    result: list[Any] = []
    for value in values:
        if value not in result:
            result.append(value)
    return result


def _is_special(item: Any) -> bool:
    return isinstance(item, Mapping) and '$patch' in item


def _child(node: Node, key: str) -> Node:
    if node is None:
        return None
    properties = node.get('properties') or {}
    if key in properties:
        return properties[key]  # type: ignore[no-any-return]
    additional = node.get('additionalProperties')
    return additional if isinstance(additional, Mapping) else None


def _clean(value: Any) -> Any:
    """A copy without directives (new values are taken from the patch as they are, minus `$` keys)."""
    if isinstance(value, Mapping):
        return {k: _clean(v) for k, v in value.items() if not k.startswith('$')}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value
