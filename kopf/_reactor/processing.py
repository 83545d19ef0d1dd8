"""One event of one object → one handling cycle (SPEC §5.1-5.2, "Our decisions" 7).

Order: `on.event` handlers (every event; errors ignored; results still go to status) → deletion
of the object (DELETED: optional delete handlers once, memory dropped) → stealth if no change
handler could ever match → the finalizer (added in its own cycle; removed when nothing needs it)
→ change handlers of the detected cause → the diff-base when the cause is done → the finalizer's
release after deletion handling. The cycle's patch is applied by the caller, once.
"""
import datetime
from collections.abc import Mapping
from typing import Any

from kopf._model import causes, diffs, essences, handlers, patches
from kopf._model.bodies import Body, RawEvent
from kopf._model.causes import Reason
from kopf._model.kwargs import ChangingCause, WatchingCause, handler_kwargs
from kopf._model.outcomes import OutcomeKind
from kopf._reactor import changing, contexts, invoking, loggers
from kopf._storage import diffbase
from kopf._storage import progress as progress_storages


def make_cycle(rctx: contexts.ResourceContext, memory: contexts.ObjectMemory, event: RawEvent,
               logger: loggers.ObjectLogger | None = None) -> contexts.Cycle:
    """A cycle of the event; with the object's logger from its previous cycle if the caller keeps one."""
    body = event['object']
    if logger is None:  # it refers to the object only (not to this body), so the caller may keep it
        logger = loggers.ObjectLogger(body=loggers.identity(body), settings=rctx.settings)
    return contexts.Cycle(resource=rctx, memory=memory, event_type=event.get('type'), body=body,
                          patch=patches.Patch(body=body), logger=logger)


async def process(cycle: contexts.Cycle, event: RawEvent, *, fresh: bool = True) -> None:
    """Decide and invoke everything for this event; the patch and wake-up are left in the cycle.

    A cycle that is not `fresh` re-runs an event seen before (a delayed retry's wake-up, a retry after
    an unexpected error): the `on.event` handlers have seen that event already and are not called again.
    """
    if fresh:
        await handle_event(cycle, event)
    if cycle.event_type == 'DELETED':
        cycle.logger.debug('Deleted, really deleted, and we are notified.')
        await handle_unguarded_deletion(cycle)
        return
    await handle_changes(cycle)


async def handle_event(cycle: contexts.Cycle, event: RawEvent) -> None:
    """The `on.event` handlers: every event, all at once, errors ignored (they are IGNORED by default)."""
    rctx = cycle.resource
    if not rctx.registry.has_handlers(rctx.resource, handlers.WatchingHandler):
        return  # no cause, logger and views to build for nobody
    logger = loggers.LocalObjectLogger(body=cycle.body, settings=rctx.settings)
    cause = WatchingCause(logger=logger, memo=cycle.memory.memo, indices=rctx.operator.indices,
                          resource=rctx.resource, body=Body(cycle.body), patch=cycle.patch,
                          type=cycle.event_type, event=event)
    for handler in rctx.registry.iter_watching_handlers(cause):
        kwargs = handler_kwargs(handler, cause, started=changing.now(), runtime=datetime.timedelta(0))
        outcome = await invoking.invoke_handler(handler, kwargs=kwargs, logger=logger,
                                                executor=rctx.settings.execution.executor,
                                                default_backoff=rctx.settings.execution.default_backoff)
        if outcome.kind is OutcomeKind.SUCCESS and outcome.result is not None:
            changing.deliver_result(cycle, handler.id, outcome.result)


def detect(cycle: contexts.Cycle) -> tuple[causes.Change, dict[str, Any]]:
    rctx = cycle.resource
    extra = rctx.registry.get_extra_fields(rctx.resource)
    essence = progress_storages.clear_essence(rctx.progress_storage,
                                              rctx.diffbase_storage.build(body=cycle.body, extra_fields=extra))
    old = rctx.diffbase_storage.fetch(body=cycle.body)
    change = causes.detect(event_type=cycle.event_type, body=cycle.body, finalizer=rctx.finalizer,
                           old=old, new=essence, initial=cycle.memory.initial)
    return change, essence


async def handle_changes(cycle: contexts.Cycle) -> None:
    rctx = cycle.resource
    change, essence = detect(cycle)
    cause = changing.make_cause(cycle, change)
    meta = cycle.body.get('metadata') or {}
    has_finalizer = rctx.finalizer in (meta.get('finalizers') or ())
    deleting = bool(meta.get('deletionTimestamp'))
    requires = rctx.registry.requires_finalizer(cause)
    if not rctx.registry.prematch(cause):  # stealth: no logs, no state; only release our finalizer
        if has_finalizer and not requires:
            remove_finalizer(cycle)
        return
    if change.reason == Reason.FREE:
        await handle_unguarded_deletion(cycle)
        return
    if requires and not has_finalizer and not deleting:
        cycle.logger.debug('Adding the finalizer, thus preventing the actual deletion.')
        add_finalizer(cycle)
        return
    if has_finalizer and not requires and not deleting:
        cycle.logger.debug('Removing the finalizer, as there are no handlers requiring it.')
        remove_finalizer(cycle)
    if change.reason == Reason.NOOP:
        changing.purge_stale(cycle)  # e.g. of a change that is reverted now: not to be resumed by the next one
        cycle.settled = essence if not cycle.patch.fns else None
        return
    if not await changing.handle_cause(cycle, cause):
        return
    cycle.memory.initial = False
    if deleting:
        cycle.memory.deletion_handled = True
        if has_finalizer:
            cycle.logger.debug('Removing the finalizer, thus allowing the actual deletion.')
            remove_finalizer(cycle)
    else:
        if essence != change.old:
            rctx.diffbase_storage.store(body=cycle.body, patch=cycle.patch, essence=essence)
        cycle.settled = essence if not cycle.patch.fns and cycle.wakeup is None else None


_FRAMEWORK_DIFFBASES = (diffbase.AnnotationsDiffBaseStorage, diffbase.StatusDiffBaseStorage,
                        diffbase.MultiDiffBaseStorage)
_UNDECIDING_META = frozenset({'resourceVersion', 'managedFields', 'generation', 'annotations'})


def needs_recheck(cycle: contexts.Cycle, answer: Mapping[str, Any]) -> bool:
    """Whether the server's answer to the cycle's patch needs a cycle of its own (the re-check).

    Not if the cycle left nothing to do (`settled`: the cause handled, no finalizer edit, no wake-up),
    the answer holds the diff-base that the cycle left, and it differs from the body it was decided
    on only where nothing is decided: the resourceVersion, managedFields, generation, Kopf-owned
    annotations (the progress and diff-base records), and status (the results). Then the next cycle
    would find nothing to do (a NOOP) — as long as no handler of the resource has filters (a filter
    may look anywhere) and the storages are the framework's own (a custom diff-base storage may put
    status into the essence). A change by anyone else that the answer already includes (spec,
    labels, finalizers, deletion, ...) is re-checked.
    """
    rctx = cycle.resource
    if cycle.settled is None:
        return True
    if not rctx.registry.is_unfiltered(rctx.resource) or rctx.registry.get_extra_fields(rctx.resource):
        return True
    if not _framework_diffbase(rctx.diffbase_storage) or not progress_storages.is_framework(rctx.progress_storage):
        return True
    body = cycle.body
    for key in body.keys() | answer.keys():
        if key != 'metadata' and key != 'status' and body.get(key) != answer.get(key):
            return True
    old_meta: Mapping[str, Any] = body.get('metadata') or {}
    new_meta: Mapping[str, Any] = answer.get('metadata') or {}
    for key in old_meta.keys() | new_meta.keys():
        if key not in _UNDECIDING_META and old_meta.get(key) != new_meta.get(key):
            return True
    old_annotations: Mapping[str, Any] = old_meta.get('annotations') or {}
    new_annotations: Mapping[str, Any] = new_meta.get('annotations') or {}
    owned = essences.kopf_prefixes(old_annotations) | essences.kopf_prefixes(new_annotations)
    for key in old_annotations.keys() | new_annotations.keys():
        if old_annotations.get(key) != new_annotations.get(key) and not essences.is_kopf_key(key, owned):
            return True
    return rctx.diffbase_storage.fetch(body=answer) != cycle.settled  # the diff-base as the cycle left it


def _framework_diffbase(storage: diffbase.DiffBaseStorage) -> bool:
    if type(storage) is diffbase.MultiDiffBaseStorage:
        return all(_framework_diffbase(s) for s in storage.storages)
    return type(storage) in _FRAMEWORK_DIFFBASES


async def handle_unguarded_deletion(cycle: contexts.Cycle) -> None:
    """Delete handlers for an object deleted without our finalizer: best-effort, once ("Our decisions" 7)."""
    memory = cycle.memory
    if memory.deletion_handled:
        return
    memory.deletion_handled = True
    change = causes.Change(reason=Reason.DELETE, old=None, new=None, diff=diffs.Diff(),
                           initial=memory.initial)
    cause: ChangingCause = changing.make_cause(cycle, change)
    for handler in cycle.resource.registry.iter_changing_handlers(cause):
        kwargs = handler_kwargs(handler, cause, started=changing.now(), runtime=datetime.timedelta(0))
        settings = cycle.resource.settings
        await invoking.invoke_handler(handler, kwargs=kwargs, executor=settings.execution.executor,
                                      default_backoff=settings.execution.default_backoff, logger=cycle.logger)


MISSING = object()


class _AppendFinalizer:
    """Add the finalizer to `metadata.finalizers` (a patch callable that also knows its JSON-patch ops)."""

    def __init__(self, finalizer: str) -> None:
        self.finalizer = finalizer

    def __call__(self, body: dict[str, Any]) -> None:
        meta = body.setdefault('metadata', {})
        if self.finalizer not in (meta.get('finalizers') or ()):
            meta['finalizers'] = [*(meta.get('finalizers') or ()), self.finalizer]

    def json_ops(self, body: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        meta = body.get('metadata')
        if not isinstance(meta, Mapping):
            return None
        current = meta.get('finalizers', MISSING)
        if current is MISSING:
            return [{'op': 'add', 'path': '/metadata/finalizers', 'value': [self.finalizer]}]
        if not isinstance(current, list):
            return None
        if self.finalizer in current:
            return []
        return [{'op': 'add', 'path': f'/metadata/finalizers/{len(current)}', 'value': self.finalizer}]


class _RemoveFinalizer:
    """Remove the finalizer from `metadata.finalizers` (a patch callable that also knows its JSON-patch ops)."""

    def __init__(self, finalizer: str) -> None:
        self.finalizer = finalizer

    def __call__(self, body: dict[str, Any]) -> None:
        meta = body.setdefault('metadata', {})
        meta['finalizers'] = [f for f in meta.get('finalizers') or () if f != self.finalizer]

    def json_ops(self, body: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        meta = body.get('metadata')
        current = meta.get('finalizers') if isinstance(meta, Mapping) else None
        if not isinstance(current, list) or current.count(self.finalizer) != 1:
            return None  # rare shapes: the generic diff decides
        if current[-1] == self.finalizer:
            return [{'op': 'remove', 'path': f'/metadata/finalizers/{len(current) - 1}'}]
        if len(current) == 2:  # [ours, other]: what the generic list diff makes of it
            return [{'op': 'remove', 'path': '/metadata/finalizers/0'}]
        return None


def _append(finalizer: str) -> patches.PatchFn:
    return _AppendFinalizer(finalizer)


def _remove(finalizer: str) -> patches.PatchFn:
    return _RemoveFinalizer(finalizer)


def add_finalizer(cycle: contexts.Cycle) -> None:
    cycle.patch.fns.append(_append(cycle.resource.finalizer))


def remove_finalizer(cycle: contexts.Cycle) -> None:
    cycle.patch.fns.append(_remove(cycle.resource.finalizer))
