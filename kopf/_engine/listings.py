"""The progress of a watch stream's initial listing and of resuming its objects: counts, rate, estimate. Pure.

A stream's first listing may bring many objects at once (10,000 at a restart); each gets its first
cycle (resume handlers, or a check that nothing changed). What the operator says meanwhile:

- at most every `INTERVAL` seconds, while objects are still coming or waiting for their first cycle:
  `Resuming <what>: 6,000 of 10,000 objects (2,000/s, ~2 s left).` (`of 6,000+` while listing);
- once, when the listing is over and every listed object has had its first cycle:
  `Resumed 10,000 objects (<what>) in 3.2 s.`

The lines are INFO for long work (`LARGE` objects or more, or `INTERVAL` seconds or longer) and
DEBUG otherwise (a few objects are not worth a line at the default level). Time is passed in
(the loop's clock); nothing here sleeps or logs.
"""
import dataclasses
import logging

INTERVAL = 5.0  # seconds between the progress lines, at most one per interval
LARGE = 1000    # objects: from this many, the final line is worth INFO even if quick


@dataclasses.dataclass
class Report:
    level: int
    message: str


@dataclasses.dataclass
class Progress:
    """Counts of one stream's initial listing: `seen()` per listed object, `handled()` per first cycle."""
    what: str       # e.g. `kopfexamples.kopf.dev`, `kopfexamples.kopf.dev in ns1`
    started: float
    listed: bool = False     # the listing is over
    finished: bool = False   # the final line is given
    last: float | None = None  # the time of the latest progress line
    pending: set[str] = dataclasses.field(default_factory=set)
    total: int = 0
    resumed: int = 0

    @property
    def large(self) -> bool:
        """Worth giving the burst's memory back once it is over (`kopf._engine.memory`)."""
        return self.total >= LARGE

    def seen(self, uid: str) -> None:
        if not self.finished and uid not in self.pending:
            self.pending.add(uid)
            self.total += 1

    def handled(self, uid: str, now: float) -> Report | None:
        """A listed object's first cycle is over; a line to log, if one is due."""
        if self.finished or uid not in self.pending:
            return None
        self.pending.discard(uid)
        self.resumed += 1
        return self.report(now)

    def listing_over(self, now: float) -> Report | None:
        self.listed = True
        return self.report(now)

    def forget(self, uid: str, now: float) -> Report | None:
        """A listed object is gone before its first cycle (deleted meanwhile): not waited for."""
        if self.finished or uid not in self.pending:
            return None
        self.pending.discard(uid)
        self.total -= 1
        return self.report(now)

    def report(self, now: float) -> Report | None:
        """The final line if all is done; else a progress line if the interval has passed since the last one."""
        if self.finished:
            return None
        elapsed = now - self.started
        if self.listed and not self.pending:
            self.finished = True
            if not self.total:
                return None
            long = self.total >= LARGE or elapsed >= INTERVAL
            objects = 'object' if self.total == 1 else 'objects'
            return Report(logging.INFO if long else logging.DEBUG,
                          f'Resumed {self.total:,} {objects} ({self.what}) in {elapsed:.1f} s.')
        if now - (self.last if self.last is not None else self.started) < INTERVAL:
            return None
        self.last = now
        rate = self.resumed / elapsed if elapsed > 0 else 0.0
        of = f'{self.total:,}' if self.listed else f'{self.total:,}+'
        left = (self.total - self.resumed) / rate if rate > 0 and self.listed else None
        estimate = f', ~{left:,.0f} s left' if left is not None else ''
        speed = f'{rate:,.1f}' if rate < 10 else f'{rate:,.0f}'
        return Report(logging.INFO, f'Resuming {self.what}: {self.resumed:,} of {of} objects ({speed}/s{estimate}).')
