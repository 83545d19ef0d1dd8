"""JSON merge-patches (RFC 7386): the one implementation, for the operator's patches and the local cluster's. Pure."""
import copy as copying
from collections.abc import Mapping
from typing import Any


def merge(body: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """Apply a merge-patch (RFC 7386) to a body, returning a new dict; the inputs are not modified."""
    result: dict[str, Any] = merge_value(body, patch)
    return result


def merge_value(target: Any, patch: Any) -> Any:
    """A merge-patch (RFC 7386) on any JSON value: a mapping merges into a mapping, anything else replaces.

    `None` in the patch removes the key; the result shares nothing with the patch, and the target's
    untouched values are shared, not copied (neither input is modified).
    """
    kind = type(patch)   # the exact JSON types first: an ABC's isinstance is many times slower
    if kind is not dict and not isinstance(patch, Mapping):
        scalar = kind is str or kind is float or kind is int or kind is bool or isinstance(patch, (str, int, float))
        return patch if scalar else copying.deepcopy(patch)
    result = dict(target) if type(target) is dict or isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_value(result.get(key), value)
    return result
