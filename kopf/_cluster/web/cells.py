"""The cells of Table answers: values at JSONPaths, with kubectl's defaults, and relative ages.

`jsonpath()` reads the simple JSONPaths CRD printer columns use; the cell makers (`get`, `count`,
`integer`, `text`, `boolean`, `when`) turn one into a cell (a function of the object), printing
an absent or empty value as the real server's printers do (`<none>` unless told otherwise).
Ages follow upstream's `duration.HumanDuration` exactly: `45s`, `119s`, `2m5s`, `12m`, `3h20m`,
`30h`, `3d4h`, `400d`, `2y30d`.
"""
import datetime
import re
from collections.abc import Callable, Mapping
from typing import Any

Cell = Callable[[Mapping[str, Any]], Any]
NAME = {'name': 'Name', 'type': 'string', 'format': 'name', 'priority': 0,
        'description': 'Name must be unique within a namespace. Is required when creating resources, although some '
                       'resources may allow a client to request the generation of an appropriate name automatically. '
                       'Name is primarily intended for creation idempotence and configuration definition. Cannot be '
                       'updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names'}
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


def get(path: str, default: Any = NONE) -> Cell:
    return lambda obj: _or(jsonpath(obj, path), default)


def _or(value: Any, default: Any) -> Any:
    return default if value is None or value == '' or value == [] or value == {} else value


def count(path: str) -> Cell:
    return lambda obj: len(jsonpath(obj, path) or ())


def integer(path: str) -> Cell:
    return lambda obj: int(jsonpath(obj, path) or 0)


def text(path: str, default: str = NONE) -> Cell:
    """A value printed as text, as Go's `%v` or `intstr.String()` does (`true`, `1`, `25%`)."""
    def cell(obj: Mapping[str, Any]) -> Any:
        value = jsonpath(obj, path)
        if value is None or value == '':
            return default
        return ('true' if value else 'false') if isinstance(value, bool) else str(value)
    return cell


def boolean(path: str, default: bool = False) -> Cell:
    return lambda obj: bool(_or(jsonpath(obj, path), default))


def when(path: str) -> Cell:
    """The age of a timestamp, `<none>` without one."""
    return lambda obj: age(jsonpath(obj, path)) if jsonpath(obj, path) else NONE
