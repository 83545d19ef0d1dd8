"""What controllers read from a Pod: whether it is active, ready, available, finished."""
from typing import Any

from kopf._cluster.controllers import clock

Obj = dict[str, Any]


def phase(pod: Obj) -> str:
    return str((pod.get('status') or {}).get('phase') or 'Pending')


def finished(pod: Obj) -> bool:
    return phase(pod) in ('Succeeded', 'Failed')


def active(pod: Obj) -> bool:
    """Counted by its controller: neither finished nor being deleted."""
    return not finished(pod) and not pod['metadata'].get('deletionTimestamp')


def _ready_condition(pod: Obj) -> Obj | None:
    for cond in (pod.get('status') or {}).get('conditions') or []:
        if cond.get('type') == 'Ready':
            return dict(cond)
    return None


def ready(pod: Obj) -> bool:
    cond = _ready_condition(pod)
    return cond is not None and cond.get('status') == 'True'


def ready_since(pod: Obj) -> float | None:
    cond = _ready_condition(pod)
    if cond is None or cond.get('status') != 'True':
        return None
    return clock.parse(cond.get('lastTransitionTime'))


def available_at(pod: Obj, min_ready_seconds: int) -> float | None:
    """When a ready Pod counts (or counted) as available; None while it is not ready."""
    since = ready_since(pod)
    if since is None:
        return None
    return since + max(0, min_ready_seconds)


def available(pod: Obj, min_ready_seconds: int, now: float) -> bool:
    moment = available_at(pod, min_ready_seconds)
    return moment is not None and (min_ready_seconds <= 0 or moment <= now)


def labels_match(selector: Any, labels: dict[str, Any]) -> bool:
    """A `LabelSelector` (matchLabels, matchExpressions) against labels; an empty selector matches all."""
    if not isinstance(selector, dict):
        return False
    for key, value in (selector.get('matchLabels') or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get('matchExpressions') or []:
        key, op, values = expr.get('key'), expr.get('operator'), expr.get('values') or []
        if op == 'In' and labels.get(key) not in values:
            return False
        if op == 'NotIn' and key in labels and labels[key] in values:
            return False
        if op == 'Exists' and key not in labels:
            return False
        if op == 'DoesNotExist' and key in labels:
            return False
    return True
