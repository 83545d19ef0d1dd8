"""What a write goes through besides its own kind's rules: the registry's and the admission plugins' checks,
and the record of who wrote what.

- RBAC's escalation prevention for roles and bindings (before validation, as the registry checks it);
- `create` authorized too when an apply creates (upstream's create-on-update authorization);
- the ResourceQuota admission check: the charged quotas' new usage, to be stored before the object;
- `metadata.managedFields` after the write (`patchtypes.managedfields`): by its manager's update,
  by its applied configuration, or kept as they are for the server's own writes.

The write pipeline (`writing`) calls them; they never write themselves.
"""
import datetime
from typing import Any

from kopf._cluster.apis.routing import Target
from kopf._cluster.openapi import conforming
from kopf._cluster.patchtypes import managedfields
from kopf._cluster.pipeline import metadata
from kopf._cluster.pipeline.state import QUOTAS, State
from kopf._cluster.quotas import charging
from kopf._cluster.rbac import escalation, refusals
from kopf._cluster.rbac.requestinfo import Attributes
from kopf._cluster.rbac.subjects import User
from kopf._cluster.store.objectstore import Obj

# What a create gets from the registry's strategy, the allocators or admission plugins, not from the client's
# body with its defaults: the field manager sees the object before them, so the creator does not own these.
SET_BY_THE_SERVER: dict[tuple[str, str], list[tuple[str, ...]]] = {
    ('', 'namespaces'): [('f:spec', 'f:finalizers')],
    ('', 'services'): [('f:spec', f'f:{name}') for name in ('clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy')],
    ('', 'pods'): [('f:spec', 'f:priority'), ('f:spec', 'f:preemptionPolicy')],
}


def guard(state: State, target: Target, obj: dict[str, Any], current: Obj | None, user: User | None) -> None:
    """What the registry checks of the writer before validation: RBAC's escalation prevention."""
    resource = target.resource
    if user is not None and escalation.guarded(resource.plural, resource.group):
        escalation.check(state.authorizer, user, resource.plural, target.namespace or '', obj, current)


def authorize_creation(state: State, target: Target, user: User | None) -> None:
    """An apply that creates needs `create` too, not only `patch` (a 403 with the authorizer's reason, as upstream)."""
    if user is None:
        return
    resource = target.resource
    decision = state.authorizer.authorize(Attributes(user, 'create', True, resource.group, resource.version,
                                                     resource.plural, target.subresource or '',
                                                     target.namespace or '', target.name or ''))
    if not decision.allowed:
        raise refusals.qualified_forbidden(resource.group, resource.plural, target.name or '',
                                           '' if decision.denied else decision.reason)


def charges(state: State, target: Target, obj: Obj, current: Obj | None) -> list[tuple[Target, Any, Obj]]:
    """The ResourceQuota admission check: the quotas' status writes to make before this write (or a 403)."""
    resource = target.resource
    if not resource.namespaced or target.namespace not in state.quota_namespaces:
        return []
    quotas = list(state.store.iterate(QUOTAS, target.namespace))
    try:
        charged = charging.charge(quotas, resource.key, obj, current, target.subresource or '',
                                  datetime.datetime.now(datetime.UTC))
    except charging.Refusal as exc:
        raise charging.forbidden(resource.qualified, resource.group, resource.plural,
                                 str(obj['metadata'].get('name') or ''), str(exc)) from None
    quota_resource = state.catalog.by_key(QUOTAS)
    if quota_resource is None:
        return []
    return [(Target(quota_resource, target.namespace, quota['metadata']['name'], 'status'), quota,
             {**quota, 'status': {**(quota.get('status') or {}), 'used': used}}) for quota, used in charged]


STORED_AS_NULL: dict[tuple[str, str], tuple[str, ...]] = {   # lists without `omitempty`: empty is null when read
    ('rbac.authorization.k8s.io', 'roles'): ('rules',),
    ('rbac.authorization.k8s.io', 'clusterroles'): ('rules',),
}


def as_stored(key: tuple[str, str], obj: dict[str, Any]) -> None:
    """Empty lists of Go fields without `omitempty` come back as `null` from a real server's storage."""
    for field in STORED_AS_NULL.get(key, ()):
        if not obj.get(field):
            obj[field] = None


def manage(target: Target, current: Obj | None, candidate: dict[str, Any], manager: str, applier: str,
           applied: Any, entries: Any = None) -> None:
    """`metadata.managedFields` after this write (the server's own writes, without a manager, keep them).

    `entries`: as computed before mutating admission webhooks changed the object (a real server runs the
    field manager before them: what they add is nobody's).
    """
    resource = target.resource
    sub = target.subresource or ''
    meta = candidate['metadata']
    if entries is not None:
        if entries:
            meta['managedFields'] = entries
        else:
            meta.pop('managedFields', None)
        return
    if not manager and not applier:
        if current is not None and 'managedFields' in current['metadata']:
            meta['managedFields'] = current['metadata']['managedFields']
        return
    schema = conforming.schema_of(resource)
    ignored: list[tuple[str, ...]] = [('f:status',)] if resource.has_status and sub != 'status' else \
        [('f:spec',)] if sub else []
    if current is None:
        ignored += SET_BY_THE_SERVER.get(resource.key, [])
    live = current if current is not None else managedfields.empty_object(resource.api_version, resource.kind,
                                                                          resource.custom)
    if applier:
        entries = managedfields.applied(live, candidate, applied, manager=applier, api_version=resource.api_version,
                                        subresource=sub, schema=schema, ignored=ignored, now=metadata.now())
    else:
        entries = managedfields.updated(live, candidate, manager=manager, api_version=resource.api_version,
                                        subresource=sub, schema=schema, ignored=ignored, now=metadata.now(),
                                        creating=current is None, custom=resource.custom)
    if entries:
        meta['managedFields'] = entries
    else:
        meta.pop('managedFields', None)
