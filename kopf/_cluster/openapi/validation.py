"""Validation, defaulting and structural checks of objects by OpenAPI v3 schemas.

Usage by the server, in the API server's order for a write (decode → default → admission → prune → validate)::

    validation.apply_defaults(body, schema)                 # in place; also drops non-nullable nulls
    unknown = validation.unknown_fields(body, schema)       # what pruning will drop (incl. metadata keys)
    if field_validation == 'Strict' and unknown:
        -> 400 BadRequest, message validation.strict_decoding_message(unknown)
    schemas.prune(body, schema); schemas.normalise_metadata(body)
    warnings = validation.unknown_field_warnings(unknown)   # unless fieldValidation=Ignore
    causes = validation.validate(body, schema)              # [] if valid
    if causes: -> 422 Invalid, message f'{Kind}.{group} "{name}" is invalid: {validation.summarise(causes)}'
    causes = structural.check_structural(version['schema']['openAPIV3Schema'],   # CRD acceptance
                                         field=f'spec.versions[{i}].schema.openAPIV3Schema')

Causes are k8s `StatusCause` dicts: `{"reason": ..., "message": ..., "field": "spec.size"}`, with the
reasons and message texts of the real server (`FieldValueTypeInvalid`, `FieldValueRequired`,
`FieldValueNotSupported`, `FieldValueTooLong`, `FieldValueTooMany`, `FieldValueDuplicate`,
`FieldValueForbidden`, `FieldValueInvalid`); clients should match reasons and fields, not texts.

Written directly rather than on `jsonschema`: the k8s dialect needs custom keywords anyway
(`nullable`, `x-kubernetes-int-or-string`, `-preserve-unknown-fields`, `-embedded-resource`,
`-list-type`/`-list-map-keys`); the cause reason and message depend on which keyword failed and
on the JSON type name of the offending value, which would mean re-deriving each jsonschema error;
and the built-in schemas are cyclic dict graphs, which a walk along the value handles trivially.
`allOf`/`anyOf`/`oneOf`/`not` are applied by `composition.py`; `x-kubernetes-validations` (CEL) by
`kopf._cluster.cel`, after this validation (`conforming.check_cel`).

This module is the entry point for objects; `apply_defaults` (`defaulting.py`) and the cause constructors
(`fielderrors.py`) live next to it and are re-exported. The structural checks of CRD schemas are in
`structural.py`, which uses this module (to validate their defaults), never the other way round.
"""
import base64
import binascii
import datetime
import ipaddress
import json
import math
import re
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kopf._cluster.openapi import composition, embedded
from kopf._cluster.openapi.composition import JUNCTORS
from kopf._cluster.openapi.defaulting import apply_defaults
from kopf._cluster.openapi.fielderrors import (
    Cause,
    duplicate,
    in_body,
    json_type,
    not_supported,
    number,
    render_value,
    required,
    summarise,
    too_long,
    too_many,
    type_invalid,
)
from kopf._shared import schemas
from kopf._shared.fields import FieldPath
from kopf._shared.schemas import EMBEDDED, INT_OR_STRING, RESOURCE_KEYS, Index, format_path

__all__ = [
    'Cause', 'validate', 'validate_value', 'apply_defaults', 'unknown_fields',
    'strict_decoding_message', 'unknown_field_warnings', 'summarise', 'FORMATS',
]


# ----------------------------------------------------------------------------------------------
# Unknown fields: strict decoding and warnings.

def unknown_fields(obj: Any, schema: Mapping[str, Any] | None) -> list[FieldPath]:
    """What pruning and metadata normalisation would drop from a resource, without modifying it."""
    if schema is None:
        return []
    paths = schemas.unknown_fields(obj, schema)
    if isinstance(obj, Mapping):
        paths += schemas.unknown_metadata_fields(obj)
    return paths


def strict_decoding_message(paths: Iterable[FieldPath]) -> str:
    """The tail of the 400 answer to `fieldValidation=Strict`: `strict decoding error: unknown field "x", …`.

    The server prefixes it with `{Kind} in version "{version}" cannot be handled as a {Kind}: `.
    Fields are sorted, as the API server sorts them.
    """
    return 'strict decoding error: ' + ', '.join(unknown_field_warnings(paths))


def unknown_field_warnings(paths: Iterable[FieldPath]) -> list[str]:
    """Warning texts (one per pruned path, sorted) for `fieldValidation=Warn` or absent: `unknown field "x"`."""
    if not paths:   # the usual case: nothing was pruned
        return []
    return [f'unknown field "{text}"' for text in sorted(format_path(path) for path in paths)]



# ----------------------------------------------------------------------------------------------
# Validation.

def validate(obj: Any, schema: Mapping[str, Any] | None) -> list[Cause]:
    """Validate a resource (its root `apiVersion`/`kind`/`metadata` are not schema-validated) by a schema."""
    if schema is None:
        return []
    causes: list[Cause] = []
    _validate(obj, schema, (), causes, root=True)
    return causes


def validate_value(value: Any, schema: Mapping[str, Any]) -> list[Cause]:
    """Validate a value (not a resource: no root keys are special) by a schema; fields are relative to it."""
    causes: list[Cause] = []
    _validate(value, schema, (), causes)
    return causes


def _validate(value: Any, schema: Mapping[str, Any], path: FieldPath, causes: list[Cause],
              *, root: bool = False) -> None:
    if value is None:
        if not schema.get('nullable') and (schema.get('type') or schema.get(INT_OR_STRING)):
            causes.append(type_invalid(path, _expected_type(schema), value))
        return
    if not _type_matches(value, schema):
        causes.append(type_invalid(path, _expected_type(schema), value))
        return
    if not JUNCTORS.isdisjoint(schema):
        composition.check(value, schema, path, causes, _validate)
    enum = schema.get('enum')
    if isinstance(enum, list) and enum and not any(_json_equal(value, allowed) for allowed in enum):
        causes.append(not_supported(path, value, enum))
    if isinstance(value, str):
        _validate_string(value, schema, path, causes)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        _validatenumber(value, schema, path, causes)
    elif isinstance(value, list):
        _validate_array(value, schema, path, causes)
    elif isinstance(value, dict):
        _validate_object(value, schema, path, causes, root=root)


def _expected_type(schema: Mapping[str, Any]) -> str:
    return 'integer,string' if schema.get(INT_OR_STRING) else str(schema.get('type'))


def _type_matches(value: Any, schema: Mapping[str, Any]) -> bool:
    actual = json_type(value)
    if actual == 'number' and value.is_integer():
        actual = 'integer'  # an integral float is accepted where an integer is expected
    if schema.get(INT_OR_STRING):
        return actual in ('integer', 'string')
    expected = schema.get('type')
    return not expected or actual == expected or (expected == 'number' and actual == 'integer')


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(type(a) is type(b) or (isinstance(a, int | float) and isinstance(b, int | float))) and a == b


def _validate_string(value: str, schema: Mapping[str, Any], path: FieldPath, causes: list[Cause]) -> None:
    max_length, min_length = schema.get('maxLength'), schema.get('minLength')
    if isinstance(max_length, int) and len(value) > max_length:
        causes.append(too_long(path, max_length))
    if isinstance(min_length, int) and len(value) < min_length:
        causes.append(in_body(path, value, f'should be at least {min_length} chars long'))
    pattern = schema.get('pattern')
    if isinstance(pattern, str) and not _compiled(pattern).search(value):
        causes.append(in_body(path, value, f"should match '{pattern}'"))
    fmt = schema.get('format')
    checker = FORMATS.get(fmt) if isinstance(fmt, str) else None
    if checker is not None and not checker(value):
        causes.append(in_body(path, value, f'must be of type {fmt}: {render_value(value)}'))


def _validatenumber(value: int | float, schema: Mapping[str, Any], path: FieldPath, causes: list[Cause]) -> None:
    minimum, maximum = schema.get('minimum'), schema.get('maximum')
    if isinstance(minimum, int | float):
        if schema.get('exclusiveMinimum') and value <= minimum:
            causes.append(in_body(path, value, f'should be greater than {number(minimum)}'))
        elif value < minimum:
            causes.append(in_body(path, value, f'should be greater than or equal to {number(minimum)}'))
    if isinstance(maximum, int | float):
        if schema.get('exclusiveMaximum') and value >= maximum:
            causes.append(in_body(path, value, f'should be less than {number(maximum)}'))
        elif value > maximum:
            causes.append(in_body(path, value, f'should be less than or equal to {number(maximum)}'))
    factor = schema.get('multipleOf')
    if isinstance(factor, int | float) and factor > 0 and not _is_multiple(value, factor):
        causes.append(in_body(path, value, f'should be a multiple of {number(factor)}'))


def _is_multiple(value: int | float, factor: int | float) -> bool:
    if isinstance(value, int) and isinstance(factor, int):
        return value % factor == 0
    quotient = value / factor
    return math.isclose(quotient, round(quotient), rel_tol=0, abs_tol=1e-9)


def _validate_array(value: list[Any], schema: Mapping[str, Any], path: FieldPath, causes: list[Cause]) -> None:
    min_items, max_items = schema.get('minItems'), schema.get('maxItems')
    if isinstance(max_items, int) and len(value) > max_items:
        causes.append(too_many(path, len(value), max_items))
    if isinstance(min_items, int) and len(value) < min_items:
        causes.append(in_body(path, len(value), f'should have at least {min_items} items'))
    if schema.get('uniqueItems') and _first_duplicate(value) is not None:
        causes.append(in_body(path, value, "shouldn't contain duplicates"))
    list_type = schema.get('x-kubernetes-list-type')
    if list_type == 'set':
        for position, item in _duplicates(value):
            causes.append(duplicate(path + (Index(position),), item))
    elif list_type == 'map':
        keys = schema.get('x-kubernetes-list-map-keys') or []
        projected = [{key: item.get(key) for key in keys if key in item} if isinstance(item, dict) else item
                     for item in value]
        for position, item in _duplicates(projected):
            causes.append(duplicate(path + (Index(position),), item))
    items = schema.get('items')
    if isinstance(items, Mapping):
        for position, item in enumerate(value):
            _validate(item, items, path + (Index(position),), causes)


def _duplicates(values: list[Any]) -> list[tuple[int, Any]]:
    seen: set[Any] = set()
    result = []
    for position, value in enumerate(values):
        key = _identity(value)
        if key in seen:
            result.append((position, value))
        seen.add(key)
    return result


def _identity(value: Any) -> Any:
    """A hashable key equal for JSON-equal values (1 and 1.0 alike, True and 1 not)."""
    if isinstance(value, bool) or value is None:
        return (bool, value)
    if isinstance(value, int | float):
        return (float, value)
    if isinstance(value, str):
        return (str, value)
    if isinstance(value, dict):
        return (dict, frozenset((key, _identity(item)) for key, item in value.items()))
    return (list, json.dumps(value, sort_keys=True, separators=(',', ':')))


def _first_duplicate(values: list[Any]) -> int | None:
    found = _duplicates(values)
    return found[0][0] if found else None


def _validate_object(value: dict[str, Any], schema: Mapping[str, Any], path: FieldPath, causes: list[Cause],
                     *, root: bool) -> None:
    min_props, max_props = schema.get('minProperties'), schema.get('maxProperties')
    if isinstance(max_props, int) and len(value) > max_props:
        causes.append(too_many(path, len(value), max_props))
    if isinstance(min_props, int) and len(value) < min_props:
        causes.append(in_body(path, len(value), f'should have at least {min_props} properties'))
    skipped: frozenset[str] = RESOURCE_KEYS if root or schema.get(EMBEDDED) else frozenset()
    if schema.get(EMBEDDED) and not root:
        causes.extend(embedded.causes(value, path))
    for key in schema.get('required') or []:
        if key not in value and key not in skipped:
            causes.append(required(path + (key,)))
    properties: Mapping[str, Any] = schema.get('properties') or {}
    additional = schema.get('additionalProperties')
    for key, child in value.items():
        if key in skipped:
            if key == 'metadata' and root and isinstance(child, dict) and 'metadata' in properties:
                _validate_root_metadata(child, properties['metadata'], causes)
            continue
        if key in properties:
            _validate(child, properties[key], path + (key,), causes)
        elif isinstance(additional, Mapping):
            _validate(child, additional, path + (key,), causes)


def _validate_root_metadata(metadata: dict[str, Any], schema: Mapping[str, Any], causes: list[Cause]) -> None:
    """At the root, a CRD may constrain only metadata.name and metadata.generateName."""
    properties: Mapping[str, Any] = schema.get('properties') or {}
    for key in ('name', 'generateName'):
        if key in metadata and isinstance(properties.get(key), Mapping):
            _validate(metadata[key], properties[key], ('metadata', key), causes)


_PATTERNS: dict[str, re.Pattern[str]] = {}


def _compiled(pattern: str) -> re.Pattern[str]:
    if pattern not in _PATTERNS:
        _PATTERNS[pattern] = re.compile(pattern)
    return _PATTERNS[pattern]



# ----------------------------------------------------------------------------------------------
# Formats (unknown formats are ignored, as the API server does).

_DATE_TIME = re.compile(r'^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$')
_DATE = re.compile(r'^\d{4}-\d\d-\d\d$')
_DURATION = re.compile(r'^([+-]?(\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h|d|w))+$|^0$')
_LABEL = r'[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?'
_HOSTNAME = re.compile(rf'^(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*$')
_EMAIL = re.compile(r'^[^@\s]+@[^@\s]+$')
_MAC = re.compile(r'^([0-9A-Fa-f]{2}[:-]){5}([0-9A-Fa-f]{2})$')


def _is_date_time(value: str) -> bool:
    if not _DATE_TIME.match(value):
        return False
    try:
        datetime.datetime.fromisoformat(value.upper().replace('Z', '+00:00').replace(' ', 'T'))
    except ValueError:
        return False
    return True


def _is_date(value: str) -> bool:
    if not _DATE.match(value):
        return False
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _parses(parser: Callable[[str], Any]) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        try:
            parser(value)
        except (ValueError, binascii.Error):
            return False
        return True
    return check


FORMATS: dict[str, Callable[[str], bool]] = {
    'date-time': _is_date_time,
    'datetime': _is_date_time,
    'date': _is_date,
    'duration': lambda value: bool(_DURATION.match(value)),
    'uuid': _parses(uuid.UUID),
    'byte': _parses(lambda value: base64.b64decode(value.replace('\r', '').replace('\n', ''), validate=True)),
    'ipv4': _parses(ipaddress.IPv4Address),
    'ipv6': _parses(ipaddress.IPv6Address),
    'cidr': _parses(lambda value: ipaddress.ip_network(value, strict=False)),
    'hostname': lambda value: bool(_HOSTNAME.match(value)),
    'email': lambda value: bool(_EMAIL.match(value)),
    'mac': lambda value: bool(_MAC.match(value)),
}

