"""The clusterrole-aggregation controller: ClusterRoles with an `aggregationRule` get their selected roles' rules.

Run by the `Sweeper` soon after any ClusterRole changed (`State.aggregation_due`). Each aggregating
ClusterRole whose rules differ from what it selects (`rbac.aggregation`) is written by server-side
apply as `clusterrole-aggregation-controller`, forcing, as kube-controller-manager writes it.
"""
from typing import Any

from kopf._cluster.apis.routing import Target
from kopf._cluster.pipeline import serverside, writing
from kopf._cluster.pipeline.state import State
from kopf._cluster.rbac import aggregation, resolver

APPLY = writing.Options(manager=aggregation.MANAGER, force=True)


def aggregate(state: State) -> None:
    resource = state.catalog.by_key(resolver.CLUSTER_ROLES)
    if resource is None:
        return
    roles = list(state.store.iterate(resolver.CLUSTER_ROLES))
    for role in roles:
        wanted = aggregation.aggregated(role, roles)
        if wanted is None or not aggregation.changed(role.get('rules'), wanted):
            continue
        name = role['metadata']['name']
        config: dict[str, Any] = {'apiVersion': resource.api_version, 'kind': resource.kind, 'metadata': {'name': name}}
        if wanted:
            config['rules'] = wanted
        serverside.apply(state, Target(resource, None, name), config, APPLY)
