"""Operator-level hooks: startup (one retried until ready), cleanup, a custom login, liveness probes,
and a background task fed by `on.event('pods')` handlers.

- `start_background_task`: a task of the operator's own, started at startup, stopped at cleanup;
  it logs "Served by the background task." every few seconds.
- `wait_for_a_dependency`: fails twice, then succeeds: the operator starts watching only when all
  startup handlers have succeeded.
- `login`: the credentials from the kubeconfig (`$KUBECONFIG`), with a 30-second expiration: the
  operator logs in again when they expire (or when the API answers 401).
- `pods_seen` and `started_at`: served as JSON at `kopf run --liveness http://0.0.0.0:8080/healthz`.
- `pod_event`: every event of every Pod adds the Pod's name to the operator's memo (shared by
  reference: the per-object memo is a shallow copy of the operator's).
"""
import asyncio
import dataclasses
import datetime

import kopf

BACKGROUND_INTERVAL = 5.0


async def _background(memo, logger):
    while True:
        logger.info(f'Served by the background task. Pods seen so far: {len(memo.pods)}.')
        await asyncio.sleep(BACKGROUND_INTERVAL)


@kopf.on.startup()
async def start_background_task(memo, logger, **_):
    memo.pods = set()
    memo.started_at = datetime.datetime.now(datetime.UTC).isoformat()
    memo.task = asyncio.create_task(_background(memo, logger))


@kopf.on.startup(retries=5, backoff=0.5)
def wait_for_a_dependency(retry, logger, **_):
    if retry < 2:
        raise RuntimeError(f'The dependency is not ready yet (attempt {retry + 1}).')
    logger.info('The dependency is ready.')


@kopf.on.cleanup()
async def stop_background_task(memo, logger, **_):
    memo.task.cancel()
    await asyncio.gather(memo.task, return_exceptions=True)
    logger.info('The background task is stopped.')


@kopf.on.login()
def login(logger, **kwargs):
    info = kopf.login_with_kubeconfig(**kwargs)
    if info is None:
        raise kopf.PermanentError('No kubeconfig found: set $KUBECONFIG.')
    expiration = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=30)
    logger.info(f'Logged in to {info.server}, valid for 30 seconds.')
    return dataclasses.replace(info, expiration=expiration)


@kopf.on.probe(id='pods_seen')
def pods_seen(memo, **_):
    return len(memo.pods)


@kopf.on.probe(id='started_at')
def started_at(memo, **_):
    return memo.started_at


@kopf.on.event('pods')
def pod_event(name, event, memo, logger, **_):
    memo.pods.add(name)
    logger.info(f'Pod event: {event["type"] or "in the initial listing"}.')
