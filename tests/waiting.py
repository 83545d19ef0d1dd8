"""Waiting for a condition in tests that run the emulator in the test's own loop under looptime."""
import asyncio
import time
from typing import Any


async def eventually(check: Any, within: float = 60, step: float = 0.05) -> None:
    """Poll in short fake-time steps; the deadline is real time (looptime's fake time can race ahead of the I/O)."""
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f'Timed out waiting for {check}')
        await asyncio.sleep(step)
