"""Testing an operator: `KopfRunner` runs `kopf run` in a thread against a local cluster.

`kopf_local_cluster` is a pytest fixture of kopf's pytest plugin (registered when kopf is installed: no import, no
conftest.py line): an in-memory Kubernetes API in its own thread; `cluster=` points the operator at it without
touching the environment variables.
"""
import pathlib
import time

import kopf
from kopf.testing import KopfRunner, LocalCluster

HERE = pathlib.Path(__file__).parent
EXAMPLES = HERE.parent


def test_the_operator(kopf_local_cluster: LocalCluster) -> None:
    kopf_local_cluster.apply(EXAMPLES / 'crd.yaml')
    with KopfRunner(['run', '-A', '--verbose', str(HERE / 'example.py')],
                    cluster=kopf_local_cluster, registry=kopf.OperatorRegistry(), timeout=30) as runner:
        assert runner.wait_ready(timeout=30)
        kopf_local_cluster.apply(EXAMPLES / 'obj.yaml')
        for _ in range(300):  # up to 30 seconds
            obj = kopf_local_cluster.get('kopf.dev/v1', 'KopfExample', 'kopf-example-1', 'default')
            if obj and obj.get('status'):
                break
            time.sleep(0.1)

    assert runner.exit_code == 0
    assert runner.exception is None
    assert 'Something was logged here.' in runner.output
    assert obj is not None and obj['status'] == {'create_fn': {'message': 'tested'}}
