"""Children: a create handler makes a Pod for each KopfExample and adopts it (`kopf.adopt`).

The Pod gets an owner reference to the KopfExample (as its controller), the parent's namespace,
a name generated from the parent's (`kopf-example-1-xxxxx`) and the parent's labels. When the
parent is deleted, the cluster's garbage collector deletes the Pod (no delete handler needed).
The Pod is created with pykube-ng, configured from `$KUBECONFIG` (or the in-cluster account).
"""
import pykube

import kopf


def _seconds(duration: str) -> int:
    """'1m' → 60, '30s' → 30, '2h' → 7200, '15' → 15."""
    units = {'s': 1, 'm': 60, 'h': 3600}
    return int(duration[:-1]) * units[duration[-1]] if duration[-1:] in units else int(duration)


@kopf.on.create('kopfexamples')
def create_fn(spec, logger, **_):
    seconds = _seconds(str(spec.get('duration', '1m')))
    pod = {
        'apiVersion': 'v1',
        'kind': 'Pod',
        'spec': {
            'restartPolicy': 'Never',
            'containers': [{'name': 'sleeper', 'image': 'busybox', 'command': ['sleep', str(seconds)]}],
        },
    }
    kopf.adopt(pod)  # owner reference, namespace, generateName and labels from the handled object

    api = pykube.HTTPClient(pykube.KubeConfig.from_env())
    child = pykube.Pod(api, pod)
    child.create()
    logger.info(f'Created the child pod {child.name} for {seconds} seconds.')
    return {'children': [child.obj['metadata']['uid']]}
