"""End to end: `kopf.adopt()` without an owner inside an `on.event` handler adopts into the event's object."""
from typing import Any

import kopf
from kopf.testing import LocalCluster

from .conftest import Starter, eventually, example


async def test_event_handlers_adopt_into_the_object(cluster: LocalCluster, registry: kopf.OperatorRegistry,
                                                    start_operator: Starter) -> None:
    children: list[dict[str, Any]] = []

    @kopf.on.event('kopfexamples', registry=registry)
    def event_fn(**_: Any) -> None:
        child: dict[str, Any] = {'apiVersion': 'v1', 'kind': 'ConfigMap'}
        kopf.adopt(child)
        children.append(child)

    await start_operator()
    cluster.apply(example())
    await eventually(lambda: children)
    obj = cluster.get('kopf.dev/v1', 'KopfExample', 'kopf-example-1', 'default')
    assert obj is not None
    meta = children[0]['metadata']
    assert meta['ownerReferences'][0]['uid'] == obj['metadata']['uid']
    assert meta['namespace'] == 'default' and meta['generateName'] == 'kopf-example-1-'
    assert meta['labels'] == {'somelabel': 'somevalue'}
