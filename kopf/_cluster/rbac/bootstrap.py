"""The RBAC objects a kube-apiserver creates at its start (its "bootstrap policy"), ready to store.

From `data/bootstrap.json` (k8s.io/kubernetes's own fixtures of its bootstrap policy, at the envtest
version: `tools/generate_rbac_bootstrap.py`): cluster-admin, admin/edit/view (aggregated),
system:discovery, system:basic-user, system:public-info-viewer, the controllers' and nodes' roles,
their bindings, and the few Roles of kube-system and kube-public. The aggregated roles get their
rules as the aggregation controller computes them (`aggregation`).

    objects() -> [(storage key, object)], in the order a real server creates them
    managed(obj, now) -> the object's `managedFields`: `kube-apiserver` wrote it, the aggregation its rules
    seeded(now) -> [(storage key, object)] ready to store: uids, times and `managedFields` filled in (the
        objects, their field order and their managed fields are computed once per process, then copied)
"""
import functools
import importlib.resources
import json
import uuid
from collections.abc import Mapping
from typing import Any

from kopf._cluster import jsoncodec
from kopf._cluster.openapi import fieldorder, kindschemas
from kopf._cluster.patchtypes import managedfields
from kopf._cluster.rbac import aggregation, resolver

NOW = '<now>'   # the placeholder of the seeding moment in the template
PLURALS = {'ClusterRole': resolver.CLUSTER_ROLES, 'ClusterRoleBinding': resolver.CLUSTER_ROLE_BINDINGS,
           'Role': resolver.ROLES, 'RoleBinding': resolver.ROLE_BINDINGS}
MANAGER = 'kube-apiserver'   # the field manager of the objects the server writes at its start


@functools.cache
def _data() -> tuple[Mapping[str, Any], ...]:
    raw = importlib.resources.files('kopf._cluster.rbac.data').joinpath('bootstrap.json').read_bytes()
    return tuple(json.loads(raw)['objects'])


def objects() -> list[tuple[tuple[str, str], dict[str, Any]]]:
    """Fresh copies of every bootstrap object, the aggregated ClusterRoles with their rules filled in."""
    found = [(PLURALS[obj['kind']], json.loads(json.dumps(obj))) for obj in _data()]
    cluster_roles = [obj for key, obj in found if key == resolver.CLUSTER_ROLES]
    changed = True
    while changed:   # to the fixed point the controller reaches (admin aggregates edit, which aggregates view)
        changed = False
        for role in cluster_roles:
            rules = aggregation.aggregated(role, cluster_roles)
            if rules is not None and aggregation.changed(role.get('rules'), rules):
                role['rules'], changed = rules, True
    return found


def managed(obj: Mapping[str, Any], now: str) -> list[dict[str, Any]]:
    """The entries a real server's bootstrap leaves: its own create, then the aggregation controller's apply."""
    kind, api_version = str(obj['kind']), str(obj['apiVersion'])
    schema = kindschemas.schema_for(resolver.GROUP, 'v1', kind)
    aggregating = 'aggregationRule' in obj
    created = {**obj, 'rules': None} if aggregating else obj
    entries = managedfields.updated(managedfields.empty_object(api_version, kind, False), created, manager=MANAGER,
                                    api_version=api_version, subresource='', schema=schema, ignored=[], now=now,
                                    creating=True) or []
    if aggregating and obj.get('rules'):
        config = {'apiVersion': api_version, 'kind': kind, 'metadata': {'name': obj['metadata']['name']},
                  'rules': obj['rules']}
        before = {**created, 'metadata': {**obj['metadata'], 'managedFields': entries}}
        entries = managedfields.applied(before, obj, config, manager=aggregation.MANAGER, api_version=api_version,
                                        subresource='', schema=schema, ignored=[], now=now)
    return entries


def seeded(now: str) -> list[tuple[tuple[str, str], dict[str, Any]]]:
    """Fresh copies of the bootstrap objects as a server stores them at `now` (but their resourceVersions)."""
    found: list[tuple[tuple[str, str], dict[str, Any]]] = []
    for key, obj in jsoncodec.loads(_template()):
        meta = obj['metadata']
        meta.update(uid=str(uuid.uuid4()), creationTimestamp=now)
        for entry in meta['managedFields']:
            entry['time'] = now
        found.append(((key[0], key[1]), obj))
    return found


@functools.cache
def _template() -> bytes:
    """The objects with their managed fields, in kube-apiserver's field order, the moment left as `NOW`."""
    found = []
    for key, obj in objects():
        obj['metadata'].update(uid='', resourceVersion='', creationTimestamp=NOW)
        obj['metadata']['managedFields'] = managed(obj, NOW)
        fieldorder.arrange(obj)
        found.append((key, obj))
    return jsoncodec.dumps(found)
