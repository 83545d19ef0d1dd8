"""An operator written the way upstream Kopf 1.45 users write them (our own code, not upstream's).

It uses every decorator and every decorator option of upstream 1.45 at least once, plus the old
spellings (`cooldown=`, `kopf.on.this`, `HandlerRetryError`/`HandlerFatalError`).
`test_upstream_style.py` imports it unchanged and walks its AST to prove the coverage.
"""
import logging
import time

import kopf

custom_registry = kopf.OperatorRegistry()


@kopf.on.startup(id='configure', param='startup-param', errors=kopf.ErrorsMode.PERMANENT, timeout=30,
                 retries=3, backoff=1)
def configure(settings, memo: kopf.Memo, logger: logging.Logger, **kwargs):
    memo.greeting = 'hello'
    memo['counter'] = 0
    logger.info(f'Starting with {settings!r}')


@kopf.on.cleanup()
async def cleanup_fn(memo, logger, **_):
    logger.info(f'Bye after {memo.counter} objects.')


@kopf.on.login(retries=2, cooldown=5)  # the old name of backoff=
def login_fn(**kwargs):
    return None


@kopf.on.probe(id='now')
def get_current_timestamp(**kwargs):
    return time.time()


@kopf.on.resume('kopf.dev', 'v1', 'kopfexamples', deleted=True)
@kopf.on.create('kopf.dev', 'v1', 'kopfexamples')
def create_fn(spec, name, namespace, memo, patch: kopf.Patch, logger, **kwargs):
    memo.counter = memo.get('counter', 0) + 1
    patch.status['seen'] = True
    return {'message': f'{memo.get("greeting", "hi")}, {name} in {namespace}: {spec.get("field")}'}


@kopf.on.create('kopfexamples.kopf.dev', labels={'somelabel': 'somevalue', 'other': kopf.ABSENT},
                annotations={'someannotation': kopf.PRESENT})
def create_labelled(**_):
    pass


@kopf.on.create('kopfexamples', when=kopf.all_([lambda spec, **_: 'field' in spec, kopf.not_(lambda **_: False)]))
def create_filtered(retry, started, runtime, **_):
    if retry < 1:
        raise kopf.TemporaryError('Not yet.', delay=1)
    if retry > 5:
        raise kopf.PermanentError('Never.')


@kopf.on.create(group='kopf.dev', version='v1', plural='kopfexamples')
def create_with_subhandlers(spec, **_):
    for item in spec.get('items', []):
        @kopf.subhandler(id=f'item-{item}', param=item, errors=kopf.ErrorsMode.TEMPORARY, timeout=60, retries=5,
                         backoff=2, labels={'somelabel': kopf.PRESENT}, annotations={'x': kopf.ABSENT},
                         when=lambda **_: True, field='spec.items', value=kopf.PRESENT)
        def handle_item(param, **_):
            return {'item': param}

    @kopf.on.this(id='old-style')
    def old_style(**_):
        raise kopf.HandlerRetryError('Old-style retry.', delay=1)

    def registered(**_):
        raise kopf.HandlerFatalError('Old-style fatal.')
    kopf.register(registered, id='registered', cooldown=1)


@kopf.on.create('kopfexamples', id='executor')
async def create_with_execute(**_):
    await kopf.execute(fns={'first': lambda **_: None, 'second': lambda **_: None})


@kopf.on.update(kind='KopfExample', field='spec.field', old='value', new=kopf.not_(lambda value, **_: value is None))
def update_field(old, new, diff, **_):
    @kopf.subhandler(field='spec.field', old=kopf.PRESENT, new=kopf.PRESENT)
    def nested(**_):
        pass


@kopf.on.update(singular='kopfexample', registry=custom_registry)
def update_fn(old, new, diff, reason, **_):
    return {'changes': len(diff)}


@kopf.on.delete(shortcut='kex', optional=True)
def delete_fn(**_):
    pass


@kopf.on.delete('kopfexamples', field='metadata.labels.somelabel', value=kopf.any_([lambda v, **_: v == 'a']))
def delete_labelled(**_):
    pass


@kopf.on.field('kopfexamples', field='spec.field', value=kopf.none_([lambda value, **_: value == 'wrong']))
def field_fn(old, new, **_):
    pass


@kopf.on.field('kopfexamples', field=['spec', 'items'], old=kopf.ABSENT, new=kopf.PRESENT)
def field_appeared(**_):
    pass


@kopf.on.event('v1', 'pods', labels={'application': 'kopf-example'})
def event_fn(event, type, body, **_):
    pass


@kopf.on.event(kopf.EVERYTHING)
def spy_everything(**_):
    pass


@kopf.on.event(lambda resource: resource.group == 'kopf.dev')
def spy_by_callable(**_):
    pass


@kopf.index(category='all')
def pods_by_namespace(namespace, name, **_):
    return {namespace: name}


@kopf.on.index('pods', id='pod-phases', field='status.phase')
def pod_phases(status, **_):
    return status.get('phase')


@kopf.daemon('kopfexamples', initial_delay=5, cancellation_backoff=1, cancellation_timeout=10,
             cancellation_polling=2, annotations={'daemon': 'yes'})
async def monitor(stopped, logger, **_):
    while not stopped:
        await stopped.wait(1)


@kopf.on.daemon('kopfexamples', initial_delay=lambda **_: 1.0)
def sync_monitor(stopped, **_):
    while not stopped:
        stopped.wait(1)


@kopf.timer('kopfexamples', interval=10, initial_delay=1, sharp=True, idle=5)
async def ping(**_):
    return {'pinged': True}


@kopf.on.timer('kopfexamples', interval=60)
def sync_ping(**_):
    pass


@kopf.on.validate('kopfexamples', id='validate-spec', operations=['CREATE', 'UPDATE'], subresource='*',
                  persistent=True, side_effects=True, ignore_failures=True)
def validate_fn(spec, dryrun, warnings, userinfo, headers, sslpeer, **_):
    if spec.get('field') == 'wrong':
        raise kopf.AdmissionError('Meh! Wrong value.', code=555)


@kopf.on.validate('kopfexamples', operation='DELETE')  # deprecated since upstream 1.37
def validate_deletion(**_):
    pass


@kopf.on.mutate('kopfexamples', labels={'inject': kopf.PRESENT}, subresource='status')
def mutate_fn(patch, **_):
    patch.spec['injected'] = 123
