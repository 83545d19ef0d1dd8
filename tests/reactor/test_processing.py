"""Processing cycles on bodies in memory: each cycle's patch is applied locally, no API, no queue."""
import copy
from typing import Any

import pytest

import kopf
from kopf._model import patches
from kopf._reactor import contexts, processing

RESOURCE = kopf.Resource('kopf.dev', 'v1', 'kopfexamples')


def make_rctx(registry: kopf.OperatorRegistry) -> contexts.ResourceContext:
    settings = kopf.OperatorSettings()
    operator = contexts.OperatorContext(settings=settings, registry=registry, client=None,  # type: ignore[arg-type]
                                        memo=kopf.Memo(), lifecycle=kopf.lifecycles.asap)
    return contexts.ResourceContext(operator=operator, resource=RESOURCE,
                                    progress_storage=settings.persistence.progress_storage,
                                    diffbase_storage=settings.persistence.diffbase_storage)


def applied(body: dict[str, Any], patch: patches.Patch) -> dict[str, Any]:
    result = copy.deepcopy(patches.merge(body, dict(patch)))
    for fn in patch.fns:
        fn(result)
    rv = int(result['metadata'].get('resourceVersion', '0')) + 1
    result['metadata']['resourceVersion'] = str(rv)
    return result


async def cycle(rctx: contexts.ResourceContext, body: dict[str, Any],
                event_type: str | None = 'MODIFIED') -> tuple[dict[str, Any], contexts.Cycle]:
    """One cycle on the body; the body as the server would answer the cycle's patch."""
    memory = rctx.remember(body['metadata']['uid'], initial=event_type is None)
    event = {'type': event_type, 'object': copy.deepcopy(body)}
    cyc = processing.make_cycle(rctx, memory, event)  # type: ignore[arg-type]
    await processing.process(cyc, event)  # type: ignore[arg-type]
    return (applied(body, cyc.patch) if cyc.patch else body), cyc


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
