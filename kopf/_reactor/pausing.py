"""The operator's paused scopes (`kopf._model.pausing`), with waits for their changes.

Peering pauses and resumes scopes here; the watchers wait here for their scope to be paused or
resumed, and the cycles and daemons ask `paused()` before they act.
"""
import asyncio
from collections.abc import Hashable

from kopf._model import pausing


class Pausing:
    """Who pauses which scope; awaitable changes."""

    def __init__(self) -> None:
        self.pauses = pausing.Pauses()
        self._changed: asyncio.Event | None = None

    def paused(self, namespace: str | None) -> bool:
        return self.pauses.paused(namespace)

    def pause(self, scope: pausing.Scope, pauser: Hashable) -> bool:
        version = self.pauses.version
        first = self.pauses.pause(scope, pauser)
        if self.pauses.version != version:
            self._notify()
        return first

    def resume(self, scope: pausing.Scope, pauser: Hashable) -> bool:
        version = self.pauses.version
        last = self.pauses.resume(scope, pauser)
        if self.pauses.version != version:
            self._notify()
        return last

    async def wait(self, namespace: str | None, *, paused: bool) -> None:
        """Until objects of this namespace are paused (or resumed, with `paused=False`)."""
        while self.paused(namespace) != paused:
            if self._changed is None:
                self._changed = asyncio.Event()
            await self._changed.wait()

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None  # the waiters re-check; later waits get a new event
