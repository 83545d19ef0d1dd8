"""Field errors as the API server reports them: k8s `StatusCause` dicts with its reasons and texts.

Mirrors `k8s.io/apimachinery/pkg/util/validation/field` (the reason per error type, how a bad value is
printed) plus the go-openapi detail texts (`spec.size in body must be of type integer: "string"`).
Shared by `validation` (objects) and `structural` (CRD schemas).
"""
import json
from typing import Any

from kopf._shared.fields import FieldPath
from kopf._shared.schemas import format_path

Cause = dict[str, str]


def summarise(causes: list[Cause]) -> str:
    """The tail of a 422 message: one `field: message`, or several in brackets."""
    texts = [f'{cause["field"]}: {cause["message"]}' if cause.get('field') else cause['message'] for cause in causes]
    return texts[0] if len(texts) == 1 else '[' + ', '.join(texts) + ']'


def render_value(value: Any) -> str:
    """A bad value as Go's field errors print it: strings quoted, numbers bare, null as "null"."""
    if value is None:
        return '"null"'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int | float):
        return number(value)
    return json.dumps(value, separators=(',', ':'), sort_keys=True, ensure_ascii=False)


def number(value: int | float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return str(value)


def _cause(reason: str, path: FieldPath | str, message: str) -> Cause:
    field = path if isinstance(path, str) else format_path(path)
    return {'reason': reason, 'message': message, 'field': field}


def invalid(path: FieldPath | str, value: Any, detail: str) -> Cause:
    return _cause('FieldValueInvalid', path, f'Invalid value: {render_value(value)}: {detail}')


def in_body(path: FieldPath, value: Any, detail: str) -> Cause:
    """The go-openapi style detail: `spec.size in body should be …`."""
    return invalid(path, value, f'{format_path(path) or "<root>"} in body {detail}')


def type_invalid(path: FieldPath, expected: str, value: Any) -> Cause:
    name = format_path(path)
    actual = json_type(value)
    detail = f'{name} in body must be of type {expected}: "{actual}"'
    return _cause('FieldValueTypeInvalid', path, f'Invalid value: "{actual}": {detail}')


def required(path: FieldPath | str, detail: str = '') -> Cause:
    return _cause('FieldValueRequired', path, 'Required value' + (f': {detail}' if detail else ''))


def forbidden(path: FieldPath | str, detail: str) -> Cause:
    return _cause('FieldValueForbidden', path, f'Forbidden: {detail}')


def not_supported(path: FieldPath, value: Any, allowed: list[Any]) -> Cause:
    texts = [v if isinstance(v, str) else json.dumps(v, separators=(',', ':')) for v in allowed]
    detail = 'supported values: ' + ', '.join(json.dumps(text, ensure_ascii=False) for text in texts)
    return _cause('FieldValueNotSupported', path, f'Unsupported value: {render_value(value)}: {detail}')


def too_long(path: FieldPath, maximum: int) -> Cause:
    return _cause('FieldValueTooLong', path, f'Too long: may not be longer than {maximum}')


def too_many(path: FieldPath, actual: int, maximum: int) -> Cause:
    return _cause('FieldValueTooMany', path, f'Too many: {actual}: must have at most {maximum} items')


def duplicate(path: FieldPath, value: Any) -> Cause:
    return _cause('FieldValueDuplicate', path, f'Duplicate value: {render_value(value)}')


def json_type(value: Any) -> str:
    """The OpenAPI type name of a decoded JSON value, as the API server names it in messages."""
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'boolean'
    if isinstance(value, int):
        return 'integer'
    if isinstance(value, float):
        return 'number'  # even if integral: a JSON `3.0` decodes as a float64, as in Go
    if isinstance(value, str):
        return 'string'
    if isinstance(value, list):
        return 'array'
    return 'object'

