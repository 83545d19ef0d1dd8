"""The keyword arguments of handlers and filter callbacks, built from a cause, purely.

A cause is a small frozen value the reactor builds once per event (what happened to which object);
the per-attempt values (`retry`, `started`, `runtime`, `stopped`) are added by `handler_kwargs()`
from the handler's progress state.
Each handler kind gets only its own kwargs; indices (by their ids) override any built-in kwarg.
Filter callbacks (`when`, metadata and value callables) get `filter_kwargs()`: the same without
`param`, `retry`, `started`, `runtime`, `stopped`, and never narrowed to a handler's field.
"""
import dataclasses
import datetime
import logging
from collections.abc import Mapping, MutableSequence
from typing import Any

from kopf._core import diffs, progress, values
from kopf._core.bodies import Body, RawEvent
from kopf._core.causes import Activity, Reason
from kopf._core.handlers import BaseHandler, ChangingHandler, SpawningHandler
from kopf._core.patches import Patch
from kopf._core.resources import Resource

#: The `logger` kwarg: a per-object logger (its messages are also posted as Events), or a plain one.
Logger = logging.Logger | logging.LoggerAdapter[Any]
#: The `userinfo` kwarg of admission handlers: the requesting user, as the AdmissionReview has it.
UserInfo = Mapping[str, Any]
#: The `headers` kwarg of admission handlers: the HTTP request's headers.
Headers = Mapping[str, str]
#: The `sslpeer` kwarg of admission handlers: the client certificate of the request, if any.
SSLPeer = Mapping[str, Any]


@values.frozen(kw_only=True)
class BaseCause:
    """What every handler gets as kwargs: its logger, memo, and the indices."""
    logger: Logger
    memo: Any
    indices: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def _kwargs(self) -> dict[str, Any]:
        return dict(logger=self.logger, memo=self.memo)


@values.frozen(kw_only=True)
class ActivityCause(BaseCause):
    """The cause of an activity handler: which activity (startup, login, ...) and the settings."""
    activity: Activity
    settings: Any

    def _kwargs(self) -> dict[str, Any]:
        # `config` is the old name of `settings` (docs/design/decisions.md #2: old spellings keep working).
        return super()._kwargs() | dict(activity=self.activity, settings=self.settings, config=self.settings)


@values.frozen(kw_only=True)
class ResourceCause(BaseCause):
    """The cause of a resource handler: the object (body, its parts), its resource, its patch."""
    resource: Resource
    body: Body
    patch: Patch

    def _kwargs(self) -> dict[str, Any]:
        body = self.body
        meta = body.metadata
        raw = body.raw.get('metadata')  # what `meta.uid` & co. read, without a view's look-up each
        ids: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        return dict(  # BaseCause's first, in one dict
            logger=self.logger, memo=self.memo, resource=self.resource, patch=self.patch,
            body=body, spec=body.spec, meta=meta, status=body.status,
            uid=ids.get('uid'), name=ids.get('name'), namespace=ids.get('namespace'),
            labels=meta.labels, annotations=meta.annotations,
        )


@values.frozen(kw_only=True)
class WatchingCause(ResourceCause):
    """The cause of an `@kopf.on.event` handler: one raw watch event of an object."""
    type: str | None
    event: RawEvent

    def _kwargs(self) -> dict[str, Any]:
        return super()._kwargs() | dict(type=self.type, event=self.event)


@values.frozen(kw_only=True)
class ChangingCause(ResourceCause):
    """The cause of a change handler: the reason (create/update/...) and the diff old→new."""
    reason: Reason
    initial: bool = False            # the object was first seen in the initial listing, not yet handled
    diff: diffs.Diff = dataclasses.field(default_factory=diffs.Diff)
    old: Any = None
    new: Any = None

    @property
    def deleting(self) -> bool:
        return self.reason == Reason.DELETE

    def _kwargs(self) -> dict[str, Any]:
        kwargs = super()._kwargs()
        kwargs.update(reason=self.reason, diff=self.diff, old=self.old, new=self.new)
        return kwargs


@values.frozen(kw_only=True)
class IndexingCause(ResourceCause):
    """The cause of an indexing handler: an object as seen now (no extra kwargs)."""
    pass


@values.frozen(kw_only=True)
class SpawningCause(ResourceCause):
    """The cause of a daemon or timer: the object as seen now (stopped etc. come per call)."""
    pass


@values.frozen(kw_only=True)
class WebhookCause(ResourceCause):
    """The cause of an admission handler: the admission request's object, user and options."""
    dryrun: bool = False
    warnings: MutableSequence[str] = dataclasses.field(default_factory=list)
    userinfo: UserInfo = dataclasses.field(default_factory=dict)
    headers: Headers = dataclasses.field(default_factory=dict)
    sslpeer: SSLPeer = dataclasses.field(default_factory=dict)
    subresource: str | None = None
    operation: str | None = None
    diff: diffs.Diff = dataclasses.field(default_factory=diffs.Diff)
    old: Any = None
    new: Any = None

    def _kwargs(self) -> dict[str, Any]:
        return super()._kwargs() | dict(
            dryrun=self.dryrun, warnings=self.warnings, userinfo=self.userinfo, headers=self.headers,
            sslpeer=self.sslpeer, subresource=self.subresource, operation=self.operation,
            diff=self.diff, old=self.old, new=self.new,
        )


def filter_kwargs(cause: BaseCause) -> dict[str, Any]:
    """The kwargs of filter callbacks and `initial_delay` callables: whole-object, no attempt values."""
    return cause._kwargs() | dict(cause.indices)


def handler_kwargs(
        handler: BaseHandler,
        cause: BaseCause,
        *,
        state: progress.HandlerState | None = None,
        now: datetime.datetime | None = None,
        stopped: Any = None,
) -> dict[str, Any]:
    """The kwargs of one attempt of one handler: the cause's, narrowed to the handler's field, + the attempt's.

    The attempt's `retry`, `started`, `runtime` come from the handler's `state` at the moment `now`;
    without a state, it is a first attempt started `now`; without either (an admission review), they
    are 0, None, None. `stopped` is for daemons and timers only.
    """
    kwargs = cause._kwargs()
    if isinstance(handler, ChangingHandler) and isinstance(cause, ChangingCause) and handler.field:
        old, new = diffs.narrow(cause.old, cause.new, handler.field)
        kwargs.update(old=old, new=new, diff=diffs.reduce(cause.diff, handler.field))
    if state is not None:
        retry, started = state.retries, state.started
        runtime = state.runtime(now) if now is not None else None
    else:
        retry, started, runtime = 0, now, _ZERO if now is not None else None
    kwargs.update(param=handler.param, retry=retry, started=started, runtime=runtime)
    if isinstance(handler, SpawningHandler):
        kwargs.update(stopped=stopped)
    kwargs.update(cause.indices)  # the indices override any built-in kwarg
    return kwargs


_ZERO = datetime.timedelta(0)
