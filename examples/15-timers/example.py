"""Timers: a function called periodically for each object, while the object exists.

- `tick` (sync): every 0.5 s, `sharp=True`: on a grid of 0.5 s from its first call, whatever long
  each call takes. It counts its calls in the object's memo; its result goes to `status.tick`.
- `check_when_quiet` (async): every 1 s, but only once the object's spec and metadata (its
  essence; not its status) have not changed for 1 s (`idle=1`): every essential change postpones
  it. Its result goes to `status.check_when_quiet`.

Both are called with the object's newest body. Deleting the object stops them; a call that runs at
that moment finishes first, and then our finalizer is released.
"""
import time

import kopf


@kopf.timer('kopfexamples', interval=0.5, sharp=True)
def tick(memo, logger, **_):
    memo.ticks = memo.get('ticks', 0) + 1
    time.sleep(0.1)  # some work: with sharp=True, it does not shift the next calls
    logger.info(f'Tick {memo.ticks}.')
    return {'ticks': memo.ticks}


@kopf.timer('kopfexamples', interval=1, idle=1)
async def check_when_quiet(spec, logger, **_):
    logger.info(f"The object has been quiet for a while: field={spec.get('field')!r}.")
    return {'field': spec.get('field')}
