"""A working operator end to end: create/update/delete/field handlers, results, finalizer, diff-base."""
from typing import Any

import kopf
from kopf.testing import LocalCluster

from .conftest import ROOT, Starter, eventually, example


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


async def test_wire_format_of_the_diff_base(cluster: LocalCluster, registry: kopf.OperatorRegistry,
                                            start_operator: Starter) -> None:
    kopf.on.create('kopfexamples', registry=registry)(lambda **_: None)
    await start_operator()
    cluster.apply(str(ROOT / 'examples' / 'obj.yaml'))

    def handled() -> Any:
        obj = cluster.get('kopf.dev/v1', 'KopfExample', 'kopf-example-1', 'default')
        return (obj or {}).get('metadata', {}).get('annotations', {}).get('kopf.zalando.org/last-handled-configuration')

    value = await eventually(handled)
    assert value == ('{"spec":{"duration":"1m","field":"value","items":["item1","item2"]},'
                     '"metadata":{"labels":{"somelabel":"somevalue"},'
                     '"annotations":{"someannotation":"somevalue"}}}\n')
