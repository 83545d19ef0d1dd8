"""kopf's pytest plugin: `kopf.testing`'s fixtures in every pytest run of a venv with kopf installed.

pytest loads it through the `pytest11` entry point named `kopf` (setup.py); `-p no:kopf` turns it off.
It is a top-level module, not one inside the `kopf` package, because importing any `kopf.<module>`
imports the facade (`kopf/__init__.py`, ~80 modules), which would then be paid by every pytest run of
the venv, also of suites that never use kopf: here only pytest is imported, and the local cluster or
envtest when a fixture is requested. `pytest_plugins = ['kopf.testing']` in a conftest.py keeps working
beside it: that module re-exports these same fixtures under its own name.

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
    from kopf._cluster.control.local import LocalCluster
    with LocalCluster() as cluster:
        yield cluster


@pytest.fixture
async def kopf_local_cluster_async() -> AsyncIterator['LocalCluster']:
    """The pytest fixture of a `LocalCluster` in the test's own event loop (async tests, looptime)."""
    from kopf._cluster.control.local import LocalCluster
    async with LocalCluster() as cluster:
        yield cluster


@pytest.fixture(scope='session')
def kopf_envtest_cluster() -> Iterator['EnvtestCluster']:
    """The pytest fixture of ONE `EnvtestCluster` (a real kube-apiserver) per pytest run, shared by the tests."""
    from kopf._kits.envtest import EnvtestCluster
    with EnvtestCluster() as cluster:
        yield cluster
