"""The resourcequota controller: each ResourceQuota's status (its hard limits, its namespace's usage) kept true.

Run by the `Sweeper` soon after a quota, or anything in a namespace with quotas, changed
(`State.quotas_due`). A quota whose status differs from what `quotas.tally` computes is written
through its `status` subresource as `kube-controller-manager` writes it. Between its runs, the
admission check (`pipeline.writing`) charges each write to the quotas at once, as a real server does.
"""
import datetime
import functools
import time
from collections.abc import Iterator
from typing import Any

from kopf._cluster.apis.routing import Target
from kopf._cluster.pipeline import writing
from kopf._cluster.pipeline.state import State
from kopf._cluster.quotas import tally

QUOTAS = ('', 'resourcequotas')
OPTIONS = writing.Options(manager='kube-controller-manager')


def sync(state: State) -> None:
    resource = state.catalog.by_key(QUOTAS)
    due, state.quotas_due = state.quotas_due, set()
    if resource is None:
        return
    now = datetime.datetime.now(datetime.UTC)
    for namespace in sorted(due):
        for quota in list(state.store.iterate(QUOTAS, namespace)):
            if quota['metadata'].get('deletionTimestamp'):
                continue
            wanted = tally.status(quota, functools.partial(_objects, state, namespace), now)
            if quota.get('status') != wanted:
                candidate = {**quota, 'status': wanted}
                target = Target(resource, namespace, quota['metadata']['name'], 'status')
                writing.update(state, target, quota, candidate, OPTIONS)


def resync(state: State) -> None:
    """Every `quota_resync` seconds, all quotas are due, as the controller's periodic full resync makes them:
    a status edited by someone else (the controller ignores status-only changes) is put right again then."""
    now = time.monotonic()
    if now - state.quotas_resynced >= state.settings.quota_resync:
        state.quotas_resynced = now
        state.quotas_due |= state.quota_namespaces


def _objects(state: State, namespace: str, key: tuple[str, str]) -> Iterator[dict[str, Any]]:
    return state.store.iterate(key, namespace)
