"""Handlers: what a decorator registers — the user's function plus its options, frozen.

The progress state machine reads `.id`, `.timeout`, `.retries`, `.backoff`, `.errors`, `.fn`,
`.param` of every handler and, for change handlers, `.reason`, `.field`, `.initial`, `.deleted`,
`.requires_finalizer`. Handlers compare and hash by identity: one registration, one handler.
"""
import dataclasses
import enum
import warnings
from collections.abc import Callable, Collection
from typing import Any, ClassVar, Literal

from kopf._core import filters, selectors
from kopf._core.causes import Activity, Reason
from kopf._core.errors import ErrorsMode
from kopf._core.handlerids import HandlerId
from kopf._shared import fields

#: An admission operation, as in `operations=` of `@kopf.on.validate/mutate`.
Operation = Literal['CREATE', 'UPDATE', 'DELETE', 'CONNECT']
OPERATIONS: frozenset[str] = frozenset({'CREATE', 'UPDATE', 'DELETE', 'CONNECT'})


class WebhookType(enum.StrEnum):
    VALIDATING = 'validating'
    MUTATING = 'mutating'


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class BaseHandler:
    """The options every handler has: the function, its id, and how its errors are retried."""
    title: ClassVar[str] = 'Handler'  # for logs: "Handler 'id' succeeded."
    stores_result: ClassVar[bool] = False  # its return value goes to `status.<id>`: it must be JSON

    fn: Callable[..., Any]
    id: HandlerId
    param: Any = None
    errors: ErrorsMode = ErrorsMode.TEMPORARY
    timeout: float | None = None
    retries: int | None = None
    backoff: float | None = None  # None: the settings' default backoff

    def __str__(self) -> str:
        return f'{self.title} {self.id!r}'


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class ActivityHandler(BaseHandler):
    """An operator-level handler: startup, cleanup, login, probe (`@kopf.on.startup`, ...)."""
    title: ClassVar[str] = 'Activity'
    activity: Activity


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class ResourceHandler(BaseHandler):
    """A handler of a resource's objects, with the filters that decide which objects it gets."""
    selector: selectors.Selector | None  # None for sub-handlers: the parent's resource
    labels: filters.MetaFilter | None = None
    annotations: filters.MetaFilter | None = None
    when: filters.FilterFn | None = None
    field: fields.FieldPath | None = None
    value: filters.ValueFilter = None
    resource_class: type | None = None   # `@kopf.on.create(Database)`: its unannotated spec/status/body are typed


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class ChangingHandler(ResourceHandler):
    """A create/update/delete/resume/field handler: runs once per change, until it succeeds."""
    stores_result: ClassVar[bool] = True
    reason: Reason | None = None             # None: any cause (field handlers, resume handlers)
    initial: bool | None = None              # True: resume handlers (objects seen in the initial listing)
    deleted: bool | None = None              # resume handlers: also for objects being deleted
    field_needs_change: bool | None = None   # update/field handlers: the field must differ old→new
    old: filters.ValueFilter = None
    new: filters.ValueFilter = None
    requires_finalizer: bool = False         # non-optional delete handlers hold the object's finalizer


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class WatchingHandler(ResourceHandler):
    """An `@kopf.on.event` handler: called for every watch event, errors only logged."""
    stores_result: ClassVar[bool] = True
    errors: ErrorsMode = ErrorsMode.IGNORED


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class IndexingHandler(ResourceHandler):
    """An `@kopf.index` handler: its result per object is kept in an in-memory index."""
    title: ClassVar[str] = 'Indexer'
    errors: ErrorsMode = ErrorsMode.IGNORED


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class SpawningHandler(ResourceHandler):
    """A daemon or timer: runs in the background for the object's life (holds its finalizer)."""
    stores_result: ClassVar[bool] = True
    initial_delay: float | Callable[..., float] | None = None
    requires_finalizer: bool = dataclasses.field(default=True, init=False)


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class DaemonHandler(SpawningHandler):
    """An `@kopf.daemon`: one long-running task per object, cancelled when the object goes."""
    title: ClassVar[str] = 'Daemon'
    cancellation_backoff: float | None = None
    cancellation_timeout: float | None = None
    cancellation_polling: float | None = None


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class TimerHandler(SpawningHandler):
    """An `@kopf.timer`: called every `interval` seconds per object (if `idle`: once unchanged that long)."""
    title: ClassVar[str] = 'Timer'
    interval: float | None = None
    sharp: bool | None = None
    idle: float | None = None


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class WebhookHandler(ResourceHandler):
    """An `@kopf.on.validate` or `@kopf.on.mutate` handler, served by the admission webhook."""
    title: ClassVar[str] = 'Webhook'
    errors: ErrorsMode = ErrorsMode.PERMANENT
    type: WebhookType
    operations: Collection[str] | None = None  # None: all operations
    subresource: str | None = None             # None: the main body only; '*': all
    persistent: bool | None = None
    side_effects: bool | None = None
    ignore_failures: bool | None = None

    @property
    def operation(self) -> str | None:
        """Deprecated (since upstream 1.37): the single operation, if only one is set."""
        warnings.warn('handler.operation is deprecated; use handler.operations.', DeprecationWarning, stacklevel=2)
        return next(iter(self.operations)) if self.operations and len(self.operations) == 1 else None
