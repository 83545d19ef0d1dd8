"""Pytest fixtures for testing operators (re-exported by `kopf.testing` when pytest is installed).

In a `conftest.py`:  `pytest_plugins = ['kopf.testing']`  (or import the fixtures by name).

- `kopf_local_cluster`: a `LocalCluster` in its own thread and loop, for `KopfRunner` and sync tests.
- `kopf_local_cluster_async`: a `LocalCluster` in the test's own event loop (async tests, looptime).
- `kopf_envtest_cluster`: ONE `EnvtestCluster` (a real kube-apiserver) per pytest run (session scope);
  tests share it, so they use namespaces or names of their own.
"""
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from kopf._cluster.control.local import LocalCluster
    from kopf._kits.envtest import EnvtestCluster


@pytest.fixture
def kopf_local_cluster() -> Iterator['LocalCluster']:
    """The pytest fixture of a `LocalCluster` in its own thread and event loop (for `KopfRunner`, sync tests)."""
    from kopf._cluster.control.local import LocalCluster  # the emulator: only for this fixture
    with LocalCluster() as cluster:
        yield cluster


@pytest.fixture
async def kopf_local_cluster_async() -> AsyncIterator['LocalCluster']:
    """The pytest fixture of a `LocalCluster` in the test's own event loop (async tests, looptime)."""
    from kopf._cluster.control.local import LocalCluster  # the emulator: only for this fixture
    async with LocalCluster() as cluster:
        yield cluster


@pytest.fixture(scope='session')
def kopf_envtest_cluster() -> Iterator['EnvtestCluster']:
    """The pytest fixture of ONE `EnvtestCluster` (a real kube-apiserver) per pytest run, shared by the tests."""
    from kopf._kits.envtest import EnvtestCluster  # optional: `cryptography`
    with EnvtestCluster() as cluster:
        yield cluster
