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
    if not isinstance(patch, Mapping):
        return patch if isinstance(patch, (str, int, float, bool)) else copying.deepcopy(patch)
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_value(result.get(key), value)
    return result
