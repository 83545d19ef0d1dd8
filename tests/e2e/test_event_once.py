"""`on.event` handlers see every event once: not again when the object's cycle is re-run for a
delayed retry of a change handler (an in-memory wake-up re-processes the last event)."""
from typing import Any

import kopf

from .conftest import eventually, example, idle


async def test_on_event_sees_each_event_once_despite_retries(cluster: Any, registry: Any,
                                                             start_operator: Any, kube: Any) -> None:
    seen: list[tuple[str, str]] = []
    tries: list[int] = []

    @kopf.on.event('kopfexamples', registry=registry)
    def ev(type: str, body: Any, **_: Any) -> None:
        seen.append((type, body['metadata']['resourceVersion']))

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(retry: int, **_: Any) -> None:
        tries.append(retry)
        if retry < 2:
            raise kopf.TemporaryError('later', delay=0.3)

    await start_operator()
    await kube.create(example())
    await eventually(lambda: len(tries) >= 3)
    await eventually(lambda: idle(registry))  # every event of our own writes is seen (awaited until then)
    assert seen, 'on.event saw nothing'
    assert len(seen) == len(set(seen)), f'on.event got the same (type, rv) more than once: {seen}'
