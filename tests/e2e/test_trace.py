"""One object's create → update → delete, traced through the reactor: the modules of the hot path, in order.

`sys.setprofile` records the first entry of each step's function (a coroutine's resumptions are not
new entries). Every cycle must go the same way, each step once:
    queueing (the record is taken) → records.step(Taken) → processing → plans.decide → changing.invoke
    → invoking (each handler due) → plans.settle → applying (when there is a patch) → _api.patching
    → records.step(Done)
Watch events arriving meanwhile go through `records.step(Arrived)` only.
"""
import sys
import types
from collections.abc import Iterator
from typing import Any

import kopf
from kopf._api import objectwrites as patching
from kopf._core import plans, records
from kopf._engine import applying, changing, invoking, processing, queueing

from .conftest import eventually, example, get_example

STEPS = {
    queueing.Dispatcher._serve.__code__: 'queueing',
    records.step.__code__: 'records.step',
    processing.process.__code__: 'processing',
    plans.decide.__code__: 'plans.decide',
    changing.invoke.__code__: 'changing.invoke',
    invoking.invoke_handler.__code__: 'invoking',
    plans.settle.__code__: 'plans.settle',
    applying.apply.__code__: 'applying',
    patching.patch_obj.__code__: 'patching',
}


class Tracer:
    def __init__(self) -> None:
        self.trace: list[str] = []
        self.frames: dict[int, types.FrameType] = {}  # kept alive: their ids are not reused meanwhile

    def __call__(self, frame: types.FrameType, event: str, arg: Any) -> None:
        if event == 'call' and frame.f_code in STEPS and id(frame) not in self.frames:
            self.frames[id(frame)] = frame
            name = STEPS[frame.f_code]
            if name == 'records.step':  # e.g. records.step(Taken): the signal it advances the record by
                name = f"{name}({type(frame.f_locals['signal']).__name__})"
            self.trace.append(name)


def cycles(trace: list[str]) -> Iterator[list[str]]:
    """The trace cut into cycles: each from the record's being taken to the step after its end."""
    current: list[str] = []
    for name in trace:
        if name == 'records.step(Arrived)':
            continue  # a watch event arriving meanwhile (e.g. the echo of our own patch): not the cycle's
        if name == 'queueing' and current:
            yield current
            current = []
        current.append(name)
    if current:
        yield current


async def test_one_object_through_the_reactor(cluster: Any, registry: kopf.OperatorRegistry,
                                              start_operator: Any, kube: Any) -> None:
    calls: list[str] = []

    @kopf.on.create('kopfexamples', id='create_fn', registry=registry)
    async def create_fn(**_: Any) -> dict[str, str]:
        calls.append('create')
        return {'message': 'created'}

    @kopf.on.update('kopfexamples', registry=registry)
    async def update_fn(**_: Any) -> None:
        calls.append('update')

    @kopf.on.delete('kopfexamples', registry=registry)
    async def delete_fn(**_: Any) -> None:
        calls.append('delete')

    tracer = Tracer()
    await start_operator()
    sys.setprofile(tracer)
    try:
        await kube.create(example())
        await eventually(lambda: (get_example(cluster) or {}).get('status', {}).get('create_fn'))
        await kube.patch('kopf-example-1', {'spec': {'field': 'changed'}})
        await eventually(lambda: calls == ['create', 'update'])
        await kube.delete('kopf-example-1')
        await eventually(lambda: get_example(cluster) is None and calls == ['create', 'update', 'delete'])
        # The object can be gone before the cycle that removed its finalizer has ended (a real
        # kube-apiserver answers the patch and streams the deletion faster than our task resumes):
        # wait for every started cycle to end; nothing else runs between this check and the unhooking.
        await eventually(lambda: all(c[-1] == 'records.step(Done)'
                                     for c in cycles(tracer.trace) if 'processing' in c))
    finally:
        sys.setprofile(None)

    assert calls == ['create', 'update', 'delete']
    ran = [c for c in cycles(tracer.trace) if 'processing' in c]
    assert len(ran) >= 4  # the finalizer, creation, update, deletion (and the DELETED event)
    for cycle in ran:
        invoked = cycle.count('invoking')
        applied = cycle.count('applying')
        expected = (['queueing', 'records.step(Taken)', 'processing', 'plans.decide', 'changing.invoke']
                    + ['invoking'] * invoked + ['plans.settle'] + ['applying', 'patching'][:2 * applied]
                    + ['records.step(Done)'])
        assert cycle == expected, f'{cycle} is not the one path of a cycle'
        assert applied <= 1  # at most one write per cycle (per endpoint: patching sends it)
    handled = [c for c in ran if 'invoking' in c]
    assert len(handled) == 3  # one cycle per handler, each with its one write
    assert all(c.count('applying') == 1 for c in handled)
