"""The annotations budget: Kubernetes rejects objects whose annotations exceed 256 KiB in total.

The size is the sum of the UTF-8 lengths of all keys and values (as the API server counts it).
A patch that would push `metadata.annotations` past the budget is not sent: `check_annotations`
raises an error naming the offending key (the biggest key/value the patch writes).
"""
from collections.abc import Mapping
from typing import Any

from kopf._shared import fields

ANNOTATIONS_BUDGET = 256 * 1024


class AnnotationsBudgetError(ValueError):
    """A patch would make an object's annotations too big; `key` is the biggest one the patch writes."""

    def __init__(self, message: str, *, key: str | None, size: int, limit: int) -> None:
        super().__init__(message)
        self.key = key
        self.size = size
        self.limit = limit


def size_of(annotations: Mapping[str, Any]) -> int:
    return sum(len(str(key).encode('utf-8')) + len(str(value).encode('utf-8'))
               for key, value in annotations.items() if value is not None)


def annotations_after(body: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """The annotations as they would be after the merge-patch."""
    result = dict(fields.resolve(body, ('metadata', 'annotations'), None) or {})
    for key, value in (fields.resolve(patch, ('metadata', 'annotations'), None) or {}).items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = value
    return result


def check_annotations(body: Mapping[str, Any], patch: Mapping[str, Any], *, limit: int = ANNOTATIONS_BUDGET) -> int:
    """The annotations' size after the patch; raises AnnotationsBudgetError if it exceeds the limit."""
    size = size_of(annotations_after(body, patch))
    if size <= limit:
        return size
    written = {key: value for key, value in (fields.resolve(patch, ('metadata', 'annotations'), None) or {}).items()
               if value is not None}
    key = max(written, key=lambda k: size_of({k: written[k]})) if written else None
    name = body.get('metadata', {}).get('name')
    namespace = body.get('metadata', {}).get('namespace')
    where = f'{namespace}/{name}' if namespace else f'{name}'
    raise AnnotationsBudgetError(
        f'The patch of {where} is not sent: its annotations would take {size} bytes, over the '
        f'{limit}-byte limit of Kubernetes; the biggest one written is {key!r}.',
        key=key, size=size, limit=limit)
