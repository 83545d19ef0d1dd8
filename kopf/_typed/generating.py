"""A model's structural OpenAPI v3 schema, generated from pydantic's core schema (its validator, as data).

The core schema says exactly what pydantic checks, so the generated schema says the same: each node
of it (`model`, `list`, `int` with `ge`, `default`, `nullable`, ...) maps to one OpenAPI node, and
a node with no structural form is an error naming the class and the field (never a looser schema).
Python validators (`@field_validator`, `AfterValidator`) have no OpenAPI form: they are skipped with
a warning naming them. The markers (`kopf._typed.markers`) found in the nodes' metadata or on the
classes add the `x-kubernetes-*` extensions. Imported only when a model is used: it imports pydantic.
"""
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pydantic
import pydantic_core

from kopf._typed import declaring, docstrings, extensions, markers
from kopf._typed.extensions import SchemaError

Node = Mapping[str, Any]
Schema = dict[str, Any]
RESERVED = ('apiVersion', 'kind', 'metadata')   # the server's own top-level fields: described by it
SCALARS = {'string', 'integer', 'number', 'boolean'}
NO_FORM = {
    'set': 'a set (it silently drops the duplicates that the server refuses); '
           'use Annotated[list[X], kopf.ListSet()]',
    'frozenset': 'a frozenset; use Annotated[list[X], kopf.ListSet()]',
    'bytes': 'bytes; use str (base64 is yours to encode)',
    'decimal': 'a Decimal; use float, or str with a pattern',
    'timedelta': 'a timedelta (Kubernetes durations are Go strings like "1h30m"); '
                 'use str with a pattern, or int seconds',
    'time': 'a time of day; use str with a pattern',
    'none': 'None alone; use X | None',
    'is-instance': 'an arbitrary class (no pydantic schema of its own)',
    'callable': 'a callable',
    'complex': 'a complex number',
    'url': 'a URL type (pydantic normalises it: the stored value would differ); use str with a pattern',
    'multi-host-url': 'a URL type; use str with a pattern',
    'generator': 'a generator',
    'chain': 'a chain of validators',
    'function-plain': 'a plain validator (it replaces the type, so nothing says what is valid)',
    'tagged-union': 'a discriminated union (structural schemas have no unions of objects)',
}


@dataclasses.dataclass
class Generated:
    schema: Schema
    warnings: list[str]


def resource_schema(cls: type) -> Generated:
    """The `openAPIV3Schema` of a resource class: its fields at the top, apiVersion/kind/metadata as the server's."""
    generated = type_schema(cls)
    schema = generated.schema
    if schema.get('type') != 'object' or 'properties' not in schema:
        raise SchemaError(f'{declaring.qualname(cls)}: a resource class must be a model or a dataclass with fields.')
    properties = {'apiVersion': {'type': 'string'}, 'kind': {'type': 'string'}, 'metadata': {'type': 'object'}}
    properties.update((name, value) for name, value in schema['properties'].items() if name not in RESERVED)
    schema['properties'] = properties
    required = [name for name in schema.get('required', []) if name not in RESERVED]
    schema.pop('required', None)
    if required:
        schema['required'] = required
    return generated


def type_schema(tp: Any) -> Generated:
    where = declaring.qualname(tp) if isinstance(tp, type) else repr(tp)
    try:
        core = pydantic.TypeAdapter(tp).core_schema
    except pydantic.PydanticUserError as exc:    # undefined forward references, unknown classes, ...
        raise SchemaError(f'{where}: pydantic cannot make a schema of it: {exc}') from None
    except pydantic.PydanticSchemaGenerationError as exc:
        raise SchemaError(f'{where}: pydantic cannot make a schema of it: {exc}') from None
    walker = Walker()
    schema = walker.walk(core, where)
    return Generated(schema=schema, warnings=walker.warnings)


class Walker:
    """One walk over a core schema: its definitions, the models being expanded (recursion), the warnings."""

    def __init__(self) -> None:
        self.definitions: dict[str, Node] = {}
        self.expanding: list[str] = []
        self.warnings: list[str] = []

    def walk(self, node: Node, where: str) -> Schema:
        kind = node['type']
        if kind in NO_FORM:
            raise SchemaError(f'{where}: {NO_FORM[kind]}: no structural schema can say what it is.')
        handler = HANDLERS.get(kind)
        if handler is None:
            raise SchemaError(f'{where}: pydantic\'s {kind!r} type has no structural schema (kopf knows no mapping).')
        schema = handler(self, node, where)
        description = ((node.get('metadata') or {}).get('pydantic_js_updates') or {}).get('description')
        if description and 'description' not in schema:
            schema['description'] = description
        for marker in (node.get('metadata') or {}).get(markers.METADATA_KEY, ()):
            extensions.apply(marker, schema, where)
        return schema

    def fields(self, cls: type, fields: Sequence[tuple[str, Node, bool | None]], where: str) -> Schema:
        """An object of these `(python name, model-field or dataclass-field, required or None: by the default)`."""
        properties: dict[str, Schema] = {}
        required: list[str] = []
        described = docstrings.field_descriptions(cls)
        for python_name, field, is_required in fields:
            name = _alias(field, python_name, f'{where}.{python_name}')
            prop = self.walk(field['schema'], f'{where}.{python_name}')
            description = ((field.get('metadata') or {}).get('pydantic_js_updates') or {}).get('description')
            description = description or described.get(python_name)
            if description:
                prop = {'description': description, **{k: v for k, v in prop.items() if k != 'description'}}
            properties[name] = prop
            if is_required if is_required is not None else field['schema']['type'] != 'default':
                required.append(name)
        schema: Schema = {'type': 'object', 'properties': properties}
        if required:
            schema['required'] = required
        description = docstrings.class_description(cls)
        if description:
            schema = {'description': description, **schema}
        return schema


def _alias(field: Node, python_name: str, where: str) -> str:
    serialization = field.get('serialization_alias') or python_name
    validation = field.get('validation_alias') or python_name
    if validation != serialization:
        raise SchemaError(f'{where}: read as {validation!r} but written as {serialization!r}: the schema can have '
                          f'one name only; give one alias= (not validation_alias= or AliasChoices).')
    return serialization


def _model(w: Walker, node: Node, where: str) -> Schema:
    cls = node['cls']
    where = declaring.qualname(cls)
    inner = node['schema']
    if node.get('root_model'):
        schema = w.walk(inner, where)
    else:
        fields = [(name, field, None) for name, field in inner['fields'].items()]
        schema = w.fields(cls, fields, where)
        extra = inner.get('extra_behavior') or (node.get('config') or {}).get('extra_fields_behavior')
        if extra == 'allow':
            schema['x-kubernetes-preserve-unknown-fields'] = True
    return _with_class_markers(cls, schema, where)


def _dataclass(w: Walker, node: Node, where: str) -> Schema:
    cls = node['cls']
    where = declaring.qualname(cls)
    fields = [(field['name'], field, None) for field in node['schema']['fields'] if not field.get('init_only')]
    return _with_class_markers(cls, w.fields(cls, fields, where), where)


def _typed_dict(w: Walker, node: Node, where: str) -> Schema:
    cls = node['cls']
    where = declaring.qualname(cls)
    fields = [(name, field, field.get('required', True)) for name, field in node['fields'].items()]
    return _with_class_markers(cls, w.fields(cls, fields, where), where)


def _with_class_markers(cls: type, schema: Schema, where: str) -> Schema:
    for marker in markers.class_markers(cls):
        extensions.apply(marker, schema, where)
    return schema


def _definitions(w: Walker, node: Node, where: str) -> Schema:
    w.definitions.update((definition['ref'], definition) for definition in node['definitions'])
    return w.walk(node['schema'], where)


def _definition_ref(w: Walker, node: Node, where: str) -> Schema:
    ref = node['schema_ref']
    if ref in w.expanding:
        name = ref.split(':')[0].rsplit('.', 1)[-1]
        raise SchemaError(f'{where}: {name} contains itself: a recursive model has no structural schema '
                          f'(use a free-form dict[str, Any] at the recursion).')
    w.expanding.append(ref)
    try:
        return w.walk(w.definitions[ref], where)
    finally:
        w.expanding.pop()


def _default(w: Walker, node: Node, where: str) -> Schema:
    schema = w.walk(node['schema'], where)
    if 'default' in node:
        value = node['default']
    elif node.get('default_factory') is not None and not node.get('default_factory_takes_data'):
        value = node['default_factory']()
    else:
        return schema
    if value is not None:
        schema['default'] = _json(value, where)
        _check_default(w, node['schema'], value, where)
    return schema


def _json(value: Any, where: str) -> Any:
    try:
        return pydantic_core.to_jsonable_python(value, by_alias=True, exclude_none=True)
    except pydantic_core.PydanticSerializationError as exc:
        raise SchemaError(f'{where}: the default {value!r} has no JSON form: {exc}') from None


def _check_default(w: Walker, node: Node, value: Any, where: str) -> None:
    """The server refuses a CRD whose default its own schema refuses: say it here, naming the field."""
    definitions = list(w.definitions.values())
    wrapped = {'type': 'definitions', 'schema': node, 'definitions': definitions} if definitions else node
    try:
        pydantic_core.SchemaValidator(wrapped).validate_python(value)
    except pydantic_core.ValidationError as exc:
        first = exc.errors()[0]
        raise SchemaError(f'{where}: the default {value!r} is not valid for its own type: {first["msg"]}.') from None


def _nullable(w: Walker, node: Node, where: str) -> Schema:
    return {**w.walk(node['schema'], where), 'nullable': True}


def _union(w: Walker, node: Node, where: str) -> Schema:
    choices = [choice[0] if isinstance(choice, tuple) else choice for choice in node['choices']]
    if sorted(choice['type'] for choice in choices) == ['int', 'str']:
        merged: Schema = {'x-kubernetes-int-or-string': True}
        for choice in choices:   # min/max apply to numbers only, lengths and patterns to strings only: as pydantic
            merged.update((k, v) for k, v in w.walk(choice, where).items() if k not in ('type', 'format'))
        return merged
    kinds = ' | '.join(choice['type'] for choice in choices)
    raise SchemaError(f'{where}: a union ({kinds}) has no structural schema: only X | None and int | str do; '
                      f'use one model with optional fields, or dict[str, Any] for free-form data.')


def _literal(w: Walker, node: Node, where: str) -> Schema:
    return _enum_of(list(node['expected']), where)


def _enum(w: Walker, node: Node, where: str) -> Schema:
    return _enum_of([member.value for member in node['members']], where)


def _enum_of(values: list[Any], where: str) -> Schema:
    types = {_json_type(value) for value in values}
    if len(types) != 1 or None in types:
        raise SchemaError(f'{where}: the choices {values!r} are not all of one JSON type (strings, integers, '
                          f'numbers or booleans): a structural schema has one type per field.')
    return {'type': types.pop(), 'enum': values}


def _json_type(value: Any) -> str | None:
    if isinstance(value, bool):
        return 'boolean'
    return {int: 'integer', float: 'number', str: 'string'}.get(type(value))


def _list(w: Walker, node: Node, where: str) -> Schema:
    items = w.walk(node['items_schema'], f'{where}[]') if 'items_schema' in node else {}
    if not items:
        items = {'x-kubernetes-preserve-unknown-fields': True}
    return _sized({'type': 'array', 'items': items}, node, 'Items')


def _tuple(w: Walker, node: Node, where: str) -> Schema:
    items = node.get('items_schema', [])
    if node.get('variadic_item_index') == 0 and len(items) == 1:
        return _sized({'type': 'array', 'items': w.walk(items[0], f'{where}[]')}, node, 'Items')
    raise SchemaError(f'{where}: a fixed-length tuple has no structural schema; use a model with named fields, '
                      f'or list[X] with Field(min_length=, max_length=).')


def _dict(w: Walker, node: Node, where: str) -> Schema:
    keys = node.get('keys_schema') or {'type': 'str'}
    if keys['type'] not in ('str', 'any') or set(keys) - {'type', 'metadata'}:
        raise SchemaError(f'{where}: a dict\'s keys must be plain str: JSON objects have string keys, and a '
                          f'structural schema cannot constrain them (use a model for a fixed set of keys).')
    values = w.walk(node['values_schema'], f'{where}{{}}') if 'values_schema' in node else {}
    schema: Schema = {'type': 'object'}
    if values.keys() - {'x-kubernetes-preserve-unknown-fields', 'description'}:
        schema['additionalProperties'] = values
    else:
        schema['x-kubernetes-preserve-unknown-fields'] = True
    return _sized(schema, node, 'Properties')


def _sized(schema: Schema, node: Node, noun: str) -> Schema:
    if node.get('min_length') is not None:
        schema[f'min{noun}'] = node['min_length']
    if node.get('max_length') is not None:
        schema[f'max{noun}'] = node['max_length']
    return schema


def _str(w: Walker, node: Node, where: str) -> Schema:
    schema: Schema = {'type': 'string'}
    for source, target in (('min_length', 'minLength'), ('max_length', 'maxLength'), ('pattern', 'pattern')):
        if node.get(source) is not None:
            schema[target] = node[source]
    return schema


def _number(openapi_type: str) -> Callable[[Walker, Node, str], Schema]:
    def handler(w: Walker, node: Node, where: str) -> Schema:
        schema: Schema = {'type': openapi_type}
        for bound, name in (('ge', 'minimum'), ('gt', 'minimum'), ('le', 'maximum'), ('lt', 'maximum')):
            if node.get(bound) is not None:
                schema[name] = node[bound]
                if bound in ('gt', 'lt'):
                    schema['exclusiveMinimum' if bound == 'gt' else 'exclusiveMaximum'] = True
        if node.get('multiple_of') is not None:
            schema['multipleOf'] = node['multiple_of']
        return schema
    return handler


def _formatted(format_: str) -> Callable[[Walker, Node, str], Schema]:
    return lambda w, node, where: {'type': 'string', 'format': format_}


def _validator(w: Walker, node: Node, where: str) -> Schema:
    function = (node.get('function') or {}).get('function')
    schema = w.walk(node['schema'], where)
    if _is_own(node):
        return schema
    constraint = _constraint(function, schema)
    if constraint is not None:
        schema.update(constraint)
        return schema
    name = getattr(function, '__qualname__', None) or repr(function)
    w.warnings.append(f'{where}: the Python validator {name} has no OpenAPI form: '
                      f'the API server does not check what it checks.')
    return schema


# pydantic's own constraints, applied as validators when they follow another annotation (`Annotated[list[X],
# kopf.ListSet(), Field(max_length=3)]`): a `functools.partial` of these functions, with the bound as a keyword.
CONSTRAINTS = {'greater_than_or_equal_validator': ('ge', 'minimum', None),
               'greater_than_validator': ('gt', 'minimum', 'exclusiveMinimum'),
               'less_than_or_equal_validator': ('le', 'maximum', None),
               'less_than_validator': ('lt', 'maximum', 'exclusiveMaximum'),
               'multiple_of_validator': ('multiple_of', 'multipleOf', None),
               'min_length_validator': ('min_length', 'min', None),
               'max_length_validator': ('max_length', 'max', None)}


def _constraint(function: Any, schema: Schema) -> Schema | None:
    inner = getattr(function, 'func', None)
    if getattr(inner, '__module__', None) != 'pydantic._internal._validators':
        return None
    known = CONSTRAINTS.get(getattr(inner, '__name__', ''))
    keywords = getattr(function, 'keywords', {})
    if known is None or known[0] not in keywords:
        return None
    keyword, name, flag = known
    if name in ('min', 'max'):
        noun = {'array': 'Items', 'object': 'Properties', 'string': 'Length'}.get(schema.get('type', ''))
        if noun is None:
            return None
        name = f'{name}{noun}'
    return {name: keywords[keyword], **({flag: True} if flag else {})}


def _is_own(node: Node) -> bool:
    function = (node.get('function') or {}).get('function')
    return isinstance(getattr(function, '__self__', None), markers.Marker)


def _inner(key: str) -> Callable[[Walker, Node, str], Schema]:
    return lambda w, node, where: w.walk(node[key], where)


HANDLERS: dict[str, Callable[[Walker, Node, str], Schema]] = {
    'model': _model, 'dataclass': _dataclass, 'typed-dict': _typed_dict,
    'definitions': _definitions, 'definition-ref': _definition_ref,
    'default': _default, 'nullable': _nullable, 'union': _union, 'literal': _literal, 'enum': _enum,
    'list': _list, 'tuple': _tuple, 'dict': _dict,
    'str': _str, 'int': _number('integer'), 'float': _number('number'),
    'bool': lambda w, node, where: {'type': 'boolean'},
    'any': lambda w, node, where: {'x-kubernetes-preserve-unknown-fields': True},
    'datetime': _formatted('date-time'), 'date': _formatted('date'), 'uuid': _formatted('uuid'),
    'function-after': _validator, 'function-before': _validator, 'function-wrap': _validator,
    'json-or-python': _inner('json_schema'), 'lax-or-strict': _inner('strict_schema'),
    'custom-error': _inner('schema'),
}

