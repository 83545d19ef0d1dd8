"""Applying a cycle's patch: at most one request per endpoint (the main body, and `/status` where it exists).

- An empty patch sends nothing.
- A patch with callables (finalizer edits, `patch.fns`) and merge content is sent as ONE guarded
  JSON-patch (the merge content folded into it), not as a JSON-patch plus a merge-patch.
- Annotations are budgeted before sending: an over-budget patch is not sent (the error names the key).
  A patch that writes no annotations is not budgeted: it pushes nothing over (the server keeps the
  existing ones within the same budget).
- The server's answer is returned: the object's record decides whether the next cycle runs on it
  at once or waits for it to come back through the watch (`kopf._core.records`); with its bytes
  (`PatchResult.raw`), so that its echo is known without parsing it (`kopf._engine.processing`).
"""
from collections.abc import Mapping
from typing import Any

from kopf._api import objectwrites
from kopf._core import budgets, patches
from kopf._core.kwargs import Logger
from kopf._engine import contexts
from kopf._shared import fields, mergepatch


def fold(patch: patches.Patch) -> patches.Patch:
    """The patch to send: with callables, its merge content becomes the first callable."""
    if not patch.fns or not len(patch):
        return patch
    content = dict(patch)

    def merge(body: dict[str, Any]) -> None:
        merged = mergepatch.merge(body, content)
        body.clear()
        body.update(merged)
    return patches.Patch(fns=[merge, *patch.fns])


def _writes_annotations(patch: patches.Patch) -> bool:
    """Whether the patch's merge content writes annotations (what `budgets.check_annotations` reads of it)."""
    return fields.resolve(patch, ('metadata', 'annotations'), None) is not None


def skipped(rctx: contexts.ResourceContext) -> None:
    """A cycle with nothing to send (counted as such when metrics are on)."""
    metrics = rctx.operator.metrics
    if metrics.enabled:  # off: not even the no-op's call (most cycles of a settled object end here)
        metrics.patched(rctx.resource, 'skipped')


async def apply(rctx: contexts.ResourceContext, body: Mapping[str, Any], patch: patches.Patch,
                logger: Logger) -> objectwrites.PatchResult | None:
    """Send a patch of this body; what came of it (`body`: the server's answer, the newest body; None if not
    accepted), or None if nothing was sent."""
    metrics = rctx.operator.metrics
    if not patch:
        skipped(rctx)
        return None
    try:
        if _writes_annotations(patch):  # else the answer's are the body's: the server keeps them within the budget
            budgets.check_annotations(body, patch)
    except budgets.AnnotationsBudgetError as exc:
        logger.error(str(exc))
        metrics.patched(rctx.resource, 'refused')
        return None
    if metrics.enabled:
        metrics.patched(rctx.resource, 'sent')
    meta: Mapping[str, Any] = body.get('metadata') or {}
    return await objectwrites.patch_obj(rctx.operator.client, rctx.resource, namespace=meta.get('namespace'),
                                        name=str(meta.get('name')), patch=fold(patch), body=body, log=logger)
