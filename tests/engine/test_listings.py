"""The progress of an initial listing and of resuming its objects (pure; time passed in)."""
import logging

from kopf._engine import listings
from kopf._engine.listings import Progress, Report


def listed(count: int, *, started: float = 100.0) -> Progress:
    progress = Progress('kex', started=started)
    for idx in range(count):
        progress.seen(f'uid{idx}')
    return progress


def test_a_few_objects_end_with_one_debug_line() -> None:
    progress = listed(3)
    assert progress.listing_over(100.1) is None
    assert progress.handled('uid0', 100.2) is None
    assert progress.handled('uid1', 100.3) is None
    assert progress.handled('uid2', 100.4) == Report(logging.DEBUG, 'Resumed 3 objects (kex) in 0.4 s.')
    assert progress.finished
    assert progress.handled('uid2', 100.5) is None  # once


def test_many_objects_end_with_an_info_line_with_thousands_separated() -> None:
    progress = listed(10_000)
    progress.listing_over(101.0)
    reports = [progress.handled(f'uid{idx}', 101.0 + idx * 0.0002) for idx in range(10_000)]
    assert [r for r in reports if r is not None] == [
        Report(logging.INFO, 'Resumed 10,000 objects (kex) in 3.0 s.')]


def test_progress_at_most_every_interval_with_rate_and_estimate() -> None:
    progress = listed(10)
    assert progress.handled('uid0', 102.0) is None  # too early for a progress line
    assert progress.handled('uid1', 105.0) == Report(logging.INFO, 'Resuming kex: 2 of 10+ objects (0.4/s).')
    assert progress.handled('uid2', 106.0) is None  # within the interval since the last line
    assert progress.listing_over(106.0) is None
    assert progress.handled('uid3', 110.0) == Report(
        logging.INFO, 'Resuming kex: 4 of 10 objects (0.4/s, ~15 s left).')
    for idx in range(4, 9):
        progress.handled(f'uid{idx}', 111.0)
    assert progress.handled('uid9', 112.0) == Report(logging.INFO, 'Resumed 10 objects (kex) in 12.0 s.')


def test_objects_deleted_before_their_first_cycle_are_not_waited_for() -> None:
    progress = listed(2)
    progress.listing_over(100.5)
    assert progress.forget('uid1', 100.6) is None
    assert progress.handled('uid0', 100.7) == Report(logging.DEBUG, 'Resumed 1 object (kex) in 0.7 s.')


def test_an_empty_listing_says_nothing_and_unknown_uids_are_ignored() -> None:
    progress = listed(0)
    assert progress.handled('other', 100.1) is None
    assert progress.listing_over(100.2) is None
    assert progress.finished


def test_a_listed_object_is_counted_once() -> None:
    progress = listed(2)
    progress.seen('uid0')
    assert progress.total == 2
    assert listings.INTERVAL > 1 and listings.LARGE >= 1000


def test_a_listing_is_large_from_the_threshold_on() -> None:
    assert not listed(listings.LARGE - 1).large
    assert listed(listings.LARGE).large
