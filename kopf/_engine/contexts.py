"""The state the engine carries: one operator context, one context per served resource; and the handles of
the features, as the engine sees them (Protocols: the features implement them, `running` plugs them in).

Functions take these objects instead of wide parameter lists:
- `OperatorContext`: settings, registry, API client, the operator's memo, the lifecycle, indices,
  the one scheduler of everything that happens later, the paused scopes (`scopes.Pausing`), and the
  features that are on (indices, admission, peering, Leases, metrics, daemons and timers).
- `ResourceContext`: the served resource, the storages fitted to its schema, the records of its objects
  (by uid), the dispatchers of its streams, and its objects' daemons and timers (if it has any).
- `ObjectRecord` (`kopf._core.records`): the one record of each object while the process lives: its
  identity, its memo (a shallow copy of the operator's memo), what its handling remembers between cycles,
  and its place in the queue. Only `records.step()` changes it; the engine's handles of an object (its
  runner's task, its daemons and timers) are kept here, beside it, not in it.
"""
import asyncio
import dataclasses
import sys
import weakref
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import Any, Protocol

from kopf._api import client as client_
from kopf._core import memos, plans, progress, registries, resources
from kopf._core import records as records_
from kopf._core import settings as settings_
from kopf._core.bodies import RawEvent
from kopf._core.kwargs import Logger
from kopf._engine import scheduling, scopes
from kopf._storage import diffbasestorages, progressstorages


class Metrics:
    """Metrics off: every hook does nothing (the hot path pays one call). `kopf._metrics.prometheus` has them on."""

    enabled = False

    def handled(self, resource: resources.Resource, handler: str, outcome: str, seconds: float, *, retry: bool) -> None:
        """A top-level handler's attempt ended with this outcome (`success`, `retry`, `failure`, `timeout`)."""

    def patched(self, resource: resources.Resource, result: str) -> None:
        """A cycle's patch was `sent`, `skipped` (nothing to write) or `refused` (over the annotations' budget)."""

    def converged(self, resource: resources.Resource, lag: float) -> None:
        """An object's handling is complete, `lag` seconds after its first unhandled event arrived."""

    def timer_fired(self, resource: resources.Resource, lateness: float) -> None:
        """A timer's call began `lateness` seconds after its due time."""

    def requested(self, verb: str, code: str, seconds: float) -> None:
        """An API request's attempt (the API client's observer): `WATCH` for opening a stream."""

    def watched(self, resource: str, what: str) -> None:
        """A watch stream was `connected` (first or again), or `expired` (a 410: re-listing)."""

    def listed(self, resource: resources.Resource, seconds: float) -> None:
        """A stream's initial listing is processed (every object's first cycle ended), `seconds` after it began."""

    def observe(self, served: Mapping[resources.Resource, Any]) -> None:
        """The resources served (their contexts: records by uid), read at scrape time."""

    def shards(self, held: int) -> None:
        """How many shards this replica holds (set by `kopf._shards`)."""

    def lease(self, name: str, held: bool) -> None:
        """Whether this replica holds the named Lease (set by `kopf._leases`)."""


class Indexing(Protocol):
    """The in-memory indices and the start's gate until they are complete (`kopf._indices.filling.Indexing`)."""

    @property
    def ready(self) -> asyncio.Event: ...
    @property
    def parts(self) -> set[str]: ...
    @property
    def indices(self) -> Mapping[str, Any]: ...

    def register(self, stream: Any) -> None: ...
    def unregister(self, stream: Any) -> None: ...
    def expect(self, stream: Any, uid: str, *, limit: float) -> None: ...
    def listed(self, stream: Any) -> None: ...
    def awaits(self, stream: Any, uid: str) -> bool: ...
    def indexed(self, stream: Any, uid: str) -> None: ...
    def serving_started(self, part: str = 'resources') -> None: ...
    async def wait(self) -> None: ...
    async def index(self, rctx: 'ResourceContext', record: records_.ObjectRecord, event: RawEvent,
                    logger: Logger) -> None: ...


class Admission(Protocol):
    """The admission webhooks' side (`kopf._admission.answering.Admission`): it follows what is served."""

    async def served(self, resources: Mapping[resources.Resource, Any]) -> None: ...
    async def configure(self) -> None: ...


class Peering(Protocol):
    """The peerings of the served namespaces (`kopf._peering.keepalives.Peerings`)."""

    def serve(self, namespace: str) -> None: ...
    def forget(self, namespace: str) -> None: ...
    def start(self, tg: asyncio.TaskGroup) -> None: ...


class Runnable(Protocol):
    """A Lease holder: the leader election's or the shards' (`kopf._leases.holding`, `kopf._shards.membership`)."""

    def start(self, tg: asyncio.TaskGroup) -> None: ...
    async def release(self) -> None: ...


class Background(Protocol):
    """The daemons and timers of one object (`kopf._daemons.spawning.Background`), as the engine sees them."""

    @property
    def logger(self) -> Logger: ...
    @property
    def finished(self) -> frozenset[str]: ...  # ids of those done for good: not restarted, not holding our finalizer
    @property
    def running(self) -> int: ...   # not exited yet: they hold our finalizer
    def pause(self) -> None: ...    # its scope (or shard) is paused: all stop
    def delete(self) -> None: ...   # the object is being deleted: all stop before its delete handlers


class Daemons(Protocol):
    """The daemons and timers of one resource's objects (`kopf._daemons.spawning.Daemons`): the engine's hooks."""

    @property
    def backgrounds(self) -> Mapping[str, Background]: ...   # by uid: only objects that have any

    def sighted(self, record: records_.ObjectRecord, event: RawEvent, dispatcher: 'Dispatcher') -> None: ...
    def reconcile(self, record: records_.ObjectRecord, plan: plans.Plan, answer: Mapping[str, Any] | None) -> None:
        ...
    def forget(self, uid: str) -> None: ...


class Dispatcher(Protocol):
    """The dispatcher of one watch stream (`kopf._engine.queueing.Dispatcher`), as the features see it."""

    key: Any

    def nudge(self, record: records_.ObjectRecord, event: RawEvent) -> None: ...
    def pause_record(self, record: records_.ObjectRecord, *, cancelling: bool = False) -> None: ...
    def take_over(self, record: records_.ObjectRecord) -> None: ...


Deliver = Callable[[Any], Awaitable[None]]  # a watch stream's items (events, LISTED) to the engine


class Selection(Protocol):
    """The shards this replica holds, as its watches send them (`kopf._shards.membership.Selection`)."""

    def applies(self, ctx: 'OperatorContext', resource: resources.Resource) -> bool: ...
    async def read(self, ctx: 'OperatorContext', rctx: 'ResourceContext', namespace: str | None,
                   deliver: Deliver, *, keep_bodies: bool = False) -> None: ...


class Spawn(Protocol):
    """One daemon or timer of one object (`kopf._daemons.workers.Spawn`): what the operator's exit needs."""

    def stop(self, reason: Any) -> None: ...
    def tasks(self) -> Collection[asyncio.Task[Any]]: ...
    def cancel(self) -> None: ...


@dataclasses.dataclass
class OperatorContext:
    """What all resources' processing shares: settings, registry, API client, memo, indices."""
    settings: settings_.OperatorSettings
    registry: registries.OperatorRegistry
    client: client_.APIClient
    memo: Any  # the operator's memo: any object the user gives (`kopf.Memo` by default)
    lifecycle: progress.Lifecycle
    seeds: memos.Seeds = dataclasses.field(default_factory=memos.Seeds)  # its copies for the objects, when needed
    indices: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    scheduler: scheduling.Scheduler = dataclasses.field(default_factory=scheduling.Scheduler)
    pausing: scopes.Pausing = dataclasses.field(default_factory=scopes.Pausing)  # paused scopes (peering)
    spawns: set[Spawn] = dataclasses.field(default_factory=set)  # all daemons and timers running
    exiting: bool = False  # the operator is stopping: no daemon or timer starts any more
    indexing: Indexing | None = None    # the in-memory indices and the gate of the start
    admission: Admission | None = None  # the admission webhooks' side, if any handlers
    metrics: Metrics = dataclasses.field(default_factory=Metrics)  # a no-op unless on
    peering: Peering | None = None      # the peerings, unless standalone
    leasing: Runnable | None = None     # the Leases of the leader election or of the shards, if any
    identity: str | None = None  # this operator's identity in peerings and Leases (also in its User-Agent)
    shards: int = 0        # `--shards N`: objects are handled by the holder of their shard's Lease (0: unsharded)
    shard_of: Callable[[str], int] | None = None  # with `--shards`: an object's shard by its uid
    daemons: Callable[['ResourceContext'], Daemons] | None = None  # with daemons or timers: their hooks
    selection: Selection | None = None  # `--shards N`: the shards held, sent as the watches' `shardSelector`
    served: Mapping[Any, 'ResourceContext'] = dataclasses.field(default_factory=dict)  # by resource (`observing`)

    def __post_init__(self) -> None:
        LIVE[id(self)] = self

    def idle(self) -> bool:
        """No object's record has work: none queued, running, or waiting for a due time or our own write.

        A seam for tests' barriers before negative assertions (with a sentinel event that proves the watch
        streams were read up to it); the operator itself never asks it.
        """
        return all(record.phase in (records_.Phase.IDLE, records_.Phase.GONE)
                   for rctx in self.served.values() for record in rctx.records.values())


# The operators of this process, by id (the contexts compare by value: unhashable), for tests' `idle()` probes.
LIVE: 'weakref.WeakValueDictionary[int, OperatorContext]' = weakref.WeakValueDictionary()


@dataclasses.dataclass
class ResourceContext:
    """What the processing of one resource's objects shares: its storages and object memories."""
    operator: OperatorContext
    resource: resources.Resource
    progress_storage: progressstorages.ProgressStorage
    diffbase_storage: diffbasestorages.DiffBaseStorage
    records: dict[str, records_.ObjectRecord] = dataclasses.field(default_factory=dict)
    dispatchers: dict[str | None, Dispatcher] = dataclasses.field(default_factory=dict)  # by namespace (None: all)
    daemons: Daemons | None = None  # its objects' daemons and timers, if the resource has any
    _delays: tuple[Any, tuple[float, ...]] | None = dataclasses.field(default=None, init=False, repr=False)
    _cleared: tuple[Any, tuple[str, ...] | None] | None = dataclasses.field(default=None, init=False, repr=False)
    _own: tuple[Any, Any, tuple[bool, bool]] | None = dataclasses.field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.daemons is None and self.operator.daemons is not None:
            self.daemons = self.operator.daemons(self)

    @property
    def settings(self) -> settings_.OperatorSettings:
        return self.operator.settings

    @property
    def registry(self) -> registries.OperatorRegistry:
        return self.operator.registry

    @property
    def finalizer(self) -> str:
        return self.operator.settings.persistence.finalizer

    @property
    def lifecycle(self) -> progress.Lifecycle:
        return self.operator.lifecycle

    @property
    def indices(self) -> Mapping[str, Any]:
        return self.operator.indices

    @property
    def default_backoff(self) -> float:
        return self.operator.settings.execution.default_backoff

    @property
    def error_delays(self) -> tuple[float, ...]:
        # Asked at every cycle's end: converted once per value of the setting (kept with it, by identity;
        # only immutable values: a list may be changed in place).
        delays = self.operator.settings.queueing.error_delays
        cached = self._delays
        if cached is not None and cached[0] is delays:
            return cached[1]
        converted = (float(delays),) if isinstance(delays, (int, float)) else tuple(float(d) for d in delays)
        if isinstance(delays, (int, float, tuple)):
            self._delays = (delays, converted)
        return converted

    @property
    def cleared_prefixes(self) -> tuple[str, ...] | None:
        """The progress storage's `cleared_prefixes()`, asked once per storage (kept with it, by identity).

        Asked by every listed object's quiet first sight (`plans.quiet_at_first_sight`); a storage is configured
        before the operator starts, not changed while it runs.
        """
        storage = self.progress_storage
        cached = self._cleared
        if cached is None or cached[0] is not storage:
            cached = self._cleared = (storage, storage.cleared_prefixes())
        return cached[1]

    @property
    def own_fields_only(self) -> bool:
        """Whether both storages write only their own fields (`writes_only_own_fields()`), asked once per pair.

        Asked by every answered patch (`plans.needs_recheck`); kept with the storages, by identity, as
        `cleared_prefixes` is.
        """
        return self._own_fields()[0]

    @property
    def annotated_diffbase(self) -> bool:
        """Whether the diff-base is read from the body's annotations only (the default storage, exactly)."""
        return self._own_fields()[1]

    def _own_fields(self) -> tuple[bool, bool]:
        progress, diffbase = self.progress_storage, self.diffbase_storage
        cached = self._own
        if cached is None or cached[0] is not progress or cached[1] is not diffbase:
            own = diffbase.writes_only_own_fields() and progress.writes_only_own_fields()
            annotated = type(diffbase) is diffbasestorages.AnnotationsDiffBaseStorage
            cached = self._own = (progress, diffbase, (own, annotated))
        return cached[2]

    def remember(self, uid: str, name: str | None = None, namespace: str | None = None) -> records_.ObjectRecord:
        """The object's record; made at first sight with the operator's memo as of now (copied when needed)."""
        record = self.records.get(uid)
        if record is None:
            shard_of = self.operator.shard_of
            record = self.records[uid] = records_.ObjectRecord(
                uid=uid, memo=self.operator.seeds.seed(self.operator.memo), name=name,
                namespace=None if namespace is None else sys.intern(namespace),  # one string for all its objects
                shard=None if shard_of is None else shard_of(uid))
        return record

    def forget(self, uid: str) -> None:
        self.records.pop(uid, None)
        if self.daemons is not None:
            self.daemons.forget(uid)

    def dispatcher_of(self, record: records_.ObjectRecord) -> Dispatcher | None:
        """The dispatcher of the stream that serves the object: of its namespace, or the cluster-wide one."""
        return self.dispatchers.get(record.namespace) or self.dispatchers.get(None)

    def background_of(self, uid: str) -> Background | None:
        return None if self.daemons is None else self.daemons.backgrounds.get(uid)
