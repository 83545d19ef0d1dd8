"""The event loop of `kopf run`: uvloop when it is installed (`pip install kopf[uvloop]`), unless turned off.

`--uvloop` requires it (an error if it is not installed), `--no-uvloop` (or `KOPF_RUN_UVLOOP=0`)
keeps asyncio's own loop; without either, uvloop is used if it can be imported. Only the CLI does
this: `kopf.run()` and `kopf.operator()` run in whatever loop they are given, as upstream's do.
"""
import asyncio
import importlib.util
from collections.abc import Callable, Coroutine
from typing import Any

from kopf._shared import extras

LoopFactory = Callable[[], asyncio.AbstractEventLoop]


class LoopError(Exception):
    """The loop asked for cannot be had (e.g. `--uvloop` without uvloop installed)."""


def loop_factory(uvloop: bool | None) -> LoopFactory | None:
    """uvloop's `new_event_loop` if wanted (True) or available (None); None for asyncio's default loop."""
    if uvloop is False:
        return None
    if importlib.util.find_spec('uvloop') is None:
        if uvloop:
            raise LoopError(extras.needs(extras.UVLOOP, otherwise='run with --no-uvloop'))
        return None
    import uvloop as uvloop_  # `kopf[uvloop]`: only if installed
    factory: LoopFactory = uvloop_.new_event_loop
    return factory


def run(coro: Coroutine[Any, Any, None], factory: LoopFactory | None) -> None:
    """Run the coroutine to the end in a new loop of the factory (asyncio's default if None), then close it."""
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(coro)
