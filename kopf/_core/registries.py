"""The registry of handlers, and which of them apply to a resource and a cause (pure matching).

Matching order for resource handlers: the resource selector, then labels, annotations, the field
value, `old`/`new` (change handlers only), and `when` last. Within one selection, one function
under the same id is selected once, even if stacked under several decorators (e.g. create+resume).

What does not depend on the object (the handlers of a kind, those selecting a resource, whether
they have any filters) is computed once per resource and cached; `register()`, the only way to
change a registry, drops the cache. Where no handler of a resource has filters, the change handlers
of a cause are cached too (by resource, reason and `initial`): the reactor asks for them in every
cycle of every object.
"""
import contextvars
import dataclasses
from collections.abc import Awaitable, Callable, Collection, Iterable, Iterator, Mapping
from typing import Any, TypeVar

from kopf._core import filters
from kopf._core.causes import Activity, Reason
from kopf._core.handlers import (
    ActivityHandler,
    BaseHandler,
    ChangingHandler,
    DaemonHandler,
    IndexingHandler,
    ResourceHandler,
    SpawningHandler,
    TimerHandler,
    WatchingHandler,
    WebhookHandler,
    WebhookType,
)
from kopf._core.kwargs import (
    ChangingCause,
    IndexingCause,
    ResourceCause,
    SpawningCause,
    WatchingCause,
    WebhookCause,
    filter_kwargs,
)
from kopf._core.resources import Resource
from kopf._core.selectors import Selector
from kopf._shared import fields

_H = TypeVar('_H', bound=BaseHandler)
_V = TypeVar('_V')


class OperatorRegistry:
    """All handlers of one operator, by kind, in the order of registration."""

    def __init__(self) -> None:
        self._handlers: list[BaseHandler] = []
        self._cache: dict[Any, Any] = {}  # object-independent answers; dropped on every change

    def __repr__(self) -> str:
        return f'<{type(self).__name__} with {len(self._handlers)} handlers>'

    def register(self, handler: _H) -> _H:
        if not isinstance(handler, BaseHandler):
            raise TypeError(f'Only handlers can be registered, got {handler!r}.')
        self._handlers.append(handler)
        self._cache = {}  # a new dict: an answer computed meanwhile (e.g. in another thread) goes to the old one
        return handler

    # Listing, by kind.
    @property
    def handlers(self) -> tuple[BaseHandler, ...]:
        return tuple(self._handlers)

    def _of(self, cls: type[_H]) -> tuple[_H, ...]:
        key = ('of', cls)
        cache = self._cache
        cached: tuple[_H, ...] | None = cache.get(key)
        if cached is None:
            cached = cache[key] = tuple(handler for handler in self._handlers if isinstance(handler, cls))
        return cached

    def _selected(self, cls: type[_H], resource: Resource) -> tuple[tuple[_H, ...], bool]:
        """The handlers of a kind that select the resource, and whether none of them has filters."""
        # By identity (the resource is kept in the value, so its id is not reused): selectors also
        # look at fields that the resource's equality ignores (kind, singular, preferred, ...).
        key = ('selected', cls, id(resource))
        cache = self._cache
        cached: tuple[Resource, tuple[_H, ...], bool] | None = cache.get(key)
        if cached is None or cached[0] is not resource:
            selected = tuple(h for h in self._of(cls) if isinstance(h, ResourceHandler) and
                             (h.selector is None or h.selector.check(resource)))
            unfiltered = all(isinstance(h, ResourceHandler) and not _has_filters(h) for h in selected)
            cached = cache[key] = _bounded(cache, (resource, selected, unfiltered))
        return cached[1], cached[2]

    @property
    def activities(self) -> tuple[ActivityHandler, ...]:
        return self._of(ActivityHandler)

    @property
    def changing(self) -> tuple[ChangingHandler, ...]:
        return self._of(ChangingHandler)

    @property
    def watching(self) -> tuple[WatchingHandler, ...]:
        return self._of(WatchingHandler)

    @property
    def indexing(self) -> tuple[IndexingHandler, ...]:
        return self._of(IndexingHandler)

    @property
    def spawning(self) -> tuple[SpawningHandler, ...]:
        return self._of(SpawningHandler)

    @property
    def daemons(self) -> tuple[DaemonHandler, ...]:
        return self._of(DaemonHandler)

    @property
    def timers(self) -> tuple[TimerHandler, ...]:
        return self._of(TimerHandler)

    @property
    def webhooks(self) -> tuple[WebhookHandler, ...]:
        return self._of(WebhookHandler)

    @property
    def selectors(self) -> frozenset[Selector]:
        """Every resource selector used by the resource handlers (for discovery to resolve)."""
        return frozenset(h.selector for h in self._of(ResourceHandler) if h.selector is not None)

    def get_extra_fields(self, resource: Resource) -> frozenset[fields.FieldPath]:
        """The `field=` paths of changing/watching/spawning handlers: kept in the diff-base essence."""
        key = ('extra', id(resource))
        cache = self._cache
        cached: tuple[Resource, frozenset[fields.FieldPath]] | None = cache.get(key)
        if cached is None or cached[0] is not resource:
            kinds = (ChangingHandler, WatchingHandler, SpawningHandler)
            extra = frozenset(h.field for kind in kinds for h in self._selected(kind, resource)[0]
                              if isinstance(h, ResourceHandler) and h.field)
            cached = cache[key] = _bounded(cache, (resource, extra))
        return cached[1]

    def get_changing_ids(self, resource: Resource) -> tuple[str, ...]:
        """The ids of all top-level change handlers of the resource (whose records a cycle reads)."""
        key = ('changing ids', id(resource))
        cache = self._cache
        cached: tuple[Resource, tuple[str, ...]] | None = cache.get(key)
        if cached is None or cached[0] is not resource:
            ids = tuple(h.id for h in self._selected(ChangingHandler, resource)[0])
            cached = cache[key] = _bounded(cache, (resource, ids))
        return cached[1]

    def is_unfiltered(self, resource: Resource) -> bool:
        """Whether no handler of the resource has filters: the object's content never decides which apply."""
        return self._selected(ResourceHandler, resource)[1]

    def select(self, kind: type[_H], resource: Resource) -> tuple[_H, ...]:
        """The handlers of a kind whose selector selects the resource (filters not applied)."""
        return self._selected(kind, resource)[0]

    def has_handlers(self, resource: Resource, kind: type[ResourceHandler] = ResourceHandler) -> bool:
        return kind in self.kinds(resource)

    def kinds(self, resource: Resource) -> frozenset[type[BaseHandler]]:
        """The kinds of the handlers selecting the resource, base kinds included (`has_handlers` as a set).

        The reactor reads it once per cycle, not `has_handlers` once per kind.
        """
        key = ('kinds', id(resource))
        cache = self._cache
        cached: tuple[Resource, frozenset[type[BaseHandler]]] | None = cache.get(key)
        if cached is None or cached[0] is not resource:
            found = frozenset(cls for h in self._selected(ResourceHandler, resource)[0] for cls in type(h).__mro__
                              if isinstance(cls, type) and issubclass(cls, ResourceHandler))
            cached = cache[key] = _bounded(cache, (resource, found))
        return cached[1]

    # Matching.
    def iter_activity_handlers(self, activity: Activity) -> Iterator[ActivityHandler]:
        yield from _dedup(h for h in self.activities if h.activity == activity)

    def iter_watching_handlers(self, cause: WatchingCause) -> Iterator[WatchingHandler]:
        yield from self._iter_matching(WatchingHandler, cause)

    def iter_indexing_handlers(self, cause: IndexingCause) -> Iterator[IndexingHandler]:
        yield from self._iter_matching(IndexingHandler, cause)

    def iter_spawning_handlers(self, cause: SpawningCause) -> Iterator[SpawningHandler]:
        yield from self._iter_matching(SpawningHandler, cause)

    def iter_changing_handlers(self, cause: ChangingCause) -> Iterator[ChangingHandler]:
        """The change handlers due for this cause (resume handlers mixed in where they apply)."""
        cache = self._cache  # before anything is computed from the handlers
        selected, unfiltered = self._selected(ChangingHandler, cause.resource)
        if unfiltered:  # no filters, no fields: only the reason and `initial` decide
            key = ('changing', id(cause.resource), cause.reason, bool(cause.initial))
            cached: tuple[Resource, tuple[ChangingHandler, ...]] | None = cache.get(key)
            if cached is None or cached[0] is not cause.resource:
                found = tuple(_dedup(h for h in selected if _match_reason(h, cause)))
                cached = cache[key] = _bounded(cache, (cause.resource, found))
            yield from cached[1]
            return
        kwargs = _LazyKwargs(cause)
        yield from _dedup(
            handler for handler in self._iter_matching(ChangingHandler, cause, dedup=False)
            if _match_reason(handler, cause) and _match_change(handler, cause, kwargs)
        )

    def iter_subhandlers(self, cause: ChangingCause) -> Iterator[ChangingHandler]:
        """Sub-handlers run under their parent's cause: only filters and field changes decide."""
        kwargs = _LazyKwargs(cause)
        yield from _dedup(
            handler for handler in self._iter_matching(ChangingHandler, cause, dedup=False)
            if _match_change(handler, cause, kwargs)
        )

    def prematch(self, cause: ChangingCause) -> bool:
        """Whether any change handler could apply to the object ever (else: stealth mode).

        Checks the selector, labels, annotations, field value and `when` — not the reason, not old/new.
        """
        selected, unfiltered = self._selected(ChangingHandler, cause.resource)
        if unfiltered:
            return bool(selected)
        return any(True for _ in self._iter_matching(ChangingHandler, cause, dedup=False))

    def requires_finalizer(self, cause: ResourceCause, *, excluding: Collection[str] = ()) -> bool:
        """Whether a non-optional delete handler, a daemon, or a timer pre-matches the object.

        `excluding`: ids of daemons and timers that are done for good with this object (they hold nothing).
        """
        cache = self._cache  # before anything is computed from the handlers
        selected, unfiltered = self._selected(ResourceHandler, cause.resource)
        if unfiltered:  # the object never decides: the ids of those requiring it, once per resource
            requiring = self._requiring(cache, cause.resource, selected)
            return any(id_ not in excluding for id_ in requiring) if excluding else bool(requiring)
        handlers_ = self._iter_matching(ResourceHandler, cause, dedup=False)
        if not excluding:
            return any(getattr(handler, 'requires_finalizer', False) for handler in handlers_)
        return any(getattr(handler, 'requires_finalizer', False) and handler.id not in excluding
                   for handler in handlers_)

    def quiet_resumption(self, resource: Resource) -> bool | None:
        """Whether an unchanged object first seen in a listing would need our finalizer, if that is all it could need.

        None unless the resource's handlers are all unfiltered (the object's content never decides which
        apply), there are change handlers (else the stealth mode decides), no `on.event` handlers, daemons
        or timers (they see every body), and no change handler matches a resumption (no `on.resume`, no
        field handler). Then the only per-object questions left are the reactor's: unchanged, not being
        deleted, nothing in progress, our finalizer as required (`kopf._core.plans.quiet_at_first_sight`).
        """
        key = ('quiet', id(resource))
        cache = self._cache
        cached: tuple[Resource, bool | None] | None = cache.get(key)
        if cached is None or cached[0] is not resource:
            kinds = self.kinds(resource)
            changing = self._selected(ChangingHandler, resource)[0]
            quiet = (self.is_unfiltered(resource) and bool(changing) and WatchingHandler not in kinds and
                     SpawningHandler not in kinds and not any(_match_reason(h, _FIRST_SIGHT) for h in changing))
            requires = bool(self._requiring(cache, resource, self._selected(ResourceHandler, resource)[0]))
            cached = cache[key] = _bounded(cache, (resource, requires if quiet else None))
        return cached[1]

    @staticmethod
    def _requiring(cache: dict[Any, Any], resource: Resource, selected: tuple[ResourceHandler, ...]) -> tuple[str, ...]:
        key = ('requiring', id(resource))
        cached: tuple[Resource, tuple[str, ...]] | None = cache.get(key)
        if cached is None or cached[0] is not resource:
            ids = tuple(h.id for h in selected if getattr(h, 'requires_finalizer', False))
            cached = cache[key] = _bounded(cache, (resource, ids))
        return cached[1]

    def iter_webhook_handlers(
            self,
            cause: WebhookCause,
            *,
            id: str | None = None,
            type: WebhookType | None = None,
    ) -> Iterator[WebhookHandler]:
        """The admission handlers for a review: by the hinted id (URL path), type, subresource, operation."""
        for handler in self._iter_matching(WebhookHandler, cause):
            if id is not None and handler.id != id:
                continue
            if type is not None and handler.type != type:
                continue
            if handler.subresource != '*' and handler.subresource != cause.subresource:
                continue
            if handler.operations is not None and cause.operation not in handler.operations:
                continue
            if (handler.type == WebhookType.MUTATING and cause.operation == 'DELETE' and
                    set(handler.operations or ()) != {'DELETE'}):
                continue
            yield handler

    def _iter_matching(self, cls: type[_H], cause: ResourceCause, *, dedup: bool = True) -> Iterator[_H]:
        kwargs: dict[str, Any] | None = None  # built lazily: most handlers have no callable filters
        selected, unfiltered = self._selected(cls, cause.resource)
        if unfiltered:
            yield from (_dedup(selected) if dedup else selected)
            return
        matched = []
        for handler in selected:
            assert isinstance(handler, ResourceHandler)
            if kwargs is None and _has_callables(handler):
                kwargs = filter_kwargs(cause)
            if _match_filters(handler, cause, kwargs or {}):
                matched.append(handler)
        yield from (_dedup(matched) if dedup else matched)


class _Resumption:
    """What `_match_reason` reads of a cause: an unchanged object first seen in a listing."""
    reason = Reason.RESUME
    initial = True


_FIRST_SIGHT: Any = _Resumption()

_CACHE_LIMIT = 1024  # answers by resource: a few resources per operator, but callers may pass new ones


def _bounded(cache: dict[Any, Any], value: _V) -> _V:
    """The value to cache; the cache is emptied first if it has grown too big (e.g. many resource objects)."""
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    return value


class _LazyKwargs(Mapping[str, Any]):
    """The filter kwargs of a cause, built at the first look (most handlers have no callable filters)."""

    def __init__(self, cause: ResourceCause) -> None:
        self._cause = cause
        self._kwargs: dict[str, Any] | None = None

    def _get(self) -> dict[str, Any]:
        if self._kwargs is None:
            self._kwargs = filter_kwargs(self._cause)
        return self._kwargs

    def __getitem__(self, key: str) -> Any:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())


def _has_filters(handler: ResourceHandler) -> bool:
    """Any filter that needs the object (or its change) to decide: labels, annotations, field, when, old/new."""
    if not _unfiltered(handler) or handler.value is not None:
        return True
    return isinstance(handler, ChangingHandler) and (handler.old is not None or handler.new is not None)


def _has_callables(handler: ResourceHandler) -> bool:
    if _unfiltered(handler) and handler.value is None and (
            not isinstance(handler, ChangingHandler) or (handler.old is None and handler.new is None)):
        return False
    values = [handler.when, handler.value, *(handler.labels or {}).values(), *(handler.annotations or {}).values()]
    if isinstance(handler, ChangingHandler):
        values += [handler.old, handler.new]
    return any(callable(value) for value in values)


def _unfiltered(handler: ResourceHandler) -> bool:
    """No labels/annotations/field/when filters at all: the common case, decided without the body."""
    return not handler.labels and not handler.annotations and handler.field is None and handler.when is None


def _match_filters(handler: ResourceHandler, cause: ResourceCause, kwargs: Mapping[str, Any]) -> bool:
    if _unfiltered(handler):
        return True
    meta = cause.body.metadata
    if isinstance(cause, ChangingCause):  # new, then old; the body if the reactor gave neither
        objs = [obj for obj in (cause.new, cause.old) if obj is not None] or [cause.body]
    else:
        objs = [cause.body]
    return (
        filters.match_metadata(handler.labels, meta.labels, kwargs) and
        filters.match_metadata(handler.annotations, meta.annotations, kwargs) and
        filters.match_field_value(handler.field, handler.value, objs, kwargs) and
        filters.match_when(handler.when, kwargs)
    )


def _match_reason(handler: ChangingHandler, cause: ChangingCause) -> bool:
    if handler.initial:  # resume handlers: objects from the initial listing; never mixed into a creation
        if not cause.initial or cause.reason == Reason.CREATE:
            return False
        if cause.reason == Reason.DELETE and not handler.deleted:
            return False
        return handler.reason is None or handler.reason == cause.reason
    if handler.reason is None:  # field handlers: any cause where the field has changed
        return cause.reason in (Reason.CREATE, Reason.UPDATE, Reason.DELETE, Reason.RESUME)
    return handler.reason == cause.reason


def _match_change(handler: ChangingHandler, cause: ChangingCause, kwargs: Mapping[str, Any]) -> bool:
    if handler.field is None:
        return True
    if handler.field_needs_change and not filters.field_changed(handler.field, cause.old, cause.new):
        return False
    return filters.match_old_new(handler.field, handler.old, handler.new, cause.old, cause.new, kwargs)


def _dedup(handlers: Iterable[_H]) -> Iterator[_H]:
    """One function under one id is selected once (e.g. stacked under `on.create` and `on.resume`)."""
    seen: set[tuple[Callable[..., Any], str]] = set()
    for handler in handlers:
        key = (handler.fn, handler.id)
        if key not in seen:
            seen.add(key)
            yield handler


_default_registry: OperatorRegistry = OperatorRegistry()


def get_default_registry() -> OperatorRegistry:
    """The registry used by the decorators without `registry=` and by `kopf.run()` without `registry=`."""
    return _default_registry


def set_default_registry(registry: OperatorRegistry) -> None:
    """Replace the registry that the decorators and `kopf.run()` use when they are given none."""
    global _default_registry
    _default_registry = registry


@dataclasses.dataclass
class SubhandlingContext:
    """What `kopf.subhandler`, `kopf.register` and `kopf.execute` see inside a change handler."""

    parent: ChangingHandler
    cause: ChangingCause
    registry: OperatorRegistry = dataclasses.field(default_factory=OperatorRegistry)
    # Set by the reactor: runs the sub-handlers with progress tracking (for `await kopf.execute()`);
    # raises `HandlerChildrenRetry` while any of them is unfinished.
    runner: Callable[['SubhandlingContext'], Awaitable[None]] | None = None
    lifecycle: Any = None   # `kopf.execute(lifecycle=...)`: how to pick the sub-handlers (None: the default)
    executed: bool = False  # `kopf.execute()` was called: the sub-handlers are not run again implicitly
    settled: Any = None     # what they came to (`kopf._core.attempts.Children`), for the parent's outcome


@dataclasses.dataclass(slots=True, eq=False)
class Execution:
    """The one execution context of the handler being invoked now (any kind), set by the reactor around its call.

    `owner`: the default owner of `kopf.adopt()` & co., the body of the resource handler being invoked
    (None for activities, or when nothing set it). `subhandling`: what `kopf.subhandler`, `kopf.register`
    and `kopf.execute` see, for change handlers only. Outside of handlers, `execution` holds None.
    """
    handler: BaseHandler | None
    owner: Mapping[str, Any] | None = None
    subhandling: SubhandlingContext | None = None


execution: contextvars.ContextVar[Execution | None] = contextvars.ContextVar('kopf_execution', default=None)


def subhandling_context(name: str, error: type[Exception] = TypeError) -> SubhandlingContext:
    """The running change handler's sub-handling context, for `name` (e.g. 'kopf.subhandler').

    `error` inside a handler of another kind; a LookupError outside of handlers.
    """
    current = execution.get()
    if current is not None and current.subhandling is not None:
        return current.subhandling
    if current is not None and current.handler is not None:
        raise error(f'{name}() works only inside change handlers '
                    f'(create/update/delete/resume/field); {current.handler} is not one.')
    raise LookupError(f'{name}() works only inside a running change handler.')
