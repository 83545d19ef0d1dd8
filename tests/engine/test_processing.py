"""Cycles on bodies in memory: decide → invoke → settle, the patch applied locally; no API, no queue."""
import copy
from typing import Any

import pytest

import kopf
from kopf._core import patches, plans
from kopf._engine import changing, contexts, loggers, processing
from kopf._indices import filling
from kopf._shared import mergepatch

RESOURCE = kopf.Resource('kopf.dev', 'v1', 'kopfexamples')


def make_rctx(registry: kopf.OperatorRegistry) -> contexts.ResourceContext:
    settings = kopf.OperatorSettings()
    operator = contexts.OperatorContext(settings=settings, registry=registry, client=None,  # type: ignore[arg-type]
                                        memo=kopf.Memo(), lifecycle=kopf.lifecycles.asap)
    return contexts.ResourceContext(operator=operator, resource=RESOURCE,
                                    progress_storage=settings.persistence.progress_storage,
                                    diffbase_storage=settings.persistence.diffbase_storage)


def applied(body: dict[str, Any], patch: patches.Patch) -> dict[str, Any]:
    result = copy.deepcopy(mergepatch.merge(body, dict(patch)))
    for fn in patch.fns:
        fn(result)
    rv = int(result['metadata'].get('resourceVersion', '0')) + 1
    result['metadata']['resourceVersion'] = str(rv)
    return result


class Cycle:
    """What one cycle decided and settled (as `processing.process` does it, without applying the patch)."""

    def __init__(self, plan: plans.Plan, settlement: plans.Settlement) -> None:
        self.plan, self.settlement = plan, settlement
        self.patch, self.wakeup, self.settled = settlement.patch, settlement.wakeup, settlement.settled
        self.logger = plan.logger


async def cycle(rctx: contexts.ResourceContext, body: dict[str, Any],
                event_type: str | None = 'MODIFIED') -> tuple[dict[str, Any], Cycle]:
    """One cycle on the body; the body as the server would answer the cycle's patch."""
    record = rctx.remember(body['metadata']['uid'])
    if record.initial is None:
        record.initial = event_type is None
    event = {'type': event_type, 'object': copy.deepcopy(body)}
    logger = loggers.ObjectLogger(body=loggers.identity(body), settings=rctx.settings)
    plan = plans.decide(rctx, record, event, now=changing.now(), fresh=True, logger=logger)
    settlement = plans.settle(plan, await changing.invoke(rctx, plan), now=changing.now())
    if settlement.handled:
        record.initial = False
    cyc = Cycle(plan, settlement)
    return (applied(body, cyc.patch) if cyc.patch else body), cyc


def needs_recheck(rctx: contexts.ResourceContext, cyc: Cycle, answer: dict[str, Any]) -> bool:
    return plans.needs_recheck(rctx, cyc.plan, cyc.settlement, answer)


def progress_keys(body: dict[str, Any]) -> list[str]:
    annotations = body['metadata'].get('annotations') or {}
    return sorted(key for key in annotations if key != 'kopf.zalando.org/last-handled-configuration')


def with_spec(body: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    return {**copy.deepcopy(body), 'spec': spec}


@pytest.fixture
def body() -> dict[str, Any]:
    return {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
            'metadata': {'name': 'n', 'namespace': 'ns', 'uid': 'u1', 'resourceVersion': '1'},
            'spec': {'x': 0}}


async def test_a_reverted_change_purges_the_stale_progress(body: dict[str, Any]) -> None:
    registry = kopf.OperatorRegistry()
    calls: list[tuple[Any, int]] = []

    @kopf.on.update('kopf.dev', 'v1', 'kopfexamples', registry=registry)
    def update_fn(spec: Any, retry: int, **_: Any) -> None:
        calls.append((spec['x'], retry))
        if spec['x'] == 'A':
            raise kopf.TemporaryError('not yet', delay=60)

    rctx = make_rctx(registry)
    body, _ = await cycle(rctx, body, 'ADDED')             # created: the diff-base is stored
    body, cyc = await cycle(rctx, with_spec(body, {'x': 'A'}))  # change A: the handler fails, to retry
    assert calls == [('A', 0)]
    assert progress_keys(body) and cyc.wakeup is not None
    body, _ = await cycle(rctx, with_spec(body, {'x': 0}))   # reverted: nothing to do (a NOOP)
    assert calls == [('A', 0)]
    assert progress_keys(body) == []                         # ... and the stale progress is gone
    body, _ = await cycle(rctx, with_spec(body, {'x': 'B'}))  # change B: a new cause from scratch
    assert calls == [('A', 0), ('B', 0)]
    assert progress_keys(body) == []


async def test_a_reverted_change_purges_the_stale_progress_of_subhandlers(body: dict[str, Any]) -> None:
    registry = kopf.OperatorRegistry()

    def sub_fn(**_: Any) -> None:
        raise kopf.TemporaryError('not yet', delay=60)

    @kopf.on.update('kopf.dev', 'v1', 'kopfexamples', id='update_fn', registry=registry)
    async def update_fn(**_: Any) -> None:
        await kopf.execute(fns={'sub': sub_fn})

    rctx = make_rctx(registry)
    body, _ = await cycle(rctx, body, 'ADDED')
    body, _ = await cycle(rctx, with_spec(body, {'x': 'A'}))
    assert progress_keys(body) == ['kopf.zalando.org/update_fn', 'kopf.zalando.org/update_fn.sub']
    body, _ = await cycle(rctx, with_spec(body, {'x': 0}))
    assert progress_keys(body) == []


def create_registry(**options: Any) -> kopf.OperatorRegistry:
    registry = kopf.OperatorRegistry()

    @kopf.on.create('kopf.dev', 'v1', 'kopfexamples', id='create_fn', registry=registry, **options)
    def create_fn(**_: Any) -> dict[str, Any]:
        return {'done': True}

    @kopf.on.delete('kopf.dev', 'v1', 'kopfexamples', registry=registry)
    def delete_fn(**_: Any) -> None:
        pass

    return registry


async def handled(rctx: contexts.ResourceContext, body: dict[str, Any]) -> tuple[dict[str, Any], Cycle]:
    """The object with our finalizer, then its creation handled: the last cycle and its answer."""
    body, cyc = await cycle(rctx, body, 'ADDED')
    assert cyc.patch.fns and cyc.settled is None  # the finalizer is added: the handlers come next
    assert needs_recheck(rctx, cyc, body)
    return (await cycle(rctx, body))


async def test_no_recheck_of_an_answer_that_only_has_our_writes(body: dict[str, Any]) -> None:
    rctx = make_rctx(create_registry())
    answer, cyc = await handled(rctx, body)
    assert answer['status'] == {'create_fn': {'done': True}}
    assert not needs_recheck(rctx, cyc, answer)
    ours = copy.deepcopy(answer)
    ours['metadata'].update(managedFields=[{'manager': 'kopf'}], generation=2)
    ours['metadata']['annotations']['other.kopf.zalando.org/x'] = '{}'  # another Kopf operator's records
    ours['status']['kopf'] = {'dummy': 'x'}
    assert not needs_recheck(rctx, cyc, ours)
    _, recheck = await cycle(rctx, answer)  # indeed, a cycle would find nothing to do
    assert not recheck.patch and recheck.settled is not None


@pytest.mark.parametrize('change', ['spec', 'labels', 'annotation', 'finalizers', 'deletion', 'diffbase', 'kind'])
async def test_recheck_of_an_answer_with_changes_by_others(body: dict[str, Any], change: str) -> None:
    rctx = make_rctx(create_registry())
    answer, cyc = await handled(rctx, body)
    meta = answer['metadata']
    if change == 'spec':
        answer['spec'] = {'x': 1}
    elif change == 'labels':
        meta['labels'] = {'a': 'b'}
    elif change == 'annotation':
        meta['annotations']['someone/else'] = 'x'
    elif change == 'finalizers':
        meta['finalizers'] = []
    elif change == 'deletion':
        meta['deletionTimestamp'] = '2026-01-01T00:00:00Z'
    elif change == 'diffbase':
        del meta['annotations']['kopf.zalando.org/last-handled-configuration']
    elif change == 'kind':
        answer['data'] = {'x': 1}
    assert needs_recheck(rctx, cyc, answer)


async def test_recheck_with_filters_or_custom_storages(body: dict[str, Any]) -> None:
    rctx = make_rctx(create_registry(labels={'a': kopf.ABSENT}))
    answer, cyc = await handled(rctx, body)
    assert needs_recheck(rctx, cyc, answer)  # a filter may look anywhere, even at status

    class CustomDiffBase(kopf.AnnotationsDiffBaseStorage):
        pass

    rctx = make_rctx(create_registry())
    rctx.diffbase_storage = CustomDiffBase()
    answer, cyc = await handled(rctx, body)
    assert needs_recheck(rctx, cyc, answer)  # its essence may include status


async def test_recheck_of_a_diffbase_in_status_changed_by_others(body: dict[str, Any]) -> None:
    rctx = make_rctx(create_registry())
    rctx.diffbase_storage = kopf.StatusDiffBaseStorage()  # its diff-base is not in the annotations
    answer, cyc = await handled(rctx, body)
    assert not needs_recheck(rctx, cyc, answer)
    answer['status']['kopf']['last-handled-configuration'] = '{"spec":{"x":1}}'
    assert needs_recheck(rctx, cyc, answer)  # the same annotations, another diff-base: fetched, compared


async def test_recheck_takes_a_missing_key_as_a_none_value(body: dict[str, Any]) -> None:
    rctx = make_rctx(create_registry())
    answer, cyc = await handled(rctx, body)
    nones = copy.deepcopy(answer)
    nones['extra'] = None
    nones['metadata']['labels'] = None
    assert not needs_recheck(rctx, cyc, nones)
    nones['metadata']['labels'] = {}
    assert needs_recheck(rctx, cyc, nones)


def test_the_storages_own_fields_are_asked_once_per_pair() -> None:
    rctx = make_rctx(create_registry())
    assert rctx.own_fields_only and rctx.annotated_diffbase
    rctx.diffbase_storage = kopf.StatusDiffBaseStorage()
    assert rctx.own_fields_only and not rctx.annotated_diffbase

    class Custom(kopf.AnnotationsProgressStorage):
        pass

    rctx.progress_storage = Custom()
    assert not rctx.own_fields_only


async def test_recheck_while_handlers_are_pending(body: dict[str, Any]) -> None:
    registry = kopf.OperatorRegistry()

    @kopf.on.create('kopf.dev', 'v1', 'kopfexamples', registry=registry)
    def create_fn(**_: Any) -> None:
        raise kopf.TemporaryError('later', delay=10)

    rctx = make_rctx(registry)
    answer, cyc = await cycle(rctx, body, 'ADDED')
    assert cyc.wakeup is not None and cyc.settled is None
    assert needs_recheck(rctx, cyc, answer)


def test_only_resources_with_handlers_wait_for_the_indices() -> None:
    registry = kopf.OperatorRegistry()
    kopf.index('kopf.dev', 'v1', 'kopfexamples', id='idx', registry=registry)(lambda **_: None)
    assert not processing.handles(make_rctx(registry))  # indexed only: nothing in its cycles sees an index
    for decorator in (kopf.on.create, kopf.on.event, kopf.timer):
        again = kopf.OperatorRegistry()
        kopf.index('kopf.dev', 'v1', 'kopfexamples', id='idx', registry=again)(lambda **_: None)
        decorator('kopf.dev', 'v1', 'kopfexamples', registry=again)(lambda **_: None)
        assert processing.handles(make_rctx(again)), decorator


async def test_a_cycle_of_an_indexed_only_resource_does_not_wait_for_the_indices(body: dict[str, Any]) -> None:
    """10,000 such cycles waiting at the start held a task, frames and an event each until all were indexed."""
    registry = kopf.OperatorRegistry()
    kopf.index('kopf.dev', 'v1', 'kopfexamples', id='idx', registry=registry)(lambda name, **_: {name: 1})
    rctx = make_rctx(registry)
    rctx.operator.indexing = gate = filling.Indexing(registry)
    rctx.operator.indices = gate.indices
    assert not gate.ready.is_set()
    record = rctx.remember('u1')
    done = await processing.process(rctx, record, {'type': None, 'object': body}, fresh=True,
                                    logger=loggers.ObjectLogger(body=body, settings=rctx.settings))
    assert done.answer is None and not gate.ready.is_set()
    assert {key: list(store) for key, store in gate.indices['idx'].items()} == {'n': [1]}
