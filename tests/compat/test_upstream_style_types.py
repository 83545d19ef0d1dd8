"""The upstream-style module that annotates handlers with `kopf.*` types imports and its handlers run."""
import asyncio
import importlib.util
import pathlib
import sys
import types
from collections.abc import Iterator

import pytest

import kopf
from kopf._daemons.stoppers import AsyncDaemonStopped, SyncDaemonStopped
from kopf._indices import lookups

PATH = pathlib.Path(__file__).with_name('upstream_style_types.py')


@pytest.fixture
def module() -> Iterator[types.ModuleType]:
    old_registry = kopf.get_default_registry()
    kopf.set_default_registry(kopf.OperatorRegistry())
    name = '__kopf_script_0__upstream_style_types'
    spec = importlib.util.spec_from_file_location(name, PATH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.modules.pop(name, None)
        kopf.set_default_registry(old_registry)


def test_the_module_imports_and_registers(module: types.ModuleType) -> None:
    ids = {h.id for h in kopf.get_default_registry().handlers}
    assert ids == {'configure', 'pods_by_namespace', 'event_fn', 'monitor', 'sync_monitor', 'old_monitor',
                   'old_timer'}
    assert module.monitor.__annotations__['stopped'] is kopf.DaemonStopped


def test_the_startup_does_not_construct_a_server_by_default(module: types.ModuleType) -> None:
    settings = kopf.OperatorSettings()
    module.configure(settings=settings)
    assert settings.admission.server is None


def test_the_startup_makes_the_asked_server(module: types.ModuleType) -> None:
    settings = kopf.OperatorSettings()
    settings.admission.managed = 'auto'
    module.configure(settings=settings)  # nothing serves (or needs pyngrok) until the operator starts it
    assert isinstance(settings.admission.server, kopf.WebhookAutoTunnel) and settings.admission.server.port == 9443


async def test_a_custom_server_yields_client_configs(module: types.ModuleType) -> None:
    async def fn(request: object, /, **_: object) -> dict[str, object]:
        return {}
    server = module.make_server('https://example.com')
    configs = [config async for config in server(fn)]
    assert configs == [{'url': 'https://example.com'},
                       {'service': {'namespace': 'default', 'name': 'operator', 'port': 443}}]


def test_the_event_handler_reads_the_index(module: types.ModuleType) -> None:
    index: kopf.Index[str, str] = kopf.Index()
    lookups.replace(index, ('ns1', 'b', 'u1'), module.pods_by_namespace(namespace='ns1', name='b'))
    lookups.replace(index, ('ns1', 'a', 'u2'), module.pods_by_namespace(namespace='ns1', name='a'))
    event = {'type': 'ADDED', 'object': {'metadata': {'namespace': 'ns1'}}}
    assert module.event_fn(type='ADDED', event=event, pods_by_namespace=index) == ['a', 'b']
    assert module.count_pods(index['ns1']) == 2


async def test_the_async_daemons_stop(module: types.ModuleType) -> None:
    stopped = AsyncDaemonStopped()
    task = asyncio.create_task(module.monitor(stopped=stopped))
    await asyncio.sleep(0)
    stopped.set(kopf.DaemonStoppingReason.RESOURCE_DELETED)
    assert await asyncio.wait_for(task, 1) == kopf.DaemonStoppingReason.RESOURCE_DELETED
    await asyncio.wait_for(module.old_monitor(stopped=AsyncDaemonStopped()), 1)


async def test_the_sync_daemons_stop(module: types.ModuleType) -> None:
    stopped = SyncDaemonStopped()
    future = asyncio.get_running_loop().run_in_executor(None, lambda: module.sync_monitor(stopped=stopped))
    await asyncio.sleep(0.01)
    stopped.set(kopf.DaemonStoppingReason.OPERATOR_PAUSING)
    assert await asyncio.wait_for(future, 5) == kopf.DaemonStoppingReason.OPERATOR_PAUSING
    assert module.old_timer(stopped=SyncDaemonStopped()) is False
