"""The operator's paused scopes (`kopf._engine.scopes`), with waits for their changes.

Peering pauses and resumes scopes here; the watchers wait here for their scope to be paused or
resumed, and the cycles and daemons ask `paused()` before they act. A shard's scope pauses objects,
not streams: its changes (paused, or acting again) go to `on_shard` (`kopf._shards.membership`),
which pauses or takes over the shard's objects' records.
"""
import asyncio
import functools
from collections.abc import Callable, Hashable

from kopf._engine import scopes


class Pausing:
    """Who pauses which scope; awaitable changes."""

    def __init__(self) -> None:
        self.pauses = scopes.Pauses()
        self._changed: asyncio.Event | None = None
        self.on_shard: Callable[[int, bool, bool], None] | None = None  # (index, paused, cancelling)

    def paused(self, namespace: str | None, shard: int | None = None) -> bool:
        return self.pauses.paused(namespace, shard)

    def pause(self, scope: scopes.Scope, pauser: Hashable, *, cancelling: bool = False) -> bool:
        """Pause the scope for this pauser (cancelling the cycles in flight, if asked); True if it was not paused."""
        return self._change(functools.partial(self.pauses.pause, cancelling=cancelling), scope, pauser)

    def cancels(self, namespace: str | None, shard: int | None = None) -> bool:
        return self.pauses.cancels(namespace, shard)

    def resume(self, scope: scopes.Scope, pauser: Hashable) -> bool:
        """This pauser no longer pauses the scope; True if it is not paused any more."""
        return self._change(self.pauses.resume, scope, pauser)

    def _change(self, change: Callable[[scopes.Scope, Hashable], bool], scope: scopes.Scope,
                pauser: Hashable) -> bool:
        version = self.pauses.version
        was = self.pauses.scope_paused(scope)
        result = change(scope, pauser)
        if self.pauses.version != version:
            self._notify()
        now = self.pauses.scope_paused(scope)
        if isinstance(scope, scopes.Shard) and was != now and self.on_shard is not None:
            self.on_shard(scope.index, now, (scope, pauser) in self.pauses.cancelling)
        return result

    async def wait(self, namespace: str | None, *, paused: bool) -> None:
        """Until objects of this namespace are paused (or resumed, with `paused=False`)."""
        while self.paused(namespace) != paused:
            if self._changed is None:
                self._changed = asyncio.Event()
            await self._changed.wait()

    async def wait_for(self, check: Callable[[], bool]) -> None:
        """Until the check is true, re-checked on every change and `poke()` (e.g. a released shard's work finished)."""
        while not check():
            if self._changed is None:
                self._changed = asyncio.Event()
            await self._changed.wait()

    def poke(self) -> None:
        """Something the waiters of `wait_for()` may look at has changed (a paused object's cycle ended)."""
        self._notify()

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None  # the waiters re-check; later waits get a new event
