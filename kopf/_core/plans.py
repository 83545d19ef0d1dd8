"""One cycle of one object as values: `decide()` → (the reactor invokes) → `settle()`. Pure, no I/O.

`decide(ctx, record, event, now=...)` reads the body, the stored diff-base and progress, and the
registry, and returns a `Plan`: the `on.event` handlers to call, the cause, the change handlers due
now, the finalizer's edit, and what is skipped and why. The reactor invokes the plan's handlers
(that is all it does between the two) and passes their outcomes to `settle(plan, outcomes, now)`,
which returns a `Settlement`: the one patch to send, the wake-up, the log lines, and what the
object's record must remember. Handlers write into the plan's patch while they run; `settle()`
copies it and adds the framework's part, so the plan itself is never changed.

The order of one cycle (upstream's, kept):
1. `on.event` handlers: every fresh event, all of them, errors ignored; results go to status.
2. DELETED (`GONE`), or deleted without our finalizer (`FREE`): optional delete handlers, once,
   best-effort; nothing is written.
3. `STEALTH`: no change handler could ever match the object: no logs, no state; only our
   finalizer is released if nothing requires it.
4. The finalizer is added first, in a cycle of its own (`FINALIZER`); or removed, when nothing
   requires it any more, and the cycle goes on.
5. `NOOP`: nothing changed: the progress of a cause that is gone (e.g. a reverted change) is purged.
6. The change handlers of the cause: the due ones as the lifecycle picks them, through the
   progress state machine (`kopf._core.progress`). While any is unfinished, their records are
   stored and a wake-up is requested; when all are, the records are purged, the diff-base is
   stored (unless the essence is unchanged), and, for a deleted object, our finalizer released
   once its daemons and timers have exited (`RELEASING`: later cycles do only that).
"""
import dataclasses
import datetime
import enum
import logging
from collections.abc import Callable, Collection, Iterable, Mapping, MutableMapping
from typing import Any, Protocol

from kopf._core import attempts, causes, diffs, essences, finalizers, patches, progress, values
from kopf._core.attempts import Handling, ProgressStorage
from kopf._core.bodies import Body, RawEvent
from kopf._core.causes import Reason
from kopf._core.handlers import ChangingHandler, WatchingHandler
from kopf._core.kwargs import ChangingCause, Logger, WatchingCause
from kopf._core.outcomes import LogEntry, Outcome
from kopf._core.records import ObjectRecord, memo_of
from kopf._core.registries import OperatorRegistry
from kopf._core.resources import Resource


class DiffBaseStorage(Protocol):
    """What deciding needs of a diff-base storage (`kopf.DiffBaseStorage` has it)."""

    def build(self, *, body: Mapping[str, Any], extra_fields: Iterable[Any] | None = None) -> dict[str, Any]: ...
    def fetch(self, *, body: Mapping[str, Any]) -> Any: ...
    def store(self, *, body: Mapping[str, Any], patch: MutableMapping[str, Any], essence: dict[str, Any]) -> None: ...
    def writes_only_own_fields(self) -> bool: ...
    def unchanged(self, *, body: Mapping[str, Any], cleared: tuple[str, ...]) -> bool | None: ...


class Context(Protocol):
    """What deciding needs of the served resource (the reactor's `ResourceContext` has it)."""

    @property
    def registry(self) -> OperatorRegistry: ...
    @property
    def resource(self) -> Resource: ...
    @property
    def progress_storage(self) -> ProgressStorage: ...
    @property
    def diffbase_storage(self) -> DiffBaseStorage: ...
    @property
    def finalizer(self) -> str: ...
    @property
    def lifecycle(self) -> progress.Lifecycle: ...
    @property
    def indices(self) -> Mapping[str, Any]: ...
    @property
    def default_backoff(self) -> float: ...
    @property
    def cleared_prefixes(self) -> tuple[str, ...] | None: ...  # the progress storage's `cleared_prefixes()`
    @property
    def own_fields_only(self) -> bool: ...  # both storages' `writes_only_own_fields()`
    @property
    def annotated_diffbase(self) -> bool: ...  # the diff-base is read from the annotations only (the default)




class Skip(enum.Enum):
    """Why a cycle runs no change handlers."""

    GONE = 'gone'            # DELETED: optional delete handlers only (once)
    FREE = 'free'            # deleted without our finalizer: optional delete handlers only (once)
    STEALTH = 'stealth'      # no change handler could ever match: no logs, no state
    FINALIZER = 'finalizer'  # our finalizer is added first, in a cycle of its own
    NOOP = 'noop'            # nothing changed
    RELEASING = 'releasing'  # the deletion is handled: our finalizer goes once daemons and timers exited


@values.frozen
class Plan:
    """What one cycle of one object does, decided before anything is invoked."""

    body: Mapping[str, Any]
    event_type: str | None
    patch: patches.Patch                     # where handlers write; `settle()` adds the framework's part
    logger: Logger
    finalizer: str
    progress_storage: ProgressStorage
    diffbase_storage: DiffBaseStorage
    logs: tuple[LogEntry, ...] = ()          # to log before invoking
    watching: tuple[WatchingHandler, ...] = ()
    watching_cause: WatchingCause | None = None
    skip: Skip | None = None
    edit: finalizers.Edit = finalizers.Edit.KEEP
    cause: ChangingCause | None = None
    essence: Any = None                      # the body's essence now (the next diff-base)
    handling: Handling | None = None
    stale: progress.State | None = None      # NOOP: records of a cause that is gone, to purge
    unguarded: tuple[ChangingHandler, ...] = ()  # GONE/FREE: delete handlers to call, best-effort
    deletion: bool = False                   # GONE/FREE: this cycle handles the deletion (once)
    has_finalizer: bool = False
    deleting: bool = False
    busy: bool = False                       # daemons or timers of the object still run: they hold our finalizer


@values.frozen
class Outcomes:
    """What the reactor's invocations of a plan's handlers came to, by handler id."""

    watching: Mapping[str, Outcome] = dataclasses.field(default_factory=dict)
    changing: Mapping[str, Outcome] = dataclasses.field(default_factory=dict)


@values.frozen
class Settlement:
    """What a cycle leaves: one patch to send, a wake-up, log lines, and what the record remembers."""

    patch: patches.Patch
    wakeup: float | None = None              # seconds from now; None: no wake-up
    logs: tuple[LogEntry, ...] = ()
    handled: bool = False                    # a cause is fully handled: the object is no longer "initial"
    deletion_handled: bool = False           # the optional delete handlers have had their one run
    settled: Any = None                      # nothing left to do for the essence now handled (needs_recheck)


# -- deciding -----------------------------------------------------------------------------------------

def decide(ctx: Context, record: ObjectRecord, event: RawEvent, *, now: datetime.datetime, fresh: bool,
           logger: Logger, event_logger: Callable[[], Logger] | None = None,
           busy: bool = False, finished: Collection[str] = frozenset()) -> Plan:
    """The plan of one cycle for this event of this object (see the module's docstring for the order).

    `fresh`: a new event, not the re-run of one seen before (a wake-up): only then `on.event`
    handlers are called. `event_logger` makes the logger of `on.event` handlers (only if any exist).
    `busy`: its daemons or timers still run (they hold our finalizer); `finished`: the ids of those
    done for good (they hold it no more).
    The branches fill the fields of the one `Plan` built at the end (no plan is copied on the way).
    """
    body: Mapping[str, Any] = event['object']
    event_type = event.get('type')
    patch = patches.Patch(body=body)
    fields: dict[str, Any] = {}   # the plan's fields as the branches decide them
    registry = ctx.registry  # a property: read once per cycle
    if fresh and WatchingHandler in registry.kinds(ctx.resource):  # else no cause, logger and views for nobody
        watching_cause = _watching_cause(ctx, record, event, patch, logger, event_logger)
        fields.update(watching_cause=watching_cause, watching=tuple(registry.iter_watching_handlers(watching_cause)))
    if event_type == 'DELETED':
        cause, unguarded, deletion = _unguarded(ctx, record, body, patch, logger, None)
        fields.update(skip=Skip.GONE, logs=(_REALLY_DELETED,), cause=cause, unguarded=unguarded, deletion=deletion)
    else:
        _decide_live(fields, ctx, record, body, patch, logger, now=now, finished=finished)
        fields['busy'] = busy
    return Plan(body=body, event_type=event_type, patch=patch, logger=logger, finalizer=ctx.finalizer,
                progress_storage=ctx.progress_storage, diffbase_storage=ctx.diffbase_storage, **fields)


def _decide_live(fields: dict[str, Any], ctx: Context, record: ObjectRecord, body: Mapping[str, Any],
                 patch: patches.Patch, logger: Logger, *, now: datetime.datetime, finished: Collection[str]) -> None:
    """The plan's fields for an object that exists (maybe being deleted): its cause, its finalizer, its handlers."""
    registry, finalizer = ctx.registry, ctx.finalizer
    change, essence = detect(ctx, record, body, registry=registry, finalizer=finalizer)
    cause = make_cause(ctx, record, body, patch, logger, change)
    has, deleting = finalizers.state(body, finalizer)
    requires = registry.requires_finalizer(cause, excluding=finished)
    fields.update(cause=cause, essence=essence, has_finalizer=has, deleting=deleting)
    if not registry.prematch(cause):  # stealth: only our finalizer is edited (for daemons and timers)
        if deleting and has and requires:
            fields['skip'] = Skip.RELEASING  # once its daemons and timers have exited
        else:
            fields['skip'] = Skip.STEALTH
            if has and not requires:
                fields['edit'] = finalizers.Edit.REMOVE
            elif requires and not has and not deleting:
                fields['edit'] = finalizers.Edit.ADD  # no change handlers, but daemons or timers: their deletion waits
    elif change.reason == Reason.FREE:
        unguarded_cause, unguarded, deletion = _unguarded(ctx, record, body, patch, logger, cause)
        fields.update(skip=Skip.FREE, cause=unguarded_cause, unguarded=unguarded, deletion=deletion)
    elif change.reason == Reason.DELETE and record.deletion_handled:
        fields['skip'] = Skip.RELEASING  # the handlers are done: not again
    else:
        edit = finalizers.edit(has=has, requires=requires, deleting=deleting)
        _decide_handlers(fields, ctx, body, cause, change, logger, now=now, edit=edit)


def _decide_handlers(fields: dict[str, Any], ctx: Context, body: Mapping[str, Any], cause: ChangingCause,
                     change: causes.Change, logger: Logger, *, now: datetime.datetime, edit: finalizers.Edit) -> None:
    """The plan's fields for a cause with change handlers: our finalizer first, or nothing changed, or the due ones."""
    fields['edit'] = edit
    if edit is finalizers.Edit.ADD:
        fields.update(skip=Skip.FINALIZER, logs=(_ADDING,))
        return
    logs: tuple[LogEntry, ...] = (_REMOVING,) if edit is finalizers.Edit.REMOVE else ()
    registry = ctx.registry
    records = ctx.progress_storage.fetch_all(keys=registry.get_changing_ids(ctx.resource), body=body)
    if change.reason == Reason.NOOP:
        fields.update(skip=Skip.NOOP, stale=progress.State.from_records(records) or None, logs=logs)
        return
    found = tuple(registry.iter_changing_handlers(cause))
    handling = attempts.plan_handlers(records, found, purpose=cause.reason, lifecycle=ctx.lifecycle, now=now,
                             default_backoff=ctx.default_backoff)
    fields.update(handling=handling, logs=logs + _progress_logs(handling, cause, body, logger))


_REALLY_DELETED = LogEntry(logging.DEBUG, 'Deleted, really deleted, and we are notified.')
_ADDING = LogEntry(logging.DEBUG, 'Adding the finalizer, thus preventing the actual deletion.')
_REMOVING = LogEntry(logging.DEBUG, 'Removing the finalizer, as there are no handlers requiring it.')


def detect(ctx: Context, record: ObjectRecord, body: Mapping[str, Any], *, registry: OperatorRegistry,
           finalizer: str, initial: bool | None = None) -> tuple[causes.Change, Any]:
    """The cause (essence vs. the stored diff-base), and the essence now (given the context's registry, finalizer)."""
    extra = registry.get_extra_fields(ctx.resource)
    essence = ctx.progress_storage.clear_fresh(essence=ctx.diffbase_storage.build(body=body, extra_fields=extra))
    old = ctx.diffbase_storage.fetch(body=body)
    change = causes.detect(event_type=None, body=body, finalizer=finalizer, old=old, new=essence,
                           initial=bool(record.initial if initial is None else initial))
    return change, essence


def quiet_at_first_sight(ctx: Context, record: ObjectRecord, event: RawEvent, *, listed: bool = False) -> bool:
    """Whether this cycle would decide and settle to nothing but "handled": most objects after a restart.

    An object first seen in a listing (`record.initial`, or `listed`: a new record's listed event, asked before
    its first cycle), unchanged since it was handled (a resumption), not being deleted, with no handler's
    progress stored and our finalizer as required, of a resource
    where nothing else could be due (`OperatorRegistry.quiet_resumption`). For it, `decide()` and
    `settle()` would give no handler to call, no patch, no log line, no wake-up, and "handled": the
    reactor skips building the plan, the cause and the settlement (tests/core/test_plans_quiet.py holds the two
    ways side by side). The same storages' calls as `decide()`'s, so custom storages see the same questions.
    """
    if not (listed or record.initial) or event.get('type') == 'DELETED':
        return False
    registry = ctx.registry
    requires = registry.quiet_resumption(ctx.resource)
    if requires is None:
        return False
    body: Mapping[str, Any] = event['object']
    has, deleting = finalizers.state(body, ctx.finalizer)
    if deleting or has is not requires:
        return False
    unchanged = _unchanged(ctx, body, registry)
    if unchanged is None:  # not told without the essence: built and compared as `decide()` does
        change, _ = detect(ctx, record, body, registry=registry, finalizer=ctx.finalizer, initial=True)
        unchanged = change.reason is Reason.RESUME
    if not unchanged:
        return False
    return not ctx.progress_storage.fetch_all(keys=registry.get_changing_ids(ctx.resource), body=body)


def _unchanged(ctx: Context, body: Mapping[str, Any], registry: OperatorRegistry) -> bool | None:
    """Whether a live body's essence equals its stored diff-base, told without building the essence (None: not so).

    Only where the essence is the default one but for the storages' own annotations: no extra fields, the
    framework's storages (`cleared_prefixes()`, `unchanged()`); `detect()` builds it otherwise.
    """
    cleared = ctx.cleared_prefixes
    if cleared is None or registry.get_extra_fields(ctx.resource):
        return None
    return ctx.diffbase_storage.unchanged(body=body, cleared=cleared)


def make_cause(ctx: Context, record: ObjectRecord, body: Mapping[str, Any], patch: patches.Patch,
               logger: Logger, change: causes.Change) -> ChangingCause:
    return ChangingCause(logger=logger, memo=memo_of(record), indices=ctx.indices, resource=ctx.resource,
                         body=Body(body), patch=patch, reason=change.reason, initial=change.initial,
                         diff=change.diff, old=change.old, new=change.new)


def _watching_cause(ctx: Context, record: ObjectRecord, event: RawEvent, patch: patches.Patch, logger: Logger,
                    event_logger: Callable[[], Logger] | None) -> WatchingCause:
    """The cause of the `on.event` handlers of a fresh event (only where the resource has any)."""
    return WatchingCause(logger=event_logger() if event_logger is not None else logger, memo=memo_of(record),
                         indices=ctx.indices, resource=ctx.resource, body=Body(event['object']), patch=patch,
                         type=event.get('type'), event=event)


def _unguarded(ctx: Context, record: ObjectRecord, body: Mapping[str, Any], patch: patches.Patch, logger: Logger,
               cause: ChangingCause | None) -> tuple[ChangingCause | None, tuple[ChangingHandler, ...], bool]:
    """Delete handlers for an object deleted without our finalizer: best-effort, once.

    The cause, the handlers, and whether this cycle is the deletion's one run (not if it had it already).
    """
    if record.deletion_handled:
        return cause, (), False
    change = causes.Change(reason=Reason.DELETE, old=None, new=None, diff=diffs.Diff(), initial=bool(record.initial))
    cause = make_cause(ctx, record, body, patch, logger, change)
    return cause, tuple(ctx.registry.iter_changing_handlers(cause)), True


def _progress_logs(handling: Handling, cause: ChangingCause, body: Mapping[str, Any],
                   logger: Logger) -> tuple[LogEntry, ...]:
    title = causes.TITLES.get(cause.reason, str(cause.reason).capitalize())
    logs: list[LogEntry] = []
    state = handling.state
    if state.superseded is not None:
        old_title = causes.TITLES.get(state.superseded_purpose or '', str(state.superseded_purpose))
        c = state.superseded
        logs.append(LogEntry(logging.INFO, f'{old_title} is superseded by {title.lower()}: {c.success} succeeded; '
                                           f'{c.failure} failed; {c.running} left to the moment.'))
    if handling.handlers and logger.isEnabledFor(logging.DEBUG):  # the body's repr is costly: only if logged
        logs.append(LogEntry(logging.DEBUG, f'{title} is in progress: {dict(body)!r}'))
        if cause.diff and cause.old is not None and cause.new is not None:  # as upstream: not on creation
            logs.append(LogEntry(logging.DEBUG, f'{title} diff: {cause.diff!r}'))
    return tuple(logs)


# -- settling -----------------------------------------------------------------------------------------

def settle(plan: Plan, outcomes: Outcomes, *, now: datetime.datetime) -> Settlement:
    """The patch, the wake-up and the logs of a cycle whose handlers came to these outcomes."""
    patch = patches.copy(plan.patch)
    for handler in plan.watching:
        attempts.deliver(patch, handler.id, outcomes.watching.get(handler.id))
    if plan.skip is Skip.GONE or plan.skip is Skip.FREE:
        return Settlement(patch=patch, logs=(), deletion_handled=plan.deletion)
    if plan.edit is finalizers.Edit.ADD:
        patch.fns.append(finalizers.AppendFinalizer(plan.finalizer))
        return Settlement(patch=patch)
    if plan.edit is finalizers.Edit.REMOVE:
        patch.fns.append(finalizers.RemoveFinalizer(plan.finalizer))
    if plan.skip is Skip.STEALTH:
        return Settlement(patch=patch)
    if plan.skip is Skip.RELEASING:
        return Settlement(patch=patch, logs=_release(plan, patch), handled=True, deletion_handled=True)
    if plan.skip is Skip.NOOP or plan.handling is None or plan.cause is None:
        return _settle_noop(plan, patch)
    handling = plan.handling
    state, logs = attempts.merge_outcomes(handling, outcomes.changing, patch=patch, now=now, body=plan.body,
                                 storage=plan.progress_storage)
    if not state.done:
        state.store(body=plan.body, patch=patch, storage=plan.progress_storage)
        wakeup = state.delay(now=now)
        if wakeup:  # as upstream 1.45.2 words it (its sleep is our in-memory wake-up; a patch's echo comes first)
            seconds = round(wakeup, 6)
            logs.append(LogEntry(logging.DEBUG, f'Sleeping was skipped because of the patch, {seconds} seconds left.'
                                 if patch else f'Sleeping for {seconds} seconds for the delayed handlers.'))
        return Settlement(patch=patch, wakeup=wakeup, logs=tuple(logs))
    if handling.handlers:
        title = causes.TITLES.get(plan.cause.reason, str(plan.cause.reason).capitalize())
        c = state.counts
        logs.append(LogEntry(logging.INFO, f'{title} is processed: {c.success} succeeded; {c.failure} failed.'))
    attempts.purge(state, handling.handlers, body=plan.body, patch=patch, storage=plan.progress_storage)
    if plan.deleting:
        logs.extend(_release(plan, patch))
        return Settlement(patch=patch, logs=tuple(logs), handled=True, deletion_handled=True)
    if plan.essence != plan.cause.old:
        plan.diffbase_storage.store(body=plan.body, patch=patch, essence=plan.essence)
    settled = plan.essence if not patch.fns else None
    return Settlement(patch=patch, logs=tuple(logs), handled=True, settled=settled)


def _release(plan: Plan, patch: patches.Patch) -> tuple[LogEntry, ...]:
    """The deletion is handled: our finalizer goes, unless daemons or timers still hold it (they nudge later)."""
    if not plan.has_finalizer:
        return ()
    if plan.busy:
        return (LogEntry(logging.DEBUG, 'Waiting for the daemons and timers to exit before removing the finalizer.'),)
    patch.fns.append(finalizers.RemoveFinalizer(plan.finalizer))
    return (LogEntry(logging.DEBUG, 'Removing the finalizer, thus allowing the actual deletion.'),)


_NOT_INTERESTED = LogEntry(logging.DEBUG, 'Something has changed, but we are not interested (the essence is the same).')
_FINISHED = LogEntry(logging.DEBUG, 'Handling cycle is finished, waiting for new changes.')


def _settle_noop(plan: Plan, patch: patches.Patch) -> Settlement:
    """Nothing changed: purge the records of a cause that is gone (e.g. a reverted change)."""
    logs: tuple[LogEntry, ...] = (_NOT_INTERESTED, _FINISHED)
    if plan.stale:
        ids = ', '.join(sorted(plan.stale))
        logs += (LogEntry(logging.DEBUG, f'Purging the progress of a cause that is gone: {ids}.'),)
        attempts.purge(plan.stale, (), body=plan.body, patch=patch, storage=plan.progress_storage)
    return Settlement(patch=patch, logs=logs, settled=plan.essence if not patch.fns else None)


_UNDECIDING_TOP = frozenset({'metadata', 'status'})
_UNDECIDING_META = frozenset({'resourceVersion', 'managedFields', 'generation', 'annotations'})


def needs_recheck(ctx: Context, plan: Plan, settlement: Settlement, answer: Mapping[str, Any]) -> bool:
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
    settled = settlement.settled
    if settled is None:
        return True
    registry = ctx.registry  # a property: read once
    if not registry.is_unfiltered(ctx.resource) or registry.get_extra_fields(ctx.resource):
        return True
    if not ctx.own_fields_only:
        return True
    body = plan.body
    if _differs(body, answer, _UNDECIDING_TOP):
        return True
    old_meta: Mapping[str, Any] = body.get('metadata') or {}
    new_meta: Mapping[str, Any] = answer.get('metadata') or {}
    if _differs(old_meta, new_meta, _UNDECIDING_META):
        return True
    old_annotations: Mapping[str, Any] = old_meta.get('annotations') or {}
    new_annotations: Mapping[str, Any] = new_meta.get('annotations') or {}
    cause = plan.cause
    if old_annotations == new_annotations and cause is not None and ctx.annotated_diffbase:
        # Most answers (e.g. a handler's result in status). The answer's diff-base is the body's, as the cycle
        # fetched it (the storage reads only its annotation, under keys that depend only on the kind and the
        # owners, compared above): not parsed again.
        return bool(cause.old != settled)
    owned = essences.kopf_prefixes(old_annotations) | essences.kopf_prefixes(new_annotations)
    for key in old_annotations.keys() | new_annotations.keys():
        if old_annotations.get(key) != new_annotations.get(key) and not essences.is_kopf_key(key, owned):
            return True
    # the diff-base as the cycle left it:
    return bool(ctx.diffbase_storage.fetch(body=answer) != settled)


def _differs(old: Mapping[str, Any], new: Mapping[str, Any], skipped: frozenset[str]) -> bool:
    """Whether two mappings differ in a key not skipped (a missing key is as a None value)."""
    if old.keys() == new.keys():  # the usual answer: one walk, no set of their keys made
        for key, value in old.items():
            if key not in skipped and new[key] != value:
                return True
        return False
    for key in old.keys() | new.keys():
        if key not in skipped and old.get(key) != new.get(key):
            return True
    return False

