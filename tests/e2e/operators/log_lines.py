"""Handlers that go through every outcome once: run by tests/e2e/test_log_lines.py (and, as a black
box, by upstream Kopf 1.45.2 when the expected lines were taken down)."""
import kopf

COUNTS: dict[str, int] = {}


def count(key: str) -> int:
    COUNTS[key] = COUNTS.get(key, 0) + 1
    return COUNTS[key]


@kopf.on.startup()
def startup_ok(**_):
    pass


@kopf.on.startup()
def startup_retry(**_):
    if count('startup_retry') < 2:
        raise kopf.TemporaryError('not yet', delay=0.5)


@kopf.on.startup(backoff=0.5)
def startup_arbitrary(**_):
    if count('startup_arbitrary') < 2:
        raise ValueError('boom in startup')


@kopf.on.cleanup()
def cleanup_fn(**_):
    pass


@kopf.on.create('kopfexamples', retries=3, backoff=0.5)
def c_retries(**_):
    raise ValueError('always fails')


@kopf.on.create('kopfexamples')
def c_temp(retry, **_):
    if retry < 1:
        raise kopf.TemporaryError('temp-fail', delay=0.5)
    return {'ok': 1}


@kopf.on.create('kopfexamples', retries=2)
def c_temp_exceed(**_):
    raise kopf.TemporaryError('temp-always', delay=0.5)


@kopf.on.create('kopfexamples')
def c_perm(**_):
    raise kopf.PermanentError('perm-fail')


@kopf.on.create('kopfexamples', errors=kopf.ErrorsMode.IGNORED)
def c_ignored(**_):
    raise ValueError('ignored-fail')


@kopf.on.create('kopfexamples', errors=kopf.ErrorsMode.PERMANENT)
def c_arb_perm(**_):
    raise ValueError('arb-perm-fail')


# The next attempt would be past the timeout: judged at the first attempt (however late it comes).
@kopf.on.create('kopfexamples', timeout=30)
def c_timeout(**_):
    raise kopf.TemporaryError('slow', delay=60)


@kopf.on.create('kopfexamples', timeout=30, backoff=60)
def c_timeout_arb(**_):
    raise ValueError('slow-arb')


@kopf.on.create('kopfexamples')
def c_sub(**_):
    @kopf.subhandler(id='sub1')
    def sub1(**_):
        pass

    @kopf.subhandler(id='sub2')
    def sub2(retry, **_):
        if retry < 1:
            raise kopf.TemporaryError('sub-temp', delay=0.5)


@kopf.daemon('kopfexamples', backoff=0.5)
async def dmn(stopped, retry, **_):
    if retry < 1:
        raise ValueError('daemon-boom')
    if retry < 2:
        raise kopf.TemporaryError('daemon-temp', delay=0.5)
    await stopped.wait()


@kopf.daemon('kopfexamples')
def dmn_exit(**_):
    return None


@kopf.daemon('kopfexamples', retries=2, backoff=0.3)
def dmn_retries(**_):
    raise ValueError('daemon-always')


@kopf.daemon('kopfexamples')
def dmn_perm(**_):
    raise kopf.PermanentError('daemon-perm')


@kopf.timer('kopfexamples', interval=0.3, backoff=0.3)
def tmr(**_):
    n = count('tmr')
    if n == 1:
        raise ValueError('timer-boom')
    if n == 2:
        raise kopf.TemporaryError('timer-temp', delay=0.3)
    raise kopf.PermanentError('timer-perm')


@kopf.index('kopfexamples')
def idx_ok(name, **_):
    return {name: 1}


@kopf.index('kopfexamples')
def idx_fail(**_):
    raise ValueError('index-boom')


@kopf.on.event('kopfexamples')
def ev_ok(**_):
    pass


@kopf.on.event('kopfexamples')
def ev_fail(**_):
    raise ValueError('event-boom')


@kopf.on.field('kopfexamples', field='spec.field')
def fld_fn(**_):
    pass


# Ours only (docs/design/decisions.md #11; upstream logs it as a success and retries it every second):
@kopf.on.create('kopfexamples', errors=kopf.ErrorsMode.IGNORED)
def c_unstorable(**_):
    return {'a': {1, 2}}
