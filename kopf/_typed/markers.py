"""The schema markers: what a Python type cannot say, written beside it (kubebuilder's markers, in `Annotated`).

Each marker is a small frozen value, used either in `Annotated[T, marker]` (it applies to that field's
schema) or as a class decorator (`@kopf.Rule(...)` on a model: it applies to that class's object
schema wherever the class is used). pydantic calls `__get_pydantic_core_schema__` when it builds a
model's validator: the marker records itself in the core schema's `metadata` (where the schema
generator finds it), and the list markers add the server's own check (no duplicates) to pydantic's.
Nothing here imports pydantic: it is imported by pydantic, when a model is used.
"""
import dataclasses
from collections.abc import Hashable, Sequence
from typing import Any, TypeVar

METADATA_KEY = 'kopf'            # in a core schema node's `metadata`: the markers that apply to it
CLASS_ATTR = '__kopf_markers__'  # on a class decorated with markers

C = TypeVar('C', bound=type)


class Marker:
    """The base of the markers: usable in `Annotated[...]` and as a class decorator."""

    applies_to_classes = True

    def __call__(self, cls: C) -> C:
        if not isinstance(cls, type):
            raise TypeError(f'{self!r} decorates classes (or goes into Annotated[...]), not {cls!r}')
        if not self.applies_to_classes:
            raise TypeError(f'{self!r} applies to a list or a field, not to the class {cls.__qualname__}')
        own = cls.__dict__.get(CLASS_ATTR, ())
        setattr(cls, CLASS_ATTR, (*own, self))
        return cls

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        schema = handler(source)
        schema = self._python_check(schema)
        metadata = schema.setdefault('metadata', {})
        metadata.setdefault(METADATA_KEY, []).append(self)
        return schema

    def _python_check(self, schema: Any) -> Any:
        return schema


def class_markers(cls: type) -> tuple[Marker, ...]:
    """The markers decorating a class and its bases (a base's rules hold for its subclasses too)."""
    found: list[Marker] = []
    for base in reversed(cls.__mro__):
        found.extend(base.__dict__.get(CLASS_ATTR, ()))
    return tuple(found)


@dataclasses.dataclass(frozen=True)
class Rule(Marker):
    """A CEL validation rule (`x-kubernetes-validations`), checked by the API server (not by pydantic)."""
    rule: str
    message: str | None = None
    message_expression: str | None = None
    reason: str | None = None  # FieldValueInvalid (the server's default), ...Forbidden, ...Required, ...Duplicate
    field_path: str | None = None
    optional_old_self: bool | None = None

    def as_openapi(self) -> dict[str, Any]:
        keys = {'rule': self.rule, 'message': self.message, 'messageExpression': self.message_expression,
                'reason': self.reason, 'fieldPath': self.field_path, 'optionalOldSelf': self.optional_old_self}
        return {key: value for key, value in keys.items() if value is not None}


class _ListMarker(Marker):
    applies_to_classes = False

    def _python_check(self, schema: Any) -> Any:
        from pydantic_core import core_schema
        return core_schema.no_info_after_validator_function(self._check, schema)

    def _check(self, value: Any) -> Any:
        return value


@dataclasses.dataclass(frozen=True)
class ListSet(_ListMarker):
    """A list of unique scalars (`x-kubernetes-list-type: set`); pydantic refuses duplicates too, as the server."""

    def _check(self, value: Any) -> Any:
        seen: set[Any] = set()
        for index, item in enumerate(value):
            key = (type(item), item) if isinstance(item, Hashable) else repr(item)
            if key in seen:
                raise ValueError(f'duplicate item [{index}]: {item!r}')
            seen.add(key)
        return value


@dataclasses.dataclass(frozen=True, init=False)
class ListMap(_ListMarker):
    """A list of objects keyed by these fields (`x-kubernetes-list-type: map`, `x-kubernetes-list-map-keys`)."""
    keys: tuple[str, ...]

    def __init__(self, *keys: str) -> None:
        if not keys or not all(isinstance(key, str) and key for key in keys):
            raise TypeError(f'kopf.ListMap needs the names of the key fields, e.g. kopf.ListMap("name"), not {keys!r}')
        object.__setattr__(self, 'keys', keys)

    def _check(self, value: Sequence[Any]) -> Any:
        seen: set[tuple[Any, ...]] = set()
        for index, item in enumerate(value):
            key = tuple(_field(item, name) for name in self.keys)
            if key in seen:
                raise ValueError(f'duplicate key [{index}]: {dict(zip(self.keys, key, strict=True))!r}')
            seen.add(key)
        return value


def _field(item: Any, name: str) -> Any:
    """A key field of an item, by its schema name (an alias) or its Python name."""
    if isinstance(item, dict):
        return item.get(name)
    fields = getattr(type(item), '__pydantic_fields__', None) or {}
    for python_name, info in fields.items():
        if name in (python_name, getattr(info, 'alias', None)):
            return getattr(item, python_name, None)
    return getattr(item, name, None)


@dataclasses.dataclass(frozen=True)
class Atomic(Marker):
    """Replaced as a whole by server-side apply: `x-kubernetes-list-type: atomic` (a list) or `map-type: atomic`."""


@dataclasses.dataclass(frozen=True)
class Granular(Marker):
    """Merged key by key by server-side apply: `x-kubernetes-map-type: granular` (a dict or a model)."""


@dataclasses.dataclass(frozen=True)
class PreserveUnknownFields(Marker):
    """Keep the fields the schema does not name (`x-kubernetes-preserve-unknown-fields: true`)."""


@dataclasses.dataclass(frozen=True)
class EmbeddedResource(Marker):
    """A whole Kubernetes object inside (`x-kubernetes-embedded-resource`): apiVersion, kind, metadata checked."""


@dataclasses.dataclass(frozen=True)
class Format(Marker):
    """A Kubernetes string format (`hostname`, `cidr`, `mac`, ...): checked by the API server, not by pydantic."""
    name: str
    applies_to_classes = False


@dataclasses.dataclass(frozen=True)
class PrinterColumn:
    """A column of `kubectl get` (`additionalPrinterColumns`); its type, if not given, is the schema's at the path."""
    name: str
    json_path: str
    type: str | None = None      # string, integer, number, boolean, date
    format: str | None = None
    description: str | None = None
    priority: int = 0


@dataclasses.dataclass(frozen=True)
class Scale:
    """The scale subresource: where the replicas are (`kubectl scale`, HorizontalPodAutoscalers)."""
    spec_replicas: str = '.spec.replicas'
    status_replicas: str = '.status.replicas'
    label_selector: str | None = None
