"""An operator to be tested: see `test_example.py` next to it (run it with `pytest examples/09-testing`)."""
import kopf


@kopf.on.create('kopfexamples')
def create_fn(logger, **_):
    logger.info('Something was logged here.')
    return {'message': 'tested'}
