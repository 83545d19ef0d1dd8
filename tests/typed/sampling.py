"""Objects generated from a generated schema: one valid object, and its variants at every field, each near or
across one constraint (a wrong type, a null, a bound and one past it, a length, a pattern, an enum, a missing
required field, a duplicate in a set or a map-keyed list, too few or too many items or keys).

Which variants are valid is not decided here: pydantic and the API server each say it, and the agreement
test compares them. Pure: schema dicts in, JSON-like values out.
"""
import copy
import re
from collections.abc import Iterator
from typing import Any

Schema = dict[str, Any]
Path = tuple[str | int, ...]
SAMPLE_DATETIME = '2026-12-07T01:02:03Z'


def valid(schema: Schema) -> Any:
    """A value that the schema accepts, with every optional field filled (but CEL rules: the corpus gives those)."""
    if 'default' in schema:
        return copy.deepcopy(schema['default'])
    if 'enum' in schema:
        return schema['enum'][0]
    if schema.get('x-kubernetes-int-or-string'):
        return int(schema.get('minimum', 7))
    kind = schema.get('type')
    if kind == 'object':
        return _valid_object(schema)
    if kind == 'array':
        count = max(schema.get('minItems', 1), 1) if schema.get('maxItems', 1) else 0
        return [_distinct(valid(schema['items']), index) for index in range(count)]
    if kind == 'string':
        return _valid_string(schema)
    if kind in ('integer', 'number'):
        return _valid_number(schema)
    if kind == 'boolean':
        return True
    return {'free': ['form', 1]}   # preserve-unknown-fields without a type


def _valid_object(schema: Schema) -> Any:
    if schema.get('x-kubernetes-embedded-resource') and 'properties' not in schema:
        return {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'embedded'}}
    if 'properties' in schema:
        return {name: valid(prop) for name, prop in schema['properties'].items() if name not in ('metadata',)
                and not (name in ('apiVersion', 'kind') and 'x-kubernetes-embedded-resource' not in schema)}
    if 'additionalProperties' in schema:
        count = max(schema.get('minProperties', 1), 1)
        return {f'key{index}': _distinct(valid(schema['additionalProperties']), index) for index in range(count)}
    return {'free': {'form': 1}}


def _valid_string(schema: Schema) -> str:
    if schema.get('format') == 'date-time':
        return SAMPLE_DATETIME
    if schema.get('format') == 'date':
        return SAMPLE_DATETIME[:10]
    if schema.get('format') == 'uuid':
        return '12345678-1234-5678-1234-567812345678'
    length = max(schema.get('minLength', 1), 1)
    return 'a' * min(length, schema.get('maxLength', length))


def _valid_number(schema: Schema) -> int | float:
    low = schema.get('minimum', 0)
    value = low + 1 if schema.get('exclusiveMinimum') else low
    step = schema.get('multipleOf')
    if step:
        value = -(-value // step) * step
    return value if schema['type'] == 'number' or isinstance(value, int) else int(value)


def _distinct(value: Any, index: int) -> Any:
    """The n-th of several items, unlike the others (for sets, map-keyed lists, and map values)."""
    if index == 0:
        return value
    if isinstance(value, str):
        return value[:-1] + chr(ord('a') + index) if value else chr(ord('a') + index)
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value + index
    if isinstance(value, dict):
        return {key: _distinct(item, index) for key, item in value.items()}
    return value


def variants(schema: Schema, value: Any, path: Path = ()) -> Iterator[tuple[Path, str, Any]]:
    """`(path, what, replacement)`: the replacements of the value at each path (None: the key removed)."""
    yield from _scalar_variants(schema, value, path)
    kind = schema.get('type')
    if kind == 'object' and isinstance(value, dict):
        yield from _object_variants(schema, value, path)
    elif kind == 'array' and isinstance(value, list):
        yield from _array_variants(schema, value, path)


def _scalar_variants(schema: Schema, value: Any, path: Path) -> Iterator[tuple[Path, str, Any]]:
    wrong = {'string': 12345, 'integer': 'text', 'number': 'text', 'boolean': 'true', 'object': 'text',
             'array': 'text'}
    kind = schema.get('type')
    if kind in wrong:
        yield path, 'a wrong type', wrong[kind]
    if kind == 'integer':
        yield path, 'a fraction', 1.5
    if schema.get('x-kubernetes-int-or-string'):
        yield from [(path, 'an int', 8), (path, 'a string', 'eight'), (path, 'a boolean', True)]
    yield path, 'a null', None
    if 'enum' in schema:
        yield path, 'not in the enum', 'zzz' if kind == 'string' else 9999
    for bound, sign in (('minimum', -1), ('maximum', +1)):
        if bound in schema and kind in ('integer', 'number'):
            yield path, f'at the {bound}', schema[bound]
            yield path, f'past the {bound}', schema[bound] + sign
    if schema.get('multipleOf', 1) > 1:
        yield path, 'not a multiple', schema['multipleOf'] + 1
    if kind == 'string':
        yield from _string_variants(schema, path)


def _string_variants(schema: Schema, path: Path) -> Iterator[tuple[Path, str, Any]]:
    for bound, delta in (('minLength', -1), ('maxLength', +1)):
        if bound in schema:
            yield path, f'at the {bound}', 'b' * schema[bound]
            if schema[bound] + delta >= 0:
                yield path, f'past the {bound}', 'b' * (schema[bound] + delta)
    if 'pattern' in schema:
        for text in ('!!', 'ABC-123', 'abc'):
            yield path, f'{text!r} for the pattern', text
    if schema.get('format') in ('date-time', 'date'):
        yield from [(path, 'not a date', 'yesterday'), (path, 'a bad date', '2026-13-45')]
    if schema.get('format') == 'uuid':
        yield path, 'not a uuid', 'not-a-uuid'


def _object_variants(schema: Schema, value: dict[str, Any], path: Path) -> Iterator[tuple[Path, str, Any]]:
    properties = schema.get('properties') or {}
    for name in schema.get('required', []):
        yield path + (name,), 'missing', _REMOVE
    for name, prop in properties.items():
        if name in value:
            yield from variants(prop, value[name], path + (name,))
    extra = schema.get('additionalProperties')
    if extra is not None:
        for key in list(value)[:1]:
            yield from variants(extra, value[key], path + (key,))
        yield path, 'an extra key', {**value, 'extra': valid(extra)}
    if schema.get('x-kubernetes-preserve-unknown-fields'):
        yield path, 'an unknown field', {**value, 'unknownField': {'x': 1}}
    for bound, more in (('minProperties', False), ('maxProperties', True)):
        if bound in schema and extra is not None:
            count = schema[bound] + (1 if more else -1)
            if count >= 0:
                yield path, f'past the {bound}', {f'k{index}': valid(extra) for index in range(count)}


def _array_variants(schema: Schema, value: list[Any], path: Path) -> Iterator[tuple[Path, str, Any]]:
    items = schema['items']
    for index, item in enumerate(value[:1]):
        yield from variants(items, item, path + (index,))
    if value and schema.get('x-kubernetes-list-type') in ('set', 'map'):
        yield path, 'a duplicate', [*value, copy.deepcopy(value[0])]
    if 'minItems' in schema and schema['minItems'] > 0:
        yield path, 'past the minItems', [_distinct(valid(items), i) for i in range(schema['minItems'] - 1)]
    if 'maxItems' in schema:
        yield path, 'past the maxItems', [_distinct(valid(items), i) for i in range(schema['maxItems'] + 1)]
    yield path, 'empty', []


_REMOVE = object()


def replaced(obj: Any, path: Path, replacement: Any) -> Any:
    """A deep copy of the object with the value at the path replaced (or removed: `_REMOVE`)."""
    result = copy.deepcopy(obj)
    if not path:
        return copy.deepcopy(replacement)
    parent = result
    for step in path[:-1]:
        parent = parent[step]
    if replacement is _REMOVE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = copy.deepcopy(replacement)
    return result


def format_path(path: Path) -> str:
    return re.sub(r'\.\[', '[', '.'.join(f'[{step}]' if isinstance(step, int) else step for step in path))
RESERVED = ('apiVersion', 'kind', 'metadata')
