"""Applying a cycle's patch: at most one request per endpoint (the main body, and `/status` where it exists).

- An empty patch sends nothing.
- A patch with callables (finalizer edits, `patch.fns`) and merge content is sent as ONE guarded
  JSON-patch (the merge content folded into it), not as a JSON-patch plus a merge-patch.
- Annotations are budgeted before sending ("Our decisions" 8): an over-budget patch is not sent.
- The resourceVersion that our patch produced is remembered: the worker waits for it to come back
  through the watch before deciding again (`settings.persistence.consistency_timeout`) — unless the
  queue takes the server's answer (`cycle.applied`) as the newest body (see `queueing`).
"""
from collections.abc import Mapping
from typing import Any

from kopf._api import patching
from kopf._model import budgets, patches
from kopf._reactor import contexts


def fold(patch: patches.Patch) -> patches.Patch:
    """The patch to send: with callables, its merge content becomes the first callable."""
    if not patch.fns or not len(patch):
        return patch
    content = dict(patch)

    def merge(body: dict[str, Any]) -> None:
        merged = patches.merge(body, content)
        body.clear()
        body.update(merged)
    return patches.Patch(fns=[merge, *patch.fns])


async def apply(cycle: contexts.Cycle) -> bool:
    """Send the cycle's patch; True if something was sent and accepted."""
    patch = cycle.patch
    if not patch:
        return False
    try:
        budgets.check_annotations(cycle.body, patch)
    except budgets.AnnotationsBudgetError as exc:
        cycle.logger.error(str(exc))
        return False
    rctx = cycle.resource
    meta: Mapping[str, Any] = cycle.body.get('metadata') or {}
    result = await patching.patch_obj(rctx.operator.client, rctx.resource, namespace=meta.get('namespace'),
                                      name=str(meta.get('name')), patch=fold(patch), body=cycle.body,
                                      log=cycle.logger)
    if result.body is not None:
        cycle.memory.expected_rv = (result.body.get('metadata') or {}).get('resourceVersion')
        cycle.applied = result.body
    return result.body is not None
