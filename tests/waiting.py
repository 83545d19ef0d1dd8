"""Waiting for a condition: in tests that run the emulator in the test's own loop under looptime (async),
and in tests that run an operator or a cluster in another thread or process (sync)."""
import asyncio
import time
from typing import Any


async def eventually(check: Any, *, within: float = 60, interval: float = 0.05) -> Any:
    """Poll until `check()` is truthy and return it, in short steps (fake-time ones under looptime);
    the deadline is real time (looptime's fake time can race ahead of the I/O)."""
    deadline = time.monotonic() + within
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f'Timed out waiting for {check}')
        await asyncio.sleep(interval)


def wait_for(check: Any, *, within: float = 20.0, interval: float = 0.02) -> Any:
    """Poll (blocking) until `check()` is truthy and return it; fail after `within` seconds of real time."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(interval)
    raise AssertionError(f'Timed out waiting for {check}')
