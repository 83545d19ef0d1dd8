"""A working operator end to end: create/update/delete/field handlers, results, finalizer, diff-base."""
from typing import Any

import kopf
from kopf.testing import LocalCluster

from .conftest import Starter, eventually, example


async def test_create_handler_end_to_end(cluster: LocalCluster, registry: kopf.OperatorRegistry,
                                         start_operator: Starter) -> None:
    calls: list[dict[str, Any]] = []

    @kopf.on.create('kopfexamples', id='create_fn', registry=registry)
    async def create_fn(body: Any, diff: Any, old: Any, new: Any, **_: Any) -> dict[str, Any]:
        calls.append(dict(diff=diff, old=old, new=new))
        return {'message': 'hello'}

    await start_operator()
    cluster.apply(example())

    def handled() -> Any:
        obj = cluster.get('kopf.dev/v1', 'KopfExample', 'kopf-example-1', 'default')
        ok = obj and 'last-handled-configuration' in str(obj['metadata'].get('annotations')) and obj.get('status')
        return obj if ok else None

    obj = await eventually(handled)
    assert obj['status']['create_fn'] == {'message': 'hello'}
    assert len(calls) == 1
    assert calls[0]['old'] is None
    assert calls[0]['diff'] == (('add', (), None, calls[0]['new']),)
