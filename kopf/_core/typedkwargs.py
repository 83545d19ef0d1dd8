"""Typed handlers: the `spec`, `status`, `body`, `old`, `new` kwargs parsed into the models they are annotated with.

A handler's parameters are looked at once (per function and resource model, cached): a parameter of those
names annotated with a pydantic model, a dataclass, a TypedDict (or `X | None` of them) is typed; so is every
one of them when the handler's decorator names a resource class (`@kopf.on.create(Database)`) and the
parameter has no annotation of its own: `body` is then the resource class, `spec` and `status` its fields'
types. Untyped parameters (none of these, or `kopf.Spec`, `dict`, `Any`) stay as they are, and a handler
without typed parameters costs one cached lookup. A value that does not parse is a `ParseError` naming the
field path: a permanent error of the handler. pydantic is imported only for typed ones (see docs/models.md).
"""
import dataclasses
import functools
import inspect
import sys
import typing
from collections.abc import Callable, Mapping
from typing import Any

from kopf._core import errors

NAMES = ('body', 'spec', 'status', 'old', 'new')


class ParseError(errors.PermanentError):
    """A kwarg that does not parse as its model: the message names the model, the field path, the value.

    A permanent error of the handler: the object must change before it can parse."""


@dataclasses.dataclass(frozen=True)
class Param:
    name: str       # the kwarg: body, spec, status, old, new
    model: Any      # what to parse it as (a class, or `X | None`)
    title: str      # the model's name for the messages


@functools.cache
def typed_params(fn: Callable[..., Any], resource: type | None = None,
                 field: tuple[str, ...] | None = None) -> tuple[Param, ...]:
    """The typed parameters of a handler (none for most handlers): by annotations, or by the resource class.

    With a `field` (field handlers, `field=` filters), `old` and `new` are that field's values: typed as the
    field's type in the resource class, if the path leads through models there.
    """
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return ()
    hints = _hints(fn)
    fields = _field_types(resource) if resource is not None else {}
    found = []
    for name in NAMES:
        if name not in parameters:
            continue
        annotation = hints.get(name, inspect.Parameter.empty)
        if _is_model(annotation):
            found.append(Param(name, annotation, _title(annotation)))
        elif annotation is inspect.Parameter.empty and resource is not None:
            whole = name == 'body' or (name in ('old', 'new') and not field)
            model = resource if whole else _path_type(resource, field or ()) if name in ('old', 'new') \
                else fields.get(name)
            if model is not None and _is_model(model):
                found.append(Param(name, model, _title(model)))
    return tuple(found)


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn)
    except Exception:   # an unresolvable forward reference: those parameters are not typed
        return dict(getattr(fn, '__annotations__', None) or {})


def _field_types(resource: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(resource)
    except Exception:
        return {}


def _path_type(resource: type, path: tuple[str, ...]) -> Any:
    """The type at a field path of a model (`spec.scaling` → `Scaling`), or None if it leaves the models."""
    current: Any = resource
    for name in path:
        options = [arg for arg in typing.get_args(current) if arg is not type(None)] or [current]
        current = _field_types(options[0]).get(name) if isinstance(options[0], type) else None
        if current is None:
            return None
    return current


def _is_model(annotation: Any) -> bool:
    """A class to parse into (a pydantic model, a dataclass, a TypedDict), or `X | None` of one."""
    args = typing.get_args(annotation)
    if args and type(None) in args:
        return any(_is_model(arg) for arg in args if arg is not type(None))
    if not isinstance(annotation, type):
        return False
    if dataclasses.is_dataclass(annotation) or typing.is_typeddict(annotation):
        return True
    pydantic = sys.modules.get('pydantic')   # not imported: no class can be a pydantic model
    return pydantic is not None and issubclass(annotation, pydantic.BaseModel)


def _title(annotation: Any) -> str:
    args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
    return getattr(args[0] if args else annotation, '__name__', repr(annotation))


@functools.cache
def _adapter(model: Any) -> Any:
    import pydantic
    return pydantic.TypeAdapter(model)


def parsed(params: tuple[Param, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The kwargs with the typed ones parsed (a new dict), or a ParseError naming the first bad fields."""
    import pydantic

    result = dict(kwargs)
    for param in params:
        value = kwargs.get(param.name)
        raw = _raw(value)
        if raw is None and param.name in ('old', 'new', 'status'):
            result[param.name] = None   # nothing to parse: an absent old/new/status stays None
            continue
        try:
            result[param.name] = _adapter(param.model).validate_python(raw)
        except pydantic.ValidationError as exc:
            raise ParseError(describe(param, exc)) from None
    return result


def _raw(value: Any) -> Any:
    """The plain dicts under kopf's views (Body, Spec, Status): pydantic reads dicts."""
    src = getattr(value, '_src', None)
    if src is not None:
        path = getattr(value, '_path', ())
        for key in path:
            src = src.get(key) if isinstance(src, Mapping) else None
        return src if src is not None else {}
    return value


def describe(param: Param, exc: Any) -> str:
    """`the spec does not parse as DatabaseSpec: spec.scaling.maxReplicas: Input should be ... (got 12)`."""
    prefix = '' if param.name in ('body', 'old', 'new') else param.name
    lines = []
    for error in exc.errors()[:3]:
        where = _path(prefix, error['loc']) or param.name
        got = f' (got {error["input"]!r})' if 'input' in error and not isinstance(error['input'], Mapping) else ''
        lines.append(f'{where}: {error["msg"]}{got}')
    more = f'; and {exc.error_count() - 3} more' if exc.error_count() > 3 else ''
    return f'the {param.name} does not parse as {param.title}: ' + '; '.join(lines) + more


def _path(prefix: str, loc: tuple[Any, ...]) -> str:
    """A field path as the API server writes it: `spec.users[0].name`."""
    text = prefix
    for part in loc:
        text += f'[{part}]' if isinstance(part, int) else f'.{part}' if text else str(part)
    return text
