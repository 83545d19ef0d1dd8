"""`meta.k8s.io/v1 Table` answers for kubectl's `get` (Accept `...;as=Table;...`): columns and rows.

CRDs get Name plus their `additionalPrinterColumns` (or Age when they declare none), as the real
apiextensions server renders them; built-ins get Name, a few kind-specific columns, and Age.
"""
import datetime
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kopf._cluster import encoding
from kopf._cluster.resources import Resource

Cell = Callable[[Mapping[str, Any]], Any]
NAME = {'name': 'Name', 'type': 'string', 'format': 'name', 'priority': 0,
        'description': 'Name must be unique within a namespace.'}
AGE = {'name': 'Age', 'type': 'string', 'format': '', 'priority': 0,
       'description': 'CreationTimestamp is a timestamp representing the server time when this object was created.'}


def wants_table(accept: str) -> bool:
    return 'as=Table' in accept


def age(timestamp: Any, now: datetime.datetime | None = None) -> str:
    """kubectl's short human duration: 45s, 12m, 3h, 5d, 2y (approximately as `duration.HumanDuration`)."""
    if not isinstance(timestamp, str) or not timestamp:
        return '<unknown>'
    try:
        moment = datetime.datetime.fromisoformat(timestamp.replace('Z', '+00:00'))
    except ValueError:
        return '<invalid>'
    seconds = int(((now or datetime.datetime.now(datetime.UTC)) - moment).total_seconds())
    for unit, size in (('d', 86400), ('h', 3600), ('m', 60)):
        if seconds >= size * (2 if unit != 'd' else 1):
            return f'{seconds // size}{unit}'
    return f'{max(seconds, 0)}s'


def jsonpath(obj: Any, path: str) -> Any:
    """A simple JSONPath (`.spec.x`, `.status.items[0].name`) as CRD printer columns use; None if absent."""
    current = obj
    for name, index in re.findall(r'\.([^.\[\]]+)|\[(\d+)\]', path):
        if name:
            current = current.get(name) if isinstance(current, Mapping) else None
        else:
            current = current[int(index)] if isinstance(current, list) and int(index) < len(current) else None
        if current is None:
            return None
    return current


def _count(field: str) -> Cell:
    return lambda obj: len(obj.get(field) or {})


def _field(path: str) -> Cell:
    return lambda obj: jsonpath(obj, path) or ''


BUILTIN_COLUMNS: dict[tuple[str, str], list[tuple[str, Cell]]] = {
    ('', 'namespaces'): [('Status', _field('.status.phase'))],
    ('', 'configmaps'): [('Data', lambda obj: len(obj.get('data') or {}) + len(obj.get('binaryData') or {}))],
    ('', 'secrets'): [('Type', _field('.type')), ('Data', _count('data'))],
    ('', 'services'): [('Type', _field('.spec.type')), ('Cluster-IP', lambda obj: jsonpath(obj, '.spec.clusterIP')
                                                        or '<none>')],
    ('', 'pods'): [('Status', lambda obj: jsonpath(obj, '.status.phase') or 'Pending')],
    ('apps', 'deployments'): [('Ready', lambda obj: f"{jsonpath(obj, '.status.readyReplicas') or 0}/"
                                                      f"{jsonpath(obj, '.spec.replicas') or 0}")],
}


def columns(resource: Resource) -> list[tuple[dict[str, Any], Cell]]:
    result: list[tuple[dict[str, Any], Cell]] = [(NAME, lambda obj: obj['metadata']['name'])]
    if resource.custom and resource.printer_columns:
        for column in resource.printer_columns:
            definition = {'name': column.get('name', ''), 'type': column.get('type', 'string'),
                          'format': column.get('format', ''), 'description': column.get('description', ''),
                          'priority': column.get('priority', 0)}
            result.append((definition, _printer_cell(column)))
        return result
    for name, cell in BUILTIN_COLUMNS.get(resource.key, []):
        result.append(({'name': name, 'type': 'string', 'format': '', 'description': name, 'priority': 0}, cell))
    result.append((AGE, lambda obj: age(obj['metadata'].get('creationTimestamp'))))
    return result


def _printer_cell(column: Mapping[str, Any]) -> Cell:
    path, kind = str(column.get('jsonPath', '')), column.get('type')

    def cell(obj: Mapping[str, Any]) -> Any:
        value = jsonpath(obj, path)
        if value is None:
            return None
        if kind == 'date':
            return age(value)
        if isinstance(value, (dict, list)):
            return encoding.dumps(value).decode()
        return value if isinstance(value, (int, float, bool)) else str(value)

    return cell


def table(resource: Resource, objects: Iterable[Mapping[str, Any]], list_meta: Mapping[str, Any],
          headers: bool = True) -> dict[str, Any]:
    cols = columns(resource)
    rows = [{'cells': [cell(obj) for _, cell in cols], 'object': partial(obj)} for obj in objects]
    body: dict[str, Any] = {'kind': 'Table', 'apiVersion': 'meta.k8s.io/v1', 'metadata': dict(list_meta)}
    if headers:
        body['columnDefinitions'] = [definition for definition, _ in cols]
    body['rows'] = rows
    return body


def partial(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {'kind': 'PartialObjectMetadata', 'apiVersion': 'meta.k8s.io/v1', 'metadata': obj['metadata']}
