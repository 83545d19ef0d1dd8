"""Fixtures for the client layer's tests: the local cluster over real HTTP, and a client to it."""
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kopf._api import client as client_
from kopf._api import credentials
from kopf._model.settings import OperatorSettings


@pytest.fixture
async def cluster() -> AsyncIterator[Any]:
    """The emulator, in the test's own event loop (so that looptime sees all its waits)."""
    try:
        from kopf.testing import LocalCluster
    except ImportError:
        from kopf._cluster.server import Emulator
        emulator = Emulator()
        await emulator.start()
        try:
            yield emulator
        finally:
            await emulator.stop()
    else:
        async with LocalCluster() as local:
            yield local


@pytest.fixture
def settings() -> OperatorSettings:
    return OperatorSettings()


@pytest.fixture
async def client(cluster: Any, settings: OperatorSettings) -> AsyncIterator[client_.APIClient]:
    vault = credentials.Vault()
    vault.populate([credentials.ConnectionInfo(server=cluster.url, default_namespace='default')])
    api = client_.APIClient(vault, settings)
    try:
        yield api
    finally:
        await api.close()
