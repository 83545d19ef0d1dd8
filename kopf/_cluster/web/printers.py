"""The columns kube-apiserver prints for built-in kinds (its internal printers), and relative ages.

Wide columns (priority 1) appear in `kubectl get -o wide` only. Ages follow upstream's
`duration.HumanDuration` exactly: `45s`, `119s`, `2m5s`, `12m`, `3h20m`, `30h`, `3d4h`, `400d`, `2y30d`.
"""
import datetime
import re
from collections.abc import Callable, Mapping
from typing import Any

Cell = Callable[[Mapping[str, Any]], Any]
NAME = {'name': 'Name', 'type': 'string', 'format': 'name', 'priority': 0,
        'description': 'Name must be unique within a namespace.'}
AGE = {'name': 'Age', 'type': 'string', 'format': '', 'priority': 0,
       'description': 'CreationTimestamp is a timestamp representing the server time when this object was created.'}
NONE = '<none>'


def human_duration(seconds: float) -> str:
    """Upstream's `k8s.io/apimachinery/pkg/util/duration.HumanDuration`."""
    whole = int(seconds)
    if whole < -1:
        return '<invalid>'
    if whole < 0:
        return '0s'
    if whole < 120:
        return f'{whole}s'
    minutes = whole // 60
    if minutes < 10:
        return f'{minutes}m' if whole % 60 == 0 else f'{minutes}m{whole % 60}s'
    if minutes < 180:
        return f'{minutes}m'
    hours = whole // 3600
    if hours < 8:
        return f'{hours}h' if minutes % 60 == 0 else f'{hours}h{minutes % 60}m'
    if hours < 48:
        return f'{hours}h'
    if hours < 24 * 8:
        return f'{hours // 24}d' if hours % 24 == 0 else f'{hours // 24}d{hours % 24}h'
    if hours < 24 * 365 * 2:
        return f'{hours // 24}d'
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f'{hours // 24 // 365}y' if days == 0 else f'{hours // 24 // 365}y{days}d'
    return f'{hours // 24 // 365}y'


def age(timestamp: Any, now: datetime.datetime | None = None) -> str:
    if not isinstance(timestamp, str) or not timestamp:
        return '<unknown>'
    try:
        moment = datetime.datetime.fromisoformat(timestamp.replace('Z', '+00:00'))
    except ValueError:
        return '<invalid>'
    return human_duration(((now or datetime.datetime.now(datetime.UTC)) - moment).total_seconds())


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


def _get(path: str, default: Any = NONE) -> Cell:
    return lambda obj: jsonpath(obj, path) or default


def _pod_ready(obj: Mapping[str, Any]) -> str:
    statuses = jsonpath(obj, '.status.containerStatuses') or []
    containers = jsonpath(obj, '.spec.containers') or []
    return f'{sum(1 for s in statuses if s.get("ready"))}/{len(containers)}'


def _ports(obj: Mapping[str, Any]) -> str:
    ports = jsonpath(obj, '.spec.ports') or []
    texts = [f'{p.get("port")}{":" + str(p["nodePort"]) if p.get("nodePort") else ""}/{p.get("protocol", "TCP")}'
             for p in ports]
    return ','.join(texts) or NONE


def _selector(path: str) -> Cell:
    return lambda obj: ','.join(f'{k}={v}' for k, v in (jsonpath(obj, path) or {}).items()) or NONE


def _names(path: str, field: str) -> Cell:
    return lambda obj: ','.join(str(c.get(field, '')) for c in jsonpath(obj, path) or []) or NONE


# (column name, cell, priority, type) per (group, plural); Age is appended to each (except CRDs).
BUILTINS: dict[tuple[str, str], list[tuple[str, Cell, int, str]]] = {
    ('', 'namespaces'): [('Status', _get('.status.phase', ''), 0, 'string')],
    ('', 'configmaps'): [('Data', lambda obj: len(obj.get('data') or {}) + len(obj.get('binaryData') or {}),
                          0, 'integer')],
    ('', 'secrets'): [('Type', _get('.type', ''), 0, 'string'),
                      ('Data', lambda obj: len(obj.get('data') or {}), 0, 'integer')],
    ('', 'serviceaccounts'): [('Secrets', lambda obj: len(obj.get('secrets') or []), 0, 'integer')],
    ('', 'services'): [('Type', _get('.spec.type', ''), 0, 'string'),
                       ('Cluster-IP', _get('.spec.clusterIP'), 0, 'string'),
                       ('External-IP', lambda obj: NONE, 0, 'string'), ('Port(s)', _ports, 0, 'string'),
                       ('Selector', _selector('.spec.selector'), 1, 'string')],
    ('', 'pods'): [('Ready', _pod_ready, 0, 'string'), ('Status', _get('.status.phase', 'Pending'), 0, 'string'),
                   ('Restarts', lambda obj: sum(s.get('restartCount', 0)
                                                for s in jsonpath(obj, '.status.containerStatuses') or []),
                    0, 'string'),
                   ('IP', _get('.status.podIP'), 1, 'string'), ('Node', _get('.spec.nodeName'), 1, 'string'),
                   ('Nominated Node', _get('.status.nominatedNodeName'), 1, 'string'),
                   ('Readiness Gates', lambda obj: NONE, 1, 'string')],
    ('apps', 'deployments'): [
        ('Ready', lambda obj: f"{jsonpath(obj, '.status.readyReplicas') or 0}/{jsonpath(obj, '.spec.replicas') or 0}",
         0, 'string'),
        ('Up-to-date', _get('.status.updatedReplicas', 0), 0, 'integer'),
        ('Available', _get('.status.availableReplicas', 0), 0, 'integer'),
        ('Containers', _names('.spec.template.spec.containers', 'name'), 1, 'string'),
        ('Images', _names('.spec.template.spec.containers', 'image'), 1, 'string'),
        ('Selector', _selector('.spec.selector.matchLabels'), 1, 'string')],
    ('coordination.k8s.io', 'leases'): [('Holder', _get('.spec.holderIdentity', ''), 0, 'string')],
}
CRDS = ('apiextensions.k8s.io', 'customresourcedefinitions')


def builtin_columns(key: tuple[str, str]) -> list[tuple[dict[str, Any], Cell]]:
    if key == CRDS:
        created = {'name': 'Created At', 'type': 'date', 'format': '', 'priority': 0, 'description': AGE['description']}
        return [(created, lambda obj: obj['metadata'].get('creationTimestamp'))]
    result: list[tuple[dict[str, Any], Cell]] = []
    for name, cell, priority, kind in BUILTINS.get(key, []):
        result.append(({'name': name, 'type': kind, 'format': '', 'description': name, 'priority': priority}, cell))
    position = next((i for i, (definition, _) in enumerate(result) if definition['priority']), len(result))
    result.insert(position, (AGE, lambda obj: age(obj['metadata'].get('creationTimestamp'))))   # wide ones follow
    return result
