"""Upstream 1.45's public names in upstream-style annotations: daemons' stop flag, indices, admission types."""
import enum
import typing

import pytest

import kopf
from kopf._indices import lookups as indices

UPSTREAM_NAMES = [  # upstream 1.45's `dir(kopf)`, hard-coded; `KopfRunner` lives in kopf.testing
    # decorators
    'on', 'subhandler', 'register', 'daemon', 'timer', 'index', 'execute',
    # running
    'run', 'operator', 'spawn_tasks', 'run_tasks', 'configure', 'LogFormat',
    # settings/storage
    'OperatorSettings', 'DiffBaseStorage', 'AnnotationsDiffBaseStorage', 'StatusDiffBaseStorage',
    'MultiDiffBaseStorage', 'ProgressRecord', 'ProgressStorage', 'AnnotationsProgressStorage',
    'StatusProgressStorage', 'MultiProgressStorage', 'SmartProgressStorage',
    # errors
    'TemporaryError', 'PermanentError', 'HandlerTimeoutError', 'HandlerRetriesError', 'AdmissionError',
    'ErrorsMode', 'LoginError',
    # events
    'event', 'info', 'warn', 'exception',
    # hierarchies
    'adopt', 'label', 'harmonize_naming', 'adjust_namespace', 'append_owner_reference',
    'remove_owner_reference', 'build_object_reference', 'build_owner_reference',
    # auth
    'ConnectionInfo', 'AiohttpSession', 'login_via_pykube', 'login_via_client', 'login_via_async_client',
    'login_with_kubeconfig', 'login_with_service_account',
    # filters
    'PRESENT', 'ABSENT', 'not_', 'all_', 'any_', 'none_',
    # registry/lifecycle
    'OperatorRegistry', 'get_default_registry', 'set_default_registry', 'lifecycles',
    'get_default_lifecycle', 'set_default_lifecycle',
    # types
    'Body', 'Spec', 'Meta', 'Status', 'Labels', 'Annotations', 'BodyEssence', 'RawBody', 'RawEvent',
    'RawEventType', 'ObjectReference', 'OwnerReference', 'Patch', 'PatchFn', 'Diff', 'DiffItem',
    'DiffOperation', 'FieldSpec', 'FieldPath', 'HandlerId', 'Reason', 'Resource', 'EVERYTHING', 'Memo',
    'Index', 'Store', 'Logger', 'ObjectLogger', 'LocalObjectLogger', 'DaemonStopped', 'DaemonStoppingReason',
    'SyncDaemonStopperChecker', 'AsyncDaemonStopperChecker',
    # admission
    'WebhookServer', 'WebhookK3dServer', 'WebhookMinikubeServer', 'WebhookDockerDesktopServer',
    'WebhookNgrokTunnel', 'WebhookAutoServer', 'WebhookAutoTunnel', 'WebhookClientConfig',
    'WebhookClientConfigService', 'WebhookFn', 'WebhookServerProtocol', 'Operation', 'UserInfo', 'Headers',
    'SSLPeer',
    # version
    '__version__', '__version_tuple__', '__commit_id__',
]

@pytest.mark.parametrize('name', UPSTREAM_NAMES)
def test_every_spec_name_is_exported(name: str) -> None:
    assert hasattr(kopf, name)
    assert name in kopf.__all__


def test_the_runner_lives_in_kopf_testing() -> None:
    import kopf.testing
    assert hasattr(kopf.testing, 'KopfRunner')


def test_all_lists_only_existing_names_once() -> None:
    assert len(kopf.__all__) == len(set(kopf.__all__))
    assert [name for name in kopf.__all__ if not hasattr(kopf, name)] == []


@pytest.mark.parametrize('name', [name for name in kopf.__all__ if isinstance(getattr(kopf, name), type)
                                  or hasattr(getattr(kopf, name), '__code__')])
def test_public_names_show_kopf_in_their_reprs(name: str) -> None:
    obj = getattr(kopf, name)
    assert not obj.__module__.startswith('kopf._'), f'{name}: {obj!r}'
    if isinstance(obj, type) and not issubclass(obj, enum.Enum):  # enums show `<enum 'Reason'>`
        assert repr(obj) == f"<class '{obj.__module__}.{obj.__qualname__}'>"


# --- DaemonStoppingReason & DaemonStopped ---

def test_stopping_reasons_are_combinable_flags() -> None:
    assert issubclass(kopf.DaemonStoppingReason, enum.Flag)
    assert [r.name for r in kopf.DaemonStoppingReason] == [
        'DONE', 'FILTERS_MISMATCH', 'RESOURCE_DELETED', 'OPERATOR_PAUSING', 'OPERATOR_EXITING',
        'DAEMON_SIGNALLED', 'DAEMON_CANCELLED', 'DAEMON_ABANDONED']
    both = kopf.DaemonStoppingReason.DONE | kopf.DaemonStoppingReason.OPERATOR_EXITING
    assert kopf.DaemonStoppingReason.DONE in both
    assert kopf.DaemonStoppingReason.RESOURCE_DELETED not in both


def test_stopped_flag_is_falsy_until_set() -> None:
    stopped = kopf.DaemonStopped()
    assert not stopped
    assert not stopped.is_set()
    assert stopped.reason is None
    assert 'False' in repr(stopped)


def test_stopped_flag_is_truthy_with_accumulated_reasons() -> None:
    stopped = kopf.DaemonStopped()
    stopped.set(kopf.DaemonStoppingReason.FILTERS_MISMATCH)
    assert stopped
    assert stopped.is_set()
    assert stopped.reason == kopf.DaemonStoppingReason.FILTERS_MISMATCH
    stopped.set(kopf.DaemonStoppingReason.OPERATOR_EXITING)
    assert stopped.reason == (kopf.DaemonStoppingReason.FILTERS_MISMATCH
                              | kopf.DaemonStoppingReason.OPERATOR_EXITING)
    assert 'OPERATOR_EXITING' in repr(stopped)


def test_bare_stopped_flag_cannot_wait() -> None:
    with pytest.raises(TypeError, match='cannot wait'):
        kopf.DaemonStopped().wait(0)


def test_deprecated_checkers_are_the_stopped_flag() -> None:
    assert kopf.SyncDaemonStopperChecker is kopf.DaemonStopped
    assert kopf.AsyncDaemonStopperChecker is kopf.DaemonStopped


# --- Index & Store ---

def test_index_starts_empty() -> None:
    index: kopf.Index[str, str] = kopf.Index()
    assert len(index) == 0
    assert dict(index) == {}
    with pytest.raises(KeyError):
        index['x']


def test_mapping_results_put_values_under_their_keys() -> None:
    index: kopf.Index[str, str] = kopf.Index()
    indices.replace(index, ('ns1', 'pod1', 'uid1'), {'ns1': 'pod1'})
    indices.replace(index, ('ns1', 'pod2', 'uid2'), {'ns1': 'pod2', 'all': 'pod2'})
    assert set(index) == {'ns1', 'all'}
    assert isinstance(index['ns1'], kopf.Store)
    assert sorted(index['ns1']) == ['pod1', 'pod2']
    assert len(index['ns1']) == 2
    assert 'pod2' in index['ns1'] and 'pod3' not in index['ns1']
    assert list(index['all']) == ['pod2']
    assert 'pod2' in repr(index['all']) and 'ns1' in repr(index)


def test_non_mapping_results_go_under_key_none() -> None:
    index: kopf.Index[None, int] = kopf.Index()
    indices.replace(index, 'obj1', 10)
    indices.replace(index, 'obj2', 20)
    assert list(index) == [None]
    assert sorted(index[None]) == [10, 20]


def test_none_results_keep_the_stale_values() -> None:
    index: kopf.Index[str, str] = kopf.Index()
    indices.replace(index, 'obj1', {'k': 'v'})
    indices.replace(index, 'obj1', None)
    assert list(index['k']) == ['v']


def test_new_results_replace_the_objects_old_values_and_drop_empty_keys() -> None:
    index: kopf.Index[str, str] = kopf.Index()
    indices.replace(index, 'obj1', {'old': 'v1', 'both': 'v1'})
    indices.replace(index, 'obj2', {'both': 'v2'})
    indices.replace(index, 'obj1', {'both': 'v1b', 'new': 'v1b'})
    assert set(index) == {'both', 'new'}
    assert sorted(index['both']) == ['v1b', 'v2']


def test_empty_mapping_results_remove_the_object() -> None:
    index: kopf.Index[str, str] = kopf.Index()
    indices.replace(index, 'obj1', {'k': 'v'})
    indices.replace(index, 'obj1', {})
    assert len(index) == 0


def test_discarding_removes_the_objects_values_and_empty_keys() -> None:
    index: kopf.Index[str, str] = kopf.Index()
    indices.replace(index, 'obj1', {'a': 'v1', 'b': 'v1'})
    indices.replace(index, 'obj2', {'a': 'v2'})
    indices.discard(index, 'obj1')
    assert list(index) == ['a']
    assert list(index['a']) == ['v2']
    indices.discard(index, 'obj1')  # idempotent
    indices.discard(index, 'never-seen')
    indices.discard(index, 'obj2')
    assert len(index) == 0


def test_index_and_store_are_read_only() -> None:
    index: kopf.Index[str, str] = kopf.Index()
    indices.replace(index, 'obj1', {'k': 'v'})
    with pytest.raises(TypeError):
        index['k'] = index['k']  # type: ignore[index]
    store = index['k']
    assert not hasattr(store, 'add') and not hasattr(store, 'append') and not hasattr(store, 'remove')
    assert not hasattr(index, 'pop') and not hasattr(index, 'clear')


def test_stores_of_equal_unhashable_values_keep_one_per_object() -> None:
    index: kopf.Index[str, dict[str, int]] = kopf.Index()
    indices.replace(index, 'obj1', {'k': {'x': 1}})
    indices.replace(index, 'obj2', {'k': {'x': 1}})
    assert list(index['k']) == [{'x': 1}, {'x': 1}]
    assert {'x': 1} in index['k']


# --- RawEventType and admission types ---

def test_raw_event_types() -> None:
    assert typing.get_origin(kopf.RawEventType) is typing.Literal
    assert set(typing.get_args(kopf.RawEventType)) == {None, 'ADDED', 'MODIFIED', 'DELETED'}


def test_webhook_client_config_typed_dicts() -> None:
    service: kopf.WebhookClientConfigService = {'namespace': 'ns', 'name': 'svc', 'path': '/p', 'port': 443}
    config: kopf.WebhookClientConfig = {'url': None, 'caBundle': 'Q0E=', 'service': service}
    assert config['service'] == service
    assert kopf.WebhookClientConfig.__optional_keys__ == {'url', 'caBundle', 'service'}
    assert kopf.WebhookClientConfigService.__optional_keys__ == {'namespace', 'name', 'path', 'port'}


def test_webhook_protocols_are_protocols() -> None:
    assert typing.Protocol in kopf.WebhookFn.__mro__
    assert typing.Protocol in kopf.WebhookServerProtocol.__mro__


SERVING = ['WebhookServer', 'WebhookK3dServer', 'WebhookMinikubeServer', 'WebhookDockerDesktopServer',
           'WebhookAutoServer', 'WebhookNgrokTunnel', 'WebhookAutoTunnel']


@pytest.mark.parametrize('name', SERVING)
def test_webhook_servers_are_made_without_serving(name: str) -> None:
    server = getattr(kopf, name)()  # nothing listens, nothing is generated until it is called
    assert callable(server)


@pytest.mark.parametrize('cls, kwargs', [
    (kopf.WebhookServer, dict(addr='0.0.0.0', port=9443, path='/hooks', host='example.com', cadata=b'x',
                              cafile='ca.pem', cadump='dump.pem', context=None, insecure=True,
                              certfile='cert.pem', pkeyfile='key.pem', password='pw', extra_sans=['a'],
                              verify_mode=None, verify_cafile='v.pem', verify_capath='/v',
                              verify_cadata='v', file_check_interval=10)),
    (kopf.WebhookK3dServer, dict(port=1234, insecure=True)),
    (kopf.WebhookMinikubeServer, dict(host='h')),
    (kopf.WebhookDockerDesktopServer, dict(addr='127.0.0.1')),
    (kopf.WebhookAutoServer, dict(port=1234, certfile='c', pkeyfile='k')),
])
def test_webhook_servers_accept_the_upstream_parameters(cls: type, kwargs: dict[str, object]) -> None:
    server = cls(**kwargs)
    assert server.port == kwargs.get('port')


@pytest.mark.parametrize('cls, kwargs', [
    (kopf.WebhookNgrokTunnel, dict(addr='127.0.0.1', port=1234, path='/p', token='t', region='eu', binary='ngrok')),
    (kopf.WebhookAutoTunnel, dict(addr='127.0.0.1', port=1234, path='/p')),
])
def test_webhook_tunnels_accept_the_upstream_parameters(cls: type, kwargs: dict[str, object]) -> None:
    tunnel = cls(**kwargs)  # pyngrok is needed only when the tunnel starts
    assert tunnel.port == kwargs.get('port') and tunnel.path == kwargs.get('path')
