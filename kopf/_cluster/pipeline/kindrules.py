"""The few per-kind rules real servers apply on top of the generic pipeline: a table of small hooks.

Each hook takes the object about to be stored (already pruned), may normalise it in place,
and returns validation causes (empty when valid). Kinds without an entry have no extra rules.
`UPDATES` are the same for updates, given the stored object too: the immutable fields users trip over.
"""
import base64
import dataclasses
import functools
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from kopf._cluster import statuses
from kopf._cluster.pipeline import crds, metadata, policyconfigs, webhookconfigs
from kopf._cluster.rbac import validating

Cause = dict[str, Any]
Hook = Callable[[dict[str, Any], 'Settings'], list[Cause]]
SYSTEM_NAMESPACES = ('default', 'kube-system')


@dataclasses.dataclass(frozen=True)
class Settings:
    """Emulator-wide switches that change per-kind rules."""

    allow_http_webhooks: bool = False
    event_ttl: float = 3600.0         # seconds after which Events are deleted, as a real server does
    quota_resync: float = 300.0       # the resourcequota controller's full resync (--resource-quota-sync-period)
    compaction_interval: float = 300.0   # the history older than one to two of these is forgotten (0: never)
    shard_selectors: bool = True      # `shardSelector=` is served (feature gate ShardedListAndWatch, 1.36+)


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


DOTS = {'.': "must not be '.'", '..': "must not be '..'"}
CONFIG_KEY = re.compile(r'[-._a-zA-Z0-9]+')
CONFIG_KEY_RULE = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
                   "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")


def _key_causes(obj: Mapping[str, Any], *fields: str) -> list[Cause]:
    """The keys of a ConfigMap's or Secret's data: config keys, at most 253 characters, never `.` or `..`."""
    causes: list[Cause] = []
    for field in fields:
        keys = obj.get(field)
        for key in (keys if isinstance(keys, Mapping) else ()):
            if not isinstance(key, str):
                continue
            if len(key) > 253:
                rule = 'must be no more than 253 characters'
            elif key in DOTS:
                rule = DOTS[key]
            elif key.startswith('..'):
                rule = "must not start with '..'"
            elif not CONFIG_KEY.fullmatch(key):
                rule = CONFIG_KEY_RULE
            else:
                continue
            causes.append(statuses.cause('FieldValueInvalid', f'{field}[{key}]', f'Invalid value: "{key}": {rule}'))
    return causes


def prepare_configmap(obj: dict[str, Any], settings: Settings) -> list[Cause]:
    return _key_causes(obj, 'data', 'binaryData')


def prepare_secret(obj: dict[str, Any], settings: Settings) -> list[Cause]:
    """`stringData` is write-only: merged into `data` (base64), never stored, as the real server does."""
    causes = _key_causes(obj, 'data', 'stringData')
    if causes:
        return causes
    obj['type'] = obj.get('type') or 'Opaque'
    strings = obj.pop('stringData', None)
    if isinstance(strings, dict) and strings:
        data = obj['data'] = dict(obj.get('data') or {})
        data.update({key: base64.b64encode(str(value).encode()).decode() for key, value in strings.items()})
    return []


def prepare_crd(obj: dict[str, Any], settings: Settings) -> list[Cause]:
    causes = crds.causes_of(obj)
    if not causes:
        crds.with_defaults(obj)
        obj.setdefault('status', crds.initial_status(obj))   # a create's answer shows it (updates keep theirs)
    return causes


def prepare_validating(obj: dict[str, Any], settings: Settings) -> list[Cause]:
    return webhookconfigs.prepare(obj, mutating=False, allow_http=settings.allow_http_webhooks)


def prepare_mutating(obj: dict[str, Any], settings: Settings) -> list[Cause]:
    return webhookconfigs.prepare(obj, mutating=True, allow_http=settings.allow_http_webhooks)


def prepare_service(obj: dict[str, Any], settings: Settings) -> list[Cause]:
    """A Service of more than one port names each (the real server's first check of its ports)."""
    ports = (obj.get('spec') or {}).get('ports') or []
    if len(ports) < 2:
        return []
    return [statuses.cause('FieldValueRequired', f'spec.ports[{index}].name', 'Required value')
            for index, port in enumerate(ports) if isinstance(port, dict) and not port.get('name')]
def _rbac(plural: str, obj: dict[str, Any], settings: Settings) -> list[Cause]:
    return validating.prepare(plural, obj)


HOOKS: dict[tuple[str, str], Hook] = {
    ('', 'services'): prepare_service,
    ('', 'events'): prepare_event,
    ('', 'namespaces'): prepare_namespace,
    ('', 'configmaps'): prepare_configmap,
    ('', 'secrets'): prepare_secret,
    ('coordination.k8s.io', 'leases'): prepare_lease,
    ('apiextensions.k8s.io', 'customresourcedefinitions'): prepare_crd,
    ('admissionregistration.k8s.io', 'validatingwebhookconfigurations'): prepare_validating,
    ('admissionregistration.k8s.io', 'mutatingwebhookconfigurations'): prepare_mutating,
    ('admissionregistration.k8s.io', 'validatingadmissionpolicies'): lambda obj, _: policyconfigs.prepare_policy(obj),
    ('admissionregistration.k8s.io', 'validatingadmissionpolicybindings'):
        lambda obj, _: policyconfigs.prepare_binding(obj),
    **{(validating.GROUP, plural): functools.partial(_rbac, plural)
       for plural in ('roles', 'clusterroles', 'rolebindings', 'clusterrolebindings')},
}


def prepare(key: tuple[str, str], obj: dict[str, Any], settings: Settings) -> list[Cause]:
    hook = HOOKS.get(key)
    return hook(obj, settings) if hook is not None else []


def _immutable(path: str, old: Any, new: Any) -> list[Cause]:
    if old == new:
        return []
    shown = json.dumps(new, separators=(',', ':'), sort_keys=True) if isinstance(new, (dict, list)) else f'"{new}"'
    return [statuses.cause('FieldValueInvalid', path, f'Invalid value: {shown}: field is immutable')]


def update_job(current: dict[str, Any], obj: dict[str, Any]) -> list[Cause]:
    """A Job's selector is immutable; its pod template too, but for a suspended Job's scheduling directives."""
    old, new = current.get('spec') or {}, obj.get('spec') or {}
    causes = _immutable('spec.selector', old.get('selector'), new.get('selector'))
    old_template, new_template = old.get('template') or {}, new.get('template') or {}
    if old.get('suspend') and new.get('suspend'):   # labels, annotations, node selector, tolerations may change
        mutable = ('nodeSelector', 'tolerations', 'schedulingGates', 'affinity')
        old_template = {'spec': {k: v for k, v in (old_template.get('spec') or {}).items() if k not in mutable}}
        new_template = {'spec': {k: v for k, v in (new_template.get('spec') or {}).items() if k not in mutable}}
    causes += _immutable('spec.template', old_template, new_template)
    if old.get('completions') != new.get('completions') and new.get('completionMode') != 'Indexed':
        causes += _immutable('spec.completions', old.get('completions'), new.get('completions'))
    return causes


def update_service(current: dict[str, Any], obj: dict[str, Any]) -> list[Cause]:
    """A Service's clusterIP stays: omitted in an update, the allocated one is kept; a different one is an error."""
    old, new = current.get('spec') or {}, obj.get('spec')
    if not isinstance(new, dict) or not old.get('clusterIP') or new.get('type') == 'ExternalName':
        return []
    if new.get('clusterIP') and not new.get('clusterIPs'):
        new['clusterIPs'] = [new['clusterIP']]
    elif new.get('clusterIP') and new['clusterIP'] != old['clusterIP'] and \
            new.get('clusterIPs') == old.get('clusterIPs'):
        new['clusterIPs'] = [new['clusterIP'], *new['clusterIPs'][1:]]   # the singular changed: so does the plural
    for field in ('clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy'):
        if not new.get(field) and field in old:
            new[field] = old[field]
    if new.get('clusterIP') != old['clusterIP'] or (new.get('clusterIPs') or [])[:1] != [old['clusterIP']]:
        shown = json.dumps(new.get('clusterIPs') or [new.get('clusterIP')], separators=(',', ':'))   # as 1.34 shows it
        message = f'Invalid value: {shown}: may not change once set'
        return [statuses.cause('FieldValueInvalid', 'spec.clusterIPs[0]', message)]
    return []


UPDATES: dict[tuple[str, str], Callable[[dict[str, Any], dict[str, Any]], list[Cause]]] = {
    ('batch', 'jobs'): update_job,
    ('', 'services'): update_service,
    **{(validating.GROUP, plural): functools.partial(validating.on_update, plural)
       for plural in ('rolebindings', 'clusterrolebindings')},
}


def on_update(key: tuple[str, str], current: dict[str, Any], obj: dict[str, Any]) -> list[Cause]:
    hook = UPDATES.get(key)
    return hook(current, obj) if hook is not None else []
