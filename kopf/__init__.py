"""kopf: Kubernetes operators in plain Python.

The facade: every public name is re-exported here, and nothing else lives here.
Code written for upstream Kopf 1.x imports from this module unchanged.
Each area keeps its re-exports in its own block below.
"""
from typing import TYPE_CHECKING

from kopf import _version

#: Always None here: kept because upstream Kopf 1.x has the name too.
__commit_id__: str | None = None
if TYPE_CHECKING:  # read from the package metadata when asked for: kopf._version
    #: The installed version, e.g. `'0.1.0'` (`kopf --version` says it too).
    __version__: str
    #: The version as a tuple, e.g. `(0, 1, 0)`.
    __version_tuple__: tuple[int | str, ...]
else:
    __getattr__ = _version.lazy

# --- block: model basics ---
from kopf._core.bodies import (
    Annotations,
    Body,
    BodyEssence,
    Labels,
    Meta,
    RawBody,
    RawEvent,
    Spec,
    Status,
)
from kopf._core.causes import Reason
from kopf._shared.fields import FieldPath, FieldSpec
from kopf._core.patches import Patch, PatchFn

# --- block: handlers (decorators, filters, registry, errors, memo) ---
from kopf import on
from kopf.on import daemon, index, register, subhandler, timer
from kopf._core.errors import (
    AdmissionError,
    ErrorsMode,
    HandlerFatalError,
    HandlerRetriesError,
    HandlerRetryError,
    HandlerTimeoutError,
    PermanentError,
    TemporaryError,
)
from kopf._core.filters import ABSENT, PRESENT, all_, any_, none_, not_
from kopf._core.handlers import Operation
from kopf._core.handlerids import HandlerId
from kopf._core.kwargs import Headers, Logger, SSLPeer, UserInfo
from kopf._core.memos import Memo
from kopf._core.registries import OperatorRegistry, get_default_registry, set_default_registry
from kopf._core.resources import Resource
from kopf._core.selectors import EVERYTHING
from kopf._engine.invoking import execute
# --- end block: handlers ---

# --- block: persistence (settings, storages, diffs) ---
from kopf._core.diffs import Diff, DiffItem, DiffOperation
from kopf._core.settings import OperatorConfig, OperatorSettings
from kopf._storage.diffbasestorages import (
    AnnotationsDiffBaseStorage,
    DiffBaseStorage,
    MultiDiffBaseStorage,
    StatusDiffBaseStorage,
)
from kopf._storage.progressstorages import (
    AnnotationsProgressStorage,
    MultiProgressStorage,
    ProgressRecord,
    ProgressStorage,
    SmartProgressStorage,
    StatusProgressStorage,
)
# --- end block: persistence ---

# --- block: api client (credentials, errors, login) ---
from kopf._api.credentials import AiohttpSession, ConnectionInfo
from kopf._api.apierrors import LoginError
from kopf._api.events import event, exception, info, warn
from kopf._api.loginning import (
    login_via_async_client,
    login_via_client,
    login_via_pykube,
    login_with_kubeconfig,
    login_with_service_account,
)
# --- end block: api client ---

# --- block: kits (hierarchies) ---
from kopf._kits.hierarchies import (
    ObjectReference,
    OwnerReference,
    adjust_namespace,
    adopt,
    append_owner_reference,
    build_object_reference,
    build_owner_reference,
    harmonize_naming,
    label,
    remove_owner_reference,
)
# --- end block: kits ---

# --- block: compat types (daemons, indices, admission) ---
from kopf._admission.servers import (
    WebhookAutoServer,
    WebhookAutoTunnel,
    WebhookDockerDesktopServer,
    WebhookK3dServer,
    WebhookMinikubeServer,
    WebhookNgrokTunnel,
    WebhookServer,
)
from kopf._admission.protocols import (
    WebhookClientConfig,
    WebhookClientConfigService,
    WebhookFn,
    WebhookServerProtocol,
)
from kopf._core.bodies import RawEventType
from kopf._daemons.reasons import (
    AsyncDaemonStopperChecker,
    DaemonStopped,
    DaemonStoppingReason,
    SyncDaemonStopperChecker,
)
from kopf._indices.lookups import Index, Store
# --- end block: compat types ---

# --- block: typed resources (models become CRDs; no pydantic until a model is used) ---
from kopf._typed.declaring import custom_resource
from kopf._typed.markers import (
    Atomic,
    EmbeddedResource,
    Format,
    Granular,
    ListMap,
    ListSet,
    PreserveUnknownFields,
    PrinterColumn,
    Rule,
    Scale,
)
# --- end block: typed resources ---

# --- block: reactor (running, embedding, lifecycles, loggers) ---
from kopf import lifecycles
from kopf.lifecycles import get_default_lifecycle, set_default_lifecycle
from kopf._engine.loggers import LocalObjectLogger, LogFormat, ObjectLogger, configure
from kopf._engine.running import operator, run, run_tasks, spawn_tasks
# --- end block: reactor ---

__all__ = [
    '__commit_id__',
    '__version__',
    '__version_tuple__',
    # model basics
    'Annotations',
    'Body',
    'BodyEssence',
    'FieldPath',
    'FieldSpec',
    'Labels',
    'Meta',
    'Patch',
    'PatchFn',
    'RawBody',
    'RawEvent',
    'Reason',
    'Spec',
    'Status',
    # --- all: handlers ---
    'ABSENT',
    'AdmissionError',
    'EVERYTHING',
    'ErrorsMode',
    'HandlerFatalError',
    'HandlerId',
    'HandlerRetriesError',
    'HandlerRetryError',
    'HandlerTimeoutError',
    'Headers',
    'Logger',
    'Memo',
    'Operation',
    'OperatorRegistry',
    'PRESENT',
    'PermanentError',
    'Resource',
    'SSLPeer',
    'TemporaryError',
    'UserInfo',
    'all_',
    'any_',
    'daemon',
    'execute',
    'get_default_registry',
    'index',
    'none_',
    'not_',
    'on',
    'register',
    'set_default_registry',
    'subhandler',
    'timer',
    # --- end all: handlers ---
    # --- all: persistence ---
    'AnnotationsDiffBaseStorage',
    'AnnotationsProgressStorage',
    'Diff',
    'DiffBaseStorage',
    'DiffItem',
    'DiffOperation',
    'MultiDiffBaseStorage',
    'MultiProgressStorage',
    'OperatorConfig',
    'OperatorSettings',
    'ProgressRecord',
    'ProgressStorage',
    'SmartProgressStorage',
    'StatusDiffBaseStorage',
    'StatusProgressStorage',
    # --- end all: persistence ---
    # --- all: api client ---
    'AiohttpSession',
    'ConnectionInfo',
    'LoginError',
    'event',
    'exception',
    'info',
    'login_via_async_client',
    'login_via_client',
    'login_via_pykube',
    'login_with_kubeconfig',
    'login_with_service_account',
    'warn',
    # --- end all: api client ---
    # --- all: kits ---
    'ObjectReference',
    'OwnerReference',
    'adjust_namespace',
    'adopt',
    'append_owner_reference',
    'build_object_reference',
    'build_owner_reference',
    'harmonize_naming',
    'label',
    'remove_owner_reference',
    # --- end all: kits ---
    # --- all: compat types ---
    'AsyncDaemonStopperChecker',
    'DaemonStopped',
    'DaemonStoppingReason',
    'Index',
    'RawEventType',
    'Store',
    'SyncDaemonStopperChecker',
    'WebhookAutoServer',
    'WebhookAutoTunnel',
    'WebhookClientConfig',
    'WebhookClientConfigService',
    'WebhookDockerDesktopServer',
    'WebhookFn',
    'WebhookK3dServer',
    'WebhookMinikubeServer',
    'WebhookNgrokTunnel',
    'WebhookServer',
    'WebhookServerProtocol',
    # --- end all: compat types ---
    # --- all: typed resources ---
    'Atomic',
    'EmbeddedResource',
    'Format',
    'Granular',
    'ListMap',
    'ListSet',
    'PreserveUnknownFields',
    'PrinterColumn',
    'Rule',
    'Scale',
    'custom_resource',
    # --- end all: typed resources ---
    # --- all: reactor ---
    'LocalObjectLogger',
    'LogFormat',
    'ObjectLogger',
    'configure',
    'get_default_lifecycle',
    'lifecycles',
    'operator',
    'run',
    'run_tasks',
    'set_default_lifecycle',
    'spawn_tasks',
    # --- end all: reactor ---
]

# Public names show where users import them from: `<class 'kopf.Body'>`, not the private module.
for _name in __all__:
    _obj = globals().get(_name)  # (`__version__` is read lazily)
    if isinstance(_obj, type) or (callable(_obj) and hasattr(_obj, '__code__')):
        if getattr(_obj, '__module__', '').startswith('kopf._'):
            _obj.__module__ = __name__
del _name, _obj
