"""Fixtures for the client layer's tests: the local cluster over real HTTP, and a client to it."""
import pathlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kopf._api import client as client_
from kopf._api import credentials
from kopf._core import resources
from kopf._core.settings import OperatorSettings
from kopf.testing import LocalCluster

from .watchers import Consumer

CRD = pathlib.Path(__file__).parent.parent.parent / 'examples' / 'crd.yaml'
KOPFEXAMPLES = resources.Resource('kopf.dev', 'v1', 'kopfexamples', kind='KopfExample', namespaced=True,
                                  subresources=frozenset({'status'}))


@pytest.fixture
async def cluster() -> AsyncIterator[Any]:
    """The emulator, in the test's own event loop (so that looptime sees all its waits)."""
    async with LocalCluster() as local:
        yield local


@pytest.fixture
def settings() -> OperatorSettings:
    """No fake-time request timeout while the in-loop emulator's I/O is in flight: under CPU load, looptime
    could fast-forward to its 300 s before the loopback I/O is delivered (see tests/waiting.py).
    Tests of the request timeout set their own."""
    settings = OperatorSettings()
    settings.networking.request_timeout = None
    return settings


@pytest.fixture
async def client(cluster: Any, settings: OperatorSettings) -> AsyncIterator[client_.APIClient]:
    vault = credentials.Vault()
    vault.populate([credentials.ConnectionInfo(server=cluster.url, default_namespace='default')])
    api = client_.APIClient(vault, settings)
    try:
        yield api
    finally:
        await api.close()


@pytest.fixture
def crd(cluster: Any) -> resources.Resource:
    """The examples' CRD `kopfexamples.kopf.dev` (status subresource, preserve-unknown spec & status)."""
    cluster.apply(str(CRD))
    return KOPFEXAMPLES


@pytest.fixture
async def consumers() -> AsyncIterator[list[Consumer]]:
    started: list[Consumer] = []
    yield started
    for consumer in started:
        await consumer.stop()
