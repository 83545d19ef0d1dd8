"""The initial listing of many objects and their resumption are reported: once when all are resumed."""
from typing import Any

import pytest

import kopf

from ..backends import Cluster
from .conftest import Starter, eventually, example


async def test_resuming_the_listed_objects_ends_with_one_line(cluster: Cluster, registry: kopf.OperatorRegistry,
                                                              start_operator: Starter,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    for idx in range(30):
        cluster.apply(example(f'kex-{idx}'))
    resumed: set[str] = set()

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(name: str, **_: Any) -> None:
        resumed.add(name)

    await start_operator()
    await eventually(lambda: len(resumed) == 30)

    def lines() -> list[str]:
        return [r.getMessage() for r in caplog.records if r.getMessage().startswith('Resumed ')]
    await eventually(lines)
    [line] = lines()
    assert line.startswith('Resumed 30 objects (kopfexamples.kopf.dev) in ') and line.endswith(' s.')
