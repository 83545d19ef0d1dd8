"""Daemons: long-running tasks, one per object, started once our finalizer is on the object.

- `accompany` (sync, in a thread of its own): fails temporarily twice (`kopf.TemporaryError` with
  a short `delay=`), writing its progress to `status.progress` after each attempt (a daemon's patch
  is applied after every attempt), then works in a few steps with `stopped.wait()` between them and
  returns: its result goes to `status.accompany`, and it is not restarted.
- `ping` (async): pings every second until `stopped`. It sleeps with `asyncio.sleep()` rather
  than waiting on the flag, so when it is stopped in the middle of a sleep, it is cancelled after
  `cancellation_backoff` seconds (it exits gracefully only if its sleep ends before that);
  `cancellation_timeout` is how long it may take to exit after that before it is abandoned.
- `watch_annotated` (sync): runs only while the object has `someannotation: somevalue`; removing
  the annotation stops it (FILTERS_MISMATCH), putting it back starts it again from scratch. It
  counts its starts in the object's memo, and returns why it stopped (to `status.watch_annotated`).

Deleting the object stops the daemons that still run (RESOURCE_DELETED); our finalizer is released
when all of them have exited, and only then is the object gone.
"""
import asyncio

import kopf


@kopf.daemon('kopfexamples')
def accompany(stopped, retry, patch, logger, **_):
    if retry < 2:
        patch.status['progress'] = f'Getting ready (attempt {retry + 1}).'
        raise kopf.TemporaryError(f'Not ready to accompany yet (attempt {retry + 1}).', delay=0.3)
    for step in range(1, 4):
        if stopped.wait(0.2):  # True as soon as the daemon is asked to stop
            logger.info(f'Accompanying is interrupted: {stopped.reason}.')
            return None
        logger.info(f'Accompanying: step {step} of 3.')
    patch.status['progress'] = 'Done.'
    logger.info('Accompanying is finished.')
    return {'message': 'Accompanying is finished.'}


@kopf.daemon('kopfexamples', cancellation_backoff=0.1, cancellation_timeout=2.0)
async def ping(stopped, logger, **_):
    count = 0
    try:
        while not stopped:
            count += 1
            logger.info(f'Ping {count}.')
            await asyncio.sleep(1)  # does not notice the flag: likely cancelled after cancellation_backoff
    except asyncio.CancelledError:
        logger.info(f'Pinging is cancelled after {count} ping(s): {stopped.reason}.')
        raise


@kopf.daemon('kopfexamples', annotations={'someannotation': 'somevalue'})
def watch_annotated(stopped, name, memo, logger, **_):
    memo.watching = memo.get('watching', 0) + 1  # the object's memo outlives its daemons
    logger.info(f'Watching the annotated {name} (time {memo.watching}).')
    while not stopped.wait(0.3):
        pass  # some periodic work here
    logger.info(f'Stopped watching {name}: {stopped.reason}.')
    return {'times': memo.watching, 'stopped': str(stopped.reason)}  # to status.watch_annotated
