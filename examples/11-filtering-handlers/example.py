"""Filters: which handlers run for which objects.

Each create handler logs its own name when it runs: by labels (exact value, PRESENT, ABSENT, a
callback), by annotations, by a field's value, by `when=`; the update handlers by `old=`/`new=`
values of a field. Daemons take the same filters: `daemon_with_field_value` runs while `spec.field`
is "value", logging every second, and is stopped when the field changes.
"""
import kopf


def is_good_enough(spec, **_):
    return spec.get('field') in spec.get('items', [])


def is_some_value(value, **_):
    return value == 'somevalue'


@kopf.on.create('kopfexamples', labels={'somelabel': 'somevalue'})
def create_with_labels_matching(logger, **_):
    logger.info('Label is matching.')


@kopf.on.create('kopfexamples', labels={'somelabel': kopf.PRESENT})
def create_with_labels_present(logger, **_):
    logger.info('Label is present.')


@kopf.on.create('kopfexamples', labels={'nonexistent': kopf.ABSENT})
def create_with_labels_absent(logger, **_):
    logger.info('Label is absent.')


@kopf.on.create('kopfexamples', labels={'somelabel': is_some_value})
def create_with_labels_callback(logger, **_):
    logger.info('Label callback is satisfied.')


@kopf.on.create('kopfexamples', labels={'somelabel': 'othervalue'})
def create_with_labels_not_matching(logger, **_):
    logger.info('Label is not matching: MUST NOT BE LOGGED.')


@kopf.on.create('kopfexamples', annotations={'someannotation': 'somevalue'})
def create_with_annotations_matching(logger, **_):
    logger.info('Annotation is matching.')


@kopf.on.create('kopfexamples', annotations={'nonexistent': kopf.PRESENT})
def create_with_annotations_present(logger, **_):
    logger.info('Annotation is present: MUST NOT BE LOGGED.')


@kopf.on.create('kopfexamples', field='spec.field', value='value')
def create_with_field_value(logger, **_):
    logger.info('Field value is matching.')


@kopf.on.create('kopfexamples', field='spec.field', value=kopf.ABSENT)
def create_with_field_absent(logger, **_):
    logger.info('Field is absent: MUST NOT BE LOGGED.')


@kopf.on.create('kopfexamples', when=lambda spec, **_: spec.get('field') == 'value')
def create_with_when_lambda(logger, **_):
    logger.info('The when= condition is true.')


@kopf.on.create('kopfexamples', when=kopf.any_([is_good_enough, lambda name, **_: name.endswith('-1')]))
def create_with_any_of_callbacks(logger, **_):
    logger.info('Any of the callbacks is satisfied.')


@kopf.daemon('kopfexamples', field='spec.field', value='value')
def daemon_with_field_value(stopped, logger, **_):
    while not stopped:
        logger.info('Field daemon is running.')
        stopped.wait(1)
    logger.info(f'Field daemon is stopped: {stopped.reason}.')


@kopf.on.update('kopfexamples', field='spec.field', old='value', new='changed')
def update_from_value_to_changed(logger, **_):
    logger.info('Field changed from "value" to "changed".')


@kopf.on.update('kopfexamples', field='spec.field', new='something-else')
def update_to_something_else(logger, **_):
    logger.info('Field changed to "something-else": MUST NOT BE LOGGED.')
