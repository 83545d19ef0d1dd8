"""Our finalizer: when to add or remove it, and the patch callables that do it. Pure, no I/O.

Rules (upstream's choreography, kept for switching frameworks on a live cluster):
- The finalizer is needed while a handler requires it (a non-optional delete handler; daemons and
  timers next) and the object is not being deleted.
- It is added in a cycle of its own, before any change handler runs: that cycle does nothing else.
- It is removed when nothing requires it any more (and the object is not being deleted), in the
  same cycle as the handling goes on; and, for a deleted object, once its deletion is handled.
- Both edits are JSON-patch callables (`patch.fns`), sent guarded by the resourceVersion; each one
  also knows its exact JSON-patch ops for the usual shapes, so no generic diff is needed.
"""
import enum
from collections.abc import Mapping
from typing import Any

MISSING = object()


class Edit(enum.Enum):
    """What a cycle does to our finalizer before its handlers run."""

    KEEP = 'keep'      # nothing to do with it now
    ADD = 'add'        # add it, and do nothing else in this cycle
    REMOVE = 'remove'  # nothing requires it any more: remove it, and go on


def present(body: Mapping[str, Any], finalizer: str) -> bool:
    return finalizer in ((body.get('metadata') or {}).get('finalizers') or ())


def deleting(body: Mapping[str, Any]) -> bool:
    return bool((body.get('metadata') or {}).get('deletionTimestamp'))


def state(body: Mapping[str, Any], finalizer: str) -> tuple[bool, bool]:
    """`(present, deleting)` of one body, its metadata read once (every cycle asks both)."""
    meta = body.get('metadata') or {}
    return finalizer in (meta.get('finalizers') or ()), bool(meta.get('deletionTimestamp'))


def let_go(body: Mapping[str, Any], finalizer: str) -> bool:
    """Whether the object is being deleted and our finalizer is off it: nothing of ours holds it."""
    meta = body.get('metadata') or {}
    return bool(meta.get('deletionTimestamp')) and finalizer not in (meta.get('finalizers') or ())


def edit(*, has: bool, requires: bool, deleting: bool) -> Edit:
    """The finalizer's edit before the handlers: add it first, or remove it when nothing needs it."""
    if deleting:
        return Edit.KEEP  # released only when the deletion is handled (see `release`)
    if requires and not has:
        return Edit.ADD
    if has and not requires:
        return Edit.REMOVE
    return Edit.KEEP


class AppendFinalizer:
    """Add the finalizer to `metadata.finalizers` (a patch callable that also knows its JSON-patch ops)."""

    def __init__(self, finalizer: str) -> None:
        self.finalizer = finalizer

    def __repr__(self) -> str:
        return f'AppendFinalizer({self.finalizer!r})'

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AppendFinalizer) and other.finalizer == self.finalizer

    def __hash__(self) -> int:
        return hash(('append', self.finalizer))

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


class RemoveFinalizer:
    """Remove the finalizer from `metadata.finalizers` (a patch callable that also knows its JSON-patch ops)."""

    def __init__(self, finalizer: str) -> None:
        self.finalizer = finalizer

    def __repr__(self) -> str:
        return f'RemoveFinalizer({self.finalizer!r})'

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RemoveFinalizer) and other.finalizer == self.finalizer

    def __hash__(self) -> int:
        return hash(('remove', self.finalizer))

    def __call__(self, body: dict[str, Any]) -> None:
        meta = body.get('metadata')
        if not isinstance(meta, dict) or 'finalizers' not in meta:
            return
        remaining = [f for f in meta['finalizers'] or () if f != self.finalizer]
        if remaining:
            meta['finalizers'] = remaining
        else:  # the whole list goes, as upstream 1.45.2 sends it: `remove /metadata/finalizers`
            del meta['finalizers']

    def json_ops(self, body: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        meta = body.get('metadata')
        current = meta.get('finalizers') if isinstance(meta, Mapping) else None
        if not isinstance(current, list) or current.count(self.finalizer) != 1:
            return None  # rare shapes: the generic diff decides
        if len(current) == 1:  # the last one: the list goes (upstream 1.45.2's wire format)
            return [{'op': 'remove', 'path': '/metadata/finalizers'}]
        if current[-1] == self.finalizer:
            return [{'op': 'remove', 'path': f'/metadata/finalizers/{len(current) - 1}'}]
        if len(current) == 2:  # [ours, other]: what the generic list diff makes of it
            return [{'op': 'remove', 'path': '/metadata/finalizers/0'}]
        return None
