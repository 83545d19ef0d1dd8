"""What a workload controller decides: the writes to make and when to look again (a `Plan`), as values.

The controllers are pure functions from the objects they read (and `now`) to a `Plan`; `workloads` applies
the writes through the write pipeline. Shared small rules live here too: int-or-percent values, owner
references, conditions that keep their transition times.
"""
import dataclasses
import math
from typing import Any

Key = tuple[str, str]
Obj = dict[str, Any]

PODS: Key = ('', 'pods')
NODES: Key = ('', 'nodes')
SERVICES: Key = ('', 'services')
ENDPOINTS: Key = ('', 'endpoints')
SLICES: Key = ('discovery.k8s.io', 'endpointslices')
DEPLOYMENTS: Key = ('apps', 'deployments')
REPLICASETS: Key = ('apps', 'replicasets')
JOBS: Key = ('batch', 'jobs')
NAMESPACES: Key = ('', 'namespaces')


@dataclasses.dataclass(frozen=True)
class Create:
    key: Key
    obj: Obj


@dataclasses.dataclass(frozen=True)
class Update:
    """Write `candidate` over `current`: the main endpoint for all but status, `/status` for the status."""
    key: Key
    current: Obj
    candidate: Obj


@dataclasses.dataclass(frozen=True)
class Delete:
    key: Key
    obj: Obj


Write = Create | Update | Delete


@dataclasses.dataclass
class Plan:
    writes: list[Write] = dataclasses.field(default_factory=list)
    wake_at: float | None = None   # look at this object again then (clock time), even if nothing changes

    def wake(self, moment: float | None) -> None:
        if moment is not None and (self.wake_at is None or moment < self.wake_at):
            self.wake_at = moment

    def update(self, key: Key, current: Obj, candidate: Obj) -> None:
        if candidate != current:
            self.writes.append(Update(key, current, candidate))


def scaled(value: Any, total: int, round_up: bool) -> int:
    """An int-or-string (`2`, `"25%"`) resolved against a total, as `intstr.GetScaledValueFromIntOrPercent`."""
    if isinstance(value, str) and value.endswith('%'):
        try:
            percent = int(value[:-1])
        except ValueError:
            return 0
        exact = percent * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return 0
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def owner_ref(owner: Obj) -> dict[str, Any]:
    """The controller reference that controllers put on what they create."""
    return {'apiVersion': owner['apiVersion'], 'kind': owner['kind'], 'name': owner['metadata']['name'],
            'uid': owner['metadata']['uid'], 'controller': True, 'blockOwnerDeletion': True}


def count(value: Any, default: int) -> int:
    """An optional integer field of a spec (`replicas`, `parallelism`, ...), or its default."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return default
    try:
        return int(value)
    except ValueError:
        return default


def controller_of(obj: Obj) -> dict[str, Any] | None:
    for ref in obj['metadata'].get('ownerReferences') or []:
        if ref.get('controller'):
            return dict(ref)
    return None


def condition(conditions: list[Obj], type: str, status: str, reason: str, message: str, now: str, *,
              update_time: bool = False, probe_time: bool = False) -> Obj:
    """A condition as controllers write it: the transition time kept unless its status changes."""
    old = next((c for c in conditions if c.get('type') == type), None)
    new: Obj = {'type': type, 'status': status}
    if probe_time:
        new['lastProbeTime'] = None
    if update_time:
        same = old is not None and old.get('reason') == reason and old.get('message') == message \
            and old.get('status') == status
        new['lastUpdateTime'] = old['lastUpdateTime'] if same and old and 'lastUpdateTime' in old else now
    if old is not None and old.get('status') == status and 'lastTransitionTime' in old:
        new['lastTransitionTime'] = old['lastTransitionTime']
    else:
        new['lastTransitionTime'] = now
    if reason:
        new['reason'] = reason
    if message:
        new['message'] = message
    return new


def without_zeros(status: Obj, *keep: str) -> Obj:
    """Drop zero counters, as Go's `omitempty` does for int32 fields (except those named in `keep`)."""
    return {k: v for k, v in status.items() if v != 0 or k in keep}
