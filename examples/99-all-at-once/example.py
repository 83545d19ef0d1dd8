"""Everything at once (except daemons and timers, which this version does not run yet).

- Startup: tunes the settings (a short backoff) and keeps a list in the operator's memo;
  cleanup logs how many objects were handled.
- Create: two handlers; the first posts Events and returns a result; the second fails once with
  a temporary error, then succeeds. It also creates a child Pod (with the official `kubernetes`
  client) adopted by the object: owner reference, namespace, generated name and labels.
- Update, field and delete handlers (the delete handler makes the operator keep a finalizer).
- Events of the Pods carrying the example's label are logged (a filtered `on.event`).
"""
import os

import kopf


@kopf.on.startup()
def configure(settings, memo, logger, **_):
    settings.execution.default_backoff = 1  # retry the arbitrary errors after 1 second
    settings.posting.level = 20  # INFO
    memo.created = []  # a mutable value: shared by the per-object memos (they are shallow copies)
    logger.info('The operator is configured.')


@kopf.on.cleanup()
def report(memo, logger, **_):
    logger.info(f'The operator is exiting; it has created {len(memo.created)} object(s).')


@kopf.on.create('kopfexamples')
def create_1(body, name, memo, **_):
    kopf.info(body, reason='Job1', message='The first job has started.')
    memo.created.append(name)
    return {'job1-status': 100}


@kopf.on.create('kopfexamples')
def create_2(body, retry, logger, **_):
    if retry == 0:
        raise kopf.TemporaryError('The second job is not ready yet.', delay=1)
    import kubernetes
    # $KUBECONFIG is read here, not when `kubernetes` was imported (it may have changed since).
    api = kubernetes.client.CoreV1Api(kubernetes.config.new_client_from_config(os.environ.get('KUBECONFIG')))
    pod = kubernetes.client.V1Pod(
        api_version='v1', kind='Pod', metadata=kubernetes.client.V1ObjectMeta(),
        spec=kubernetes.client.V1PodSpec(containers=[kubernetes.client.V1Container(name='job2', image='busybox')]),
    )
    kopf.adopt(pod)
    created = api.create_namespaced_pod(pod.metadata.namespace, pod)
    kopf.info(body, reason='Job2', message=f'The child pod {created.metadata.name} is created.')
    logger.info(f'The child pod {created.metadata.name} is created.')
    return {'job2-status': 100, 'child': created.metadata.name}


@kopf.on.update('kopfexamples')
def update_fn(diff, logger, **_):
    logger.info(f'Updated: {len(diff)} change(s).')


@kopf.on.field('kopfexamples', field='spec.field')
def field_fn(old, new, logger, **_):
    logger.info(f'spec.field: {old!r} -> {new!r}')


@kopf.on.delete('kopfexamples')
def delete_fn(name, logger, **_):
    logger.info(f'Deleting {name}: nothing to release, the children are garbage-collected.')


@kopf.on.event('pods', labels={'somelabel': 'somevalue'})
def labelled_pod_event(name, type, logger, **_):
    logger.info(f'A labelled pod {name}: {type or "listed"}.')
