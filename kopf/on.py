"""The decorators: `@kopf.on.create(...)` and friends register the user's function, unchanged.

Every option is defined once, in the TypedDicts below, and combined per decorator; one builder
(`_Registrar`) validates them at decoration time and turns them into a handler (kopf._core.handlers).
The decorators return the function as it is, so they can be stacked and called directly.

    import kopf

    @kopf.on.create('kopfexamples')
    def create_fn(spec, **_):
        return {'message': 'hello world'}
"""
import sys
import warnings
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, TypedDict, TypeVar, Unpack

from kopf._core import filters, handlerids, handlers, registries, selectors
from kopf._core.causes import Activity, Reason
from kopf._core.errors import ErrorsMode
from kopf._core.registries import OperatorRegistry
from kopf._shared import fields
from kopf._typed import declaring

F = TypeVar('F', bound=Callable[..., Any])
SelectorArg = str | selectors.Marker | Callable[..., bool] | type | None

__all__ = [
    'startup', 'cleanup', 'login', 'probe',
    'resume', 'create', 'update', 'delete', 'field', 'event', 'index', 'daemon', 'timer',
    'validate', 'mutate', 'subhandler', 'register', 'this',
]


# --- The options, each defined once. ---
class _Identity(TypedDict, total=False):
    id: str | None
    param: Any


class _Retrying(TypedDict, total=False):
    errors: ErrorsMode | None
    timeout: float | None
    retries: int | None
    backoff: float | None
    cooldown: float | None  # the old name of `backoff` (upstream 0.24-1.28)


class _Behaviour(_Identity, _Retrying, total=False):
    pass


class _Registering(TypedDict, total=False):
    registry: OperatorRegistry | None


class _Selecting(TypedDict, total=False):
    group: str | None
    version: str | None
    kind: str | None
    plural: str | None
    singular: str | None
    shortcut: str | None
    category: str | None


class _MetaFilters(TypedDict, total=False):
    labels: filters.MetaFilter | None
    annotations: filters.MetaFilter | None
    when: filters.FilterFn | None


class _Value(TypedDict, total=False):
    value: filters.ValueFilter


class _FieldFilters(_Value, total=False):
    field: fields.FieldSpec | None


class _OldNew(TypedDict, total=False):
    old: filters.ValueFilter
    new: filters.ValueFilter


class _Resourced(_Registering, _Selecting, _MetaFilters, _FieldFilters, total=False):
    pass


# --- The options of each decorator, combined. ---
class ActivityOptions(_Behaviour, _Registering, total=False):
    pass


class ResourceOptions(_Behaviour, _Resourced, total=False):
    pass


class ResumeOptions(ResourceOptions, total=False):
    deleted: bool | None


class DeleteOptions(ResourceOptions, total=False):
    optional: bool | None


class UpdateOptions(ResourceOptions, _OldNew, total=False):
    pass


class FieldOptions(_Behaviour, _Registering, _Selecting, _MetaFilters, _Value, _OldNew, total=False):
    pass  # `field` itself is a required keyword of `kopf.on.field`


class _FieldDecoratorOptions(FieldOptions, total=False):
    field: fields.FieldSpec | None  # internal: kopf.on.field's own keyword, validated with the rest


class EventOptions(_Identity, _Resourced, total=False):
    pass


class DaemonOptions(ResourceOptions, total=False):
    initial_delay: float | Callable[..., float] | None
    cancellation_backoff: float | None
    cancellation_timeout: float | None
    cancellation_polling: float | None


class TimerOptions(ResourceOptions, total=False):
    interval: float | None
    initial_delay: float | Callable[..., float] | None
    sharp: bool | None
    idle: float | None


class WebhookOptions(_Identity, _Resourced, total=False):
    operation: str | None  # deprecated since upstream 1.37: use `operations`
    operations: Collection[str] | None
    subresource: str | None
    persistent: bool | None
    side_effects: bool | None
    ignore_failures: bool | None


class SubhandlerOptions(_Behaviour, _MetaFilters, _FieldFilters, _OldNew, total=False):
    pass


class RegisterOptions(_Behaviour, _MetaFilters, total=False):
    pass


_SELECTOR_KEYS = frozenset(_Selecting.__optional_keys__)


class _Registrar:
    """Validates one decorator call's options and registers handlers of one kind with them."""

    def __init__(
            self,
            decorator: str,
            allowed: type,
            options: dict[str, Any],
            *,
            default_errors: ErrorsMode = ErrorsMode.TEMPORARY,
            selector_args: tuple[SelectorArg, ...] | None = None,
            registry: OperatorRegistry | None = None,
    ) -> None:
        self.known: frozenset[str] = allowed.__optional_keys__ | allowed.__required_keys__  # type: ignore[attr-defined]
        unknown = sorted(set(options) - self.known)
        if unknown:
            raise TypeError(f'{decorator}() got unexpected keyword arguments: {", ".join(unknown)}.')
        self.decorator = decorator
        self.options = options
        self.registry = registry or options.get('registry') or registries.get_default_registry()
        self.resource_class = None if selector_args is None else declaring.resource_of(selector_args)
        if selector_args is not None and self.resource_class is not None:   # exactly its group, version, plural
            selector_args = self._resource_selector(self.resource_class, selector_args)
        self.selector = (
            None if selector_args is None else
            selectors.parse_selector(*selector_args, **{k: v for k, v in options.items() if k in _SELECTOR_KEYS})
        )
        self.common = self._behaviour(default_errors) | self._filters()
        if self.resource_class is not None:
            self.common['resource_class'] = self.resource_class

    def _resource_selector(self, cls: type, args: tuple[SelectorArg, ...]) -> tuple[SelectorArg, ...]:
        declaration = declaring.declaration_of(cls)
        assert declaration is not None   # found by it
        given = sorted(key for key in _SELECTOR_KEYS if self.options.get(key) is not None)
        if any(arg is not None for arg in args[1:]) or given:
            raise TypeError(f'{self.decorator}(): a resource class ({cls.__name__}) names the resource; '
                            f'give no other selector ({", ".join(given) or "positional arguments"}).')
        return declaration.group, declaration.version, declaration.plural

    def _behaviour(self, default_errors: ErrorsMode) -> dict[str, Any]:
        opts = self.options
        backoff = opts.get('backoff')
        if opts.get('cooldown') is not None:
            if backoff is not None:
                raise TypeError(f'{self.decorator}(): use either backoff= or cooldown= (its old name), not both.')
            _deprecated('cooldown= is deprecated; use backoff=.')
            backoff = opts['cooldown']
        explicit_id = opts.get('id')
        if explicit_id is not None and (not isinstance(explicit_id, str) or not explicit_id):
            raise TypeError(f'{self.decorator}(): id= must be a non-empty string, got {explicit_id!r}.')
        errors = opts.get('errors')
        if errors is not None and not isinstance(errors, ErrorsMode):
            raise TypeError(f'{self.decorator}(): errors= must be a kopf.ErrorsMode, got {errors!r}.')
        for name in ('timeout', 'retries', 'backoff', 'cooldown'):
            number = opts.get(name)
            if number is not None and (not isinstance(number, int | float) or number < 0):
                raise TypeError(f'{self.decorator}(): {name}= must be a non-negative number, got {number!r}.')
        return dict(
            param=opts.get('param'),
            errors=errors if errors is not None else default_errors,
            timeout=opts.get('timeout'),
            retries=opts.get('retries'),
            backoff=backoff,
        )

    def _filters(self) -> dict[str, Any]:
        opts = self.options
        field = fields.parse_field(opts['field']) or None if opts.get('field') is not None else None
        has_value = opts.get('value') is not None
        has_old_new = opts.get('old') is not None or opts.get('new') is not None
        if (has_value or has_old_new) and not field:
            raise TypeError(f'{self.decorator}(): value=, old= and new= filters require field=.')
        if has_value and has_old_new:
            raise TypeError(f'{self.decorator}(): value= cannot be combined with old= or new=; use one or the other.')
        when = opts.get('when')
        if when is not None and not callable(when):
            raise TypeError(f'{self.decorator}(): when= must be a callable, got {when!r}.')
        result: dict[str, Any] = dict(
            labels=filters.check_metadata_filter('labels', opts.get('labels')),
            annotations=filters.check_metadata_filter('annotations', opts.get('annotations')),
            when=when,
            field=field,
            value=opts.get('value'),
        )
        result.update(old=opts.get('old'), new=opts.get('new'))
        return {key: value for key, value in result.items() if key in self.known}

    def __call__(
            self,
            cls: type[handlers.BaseHandler],
            *,
            field_in_id: bool = True,
            parent_id: str | None = None,
            **fixed: Any,
    ) -> Callable[[F], F]:
        common = dict(self.common)
        if self.selector is not None:
            common['selector'] = self.selector
        field = common.get('field') if field_in_id else None
        explicit_id = self.options.get('id')

        def decorator(fn: F) -> F:
            if not callable(fn):
                raise TypeError(f'{self.decorator}() must decorate a callable, got {fn!r}.')
            handler_id = handlerids.form_id(fn, id=explicit_id, field=field, parent_id=parent_id)
            self.registry.register(cls(fn=fn, id=handler_id, **common, **fixed))
            return fn
        return decorator


# --- Activities: operator-level, not about any object. ---
def _activity(decorator: str, activity: Activity, options: dict[str, Any]) -> Callable[[F], F]:
    return _Registrar(decorator, ActivityOptions, options)(handlers.ActivityHandler, activity=activity)


def startup(**options: Unpack[ActivityOptions]) -> Callable[[F], F]:
    """Run before the operator starts watching; retried until it succeeds (a final failure stops the operator)."""
    return _activity('kopf.on.startup', Activity.STARTUP, dict(options))


def cleanup(**options: Unpack[ActivityOptions]) -> Callable[[F], F]:
    """Run when the operator exits, after everything else has stopped."""
    return _activity('kopf.on.cleanup', Activity.CLEANUP, dict(options))


def login(**options: Unpack[ActivityOptions]) -> Callable[[F], F]:
    """Authenticate: return the connection info (credentials) for the API client."""
    return _activity('kopf.on.login', Activity.AUTHENTICATION, dict(options))


def probe(**options: Unpack[ActivityOptions]) -> Callable[[F], F]:
    """Contribute a value to the liveness endpoint's JSON (under the handler id)."""
    return _activity('kopf.on.probe', Activity.PROBE, dict(options))


# --- Change handlers: called when an object is created, updated, deleted, resumed. ---
def resume(arg1: SelectorArg = None, arg2: SelectorArg = None, arg3: SelectorArg = None, /,
           **options: Unpack[ResumeOptions]) -> Callable[[F], F]:
    """Run for objects that exist when the operator starts (once per operator process)."""
    registrar = _Registrar('kopf.on.resume', ResumeOptions, dict(options), selector_args=(arg1, arg2, arg3))
    return registrar(handlers.ChangingHandler, reason=None, initial=True, deleted=options.get('deleted'))


def create(arg1: SelectorArg = None, arg2: SelectorArg = None, arg3: SelectorArg = None, /,
           **options: Unpack[ResourceOptions]) -> Callable[[F], F]:
    """Run when an object is created (seen with no diff-base stored yet)."""
    registrar = _Registrar('kopf.on.create', ResourceOptions, dict(options), selector_args=(arg1, arg2, arg3))
    return registrar(handlers.ChangingHandler, reason=Reason.CREATE)


def update(arg1: SelectorArg = None, arg2: SelectorArg = None, arg3: SelectorArg = None, /,
           **options: Unpack[UpdateOptions]) -> Callable[[F], F]:
    """Run when an object's essence changes (with `field=`: only when that field changes)."""
    registrar = _Registrar('kopf.on.update', UpdateOptions, dict(options), selector_args=(arg1, arg2, arg3))
    return registrar(handlers.ChangingHandler, reason=Reason.UPDATE, field_needs_change=True)


def delete(arg1: SelectorArg = None, arg2: SelectorArg = None, arg3: SelectorArg = None, /,
           **options: Unpack[DeleteOptions]) -> Callable[[F], F]:
    """Run when an object is being deleted; holds a finalizer on the object unless `optional=True`."""
    registrar = _Registrar('kopf.on.delete', DeleteOptions, dict(options), selector_args=(arg1, arg2, arg3))
    return registrar(handlers.ChangingHandler, reason=Reason.DELETE, requires_finalizer=not options.get('optional'))


def field(arg1: SelectorArg = None, arg2: SelectorArg = None, arg3: SelectorArg = None, /,
          *, field: fields.FieldSpec, **options: Unpack[FieldOptions]) -> Callable[[F], F]:
    """Run when a field changes (also when it appears on creation): `old`/`new`/`diff` are the field's."""
    if field is None or field == '' or field == ():
        raise TypeError('kopf.on.field() requires a non-empty field=.')
    all_options: dict[str, Any] = dict(options, field=field)
    registrar = _Registrar('kopf.on.field', _FieldDecoratorOptions, all_options, selector_args=(arg1, arg2, arg3))
    return registrar(handlers.ChangingHandler, reason=None, field_needs_change=True)


# --- Other resource handlers. ---
def event(arg1: SelectorArg = None, arg2: SelectorArg = None, arg3: SelectorArg = None, /,
          **options: Unpack[EventOptions]) -> Callable[[F], F]:
    """Run on every watch event of matching objects; errors are logged and ignored."""
    registrar = _Registrar('kopf.on.event', EventOptions, dict(options), default_errors=ErrorsMode.IGNORED,
                           selector_args=(arg1, arg2, arg3))
    return registrar(handlers.WatchingHandler)


def index(arg1: SelectorArg = None, arg2: SelectorArg = None, arg3: SelectorArg = None, /,
          **options: Unpack[ResourceOptions]) -> Callable[[F], F]:
    """Keep an in-memory index of objects; it is passed to all handlers as a kwarg named by the id."""
    registrar = _Registrar('kopf.index', ResourceOptions, dict(options), default_errors=ErrorsMode.IGNORED,
                           selector_args=(arg1, arg2, arg3))
    return registrar(handlers.IndexingHandler, field_in_id=False)


def daemon(arg1: SelectorArg = None, arg2: SelectorArg = None, arg3: SelectorArg = None, /,
           **options: Unpack[DaemonOptions]) -> Callable[[F], F]:
    """Run a long-lived task for each matching object, until it exits or the object is gone."""
    registrar = _Registrar('kopf.daemon', DaemonOptions, dict(options), selector_args=(arg1, arg2, arg3))
    decorate = registrar(handlers.DaemonHandler, **_pick(options, 'initial_delay', 'cancellation_backoff',
                                                         'cancellation_timeout', 'cancellation_polling'))
    return _checked('kopf.daemon', decorate, options, positive=(), non_negative=(
        'initial_delay', 'cancellation_backoff', 'cancellation_timeout', 'cancellation_polling'))


def timer(arg1: SelectorArg = None, arg2: SelectorArg = None, arg3: SelectorArg = None, /,
          **options: Unpack[TimerOptions]) -> Callable[[F], F]:
    """Run periodically for each matching object (every `interval` s; `idle`: after N s of no changes)."""
    registrar = _Registrar('kopf.timer', TimerOptions, dict(options), selector_args=(arg1, arg2, arg3))
    decorate = registrar(handlers.TimerHandler, **_pick(options, 'interval', 'initial_delay', 'sharp', 'idle'))
    return _checked('kopf.timer', decorate, options, positive=('interval',), non_negative=('idle', 'initial_delay'),
                    sharp_needs_interval=True)


def _checked(decorator: str, decorate: Callable[[F], F], options: Mapping[str, Any], *,
             positive: Collection[str], non_negative: Collection[str],
             sharp_needs_interval: bool = False) -> Callable[[F], F]:
    """The decorator, checking the timing options of daemons and timers against the function it decorates."""
    def checked(fn: F) -> F:
        name = getattr(fn, '__qualname__', None) or repr(fn)
        for option in (*positive, *non_negative):
            value = options.get(option)
            if value is None or (option == 'initial_delay' and callable(value)):
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f'{decorator}() of {name}: {option}= must be a number of seconds, got {value!r}.')
            if option in positive and value <= 0:
                raise ValueError(f'{decorator}() of {name}: {option}= must be positive, got {value!r}.')
            if value < 0:
                raise ValueError(f'{decorator}() of {name}: {option}= must not be negative, got {value!r}.')
        if sharp_needs_interval and options.get('sharp') and options.get('interval') is None:
            message = f'{decorator}() of {name}: sharp= has no effect without interval=.'
            warnings.warn(message, UserWarning, stacklevel=2)
        return decorate(fn)
    return checked


def validate(arg1: SelectorArg = None, arg2: SelectorArg = None, arg3: SelectorArg = None, /,
             **options: Unpack[WebhookOptions]) -> Callable[[F], F]:
    """Validate admission reviews: raise `kopf.AdmissionError` to reject."""
    return _webhook('kopf.on.validate', handlers.WebhookType.VALIDATING, (arg1, arg2, arg3), dict(options))


def mutate(arg1: SelectorArg = None, arg2: SelectorArg = None, arg3: SelectorArg = None, /,
           **options: Unpack[WebhookOptions]) -> Callable[[F], F]:
    """Mutate admission reviews: changes to `patch` are returned as the review's JSON-patch."""
    return _webhook('kopf.on.mutate', handlers.WebhookType.MUTATING, (arg1, arg2, arg3), dict(options))


def _webhook(decorator: str, type: handlers.WebhookType, args: tuple[SelectorArg, ...],
             options: dict[str, Any]) -> Callable[[F], F]:
    registrar = _Registrar(decorator, WebhookOptions, options, default_errors=ErrorsMode.PERMANENT,
                           selector_args=args)
    operations = _parse_operations(decorator, options.get('operation'), options.get('operations'))
    return registrar(handlers.WebhookHandler, type=type, operations=operations,
                     **_pick(options, 'subresource', 'persistent', 'side_effects', 'ignore_failures'))


def _parse_operations(decorator: str, operation: str | None, operations: Iterable[str] | None) -> frozenset[str] | None:
    if operation is not None:
        if operations is not None:
            raise TypeError(f'{decorator}(): use either operation= (deprecated) or operations=, not both.')
        _deprecated('operation= is deprecated; use operations={...}.')
        operations = [operation]
    if operations is None:
        return None
    if isinstance(operations, str):
        raise TypeError(f'{decorator}(): operations= must be a collection of strings, got {operations!r}.')
    result = frozenset(operations)
    if not result:
        raise ValueError(f'{decorator}(): operations= must not be empty (omit it for all operations).')
    unknown = result - handlers.OPERATIONS
    if unknown:
        raise ValueError(f'{decorator}(): unknown operations {sorted(unknown)}; use {sorted(handlers.OPERATIONS)}.')
    return result


def _deprecated(message: str) -> None:
    """A DeprecationWarning pointing at the user's line (the first frame outside this module)."""
    level, frame = 2, sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename == __file__:
        level, frame = level + 1, frame.f_back
    warnings.warn(message, DeprecationWarning, stacklevel=level)


def _pick(options: Any, *names: str) -> dict[str, Any]:
    return {name: options.get(name) for name in names}


# --- Sub-handlers: registered during a change handler's invocation, for that handler only. ---
def subhandler(**options: Unpack[SubhandlerOptions]) -> Callable[[F], F]:
    """Register a sub-handler of the currently running change handler (id: `<parent id>/<sub id>`)."""
    context = registries.subhandling_context('kopf.subhandler')
    parent = context.parent
    if ('old' in options or 'new' in options) and not _is_update_or_field(parent):
        raise TypeError(f'kopf.subhandler(): old= and new= are only for sub-handlers of update or field '
                        f'handlers; {parent} is not one.')
    registrar = _Registrar('kopf.subhandler', SubhandlerOptions, dict(options), registry=context.registry)
    return registrar(handlers.ChangingHandler, parent_id=parent.id, selector=None, reason=None,
                     field_needs_change=parent.field_needs_change)


def register(fn: F, **options: Unpack[RegisterOptions]) -> F:
    """Register a function as a sub-handler of the currently running change handler; returns it."""
    registries.subhandling_context('kopf.register')  # the same errors as for kopf.subhandler, named right
    unknown = sorted(set(options) - RegisterOptions.__optional_keys__)
    if unknown:
        raise TypeError(f'kopf.register() got unexpected keyword arguments: {", ".join(unknown)}.')
    return subhandler(**options)(fn)


def this(**options: Unpack[SubhandlerOptions]) -> Callable[[F], F]:
    """The old name of `kopf.subhandler` (upstream removed it in 1.29)."""
    _deprecated('kopf.on.this is deprecated; use kopf.subhandler.')
    return subhandler(**options)


def _is_update_or_field(handler: handlers.ChangingHandler) -> bool:
    return handler.reason == Reason.UPDATE or (handler.reason is None and not handler.initial and bool(handler.field))
