"""The parts of timestamps and durations (`getHours()`, `getDayOfWeek('Europe/Berlin')`, ...)."""
from __future__ import annotations

import datetime
import re
import zoneinfo

from kopf._cluster.cel.celvalues import Duration, EvalError, Timestamp

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def zone(tz: str | None) -> datetime.tzinfo:
    if tz is None or tz == 'UTC':
        return datetime.UTC
    m = re.fullmatch(r'([+-]?)(\d{2}):(\d{2})', tz)
    if m:
        sign = -1 if m.group(1) == '-' else 1
        return datetime.timezone(sign * datetime.timedelta(hours=int(m.group(2)), minutes=int(m.group(3))))
    try:
        return zoneinfo.ZoneInfo(tz)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise EvalError(f'unknown time zone {tz}') from None


def timestamp_part(ts: Timestamp, part: str, tz: str | None) -> int:
    seconds, nanos = divmod(ts.nanos, 1_000_000_000)
    moment = (EPOCH + datetime.timedelta(seconds=seconds)).astimezone(zone(tz))
    if part == 'year':
        return moment.year
    if part == 'month':
        return moment.month - 1
    if part == 'day_of_year':
        return moment.timetuple().tm_yday - 1
    if part == 'day_of_month':
        return moment.day - 1
    if part == 'date':
        return moment.day
    if part == 'day_of_week':
        return (moment.weekday() + 1) % 7
    if part == 'hours':
        return moment.hour
    if part == 'minutes':
        return moment.minute
    if part == 'seconds':
        return moment.second
    return nanos // 1_000_000


def duration_part(d: Duration, part: str) -> int:
    n = d.nanos
    divisors = {'hours': 3_600_000_000_000, 'minutes': 60_000_000_000, 'seconds': 1_000_000_000,
                'milliseconds': 1_000_000}
    q = abs(n) // divisors[part]
    return q if n >= 0 else -q
