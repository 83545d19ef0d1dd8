"""The controllers' clock: wall time plus an offset that tests move forward (`advance_clock`).

The one seam through which the workload controllers read time: looptime in an operator does not reach
the emulator, so a test that waits for a deadline (a progress deadline, a crash-loop back-off) moves
this clock instead. Timestamps are rendered from it as a real server renders `metav1.Time` (seconds).
"""
import datetime
import time

from kopf._cluster.pipeline import metadata


class Clock:
    def __init__(self) -> None:
        self.offset = 0.0

    def now(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError(f'the clock only moves forward, not by {seconds} seconds')
        self.offset += seconds


def stamp(moment: float) -> str:
    """An RFC 3339 UTC timestamp with second precision, as `metav1.Time` renders."""
    return metadata.render(datetime.datetime.fromtimestamp(moment, datetime.UTC))


def parse(value: object) -> float | None:
    """The epoch seconds of a stored timestamp, or None if it is absent or malformed."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.datetime.fromisoformat(value.replace('Z', '+00:00')).timestamp()
    except ValueError:
        return None
