"""An operator that runs a Deployment per KopfExample and reports when it is available, or why not.

On the local cluster, Deployments roll out as on a real one: their ReplicaSets and Pods appear, the
Pods are scheduled to a fake node and become Ready (in ~100 ms), and the Deployment's status and
conditions follow. Failures are injected per image or per annotation (a crash loop, a failing image
pull), so the failure path is tested as easily as the happy one. Run it with:

    kopf run -A --local-cluster --apply examples/crd.yaml --apply examples/obj.yaml \\
        examples/22-workloads/example.py
"""
import os

import kubernetes

import kopf

LABEL = 'kopf.dev/example'
FAILING = {'CrashLoopBackOff', 'ErrImagePull', 'ImagePullBackOff'}


@kopf.on.create('kopfexamples')
def create_deployment(name, spec, logger, **_):
    image = spec.get('image', 'nginx:1.27')
    labels = {LABEL: name}
    deployment = {
        'apiVersion': 'apps/v1', 'kind': 'Deployment', 'metadata': {'name': name, 'labels': labels},
        'spec': {'replicas': int(spec.get('replicas', 2)), 'selector': {'matchLabels': labels},
                 'template': {'metadata': {'labels': labels},
                              'spec': {'containers': [{'name': 'main', 'image': image}]}}},
    }
    kopf.adopt(deployment)   # owned by the KopfExample: deleted with it, and in its namespace
    # The operator's KUBECONFIG (`kopf run --local-cluster` sets it), read now: the client reads it only on import.
    with kubernetes.config.new_client_from_config(config_file=os.environ.get('KUBECONFIG')) as client:
        kubernetes.client.AppsV1Api(client).create_namespaced_deployment(deployment['metadata']['namespace'],
                                                                         deployment)
    logger.info(f'Created the deployment {name} of {image}.')


@kopf.index('deployments', labels={LABEL: kopf.PRESENT})
def deployment_conditions(name, namespace, status, **_):
    conditions = {c['type']: c for c in status.get('conditions') or []}
    return {(namespace, name): {'available': conditions.get('Available', {}).get('status') == 'True',
                                'progressing': conditions.get('Progressing', {}).get('reason')}}


@kopf.index('pods', labels={LABEL: kopf.PRESENT})
def pod_problems(labels, namespace, status, **_):
    reasons = {(s.get('state') or {}).get('waiting', {}).get('reason') for s in status.get('containerStatuses') or []}
    return {(namespace, labels[LABEL]): sorted(reasons & FAILING)}


@kopf.timer('kopfexamples', interval=0.5)
def availability(name, namespace, deployment_conditions, pod_problems, patch, **_):
    """The KopfExample's condition, from the indices: Available, Failing (with the Pods' reason), or Progressing."""
    problems = sorted({reason for reasons in pod_problems.get((namespace, name), []) for reason in reasons})
    found = list(deployment_conditions.get((namespace, name), []))
    if found and found[0]['available']:
        condition = {'type': 'Available', 'status': 'True', 'reason': 'MinimumReplicasAvailable'}
    elif problems:
        condition = {'type': 'Available', 'status': 'False', 'reason': problems[0]}
    else:
        progressing = found[0]['progressing'] if found else None   # None: the Deployment has no conditions yet
        condition = {'type': 'Available', 'status': 'False', 'reason': progressing or 'Pending'}
    patch.status['conditions'] = [condition]
