"""Shared fixtures. Keep this file small: area-specific fixtures live in their own directories."""
from collections.abc import AsyncIterator

import pytest

from kopf.testing import LocalCluster


@pytest.fixture
async def local_cluster() -> AsyncIterator[LocalCluster]:
    """A local Kubernetes API in the test's own event loop (so looptime-driven tests see it), on a free port."""
    async with LocalCluster() as cluster:
        yield cluster
