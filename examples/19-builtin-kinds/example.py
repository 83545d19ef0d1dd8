"""Children of every kind: a KopfExample gets a ServiceAccount, a Role, a RoleBinding and a Job.

Any built-in kind of Kubernetes 1.34 works on the local cluster as on a real one: here the
official `kubernetes` client creates RBAC objects with `utils.create_from_yaml` and a Job with
its typed `BatchV1Api`, all adopted by the KopfExample (deleted with it). A second handler
watches the Jobs it made (`batch/v1 jobs`, by label) and records what the server defaulted in
them (the generated selector) in the Job's annotations. Run it with:

    kopf run -A --local-cluster --apply examples/crd.yaml --apply examples/obj.yaml \\
        examples/19-builtin-kinds/example.py
"""
import os

import kubernetes

import kopf

LABEL = 'kopf.dev/example'


def _client() -> kubernetes.client.ApiClient:
    # The operator's KUBECONFIG (`kopf run --local-cluster` sets it), read now: the client reads it only on import.
    return kubernetes.config.new_client_from_config(config_file=os.environ.get('KUBECONFIG'))


@kopf.on.create('kopfexamples')
def create_children(name, namespace, logger, **_):
    labels = {LABEL: name}
    rbac = [
        {'apiVersion': 'v1', 'kind': 'ServiceAccount', 'metadata': {'name': f'{name}-runner', 'labels': labels}},
        {'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'Role',
         'metadata': {'name': f'{name}-reader', 'labels': labels},
         'rules': [{'apiGroups': [''], 'resources': ['configmaps'], 'verbs': ['get', 'list', 'watch']}]},
        {'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'RoleBinding',
         'metadata': {'name': f'{name}-reader', 'labels': labels},
         'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'Role', 'name': f'{name}-reader'},
         'subjects': [{'kind': 'ServiceAccount', 'name': f'{name}-runner', 'namespace': namespace}]},
    ]
    job = {'apiVersion': 'batch/v1', 'kind': 'Job', 'metadata': {'name': f'{name}-job', 'labels': labels},
           'spec': {'suspend': True, 'template': {'spec': {
               'serviceAccountName': f'{name}-runner', 'restartPolicy': 'Never',
               'containers': [{'name': 'main', 'image': 'busybox:1.36', 'command': ['echo', 'hello']}]}}}}
    kopf.adopt([*rbac, job])
    with _client() as client:
        kubernetes.utils.create_from_yaml(client, yaml_objects=rbac, namespace=namespace)
        kubernetes.client.BatchV1Api(client).create_namespaced_job(namespace, job)
    logger.info(f'Created a service account, a role, a role binding and a job for {name}.')
    return {'children': [obj['kind'] for obj in [*rbac, job]]}


@kopf.on.create('batch', 'v1', 'jobs', labels={LABEL: kopf.PRESENT})
def record_the_selector(spec, patch, logger, **_):
    selector = ','.join(f'{k}={v}' for k, v in spec['selector']['matchLabels'].items())
    patch.metadata.annotations['kopf.dev/selector'] = selector
    logger.info(f'The server selects the job\'s pods by {selector}.')
