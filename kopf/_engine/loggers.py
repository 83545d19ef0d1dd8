"""Per-object loggers (`[namespace/name] message`, logger `kopf.objects`) and the logging setup.

`ObjectLogger` also posts its records of `settings.posting.level` and above as Kubernetes Events
(reason `Logging`; type Normal/Warning/Error by level) when `settings.posting.loggers` is on and
posting is enabled. `LocalObjectLogger` never posts (used for `on.event` handlers).

JSON lines (`--log-format json`) are field for field as upstream 1.45.2's: `message`, the `extra=`
fields, `exc_info`, `timestamp`, the object's reference under `--log-refkey` (default `object`),
`severity` (debug/info/warn/error/fatal).
"""
import enum
import logging
import re
import sys
import time
from collections.abc import Mapping, MutableMapping
from typing import Any

from kopf._api import events
from kopf._core import settings as settings_

objects_logger = logging.getLogger('kopf.objects')


def identity(body: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a body that loggers use (the reference to the object): kept by a long-lived logger."""
    meta = body.get('metadata') or {}
    return {'apiVersion': body.get('apiVersion'), 'kind': body.get('kind'),
            'metadata': {key: meta[key] for key in ('name', 'namespace', 'uid') if key in meta}}


class LocalObjectLogger(logging.LoggerAdapter[logging.Logger]):
    """A logger about one object: every message is prefixed with `[namespace/name]`.

    It keeps only the body it is given (for a long-lived logger: the object's identity, or its live
    body that is kept anyway); the object's reference and the prefix are read from it per message,
    not copied: tens of thousands of objects' loggers live at once (e.g. with a timer each).
    """

    logger = objects_logger  # the same for all; `LoggerAdapter.__init__` is not called (no copies kept)

    def __init__(self, *, body: Mapping[str, Any], settings: settings_.OperatorSettings) -> None:
        self.body = body
        self.settings = settings

    @property
    def extra(self) -> Mapping[str, object]:  # type: ignore[override]  # read-only: made from the body
        return _reference(self.body)[0]

    @property
    def prefix(self) -> str:
        return _reference(self.body)[1]

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, MutableMapping[str, Any]]:
        ref, prefix = _reference(self.body)  # read per message: only the body is kept
        extra = kwargs.get('extra')
        kwargs['extra'] = {**ref, **extra} if extra else ref
        return (f'{prefix} {msg}' if _prefixing else msg), kwargs


def _reference(body: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The `extra=` of the object's records (its `k8s_ref`) and their `[namespace/name]` prefix."""
    meta = body.get('metadata') or {}
    name, namespace = meta.get('name'), meta.get('namespace')
    ref = {'k8s_ref': {'apiVersion': body.get('apiVersion'), 'kind': body.get('kind'),
                       'name': name, 'uid': meta.get('uid'), 'namespace': namespace}}
    return ref, (f'[{namespace}/{name}]' if namespace else f'[{name}]')


class ObjectLogger(LocalObjectLogger):
    """A per-object logger that also posts K8s Events of its records if `settings.posting.loggers`.

    A plain call (no `exc_info=`, `extra=`, `stack_info=`, `stacklevel=`: the framework's own lines) makes its
    record directly: the same record as `logging.Logger._log` makes, whose caller is always this method
    (`findCaller` walks up to here through the logging module's frames: 17% of a line's cost, measured).
    """

    def log(self, level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
        posting = self.settings.posting
        if posting.enabled and posting.loggers and level >= posting.level:
            self._post(level, msg % args if args else str(msg))
        logger = self.logger
        if (kwargs and (len(kwargs) != 1 or kwargs.get('extra').__class__ is not dict)) \
                or level.__class__ is not int or not getattr(logging, '_srcfile', None):
            super().log(level, msg, *args, **kwargs)
        elif logger.isEnabledFor(level):
            if logger is objects_logger and _write_plain(level, msg, args, kwargs, self.body):
                return  # the usual `kopf run` setup: the line written as its handler would, with no record
            msg, kw = self.process(msg, kwargs)
            code, line = _CODE, sys._getframe().f_lineno  # no frame kept in a local: it would be a cycle
            record = logger.makeRecord(logger.name, level, code.co_filename, line, msg, args,
                                       None, code.co_name, kw['extra'], None)
            logger.handle(record)

    def _post(self, level: int, message: str) -> None:
        poster = events.poster_var.get(None)
        if poster is None:
            return
        type_ = 'Normal' if level < logging.WARNING else 'Warning' if level < logging.ERROR else 'Error'
        poster.enqueue(events.object_reference(self.body), type=type_, reason='Logging', message=message,
                       backoffs=self.settings.posting.logging_backoffs)


_CODE = ObjectLogger.log.__code__  # the caller that `findCaller` would find for a plain line


# The plain route: `kopf run`'s usual logging (`configure()`'s one handler, nothing else on the way) written
# without a LogRecord, the loggers' and the handler's walk: the same bytes, in the same order, under the same lock.

_RECORD_FIELDS = frozenset(logging.LogRecord('', 0, '', 0, '', (), None).__dict__) | {'message', 'asctime'}
_PLAIN_FIELDS = frozenset({'asctime', 'name', 'levelname', 'levelno', 'message'})
_FORMAT_PART = re.compile(r'%(?:%|\((\w+)\))')
_compiled_formats: dict[str, tuple[str, tuple[str, ...]] | None] = {}


def compile_format(fmt: str) -> tuple[str, tuple[str, ...]] | None:
    """A %-style format of only `_PLAIN_FIELDS` as a positional one and its fields in order, else None (cached).

    `'[%(asctime)s] %(name)-20.20s'` → `('[%s] %-20.20s', ('asctime', 'name'))`: the same text from the same values.
    """
    try:
        return _compiled_formats[fmt]
    except KeyError:
        pass
    names: list[str] = []

    def positional(match: re.Match[str]) -> str:
        if match.group(1) is None:
            return '%%'
        names.append(match.group(1))
        return '%'
    template = _FORMAT_PART.sub(positional, fmt)
    plain = bool(names) and set(names) <= _PLAIN_FIELDS and '%' not in _FORMAT_PART.sub('', fmt)
    fields = tuple(names)
    compiled = (template, _FULL_NAMES if fields == _FULL_NAMES else fields) if plain else None
    if len(_compiled_formats) < 64:
        _compiled_formats[fmt] = compiled
    return compiled


def plain_route(logger: logging.Logger, level: int,
                ) -> 'tuple[logging.StreamHandler[Any], Formatter, tuple[str, tuple[str, ...]]] | None':
    """The handler that alone gets a line of this logger, if nothing on the way could tell a record was made.

    That is: `configure()`'s handler, a plain `StreamHandler` with our `Formatter` of a %-style format of only
    `_PLAIN_FIELDS` and no date format; no filters on the logger or the handler; no other handler on the
    loggers up to the root; the standard classes of loggers and records. Else None: the usual way.
    The handler, its formatter, and its format compiled (`compile_format`).
    """
    handler = _handler
    if (handler is None or handler.__class__ is not logging.StreamHandler or handler.filters
            or logger.filters or logger.disabled or logger.__class__ is not logging.Logger
            or logging.getLogRecordFactory() is not logging.LogRecord or level < handler.level):
        return None
    found = False
    current: Any = logger
    while current is not None:  # as `Logger.callHandlers` walks them
        handlers = current.handlers
        if handlers:
            if found or len(handlers) != 1 or handlers[0] is not handler:
                return None
            found = True
        if not current.propagate:
            break
        current = current.parent
    formatter = handler.formatter
    if not found or formatter is None or formatter.__class__ is not Formatter or formatter.datefmt is not None:
        return None
    style = formatter._style
    if style.__class__ is not logging.PercentStyle or getattr(style, '_defaults', None):
        return None
    fmt = style._fmt
    compiled = compile_format(fmt) if fmt.__class__ is str else None
    if compiled is None:
        return None
    return handler, formatter, compiled


# While a cycle's lines are written one after another (`hold_routes()`): the plain route found by level, kept for the
# next lines (nothing between them changes the logging's setup: no user code runs, only the writes themselves).
_held: 'dict[int, tuple[logging.StreamHandler[Any], Formatter, tuple[str, tuple[str, ...]]] | None] | None' = None


def hold_routes() -> bool:
    """Keep the plain routes found until `release_routes()` (for a cycle's lines in a row); False if held already."""
    global _held
    if _held is not None:
        return False
    _held = {}
    return True


def release_routes() -> None:
    global _held
    _held = None


def _write_plain(level: int, msg: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any],
                 body: Mapping[str, Any]) -> bool:
    """Write an object's line the plain route's way (`plain_route`); False if it is not the route to take.

    What `Logger.handle()` → `StreamHandler.handle()` does with the record of the line, less the record: the
    message as `LogRecord.getMessage()` makes it, the time as `LogRecord` takes it, the text as `Formatter.format()`
    makes it, written and flushed under the handler's lock; a failure is the handler's `handleError()`.
    """
    extra = kwargs.get('extra') if kwargs else None
    if extra and not _RECORD_FIELDS.isdisjoint(extra):
        return False  # `makeRecord` refuses to overwrite a record's field: the usual way raises it
    held = _held
    route = held[level] if held is not None and level in held else plain_route(objects_logger, level)
    if held is not None:
        held[level] = route
    if route is None:
        return False
    handler, formatter, (template, names) = route
    lock = handler.lock
    if lock is None:
        return False
    created, msecs = _record_time()
    if _prefixing:
        meta = body.get('metadata') or {}
        name, namespace = meta.get('name'), meta.get('namespace')
        msg = f'[{namespace}/{name}] {msg}' if namespace else f'[{name}] {msg}'
    with lock:
        try:
            message = str(msg)
            if args:
                message = message % args
            if names is _FULL_NAMES:  # `kopf run`'s default format: its values at once
                values: tuple[Any, ...] = (formatter.time_text(created, msecs), objects_logger.name,
                                           logging.getLevelName(level), message)
            else:
                values = tuple(formatter.time_text(created, msecs) if field == 'asctime' else
                               objects_logger.name if field == 'name' else
                               logging.getLevelName(level) if field == 'levelname' else
                               level if field == 'levelno' else message for field in names)
            stream = handler.stream
            stream.write(template % values + handler.terminator)
            if stream and hasattr(stream, 'flush'):  # as `StreamHandler.flush()`
                stream.flush()
        except RecursionError:
            raise
        except Exception:
            handler.handleError(objects_logger.makeRecord(objects_logger.name, level, _CODE.co_filename, 0, msg,
                                                          args, None, _CODE.co_name, None, None))
    return True


def _record_time() -> tuple[float, float]:
    """`created` and `msecs` as `LogRecord` takes them now (by `time.time_ns()` since 3.13, `time.time()` before)."""
    if _NS_TIME:
        ns = time.time_ns()
        created, msecs = ns / 1e9, (ns % 1_000_000_000) // 1_000_000 + 0.0
        if msecs == 999.0 and int(created) != ns // 1_000_000_000:
            msecs = 0.0
        return created, msecs
    created = time.time()
    return created, int((created - int(created)) * 1000) + 0.0


_FULL_NAMES = ('asctime', 'name', 'levelname', 'message')  # of `LogFormat.FULL`, `kopf run`'s default
_NS_TIME = sys.version_info >= (3, 13)  # `LogRecord`'s time from `time.time_ns()` since 3.13, `time.time()` before


# Logging setup (`kopf.configure`, used by the CLI).


class LogFormat(enum.Enum):
    """The log formats of `kopf.configure()` and `kopf run --log-format plain|full|json`."""

    PLAIN = '%(message)s'
    FULL = '[%(asctime)s] %(name)-20.20s [%(levelname)-8.8s] %(message)s'
    JSON = '-json-'


SEVERITIES = ((logging.DEBUG, 'debug'), (logging.INFO, 'info'), (logging.WARNING, 'warn'), (logging.ERROR, 'error'))
INTERNAL_EXTRAS = ('k8s_ref', 'kopf_handler_id')  # ours, not the user's `extra=`: not fields of their own


def severity(level: int) -> str:
    """The JSON `severity` of a level, as upstream: up to DEBUG `debug`, INFO `info`, WARNING `warn`,
    ERROR `error`, above `fatal` (custom levels go to the next one up)."""
    return next((name for bound, name in SEVERITIES if level <= bound), 'fatal')


def json_formatter(refkey: str | None = None) -> logging.Formatter:
    """python-json-logger's formatter with upstream's fields: `message`, the `extra=` fields, `exc_info`,
    `timestamp` (ISO-8601 in UTC), the object's reference under `refkey` (default `object`), `severity`."""
    from pythonjsonlogger import json as jsonlogger  # lazily: only JSON logs need it

    key = refkey or 'object'

    class JsonFormatter(jsonlogger.JsonFormatter):
        def add_fields(self, log_data: dict[str, Any], record: logging.LogRecord,
                       message_dict: dict[str, Any]) -> None:
            super().add_fields(log_data, record, message_dict)
            for name in INTERNAL_EXTRAS:
                log_data.pop(name, None)
            ref = getattr(record, 'k8s_ref', None)
            if ref:
                log_data[key] = ref
            log_data['severity'] = severity(record.levelno)

    formatter: logging.Formatter = JsonFormatter(timestamp=True)
    return formatter


class Formatter(logging.Formatter):
    """`logging.Formatter`, with the time's text without milliseconds made once per second, not per record."""

    _second: tuple[int, Any, str, str] | None = None  # (the second, the converter, the format) → its text

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        if datefmt:
            return super().formatTime(record, datefmt)
        return self.time_text(record.created, record.msecs)

    def time_text(self, created: float, msecs: float) -> str:
        """`formatTime()`'s text with no date format, for a record's `created` and `msecs`."""
        second, converter, fmt = int(created), self.converter, self.default_time_format
        cached = self._second
        if cached is not None and cached[0] == second and cached[1] is converter and cached[2] == fmt:
            text = cached[3]
        else:
            text = time.strftime(fmt, converter(created))
            self._second = (second, converter, fmt, text)
        return self.default_msec_format % (text, msecs) if self.default_msec_format else text


def make_formatter(log_format: LogFormat | str, log_refkey: str | None = None) -> logging.Formatter:
    """A `LogFormat`, or a string as a %-style format of `logging.Formatter` (as upstream treats strings:
    an invalid one is a ValueError); anything else is a ValueError naming it."""
    if log_format is LogFormat.JSON:
        return json_formatter(log_refkey)
    if isinstance(log_format, LogFormat):
        return Formatter(log_format.value)
    if isinstance(log_format, str):
        return Formatter(log_format)
    raise ValueError(f'Unsupported log format: {log_format!r}')


_handler: logging.Handler | None = None
_prefixing = True  # `[namespace/name] ` before per-object messages (off for JSON unless asked for)


def configure(debug: bool | None = None, verbose: bool | None = None, quiet: bool | None = None,
              log_format: LogFormat | str = LogFormat.FULL, log_prefix: bool | None = False,
              log_refkey: str | None = None) -> None:
    """One stream handler on the root logger (replacing ours from before); asyncio's logs only if debug.

    `log_format`: a `kopf.LogFormat`, or a %-style format string (as upstream 1.45.2 takes strings).
    `log_prefix`: `[namespace/name]` before per-object messages; off by default (as upstream); None:
    on for text, off for JSON (which carries the object's reference under `log_refkey`, default `object`).
    """
    global _handler, _prefixing
    fmt = make_formatter(log_format, log_refkey)  # first: a bad format changes nothing
    _prefixing = log_prefix if log_prefix is not None else log_format is not LogFormat.JSON
    level = logging.DEBUG if debug or verbose else logging.WARNING if quiet else logging.INFO
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(fmt)
    root = logging.getLogger()
    if _handler is not None:
        root.removeHandler(_handler)
    root.addHandler(handler)
    root.setLevel(level)
    _handler = handler
    logging.getLogger('asyncio').setLevel(logging.DEBUG if debug else logging.WARNING)
    logging.getLogger('aiohttp').setLevel(logging.DEBUG if debug else logging.WARNING)


def deconfigure() -> None:
    """Undo `configure()`: remove its handler (e.g. when its stream is closed), prefix messages again."""
    global _handler, _prefixing
    _prefixing = True
    if _handler is not None:
        logging.getLogger().removeHandler(_handler)
        _handler = None
