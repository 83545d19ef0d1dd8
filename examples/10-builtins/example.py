"""Handlers for a built-in resource: Pods.

Every Pod (except `kube-*` ones) lives at most `POD_LIFETIME` seconds (env var, default 30): the
create/resume handler retries itself with `kopf.TemporaryError(delay=...)` until the Pod is old
enough, then deletes it. The delete handler puts the operator's finalizer on the Pods, so it sees
every deletion (by the operator or by anyone else) before the Pod is gone.
"""
import datetime
import os

import pykube

import kopf

POD_LIFETIME = float(os.environ.get('POD_LIFETIME', '30'))


def not_a_system_pod(name, **_):
    return not name.startswith('kube-')


@kopf.on.resume('pods', when=not_a_system_pod)
@kopf.on.create('pods', when=not_a_system_pod)
def limit_the_lifetime(meta, name, namespace, logger, **_):
    created = datetime.datetime.fromisoformat(meta['creationTimestamp'].replace('Z', '+00:00'))
    age = (datetime.datetime.now(datetime.UTC) - created).total_seconds()
    if age < POD_LIFETIME:
        raise kopf.TemporaryError(f'The pod is {age:.0f}s old; it may live {POD_LIFETIME:.0f}s.',
                                  delay=POD_LIFETIME - age)
    api = pykube.HTTPClient(pykube.KubeConfig.from_env())
    pod = pykube.Pod.objects(api, namespace=namespace).get_by_name(name)
    pod.delete()
    logger.info(f'Deleted the pod {namespace}/{name} after {age:.0f}s.')


@kopf.on.delete('pods', when=not_a_system_pod)
def pod_is_gone(name, logger, **_):
    logger.info(f'The pod {name} is being deleted.')
