"""Causes: why handlers are called for an object now (create, update, delete, resume, ...)."""
import enum


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
