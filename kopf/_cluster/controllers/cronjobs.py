"""The CronJob controller: a Job at each scheduled time, the concurrency policy, the history limits.

`reconcile(cronjob, jobs, now)` gets the CronJob and the Jobs it owns. When a scheduled time has come
(the latest one since `lastScheduleTime`, or since its creation; none if `startingDeadlineSeconds` has
passed since), it plans the Job `<cronjob>-<minutes since the epoch>` from `jobTemplate`, unless
`concurrencyPolicy: Forbid` and one is active (`Replace`: the active ones are deleted); finished Jobs
beyond `successfulJobsHistoryLimit` / `failedJobsHistoryLimit` are deleted, oldest first; the status
lists the `active` Jobs, `lastScheduleTime` and `lastSuccessfulTime`; it looks again at the next time.

`next_time(schedule, after)`: standard 5-field cron (`*`, `a-b`, `*/n`, `a-b/n`, lists, names of months
and days) and the `@hourly`-style macros, in UTC or `spec.timeZone`.
"""
import copy
import datetime
import zoneinfo

from kopf._cluster.controllers import clock
from kopf._cluster.controllers.writeplans import JOBS, Create, Delete, Key, Obj, Plan, count, owner_ref

CRONJOBS: Key = ('batch', 'cronjobs')
SCHEDULED = 'batch.kubernetes.io/cronjob-scheduled-timestamp'
MACROS = {'@yearly': '0 0 1 1 *', '@annually': '0 0 1 1 *', '@monthly': '0 0 1 * *', '@weekly': '0 0 * * 0',
          '@daily': '0 0 * * *', '@midnight': '0 0 * * *', '@hourly': '0 * * * *'}
NAMES = {**{m: i + 1 for i, m in enumerate('jan feb mar apr may jun jul aug sep oct nov dec'.split())},
         **{d: i for i, d in enumerate('sun mon tue wed thu fri sat'.split())}}
RANGES = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 6)]
MAX_MISSED = 100


def _field(text: str, low: int, high: int) -> set[int]:
    values: set[int] = set()
    for part in text.lower().split(','):
        base, _, step = part.partition('/')
        if base in ('*', '?'):
            start, end = low, high
        elif '-' in base:
            first, last = base.split('-', 1)
            start, end = int(NAMES.get(first, first)), int(NAMES.get(last, last))
        else:
            start = end = int(NAMES.get(base, base))
            if step:
                end = high
        values.update(range(start, end + 1, int(step) if step else 1))
    if not values or min(values) < low or max(values) > (7 if high == 6 else high):
        raise ValueError(f'out of range: {text}')
    return {0 if high == 6 and v == 7 else v for v in values}


def parse(schedule: str) -> tuple[list[set[int]], bool, bool]:
    """The allowed values of the five fields, and whether day-of-month / day-of-week are restricted."""
    text = MACROS.get(schedule.strip().lower(), schedule.strip())
    fields = text.split()
    if len(fields) != 5:
        raise ValueError(f'expected exactly 5 fields, found {len(fields)}: {schedule!r}')
    parsed = [_field(f, *r) for f, r in zip(fields, RANGES, strict=True)]
    return parsed, fields[2] not in ('*', '?'), fields[4] not in ('*', '?')


def next_time(schedule: str, after: float, zone: str | None = None) -> float | None:
    """The first scheduled time strictly after `after` (epoch seconds), or None within 5 years."""
    (minutes, hours, days, months, weekdays), dom, dow = parse(schedule)
    tz = zoneinfo.ZoneInfo(zone) if zone else datetime.UTC
    moment = datetime.datetime.fromtimestamp(after, tz).replace(second=0, microsecond=0) + datetime.timedelta(minutes=1)
    limit = moment + datetime.timedelta(days=5 * 366)
    while moment < limit:
        day_ok = moment.day in days
        week_ok = (moment.isoweekday() % 7) in weekdays
        if moment.month not in months:
            moment = (moment.replace(day=1, hour=0, minute=0) + datetime.timedelta(days=32)).replace(day=1)
        elif not ((day_ok or week_ok) if dom and dow else (day_ok and week_ok)):
            moment = moment.replace(hour=0, minute=0) + datetime.timedelta(days=1)
        elif moment.hour not in hours:
            moment = moment.replace(minute=0) + datetime.timedelta(hours=1)
        elif moment.minute not in minutes:
            moment += datetime.timedelta(minutes=1)
        else:
            return moment.timestamp()
    return None


def _finished(job: Obj) -> str | None:
    for cond in (job.get('status') or {}).get('conditions') or []:
        if cond.get('type') in ('Complete', 'Failed') and cond.get('status') == 'True':
            return str(cond['type'])
    return None


def job_for(cronjob: Obj, scheduled: float) -> Obj:
    template = copy.deepcopy((cronjob.get('spec') or {}).get('jobTemplate') or {})
    meta = template.get('metadata') or {}
    job_meta: Obj = {'name': f'{cronjob["metadata"]["name"]}-{int(scheduled // 60)}',
                     'namespace': cronjob['metadata'].get('namespace'), 'labels': dict(meta.get('labels') or {}),
                     'annotations': {**(meta.get('annotations') or {}), SCHEDULED: clock.stamp(scheduled)},
                     'ownerReferences': [owner_ref(cronjob)]}
    return {'apiVersion': 'batch/v1', 'kind': 'Job', 'metadata': job_meta, 'spec': template.get('spec') or {}}


def _due(cronjob: Obj, now: float) -> tuple[float | None, float | None]:
    """The latest scheduled time that has come and is still to run (or None), and the next one after now."""
    spec = cronjob.get('spec') or {}
    status = cronjob.get('status') or {}
    schedule, zone = str(spec.get('schedule') or ''), spec.get('timeZone')
    since = clock.parse(status.get('lastScheduleTime')) or clock.parse(cronjob['metadata'].get('creationTimestamp'))
    since = now if since is None else since
    due = None
    moment = next_time(schedule, since, zone)
    for _ in range(MAX_MISSED):
        if moment is None or moment > now:
            break
        due, moment = moment, next_time(schedule, moment, zone)
    deadline = spec.get('startingDeadlineSeconds')
    if due is not None and deadline is not None and now - due > count(deadline, 0):
        due = None
    return due, next_time(schedule, now, zone)


def reconcile(cronjob: Obj, jobs: list[Obj], now: float) -> Plan:
    plan = Plan()
    if cronjob['metadata'].get('deletionTimestamp'):
        return plan
    spec = cronjob.get('spec') or {}
    old = cronjob.get('status') or {}
    status: Obj = {k: v for k, v in old.items() if k in ('lastScheduleTime', 'lastSuccessfulTime')}
    try:
        due, upcoming = _due(cronjob, now)
    except (ValueError, zoneinfo.ZoneInfoNotFoundError):   # validation would have refused it on a real server
        return plan
    active = [job for job in jobs if not _finished(job) and not job['metadata'].get('deletionTimestamp')]
    names = {job['metadata']['name'] for job in jobs}
    if due is not None and not spec.get('suspend'):
        policy = spec.get('concurrencyPolicy', 'Allow')
        job = job_for(cronjob, due)
        if policy == 'Forbid' and active:
            pass   # skipped: it runs at the next time if none is active by then
        elif job['metadata']['name'] not in names:
            if policy == 'Replace':
                plan.writes.extend(Delete(JOBS, running) for running in active)
                active = []
            plan.writes.append(Create(JOBS, job))
            status['lastScheduleTime'] = clock.stamp(due)
    succeeded = sorted((j for j in jobs if _finished(j) == 'Complete'),
                       key=lambda j: str((j.get('status') or {}).get('completionTime') or ''))
    failed = sorted((j for j in jobs if _finished(j) == 'Failed'), key=lambda j: str(j['metadata']['name']))
    if succeeded:
        status['lastSuccessfulTime'] = (succeeded[-1].get('status') or {}).get('completionTime')
    for finished, limit in ((succeeded, count(spec.get('successfulJobsHistoryLimit'), 3)),
                            (failed, count(spec.get('failedJobsHistoryLimit'), 1))):
        plan.writes.extend(Delete(JOBS, job) for job in finished[:max(0, len(finished) - limit)])
    if active:
        status['active'] = [{'apiVersion': 'batch/v1', 'kind': 'Job', 'name': j['metadata']['name'],
                             'namespace': j['metadata'].get('namespace'), 'uid': j['metadata'].get('uid'),
                             'resourceVersion': j['metadata'].get('resourceVersion')}
                            for j in sorted(active, key=lambda j: str(j['metadata']['name']))]
    plan.wake(upcoming)
    plan.update(CRONJOBS, cronjob, {**cronjob, 'status': status})
    return plan
