"""Leader election on a `coordination.k8s.io/v1` Lease, as values (client-go's rules). Pure.

The Lease's spec: `holderIdentity`, `leaseDurationSeconds`, `acquireTime`, `renewTime` (MicroTime),
`leaseTransitions`. The rules (`decide`), all on our monotonic clock (`now`, loop time):

- Never compare `renewTime` with our wall clock: someone else's Lease is valid until
  `observed_at + leaseDurationSeconds`, where `observed_at` is when we last saw its spec change.
- Ours is valid until `renewed_at + lease_duration` (`renewed_at`: the start of our last
  successful write); we act only until `renewed_at + renew_deadline`, then pause: before the lease
  expires, so before anyone else may acquire it.
- No Lease, an empty holder (a released Lease), or someone else's expired Lease: acquire it.
- Ours: renew it every `retry_period`.
- An empty holder is free. A released Lease (client-go's and ours) has `leaseDurationSeconds: 1`;
  any other empty holder (e.g. edited by hand) is named by `problem()` too, for one warning.
- A foreign holder without `renewTime` or `leaseDurationSeconds` (e.g. edited by hand) is held
  until it expires by our clock with our `lease_duration`; `problem()` names it for one warning.
"""
import dataclasses
import datetime
import enum
from collections.abc import Mapping
from typing import Any

from kopf._core import settings as settings_

RELEASED_DURATION = 1.0  # leaseDurationSeconds of a released Lease (as client-go releases it)


class Action(enum.Enum):
    ACQUIRE = 'acquire'  # create the Lease, or take it over (an update with its resourceVersion)
    RENEW = 'renew'      # ours: update its renewTime (with its resourceVersion)
    WAIT = 'wait'        # someone else's, still valid: look again at `next_at` (or on a change)


@dataclasses.dataclass(frozen=True)
class Durations:
    """client-go's defaults: 15 s / 10 s / 2 s."""
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0


@dataclasses.dataclass(frozen=True)
class Observed:
    """The Lease as we saw it last (None as a whole: there is no Lease)."""
    holder: str  # '' if none
    duration: float | None  # leaseDurationSeconds, if it is a positive number
    renew_time: str | None
    transitions: int
    resource_version: str | None

    @property
    def key(self) -> tuple[str, float | None, str | None]:
        """What counts as a change of the record (a new renewal or holder restarts someone else's expiry)."""
        return self.holder, self.duration, self.renew_time


@dataclasses.dataclass(frozen=True)
class Decision:
    action: Action
    leading: bool          # we may act now
    next_at: float         # when to decide again (monotonic), at the latest
    expires_at: float | None = None  # when the current holder's lease expires (ours or theirs), by our clock


def durations_of(settings: settings_.LeaseSettings) -> Durations:
    return Durations(settings.lease_duration, settings.renew_deadline, settings.retry_period)


def check(durations: Durations) -> str | None:
    """What is wrong with the durations, if anything (client-go's rules: retry < renew deadline < duration)."""
    if not 0 < durations.retry_period < durations.renew_deadline < durations.lease_duration:
        return (f'the durations must be 0 < retry_period ({durations.retry_period:g} s) < renew_deadline '
                f'({durations.renew_deadline:g} s) < lease_duration ({durations.lease_duration:g} s)')
    return None


def parse(body: Mapping[str, Any] | None) -> Observed | None:
    """The Lease object's spec as a value; None if there is no Lease."""
    if body is None:
        return None
    spec = body.get('spec') or {}
    spec = spec if isinstance(spec, Mapping) else {}
    holder = spec.get('holderIdentity')
    duration = spec.get('leaseDurationSeconds')
    transitions = spec.get('leaseTransitions')
    renew = spec.get('renewTime')
    return Observed(
        holder=holder if isinstance(holder, str) else '',
        duration=float(duration) if isinstance(duration, (int, float)) and _positive(duration) else None,
        renew_time=renew if isinstance(renew, str) and renew else None,
        transitions=transitions if isinstance(transitions, int) and not isinstance(transitions, bool) else 0,
        resource_version=(body.get('metadata') or {}).get('resourceVersion'),
    )


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def problem(lease: Observed | None, identity: str) -> str | None:
    """What is wrong with someone else's Lease (for one warning), if anything."""
    if lease is not None and not lease.holder and lease.duration != RELEASED_DURATION:
        return 'it has no holder but is not released as client-go releases it (edited by hand?); it is treated as free'
    if lease is None or not lease.holder or lease.holder == identity:
        return None
    missing = [name for name, value in [('renewTime', lease.renew_time), ('leaseDurationSeconds', lease.duration)]
               if value is None]
    if missing:
        return (f'it is held by {lease.holder!r} without {" and ".join(missing)}; it is treated as held '
                f'until it expires by our clock')
    return None


def decide(lease: Observed | None, *, identity: str, now: float, observed_at: float, renewed_at: float | None,
           durations: Durations) -> Decision:
    """What to do now: acquire, renew or wait; whether we lead; when to decide again."""
    retry = now + durations.retry_period
    if lease is not None and lease.holder == identity:
        if renewed_at is None:  # ours by name, but not by this process's write (e.g. the same POD_ID restarted)
            return Decision(Action.ACQUIRE, leading=False, next_at=retry)
        deadline = renewed_at + durations.renew_deadline
        leading = now < deadline
        return Decision(Action.RENEW, leading=leading, next_at=min(retry, deadline) if leading else retry,
                        expires_at=renewed_at + durations.lease_duration)
    if lease is None or not lease.holder:
        return Decision(Action.ACQUIRE, leading=False, next_at=retry)
    expires_at = observed_at + (lease.duration if lease.duration is not None else durations.lease_duration)
    if now >= expires_at:
        return Decision(Action.ACQUIRE, leading=False, next_at=retry, expires_at=expires_at)
    return Decision(Action.WAIT, leading=False, next_at=min(retry, expires_at), expires_at=expires_at)


def format_time(moment: datetime.datetime) -> str:
    """A MicroTime, as the API server writes it: `2006-01-02T15:04:05.000000Z`."""
    return moment.astimezone(datetime.UTC).strftime('%Y-%m-%dT%H:%M:%S.%fZ')


def spec(lease: Observed | None, *, identity: str, durations: Durations, wall: datetime.datetime,
         acquire_time: str | None) -> dict[str, Any]:
    """The spec we write to acquire or renew (a takeover counts up `leaseTransitions`)."""
    stamp = format_time(wall)
    ours = lease is not None and lease.holder == identity
    transitions = (lease.transitions if lease is not None else 0) + (0 if ours or lease is None else 1)
    return {'holderIdentity': identity, 'leaseDurationSeconds': max(1, round(durations.lease_duration)),
            'acquireTime': acquire_time if ours and acquire_time else stamp, 'renewTime': stamp,
            'leaseTransitions': transitions}


def released(lease: Observed, *, wall: datetime.datetime) -> dict[str, Any]:
    """The spec of a released Lease (as client-go releases it): no holder, so the next one acquires at once."""
    stamp = format_time(wall)
    return {'holderIdentity': '', 'leaseDurationSeconds': int(RELEASED_DURATION), 'acquireTime': stamp,
            'renewTime': stamp, 'leaseTransitions': lease.transitions}


def body(name: str, namespace: str, spec_: Mapping[str, Any], resource_version: str | None,
         labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The Lease object to create (no resourceVersion) or to update (with it: the precondition)."""
    metadata: dict[str, Any] = {'name': name, 'namespace': namespace}
    if labels:
        metadata['labels'] = dict(labels)
    if resource_version is not None:
        metadata['resourceVersion'] = resource_version
    return {'apiVersion': 'coordination.k8s.io/v1', 'kind': 'Lease', 'metadata': metadata, 'spec': dict(spec_)}


def split_name(value: str) -> tuple[str | None, str]:
    """`--lease [NAMESPACE/]NAME` as (namespace or None, name)."""
    namespace, _, name = value.rpartition('/')
    return namespace or None, name
