"""Errors and retries: permanent and temporary errors, `retries=`, `backoff=`, `errors=`.

Four create handlers, tried one per processing cycle, their progress kept in annotations between
the cycles (`kopf.zalando.org/<handler id>`: retries, `delayed`, the last `message`):

- `fail_permanently`: a `kopf.PermanentError` fails the handler at once, with only its message.
- `fail_at_once_on_any_error`: with `errors=kopf.ErrorsMode.PERMANENT`, any exception is final.
- `fail_after_three_tries`: an arbitrary exception is retried after `backoff=1` second;
  `retries=3` allows three attempts in all; its traceback is logged each time.
- `succeed_on_the_fourth_try`: `kopf.TemporaryError(delay=1)` asks for another try in 1 second.

The log ends with "Creation is processed: 1 succeeded; 3 failed."
"""
import kopf


class SensorIsNotReady(Exception):
    pass


@kopf.on.create('kopfexamples')
def fail_permanently(**_):
    raise kopf.PermanentError('The spec can never be satisfied.')


@kopf.on.create('kopfexamples', errors=kopf.ErrorsMode.PERMANENT)
def fail_at_once_on_any_error(**_):
    raise ValueError('An unexpected value, and no retries for it.')


@kopf.on.create('kopfexamples', retries=3, backoff=1)
def fail_after_three_tries(retry, **_):
    raise SensorIsNotReady(f'The sensor is still not ready (attempt {retry + 1}).')


@kopf.on.create('kopfexamples', backoff=1)
def succeed_on_the_fourth_try(retry, logger, **_):
    if retry < 3:
        raise kopf.TemporaryError(f'Not yet: attempt {retry + 1}.', delay=1)
    logger.info(f'Succeeded after {retry} retries.')
    return {'retries': retry}
