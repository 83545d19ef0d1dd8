"""The slots and deadlines of requests in flight (`kopf._api.inflight`); deadlines via a session: test_http.py."""
import asyncio

import pytest

from kopf._api import inflight


async def test_slots_bound_the_holders_and_serve_the_waiting_ones_in_order() -> None:
    slots = inflight.Slots(2)
    assert slots.take() and slots.take() and not slots.take()
    served: list[int] = []

    async def waiter(n: int) -> None:
        await slots.wait()
        served.append(n)

    tasks = [asyncio.create_task(waiter(n)) for n in range(3)]
    await asyncio.sleep(0)
    assert not slots.take()  # nobody jumps the queue, even when a slot is given back meanwhile
    slots.release()
    assert not slots.take()  # handed to the first waiter, not freed
    await asyncio.sleep(0)
    assert served == [0]
    slots.release()
    slots.release()
    await asyncio.gather(*tasks)
    assert served == [0, 1, 2] and slots.free == 0
    for _ in range(2):
        slots.release()
    assert slots.free == 2


async def test_a_cancelled_waiter_leaves_the_queue_or_passes_its_slot_on() -> None:
    slots = inflight.Slots(1)
    assert slots.take()
    first = asyncio.create_task(slots.wait())
    second = asyncio.create_task(slots.wait())
    await asyncio.sleep(0)
    first.cancel()  # still waiting: it leaves the queue
    with pytest.raises(asyncio.CancelledError):
        await first
    slots.release()  # to the second one
    await second
    third = asyncio.create_task(slots.wait())
    await asyncio.sleep(0)
    slots.release()  # handed to the third one, which is cancelled before it runs: the slot is freed again
    third.cancel()
    with pytest.raises(asyncio.CancelledError):
        await third
    assert slots.free == 1 and slots.take()

