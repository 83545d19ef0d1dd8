"""Causes: why handlers are called for an object now (create, update, delete, resume, ...)."""
import enum
from collections.abc import Mapping
from typing import Any

from kopf._core import diffs, values


class Reason(enum.StrEnum):
    """The cause of a handling cycle; `str(x)` gives the bare value, e.g. `create`."""

    CREATE = 'create'
    UPDATE = 'update'
    DELETE = 'delete'
    RESUME = 'resume'
    NOOP = 'noop'
    FREE = 'free'
    GONE = 'gone'


class Activity(enum.StrEnum):
    """Operator-level activities: not about any object."""

    STARTUP = 'startup'
    CLEANUP = 'cleanup'
    AUTHENTICATION = 'authentication'
    PROBE = 'probe'


# The titles of causes in the cause-level logs: "Creation is processed: 1 succeeded; 0 failed."
TITLES: dict[str, str] = {
    Reason.CREATE: 'Creation',
    Reason.UPDATE: 'Updating',
    Reason.DELETE: 'Deletion',
    Reason.RESUME: 'Resuming',
}


# Cause detection: the first matching row wins.
#
# | # | condition                                                  | reason  |
# |---|------------------------------------------------------------|---------|
# | 1 | the event type is DELETED                                  | gone    |
# | 2 | deletionTimestamp is set, our finalizer is absent          | free    |
# | 3 | deletionTimestamp is set, our finalizer is present         | delete  |
# | 4 | no stored diff-base                                        | create  |
# | 5 | the essence is unchanged and the object is `initial`       | resume  |
# | 6 | the essence is unchanged                                   | noop    |
# | 7 | otherwise                                                  | update  |
#
# "Initial" = first seen in a listing and no cause fully handled for it yet in this process.
# Resume handlers are mixed into update (and into delete with `deleted=True`) by the caller when
# `initial` is true; never into create.


@values.frozen
class Change:
    """What happened to an object: the reason, the old/new essences and their diff."""

    reason: Reason
    old: Any
    new: Any
    diff: diffs.Diff
    initial: bool = False

    @property
    def deleting(self) -> bool:
        return self.reason in (Reason.DELETE, Reason.FREE, Reason.GONE)


def detect(
        *,
        event_type: str | None,
        body: Mapping[str, Any],
        finalizer: str,
        old: Any,
        new: Any,
        initial: bool = False,
) -> Change:
    """Detect the cause of a handling cycle from the raw event type, the body and the essences.

    `old` is the stored diff-base (None if there is none); `new` is the current essence.
    """
    metadata = body.get('metadata') or {}
    d = diffs.diff(old, new)
    if event_type == 'DELETED':
        reason = Reason.GONE
    elif metadata.get('deletionTimestamp'):
        reason = Reason.DELETE if finalizer in (metadata.get('finalizers') or ()) else Reason.FREE
    elif old is None:
        reason = Reason.CREATE
    elif not d:
        reason = Reason.RESUME if initial else Reason.NOOP
    else:
        reason = Reason.UPDATE
    return Change(reason=reason, old=old, new=new, diff=d, initial=initial)
