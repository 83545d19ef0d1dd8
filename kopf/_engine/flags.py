"""Flags for embedding: `stop_flag` and `ready_flag` of `kopf.run/operator/spawn_tasks`.

Any of: `asyncio.Event`, `asyncio.Future`, `threading.Event`, `concurrent.futures.Future`.
"""
import asyncio
import concurrent.futures
import threading
from typing import Any

Flag = asyncio.Event | asyncio.Future[Any] | threading.Event | concurrent.futures.Future[Any]

POLL_INTERVAL = 0.1  # threading.Event has no awaitable side: polled


async def wait_flag(flag: Flag) -> None:
    if isinstance(flag, asyncio.Event):
        await flag.wait()
    elif isinstance(flag, asyncio.Future):
        await asyncio.wait([flag])
    elif isinstance(flag, concurrent.futures.Future):
        await asyncio.wait([asyncio.wrap_future(flag)])
    elif isinstance(flag, threading.Event):
        while not flag.is_set():  # noqa: ASYNC110  # a thread's event cannot be awaited
            await asyncio.sleep(POLL_INTERVAL)
    else:
        raise TypeError(f'Unsupported flag: {flag!r}')


def raise_flag(flag: Flag | None) -> None:
    if flag is None:
        return
    if isinstance(flag, (asyncio.Event, threading.Event)):
        flag.set()
    elif isinstance(flag, (asyncio.Future, concurrent.futures.Future)):
        if not flag.done():
            flag.set_result(None)
    else:
        raise TypeError(f'Unsupported flag: {flag!r}')
