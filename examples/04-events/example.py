"""Kubernetes Events about the handled object: `kopf.event`, `kopf.info`, `kopf.warn`, `kopf.exception`.

Creating a KopfExample posts four Events on it (see `kubectl describe kopfexample kopf-example-1`):
a custom type, a Normal one, a Warning, and an Error with the exception's text appended.
"""
import kopf


@kopf.on.create('kopfexamples')
def create_fn(body, **_):
    kopf.event(body, type='Custom', reason='Greeting', message='A custom event type.')
    kopf.info(body, reason='Greeting', message='Everything is fine.')
    kopf.warn(body, reason='Greeting', message='Something looks odd.')
    try:
        raise RuntimeError('The reactor is overheating.')
    except RuntimeError:
        kopf.exception(body, reason='Greeting', message='Something went wrong:')
