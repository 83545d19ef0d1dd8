"""Another actor writes to the object while we handle it: nothing we did is lost or done twice.

The finalizer edits go as a JSON-patch guarded by the resourceVersion we decided on; when the object
changed meanwhile (422), the patch is recomputed on a fresh body instead of being dropped with the
cycle's records, and the stale event that still shows our finalizer is not decided on again.
"""
from typing import Any

import kopf

from .conftest import eventually, example, forgotten, get_example, idle


async def test_delete_handler_runs_once_despite_a_concurrent_write(cluster: Any, registry: Any,
                                                                   start_operator: Any, kube: Any) -> None:
    calls: list[int] = []

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(**_: Any) -> None:
        pass

    @kopf.on.delete('kopfexamples', registry=registry)
    def delete_fn(name: str, retry: int, **_: Any) -> None:
        calls.append(retry)
        if len(calls) == 1:  # another controller touches the object while its deletion is handled
            kube.custom.patch_namespaced_custom_object('kopf.dev', 'v1', 'default', 'kopfexamples', name,
                                                       {'metadata': {'labels': {'touched': 'yes'}}})

    await start_operator()
    uid = (await kube.create(example()))['metadata']['uid']
    await eventually(lambda: 'kopf.zalando.org/KopfFinalizerMarker' in
                     ((get_example(cluster) or {}).get('metadata', {}).get('finalizers') or []))
    await eventually(lambda: idle(registry))  # the creation's cycles are over: the deletion is a cycle of its own
    await kube.delete('kopf-example-1')
    await eventually(lambda: get_example(cluster) is None)
    await eventually(lambda: forgotten(registry, uid) and idle(registry))  # its DELETED cycle is over
    assert calls == [0], f'the delete handler ran {len(calls)} times: {calls}'
