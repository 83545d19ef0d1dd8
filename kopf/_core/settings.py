"""`kopf.OperatorSettings` (alias `kopf.OperatorConfig`): one per operator, tuned in startup handlers.

Every section and default of upstream 1.45, and the old spellings that keep working with a DeprecationWarning:
`settings.batching` (= `settings.queueing`), `BatchingSettings` (= `QueueingSettings`),
`settings.queueing.batch_window` (a no-op), `settings.execution.max_workers` (resizes the executor).
"""
import concurrent.futures
import dataclasses
import logging
import warnings
from collections.abc import Iterable, MutableMapping
from typing import Any

from kopf._storage import diffbasestorages, progressstorages

Backoffs = float | Iterable[float]
SelectorMapping = MutableMapping[Any, str]  # resource selector (str, tuple, EVERYTHING, callable) → selector


@dataclasses.dataclass
class ProcessSettings:
    """`settings.process`: how the operator's process exits, and its memory."""
    ultimate_exiting_timeout: float | None = 600.0
    release_memory: bool = True  # glibc: free heap to the OS after the start and large listings; a fixed mmap threshold
    listing_gc_threshold: int | None = 50_000  # gc's gen-0 threshold while initial listings run (None: as it is)


@dataclasses.dataclass
class PostingSettings:
    """`settings.posting`: posting Kubernetes events for handlers and (optionally) logs."""
    enabled: bool = True
    loggers: bool = False
    level: int = logging.INFO
    reporting_component: str = 'kopf'
    reporting_instance: str = 'dev'
    event_name_prefix: str = 'kopf-event-'
    default_backoffs: Backoffs = (1, 1, 2, 3, 5, 8, 13, 21)
    logging_backoffs: Backoffs = (1, 1, 2, 3, 5)
    worker_limit: int | None = None
    idle_timeout: float = 1.0


@dataclasses.dataclass
class LeaseSettings:
    """`settings.peering.lease`: leader election on a `coordination.k8s.io/v1` Lease (`kopf run --lease`).

    Off unless `name` is set. The namespace: this, else `$POD_NAMESPACE`, else the credentials'
    context's, else `default`. The durations (seconds) are client-go's defaults.
    """
    name: str | None = None
    namespace: str | None = None
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    shards: int = 0  # `--shards N`: N shard Leases `<name>-<i>`, shared among the replicas (0: leader election)


@dataclasses.dataclass
class PeeringSettings:
    """`settings.peering`: operator peering, so only one operator handles the objects."""
    name: str = 'default'
    priority: int = 0
    lifetime: int = 60
    mandatory: bool = False
    standalone: bool = False
    stealth: bool = False
    clusterwide: bool = False
    lease: LeaseSettings = dataclasses.field(default_factory=LeaseSettings)

    @property
    def namespaced(self) -> bool:
        return not self.clusterwide

    @namespaced.setter
    def namespaced(self, value: bool) -> None:
        self.clusterwide = not value


@dataclasses.dataclass
class WatchingSettings:
    """`settings.watching`: timeouts, backoffs and selectors of the watch streams."""
    server_timeout: float | None = None
    client_timeout: float | None = None
    connect_timeout: float | None = None
    reconnect_backoff: float = 0.1
    inactivity_timeout: float | None = 70.0
    chunk_size: int | None = 500  # pages of the initial LIST (None: one unpaginated LIST; decisions #19)
    initial_streaming: bool = False
    label_selectors: SelectorMapping = dataclasses.field(default_factory=dict)
    field_selectors: SelectorMapping = dataclasses.field(default_factory=dict)
    shard_selectors: SelectorMapping = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class QueueingSettings:
    """`settings.queueing` (old: `settings.batching`): the per-object workers."""
    worker_limit: int | None = None
    idle_timeout: float = 5.0
    exit_timeout: float = 2.0
    error_delays: Backoffs = (1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610)

    @property
    def batch_window(self) -> float:
        warnings.warn('settings.queueing.batch_window is deprecated and does nothing: '
                      'events are no longer batched by time.', DeprecationWarning, stacklevel=2)
        return 0.1

    @batch_window.setter
    def batch_window(self, _: float) -> None:
        warnings.warn('settings.queueing.batch_window is deprecated and does nothing: '
                      'events are no longer batched by time.', DeprecationWarning, stacklevel=2)


BatchingSettings = QueueingSettings  # the old name (before 1.42)


@dataclasses.dataclass
class ScanningSettings:
    """`settings.scanning`: whether resources and namespaces are rediscovered at runtime."""
    disabled: bool = False


@dataclasses.dataclass
class AdmissionSettings:
    """`settings.admission`: the admission webhook server and its managed configurations."""
    server: Any = None  # a webhook server or tunnel: a callable yielding client configs
    managed: str | None = None


@dataclasses.dataclass
class ExecutionSettings:
    """`settings.execution`: the executor of sync handlers and the default retry backoff."""
    default_backoff: float = 60
    executor: concurrent.futures.Executor = dataclasses.field(default_factory=concurrent.futures.ThreadPoolExecutor)
    _max_workers: int | None = dataclasses.field(default=None, repr=False)

    @property
    def max_workers(self) -> int | None:
        return self._max_workers

    @max_workers.setter
    def max_workers(self, value: int) -> None:
        if value < 1:
            raise ValueError('Can\'t set max_workers below 1.')
        if not hasattr(self.executor, '_max_workers'):
            raise TypeError(f'The executor {self.executor!r} cannot be resized; set your own executor instead.')
        self.executor._max_workers = value
        self._max_workers = value


@dataclasses.dataclass
class NetworkingSettings:
    """`settings.networking`: API request timeouts and the retry backoffs of API errors."""
    request_timeout: float | None = 300
    connect_timeout: float | None = None
    error_backoffs: Backoffs = (1, 1, 2, 3, 5, 8, 13, 21)
    enforce_retry_after: bool = False
    trust_env: bool = False


@dataclasses.dataclass
class PersistenceSettings:
    """`settings.persistence`: the finalizer name and where progress and diff-base are kept."""
    finalizer: str = 'kopf.zalando.org/KopfFinalizerMarker'
    progress_storage: progressstorages.ProgressStorage = dataclasses.field(
        default_factory=progressstorages.SmartProgressStorage)
    diffbase_storage: diffbasestorages.DiffBaseStorage = dataclasses.field(
        default_factory=diffbasestorages.AnnotationsDiffBaseStorage)
    consistency_timeout: float = 5.0


@dataclasses.dataclass
class BackgroundSettings:
    """`settings.background`: how daemons and timers are stopped."""
    cancellation_polling: float = 60
    instant_exit_timeout: float | None = None
    instant_exit_zero_time_cycles: int = 10


@dataclasses.dataclass
class MetricsSettings:
    """`settings.metrics`: Prometheus metrics (`pip install "kopf[metrics]"`; docs/metrics.md)."""
    endpoint: str | int | None = None  # [HOST:]PORT of /metrics (`kopf run --metrics`); localhost unless a host
    enabled: bool = False  # collected without an endpoint of its own too: served on the liveness endpoint


@dataclasses.dataclass
class CRDSettings:
    """`settings.crds`: the CRDs of typed resources (docs/models.md), created or updated at startup."""
    install: list[type] = dataclasses.field(default_factory=list)  # resource classes (`kopf run --install-crds`)


@dataclasses.dataclass
class OperatorSettings:
    """All settings of one operator (`kopf.OperatorSettings`), tuned in startup handlers."""
    process: ProcessSettings = dataclasses.field(default_factory=ProcessSettings)
    posting: PostingSettings = dataclasses.field(default_factory=PostingSettings)
    peering: PeeringSettings = dataclasses.field(default_factory=PeeringSettings)
    watching: WatchingSettings = dataclasses.field(default_factory=WatchingSettings)
    queueing: QueueingSettings = dataclasses.field(default_factory=QueueingSettings)
    scanning: ScanningSettings = dataclasses.field(default_factory=ScanningSettings)
    admission: AdmissionSettings = dataclasses.field(default_factory=AdmissionSettings)
    execution: ExecutionSettings = dataclasses.field(default_factory=ExecutionSettings)
    networking: NetworkingSettings = dataclasses.field(default_factory=NetworkingSettings)
    persistence: PersistenceSettings = dataclasses.field(default_factory=PersistenceSettings)
    background: BackgroundSettings = dataclasses.field(default_factory=BackgroundSettings)
    metrics: MetricsSettings = dataclasses.field(default_factory=MetricsSettings)
    crds: CRDSettings = dataclasses.field(default_factory=CRDSettings)

    @property
    def batching(self) -> QueueingSettings:
        warnings.warn('settings.batching is deprecated; use settings.queueing.', DeprecationWarning, stacklevel=2)
        return self.queueing

    @batching.setter
    def batching(self, value: QueueingSettings) -> None:
        warnings.warn('settings.batching is deprecated; use settings.queueing.', DeprecationWarning, stacklevel=2)
        self.queueing = value


OperatorConfig = OperatorSettings  # the old name, still used by old operators and the seeds
