"""A ResourceQuota's status as kube-controller-manager's resourcequota controller computes it.

`status.hard` is the spec's (canonical quantities); `status.used` has, for each of its resource
names, the sum over the namespace's objects of the kind that counts it (and, for Pods, that the
quota's scopes hold) — `0` if none. Pure: objects in, the status out.

    status(quota, objects, now) -> {'hard': …, 'used': …}
    kinds(quota) -> the storage keys whose objects it counts
"""
import datetime
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kopf._cluster.quotas import evaluators
from kopf._cluster.quotas.quantities import ZERO, Quantity, canonical, render

Obj = Mapping[str, Any]
KNOWN = (evaluators.PODS, evaluators.SERVICES, evaluators.PVCS, *evaluators.SHORT_NAMES)


def kinds(quota: Obj) -> list[tuple[str, str]]:
    hard = (quota.get('spec') or {}).get('hard') or {}
    found = [key for key in dict.fromkeys(KNOWN) if any(evaluators.counted(key, name) for name in hard)]
    for name in hard:
        if name.startswith('count/'):
            plural, _, group = name.removeprefix('count/').partition('.')
            if (group, plural) not in found:
                found.append((group, plural))
    return found


def status(quota: Obj, objects: Callable[[tuple[str, str]], Iterable[Obj]], now: datetime.datetime) -> dict[str, Any]:
    hard = {name: canonical(value) for name, value in ((quota.get('spec') or {}).get('hard') or {}).items()}
    used: dict[str, Quantity] = {}
    for key in kinds(quota):
        names = [name for name in hard if evaluators.counted(key, name)]
        for obj in objects(key):
            if key == evaluators.PODS and not all(evaluators.in_scope(r, obj) for r in evaluators.scopes(quota)):
                continue
            cost = evaluators.usage(key, obj, now)
            for name in names:
                if name in cost:
                    used[name] = used.get(name, ZERO) + cost[name]
    return {'hard': hard, 'used': {name: render(used.get(name, ZERO)) for name in hard}}
