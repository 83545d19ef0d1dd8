"""The one place that calls the schema layer: pruning, defaulting, validation, structural checks.

The schema layer (`kopf._model.schemas`, `kopf._cluster.validation`, `kopf._cluster.builtins`) is
owned by another module set; everything the emulator needs from it goes through here.
"""
import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from kopf._cluster import errors
from kopf._cluster.resources import Resource


def _optional(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


_schemas = _optional('kopf._model.schemas')
_validation = _optional('kopf._cluster.validation')
_builtins = _optional('kopf._cluster.builtins')


def _format(path: Any) -> str:
    if _schemas is not None and hasattr(_schemas, 'format_path'):
        return str(_schemas.format_path(path))
    return '.'.join(str(p) for p in path)


def schema_of(resource: Resource) -> Mapping[str, Any] | None:
    if resource.custom:
        return resource.schema
    if _builtins is not None:
        found: Mapping[str, Any] | None = _builtins.schema_for(resource.group, resource.version, resource.kind)
        return found
    return None


def check_structural(schema: Any) -> list[dict[str, Any]]:
    if _validation is None:
        return []
    return list(_validation.check_structural(schema))


def conform(obj: dict[str, Any], resource: Resource, validation: str) -> list[str]:
    """Prune, default and validate an object about to be stored; returns Warning texts.

    `validation` is the `fieldValidation` parameter: Strict rejects unknown fields (400),
    Ignore prunes silently, Warn (the default) prunes with one warning per pruned path.
    """
    schema = schema_of(resource)
    if schema is None or _schemas is None:
        return []
    if validation == 'Strict':
        unknown = _schemas.unknown_fields(obj, schema)
        if unknown:
            _reject_unknown(resource, unknown)
    pruned = _schemas.prune(obj, schema)
    warnings = [] if validation == 'Ignore' else [f'unknown field "{_format(path)}"' for path in pruned]
    if _validation is not None:
        _validation.apply_defaults(obj, schema)
        causes = list(_validation.validate(obj, schema))
        if causes:
            name = obj.get('metadata', {}).get('name') or obj.get('metadata', {}).get('generateName') or ''
            raise errors.invalid(resource.kind, resource.group, name, causes)
    return warnings


def _reject_unknown(resource: Resource, unknown: list[Any]) -> None:
    fields = ', '.join(f'unknown field "{_format(path)}"' for path in unknown)
    message = (f'{resource.kind} in version "{resource.version}" cannot be handled as a {resource.kind}: '
               f'strict decoding error: {fields}')
    raise errors.bad_request(message)
