"""Helpers of the watch tests: a background consumer of a watch, and object writes through our client."""
import asyncio
import contextlib
from typing import Any

from kopf._api import client as client_
from kopf._api import watching, watchstate
from kopf._core import resources

from ..waiting import eventually

NS = '/apis/kopf.dev/v1/namespaces/default/kopfexamples'


class Consumer:
    """Collects what a watch yields, in a background task."""

    def __init__(self, client: client_.APIClient, resource: resources.Resource, **kwargs: Any) -> None:
        self.items: list[watchstate.StreamItem] = []
        self.changed = asyncio.Condition()
        self._iterator = watching.watch_objs(client, resource, **kwargs)
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        async for item in self._iterator:
            self.items.append(item)
            async with self.changed:
                self.changed.notify_all()

    @property
    def events(self) -> list[dict[str, Any]]:
        return [item for item in self.items if isinstance(item, dict)]

    def seen(self) -> list[tuple[str, str]]:
        return [(e['object']['metadata']['uid'], e['object']['metadata']['resourceVersion']) for e in self.events]

    async def wait_for(self, predicate: Any) -> None:
        # Polled with a real-time deadline: a fake-time timeout here is what looptime would fast-forward to
        # while the loopback I/O with the in-loop emulator is still in flight under CPU load.
        await eventually(lambda: predicate(self) or self.task.done(), within=30)
        if self.task.done():
            self.task.result()

    async def wait_for_rv(self, rv: str) -> None:
        await self.wait_for(lambda c: any(e['object']['metadata']['resourceVersion'] == rv for e in c.events))

    async def stop(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


def kex(name: str, **spec: Any) -> dict[str, Any]:
    return {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': name}, 'spec': spec}


async def create(client: client_.APIClient, name: str) -> dict[str, Any]:
    result: dict[str, Any] = await client.request('POST', NS, payload=kex(name))
    return result


async def patch(client: client_.APIClient, name: str, **spec: Any) -> dict[str, Any]:
    result: dict[str, Any] = await client.request('PATCH', f'{NS}/{name}', payload={'spec': spec},
                                                  content_type=client_.MERGE_PATCH_CT)
    return result


def rv(body: dict[str, Any]) -> str:
    return str(body['metadata']['resourceVersion'])
