"""Due times by key: the pure heap behind the operator's one scheduler (no clock, no I/O).

Rules:
- A key has at most one due time. `at(key, when)` keeps the earlier of the existing and the new
  time (a wake-up never comes later than asked); `at(..., replace=True)` sets it as given. The
  payload (what to do when due) is always the newest one given, if its time is kept.
- `cancel(key)` forgets the key's due time.
- `pop_due(now)` removes and returns the keys due at or before `now`, earliest first (ties in the
  order they were set).
- `next_at` is the earliest due time, or None if nothing is due ever.
- Cancelled and superseded entries stay in the heap until they come to its top (lazy deletion), so
  operations cost O(log n); when they are more than half of it, the heap is rebuilt (amortised O(1)).
"""
import heapq
import itertools
from collections.abc import Hashable
from typing import Any


class Schedule:
    """The keys' due times (floats on any clock the caller uses) and what to do for each when due."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Hashable]] = []
        self._due: dict[Hashable, tuple[float, int, Any]] = {}  # key → (when, seq, payload): the valid entry
        self._seq = itertools.count()

    def __len__(self) -> int:
        return len(self._due)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._due

    def when(self, key: Hashable) -> float | None:
        entry = self._due.get(key)
        return None if entry is None else entry[0]

    def at(self, key: Hashable, when: float, payload: Any = None, *, replace: bool = False) -> bool:
        """Set the key's due time; True if it changed (the earlier one is kept unless `replace`)."""
        current = self._due.get(key)
        if current is not None and current[0] == when:
            self._due[key] = (when, current[1], payload)  # the same time: the newest payload is what runs
            return False
        if current is not None and current[0] < when and not replace:
            return False
        seq = next(self._seq)
        self._due[key] = (when, seq, payload)
        heapq.heappush(self._heap, (when, seq, key))
        if current is not None:
            self._compact()  # the superseded entry stays behind
        return True

    def cancel(self, key: Hashable) -> None:
        self._due.pop(key, None)
        self._compact()

    def _compact(self) -> None:
        """Rebuild the heap when most of it is stale: cancelled or superseded entries cost memory."""
        if len(self._heap) > 2 * len(self._due) + 64:
            self._heap = [(when, seq, key) for key, (when, seq, _) in self._due.items()]
            heapq.heapify(self._heap)

    @property
    def next_at(self) -> float | None:
        self._drop_stale()
        return self._heap[0][0] if self._heap else None

    def pop_due(self, now: float) -> list[tuple[Hashable, Any]]:
        """The keys due by `now` with their payloads, removed from the schedule, earliest first."""
        result: list[tuple[Hashable, Any]] = []
        while self._heap:
            when, seq, key = self._heap[0]
            entry = self._due.get(key)
            if entry is None or entry[1] != seq:
                heapq.heappop(self._heap)  # cancelled or superseded
                continue
            if when > now:
                break
            heapq.heappop(self._heap)
            del self._due[key]
            result.append((key, entry[2]))
        return result

    def _drop_stale(self) -> None:
        while self._heap:
            _, seq, key = self._heap[0]
            entry = self._due.get(key)
            if entry is not None and entry[1] == seq:
                return
            heapq.heappop(self._heap)
