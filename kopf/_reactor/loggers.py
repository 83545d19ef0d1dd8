"""Per-object loggers (`[namespace/name] message`, logger `kopf.objects`) and the logging setup.

`ObjectLogger` also posts its records of `settings.posting.level` and above as Kubernetes Events
(reason `Logging`; type Normal/Warning/Error by level) when `settings.posting.loggers` is on and
posting is enabled. `LocalObjectLogger` never posts (used for `on.event` handlers).

JSON lines (`--log-format json`) carry the object's reference under `--log-refkey` (default
`object`) and the id of the handler being invoked (or reported on) under `handler`.
"""
import enum
import logging
import sys
from collections.abc import Mapping, MutableMapping
from typing import Any

from kopf._api import events
from kopf._model import registries
from kopf._model import settings as settings_

objects_logger = logging.getLogger('kopf.objects')


def _ref(body: Mapping[str, Any]) -> str:
    meta = body.get('metadata') or {}
    namespace, name = meta.get('namespace'), meta.get('name')
    return f'{namespace}/{name}' if namespace else f'{name}'


def identity(body: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a body that loggers use (the reference to the object): kept by a long-lived logger."""
    meta = body.get('metadata') or {}
    return {'apiVersion': body.get('apiVersion'), 'kind': body.get('kind'),
            'metadata': {key: meta[key] for key in ('name', 'namespace', 'uid') if key in meta}}


class LocalObjectLogger(logging.LoggerAdapter[logging.Logger]):
    """A logger about one object: every message is prefixed with `[namespace/name]`."""

    def __init__(self, *, body: Mapping[str, Any], settings: settings_.OperatorSettings) -> None:
        meta = body.get('metadata') or {}
        extra = {'k8s_ref': {'apiVersion': body.get('apiVersion'), 'kind': body.get('kind'),
                             'name': meta.get('name'), 'uid': meta.get('uid'),
                             'namespace': meta.get('namespace')}}
        super().__init__(objects_logger, extra)
        self.body = body
        self.settings = settings
        self.prefix = f'[{_ref(body)}]'

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, MutableMapping[str, Any]]:
        kwargs['extra'] = {**(self.extra or {}), **kwargs.get('extra', {})}
        return (f'{self.prefix} {msg}' if _prefixing else msg), kwargs


class ObjectLogger(LocalObjectLogger):
    """A per-object logger that also posts K8s Events of its records if `settings.posting.loggers`."""

    def log(self, level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
        posting = self.settings.posting
        if posting.enabled and posting.loggers and level >= posting.level:
            self._post(level, msg % args if args else str(msg))
        super().log(level, msg, *args, **kwargs)

    def _post(self, level: int, message: str) -> None:
        poster = events.poster_var.get(None)
        if poster is None:
            return
        type_ = 'Normal' if level < logging.WARNING else 'Warning' if level < logging.ERROR else 'Error'
        poster.enqueue(events.object_reference(self.body), type=type_, reason='Logging', message=message,
                       backoffs=self.settings.posting.logging_backoffs)


# Logging setup (`kopf.configure`, used by the CLI).

class LogFormat(enum.Enum):
    PLAIN = '%(message)s'
    FULL = '[%(asctime)s] %(name)-20.20s [%(levelname)-8.8s] %(message)s'
    JSON = '-json-'


class _JsonFormatter(logging.Formatter):
    def __init__(self, refkey: str | None = None) -> None:
        super().__init__()
        self.refkey = refkey or 'object'

    def format(self, record: logging.LogRecord) -> str:
        import json
        payload: dict[str, Any] = {'message': record.getMessage(), 'severity': record.levelname.lower(),
                   'timestamp': self.formatTime(record), 'logger': record.name}
        ref = getattr(record, 'k8s_ref', None)
        if ref:
            payload[self.refkey] = {k: v for k, v in ref.items() if v is not None}
        handler_id = getattr(record, 'kopf_handler_id', None)
        if handler_id is None:  # logged inside a handler (contextvars reach its thread too)
            handler = registries.current_handler.get(None)
            handler_id = handler.id if handler is not None else None
        if handler_id is not None:
            payload['handler'] = handler_id
        if record.exc_info:
            payload['exc_info'] = self.formatException(record.exc_info)
        return json.dumps(payload)


_handler: logging.Handler | None = None
_prefixing = True  # `[namespace/name] ` before per-object messages (off for JSON unless asked for)


def configure(debug: bool | None = None, verbose: bool | None = None, quiet: bool | None = None,
              log_format: LogFormat = LogFormat.FULL, log_prefix: bool | None = None,
              log_refkey: str | None = None) -> None:
    """One stream handler on the root logger (replacing ours from before); asyncio's logs only if debug.

    `log_prefix`: `[namespace/name]` before per-object messages; None: on for text, off for JSON
    (which carries the object's reference under `log_refkey`, default `object`).
    """
    global _handler, _prefixing
    _prefixing = log_prefix if log_prefix is not None else log_format is not LogFormat.JSON
    level = logging.DEBUG if debug or verbose else logging.WARNING if quiet else logging.INFO
    handler = logging.StreamHandler(sys.stderr)
    json_format = log_format is LogFormat.JSON
    fmt = _JsonFormatter(log_refkey) if json_format else logging.Formatter(log_format.value)
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
