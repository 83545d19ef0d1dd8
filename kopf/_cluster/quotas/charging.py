"""The ResourceQuota admission check, as k8s.io/apiserver's `resourcequota` plugin decides it.

For a create (and an update that changes what a Pod, Service or PersistentVolumeClaim costs), every
quota of the namespace whose status tracks something of the kind and whose scopes hold the object
is charged: a quota whose status is not computed yet refuses (`status unknown for quota`), a Pod
that does not state what a quota limits refuses (`failed quota: q: must specify limits.cpu for:
app`), and a charge over a limit refuses with what was requested, used and limited — each a 403
naming the object. Otherwise the charged quotas' new usage is returned, to be stored before the
object, as the real server stores it. Pure: no I/O.

    charge(quotas, key, obj, old, subresource, now) -> [(quota, new used)]  (or raises the 403)
"""
import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from kopf._cluster import statuses
from kopf._cluster.quotas import evaluators
from kopf._cluster.quotas.evaluators import Usage
from kopf._cluster.quotas.quantities import ZERO, Quantity, parse, render

Obj = Mapping[str, Any]


class Refusal(Exception):
    """A refused charge: the text after `is forbidden:` (the caller names the object)."""


def handles(key: tuple[str, str], obj: Obj, old: Obj | None, subresource: str) -> bool:
    if subresource:
        return False
    if old is None:
        return True
    if key == evaluators.PODS:
        return _terminating(old) != _terminating(obj)
    return key in (evaluators.SERVICES, evaluators.PVCS)


def _terminating(pod: Obj) -> bool:
    deadline = (pod.get('spec') or {}).get('activeDeadlineSeconds')
    return deadline is not None and deadline >= 0


def charge(quotas: Sequence[Obj], key: tuple[str, str], obj: Obj, old: Obj | None, subresource: str,
           now: datetime.datetime) -> list[tuple[Obj, dict[str, str]]]:
    if not quotas or not handles(key, obj, old, subresource):
        return []
    interesting = []
    for quota in quotas:
        if not evaluators.matches(quota, key, obj):
            continue
        name = quota['metadata']['name']
        status = quota.get('status') or {}
        restricted = sorted(n for n in status.get('hard') or {} if evaluators.counted(key, n))
        missing = evaluators.constraints(restricted, key, obj)
        if missing:
            raise Refusal(f'failed quota: {name}: must specify {missing}')
        if any(n not in (status.get('used') or {}) for n in restricted):
            raise Refusal(f'status unknown for quota: {name}, resources: {",".join(restricted)}')
        interesting.append(quota)
    cost = evaluators.usage(key, obj, now)
    charged = []
    for quota in interesting:
        delta = cost
        if old is not None and evaluators.matches(quota, key, old):
            before = evaluators.usage(key, old, now)
            delta = {n: q - before.get(n, ZERO) if (q - before.get(n, ZERO)).value > 0 else ZERO
                     for n, q in cost.items()}
        delta = {n: q for n, q in delta.items() if q.value != 0}
        if delta:
            charged.append((quota, _charged(quota, delta)))
    return charged


def _charged(quota: Obj, delta: Usage) -> dict[str, str]:
    status = quota.get('status') or {}
    hard = {n: parse(v) or ZERO for n, v in (status.get('hard') or {}).items()}
    used = {n: parse(v) or ZERO for n, v in (status.get('used') or {}).items()}
    requested = {n: q for n, q in delta.items() if n in hard}
    new = dict(used)
    for n, q in requested.items():
        new[n] = used.get(n, ZERO) + q
    exceeded = sorted(n for n in requested if new[n].value > hard[n].value)
    if exceeded:
        raise Refusal(f'exceeded quota: {quota["metadata"]["name"]}, requested: {_pretty(requested, exceeded)}, '
                      f'used: {_pretty(used, exceeded)}, limited: {_pretty(hard, exceeded)}')
    return {n: render(q) for n, q in new.items()}


def _pretty(values: Mapping[str, Quantity], names: Sequence[str]) -> str:
    return ','.join(f'{n}={render(values[n])}' for n in sorted(names) if n in values)


def forbidden(qualified: str, group: str, plural: str, name: str, text: str) -> statuses.ApiError:
    """admission.NewForbidden: `pods "p" is forbidden: exceeded quota: …`."""
    subject = f'{qualified} "{name}"' if name else qualified
    details = {'name': name, 'group': group, 'kind': plural}
    return statuses.ApiError(403, 'Forbidden', f'{subject} is forbidden: {text}',
                             {k: v for k, v in details.items() if v})
