"""Testing an operator of workloads on the local cluster: a Deployment that becomes available, one that crashes.

The local cluster runs Pods as a kubelet would; `set_workloads(crashing_images=[...])` makes the containers
of matching images crash (CrashLoopBackOff), `emulator.kopf.dev/...` annotations do the same per Pod.
"""
import os
import pathlib
import time

import kopf
from kopf.testing import KopfRunner, LocalCluster

HERE = pathlib.Path(__file__).parent
EXAMPLES = HERE.parent


def _condition(cluster: LocalCluster, name: str) -> dict | None:
    for _ in range(300):  # up to 30 seconds
        obj = cluster.get('kopf.dev/v1', 'KopfExample', name, 'default')
        conditions = (obj or {}).get('status', {}).get('conditions') or []
        if conditions and conditions[0]['reason'] not in ('Pending', 'NewReplicaSetCreated', 'ReplicaSetUpdated'):
            return conditions[0]
        time.sleep(0.1)
    return None


def test_available_and_crashing(kopf_local_cluster: LocalCluster) -> None:   # kopf's pytest plugin
    kopf_local_cluster.apply(EXAMPLES / 'crd.yaml')
    kopf_local_cluster.set_workloads(crashing_images=['*:broken'])
    os.environ['KUBECONFIG'] = str(kopf_local_cluster.kubeconfig)   # for the operator's `kubernetes` client
    with KopfRunner(['run', '-A', '--verbose', str(HERE / 'example.py')],
                    cluster=kopf_local_cluster, registry=kopf.OperatorRegistry(), timeout=30) as runner:
        assert runner.wait_ready(timeout=30)
        for name, image in [('good', 'nginx:1.27'), ('bad', 'busybox:broken')]:
            kopf_local_cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
                                      'metadata': {'name': name, 'namespace': 'default'}, 'spec': {'image': image}})
        good = _condition(kopf_local_cluster, 'good')
        bad = _condition(kopf_local_cluster, 'bad')

    assert runner.exit_code == 0 and runner.exception is None
    assert good == {'type': 'Available', 'status': 'True', 'reason': 'MinimumReplicasAvailable'}
    assert bad == {'type': 'Available', 'status': 'False', 'reason': 'CrashLoopBackOff'}
