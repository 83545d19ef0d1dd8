"""The few per-kind rules real servers apply on top of the generic pipeline: a table of small hooks.

Each hook takes the object about to be stored (already pruned), may normalise it in place,
and returns validation causes (empty when valid). Kinds without an entry have no extra rules.
"""
import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from kopf._cluster import statuses
from kopf._cluster.pipeline import crds, metadata, webhookconfigs

Cause = dict[str, Any]
Hook = Callable[[dict[str, Any], 'Settings'], list[Cause]]
SYSTEM_NAMESPACES = ('default', 'kube-system')


@dataclasses.dataclass(frozen=True)
class Settings:
    """Emulator-wide switches that change per-kind rules."""

    allow_http_webhooks: bool = False
    event_ttl: float = 3600.0         # seconds after which Events are deleted, as a real server does


def prepare_event(obj: dict[str, Any], settings: Settings) -> list[Cause]:
    for field in ('firstTimestamp', 'lastTimestamp'):
        if field in obj:
            obj[field] = metadata.canonical_time(obj[field])
    if 'eventTime' in obj:
        obj['eventTime'] = metadata.canonical_time(obj['eventTime'], micro=True)
    series = obj.get('series')
    if isinstance(series, dict) and 'lastObservedTime' in series:
        series['lastObservedTime'] = metadata.canonical_time(series['lastObservedTime'], micro=True)
    return _event_causes(obj)


def _event_causes(obj: Mapping[str, Any]) -> list[Cause]:
    causes: list[Cause] = []
    if obj.get('eventTime'):
        for field in ('reportingComponent', 'reportingInstance'):
            if not obj.get(field):
                causes.append(statuses.cause('FieldValueRequired', field, 'Required value'))
    if len(str(obj.get('action') or '')) > 128:
        causes.append(statuses.cause('FieldValueTooLong', 'action', 'Too long: may not be more than 128 bytes'))
    if len(str(obj.get('message') or '')) > 4096:
        causes.append(statuses.cause('FieldValueTooLong', 'message', 'Too long: may not be more than 4096 bytes'))
    involved = obj.get('involvedObject') or {}
    event_ns = obj['metadata'].get('namespace') or ''
    involved_ns = involved.get('namespace') or ''
    if (involved_ns and involved_ns != event_ns) or (not involved_ns and event_ns not in SYSTEM_NAMESPACES):
        message = f'Invalid value: "{involved_ns}": does not match event.namespace'
        causes.append(statuses.cause('FieldValueInvalid', 'involvedObject.namespace', message))
    return causes


def prepare_namespace(obj: dict[str, Any], settings: Settings) -> list[Cause]:
    name = obj['metadata']['name']
    obj['metadata'].setdefault('labels', {})['kubernetes.io/metadata.name'] = name
    spec = obj.setdefault('spec', {})
    spec.setdefault('finalizers', ['kubernetes'])
    status = obj.setdefault('status', {})
    status.setdefault('phase', 'Terminating' if obj['metadata'].get('deletionTimestamp') else 'Active')
    return []


def prepare_lease(obj: dict[str, Any], settings: Settings) -> list[Cause]:
    spec = obj.get('spec')
    if isinstance(spec, dict):
        for field in ('acquireTime', 'renewTime'):
            if field in spec:
                spec[field] = metadata.canonical_time(spec[field], micro=True)
        duration = spec.get('leaseDurationSeconds')
        if duration is not None and (not isinstance(duration, int) or duration <= 0):
            return [statuses.cause('FieldValueInvalid', 'spec.leaseDurationSeconds',
                                   f'Invalid value: {duration}: must be greater than 0')]
    return []


def prepare_secret(obj: dict[str, Any], settings: Settings) -> list[Cause]:
    obj['type'] = obj.get('type') or 'Opaque'
    return []


def prepare_crd(obj: dict[str, Any], settings: Settings) -> list[Cause]:
    causes = crds.causes_of(obj)
    if not causes:
        crds.with_defaults(obj)
    return causes


def prepare_validating(obj: dict[str, Any], settings: Settings) -> list[Cause]:
    return webhookconfigs.prepare(obj, mutating=False, allow_http=settings.allow_http_webhooks)


def prepare_mutating(obj: dict[str, Any], settings: Settings) -> list[Cause]:
    return webhookconfigs.prepare(obj, mutating=True, allow_http=settings.allow_http_webhooks)


HOOKS: dict[tuple[str, str], Hook] = {
    ('', 'events'): prepare_event,
    ('', 'namespaces'): prepare_namespace,
    ('', 'secrets'): prepare_secret,
    ('coordination.k8s.io', 'leases'): prepare_lease,
    ('apiextensions.k8s.io', 'customresourcedefinitions'): prepare_crd,
    ('admissionregistration.k8s.io', 'validatingwebhookconfigurations'): prepare_validating,
    ('admissionregistration.k8s.io', 'mutatingwebhookconfigurations'): prepare_mutating,
}


def prepare(key: tuple[str, str], obj: dict[str, Any], settings: Settings) -> list[Cause]:
    hook = HOOKS.get(key)
    return hook(obj, settings) if hook is not None else []
