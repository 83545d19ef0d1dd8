"""The state the reactor carries: one operator context, one context per served resource, one memory per object.

Functions take these objects instead of wide parameter lists (ARCHITECTURE "state in two objects"):
- `OperatorContext`: settings, registry, API client, the operator's memo, the lifecycle, indices.
- `ResourceContext`: the served resource, the storages fitted to its schema, the extra essence
  fields, and the memories of its objects (by uid).
- `ObjectMemory`: what the reactor remembers of one object while the process lives: its memo
  (a shallow copy of the operator's memo), whether it is "initial" (first seen in a listing and
  not fully handled yet), the resourceVersion of our own last patch (for the consistency wait, or,
  when its answer was taken as the newest body, to skip the older events still coming), and whether
  optional delete handlers have run.
"""
import dataclasses
from collections.abc import Mapping
from typing import Any

from kopf._api import client as client_
from kopf._model import memos, patches, progress, registries, resources
from kopf._model import settings as settings_
from kopf._reactor import loggers
from kopf._storage import diffbase
from kopf._storage import progress as progress_storages


@dataclasses.dataclass
class OperatorContext:
    """What all resources' processing shares: settings, registry, API client, memo, indices."""
    settings: settings_.OperatorSettings
    registry: registries.OperatorRegistry
    client: client_.APIClient
    memo: Any
    lifecycle: progress.Lifecycle
    indices: Mapping[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class ObjectMemory:
    """What the reactor remembers of one object between its events (not persisted)."""
    memo: Any
    initial: bool = False              # first seen in the initial listing; no cause fully handled yet
    expected_rv: str | None = None     # the resourceVersion of our own last patch, until it comes back
    applied_rv: str | None = None      # our last patch's answer was taken as the newest body: older events are stale
    deletion_handled: bool = False     # optional delete handlers ran (once, best-effort)


@dataclasses.dataclass
class ResourceContext:
    """What the processing of one resource's objects shares: its storages and object memories."""
    operator: OperatorContext
    resource: resources.Resource
    progress_storage: progress_storages.ProgressStorage
    diffbase_storage: diffbase.DiffBaseStorage
    memories: dict[str, ObjectMemory] = dataclasses.field(default_factory=dict)

    @property
    def settings(self) -> settings_.OperatorSettings:
        return self.operator.settings

    @property
    def registry(self) -> registries.OperatorRegistry:
        return self.operator.registry

    @property
    def finalizer(self) -> str:
        return self.operator.settings.persistence.finalizer

    def remember(self, uid: str, *, initial: bool) -> ObjectMemory:
        """The object's memory; made at first sight with a shallow copy of the operator's memo."""
        memory = self.memories.get(uid)
        if memory is None:
            memory = self.memories[uid] = ObjectMemory(memo=memos.copy_for_object(self.operator.memo),
                                                       initial=initial)
        return memory

    def forget(self, uid: str) -> None:
        self.memories.pop(uid, None)


@dataclasses.dataclass
class Cycle:
    """One handling cycle of one object: what it saw, what it writes, when it wants to be woken up."""

    resource: ResourceContext
    memory: ObjectMemory
    event_type: str | None
    body: Mapping[str, Any]            # the raw body of the event being handled
    patch: patches.Patch
    logger: loggers.ObjectLogger
    wakeups: list[float] = dataclasses.field(default_factory=list)  # seconds from now
    applied: dict[str, Any] | None = None  # the body as the server answered our patch (the newest state)
    # Nothing is left to do for the body as decided on: the essence now handled (see `processing.needs_recheck`).
    settled: dict[str, Any] | None = None

    @property
    def storage(self) -> progress_storages.ProgressStorage:
        return self.resource.progress_storage

    def wake_up_in(self, delay: float | None) -> None:
        if delay is not None:
            self.wakeups.append(max(0.0, delay))

    @property
    def wakeup(self) -> float | None:
        return min(self.wakeups) if self.wakeups else None
