"""The state the reactor carries: one operator context, one context per served resource, one memory per object.

Functions take these objects instead of wide parameter lists (ARCHITECTURE "state in two objects"):
- `OperatorContext`: settings, registry, API client, the operator's memo, the lifecycle, indices,
  the one scheduler of everything that happens later, and the paused scopes (`scopes.Pausing`).
- `ResourceContext`: the served resource, the storages fitted to its schema, and the records of
  its objects (by uid).
- `ObjectRecord` (`kopf._core.records`): the one record of each object while the process lives:
  its memo (a shallow copy of the operator's memo), what its handling remembers between cycles,
  and its place in the queue.
"""
import dataclasses
import weakref
from collections.abc import Mapping
from typing import Any

from kopf._api import client as client_
from kopf._core import memos, progress, registries, resources
from kopf._core import records as records_
from kopf._core import settings as settings_
from kopf._engine import scheduling, scopes
from kopf._metrics import instruments
from kopf._storage import diffbasestorages, progressstorages


@dataclasses.dataclass
class OperatorContext:
    """What all resources' processing shares: settings, registry, API client, memo, indices."""
    settings: settings_.OperatorSettings
    registry: registries.OperatorRegistry
    client: client_.APIClient
    memo: Any
    lifecycle: progress.Lifecycle
    indices: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    scheduler: scheduling.Scheduler = dataclasses.field(default_factory=scheduling.Scheduler)
    pausing: scopes.Pausing = dataclasses.field(default_factory=scopes.Pausing)  # paused scopes (peering)
    spawns: set[Any] = dataclasses.field(default_factory=set)  # all daemons and timers running (`spawning`)
    exiting: bool = False  # the operator is stopping: no daemon or timer starts any more
    indexing: Any = None   # the in-memory indices and the gate of the start (`indexing.Indexing`)
    admission: Any = None  # the admission webhooks' side, if any handlers (`admission.Admission`)
    metrics: instruments.Metrics = dataclasses.field(default_factory=instruments.Metrics)  # a no-op unless on
    peering: Any = None    # the peerings, unless standalone (`peering.Peerings`)
    leasing: Any = None    # the Leases of the leader election, if any (`leasing.Leasing`)
    identity: str | None = None  # this operator's identity in peerings and Leases (also in its User-Agent)
    shards: int = 0        # `--shards N`: objects are handled by the holder of their shard's Lease (0: unsharded)
    selection: Any = None  # the shards held, sent as the watches' `shardSelector` (`sharding.Selection`)
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
    _delays: tuple[Any, tuple[float, ...]] | None = dataclasses.field(default=None, init=False, repr=False)

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

    def remember(self, uid: str) -> records_.ObjectRecord:
        """The object's record; made at first sight with a shallow copy of the operator's memo."""
        record = self.records.get(uid)
        if record is None:
            record = self.records[uid] = records_.ObjectRecord(uid=uid, memo=memos.copy_for_object(self.operator.memo))
            if self.operator.shards:
                from kopf._shards import assignment as shards  # lazily: only with --shards
                record.shard = shards.shard_of(uid, self.operator.shards)
        return record

    def forget(self, uid: str) -> None:
        self.records.pop(uid, None)
