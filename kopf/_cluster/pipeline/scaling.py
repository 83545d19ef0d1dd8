"""The `scale` subresource: an `autoscaling/v1 Scale` view of an object's replica counts."""
from collections.abc import Mapping
from typing import Any

from kopf._cluster import jsoncodec, statuses
from kopf._cluster.openapi import kindschemas
from kopf._cluster.patchtypes import jsonpatches
from kopf._cluster.store.objectstore import Obj
from kopf._shared.resourcetable import Resource

BUILTIN = {'specReplicasPath': '.spec.replicas', 'statusReplicasPath': '.status.replicas',
           'labelSelectorPath': '.spec.selector'}


def paths(resource: Resource) -> Mapping[str, str]:
    return resource.scale if resource.scale is not None else BUILTIN


def _path(text: str) -> tuple[str, ...]:
    return tuple(part for part in text.split('.') if part)


def _read(obj: Mapping[str, Any], text: str | None) -> Any:
    """The value at a JSON path such as `.spec.replicas`; None where there is no path (e.g. no labelSelectorPath)."""
    if not _path(text or ''):
        return None
    current: Any = obj
    for part in _path(text or ''):
        current = current.get(part) if isinstance(current, Mapping) else None
    return current


def view(resource: Resource, obj: Obj) -> dict[str, Any]:
    spec = paths(resource)
    meta = obj['metadata']
    selector = _read(obj, spec.get('labelSelectorPath'))
    if isinstance(selector, Mapping):   # a LabelSelector, or a plain map (ReplicationControllers)
        structured = 'matchLabels' in selector or 'matchExpressions' in selector
        labels = selector.get('matchLabels') or {} if structured else selector
        selector = ','.join(f'{k}={v}' for k, v in labels.items())
    status: dict[str, Any] = {'replicas': _read(obj, spec.get('statusReplicasPath')) or 0}
    if selector:
        status['selector'] = selector
    return {
        'kind': 'Scale', 'apiVersion': 'autoscaling/v1',
        'metadata': {key: meta[key] for key in ('name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp')
                     if key in meta},
        'spec': {'replicas': _read(obj, spec.get('specReplicasPath')) or 0},
        'status': status,
    }


def patched_view(resource: Resource, obj: Obj, content_type: str, patch: Any) -> Any:
    allowed = jsonpatches.BUILTIN_TYPES
    if content_type not in allowed:
        raise statuses.unsupported_media(allowed)
    schema = kindschemas.schema_for('autoscaling', 'v1', 'Scale')
    return jsonpatches.apply_patch(content_type, view(resource, obj), patch, schema)


def applied(resource: Resource, obj: Obj, scale: Any) -> Obj:
    """The object with the Scale's spec.replicas written to its spec replicas path (and nothing else)."""
    for field in ('spec', 'metadata'):   # as Go's decoding into the Scale struct reports them
        value = scale.get(field) if isinstance(scale, Mapping) else None
        if value is not None and not isinstance(value, Mapping):
            kind = 'array' if isinstance(value, list) else 'string' if isinstance(value, str) else \
                'bool' if isinstance(value, bool) else 'number'
            go_type = 'v1.ScaleSpec' if field == 'spec' else 'v1.ObjectMeta'
            raise statuses.bad_request(f'Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal '
                                       f'{kind} into Go struct field Scale.{field} of type {go_type}')
    if not isinstance(scale, Mapping) or not isinstance((scale.get('spec') or {}).get('replicas', 0), int):
        raise statuses.invalid('Scale', 'autoscaling', obj['metadata']['name'], [statuses.cause(
            'FieldValueInvalid', 'spec.replicas', 'Invalid value: must be an integer')])
    replicas = (scale.get('spec') or {}).get('replicas', 0)
    if replicas < 0 and resource.custom:  # a real server validates the custom resource, at its replicas path
        raise statuses.invalid(resource.kind, resource.group, obj['metadata']['name'], [statuses.cause(
            'FieldValueInvalid', paths(resource)['specReplicasPath'],
            f'Invalid value: {replicas}: should be a non-negative integer')])
    if replicas < 0:
        raise statuses.invalid('Scale', 'autoscaling', obj['metadata']['name'], [statuses.cause(
            'FieldValueInvalid', 'spec.replicas', f'Invalid value: {replicas}: must be greater than or equal to 0')])
    result: Obj = jsoncodec.clone(obj)
    target: Any = result
    path = _path(paths(resource)['specReplicasPath'])
    for part in path[:-1]:
        target = target.setdefault(part, {})
    target[path[-1]] = replicas
    rv = (scale.get('metadata') or {}).get('resourceVersion')
    result['metadata']['resourceVersion'] = rv or obj['metadata']['resourceVersion']
    return result


