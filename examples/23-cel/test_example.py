"""CEL validation rules on the local cluster: a refused object, a transition rule, a refused status write.

The local cluster compiles the CRD's `x-kubernetes-validations` when the CRD is applied and evaluates them on
every write, in the real server's words (status 422, reason `Invalid`, the rule's message).
"""
import json
import pathlib
import time
import urllib.error
import urllib.request

import pytest

import kopf
from kopf.testing import KopfRunner, LocalCluster, kopf_local_cluster  # noqa: F401  # a fixture

HERE = pathlib.Path(__file__).parent


def obj(name: str, **spec: object) -> dict:
    return {'apiVersion': 'kopf.dev/v1', 'kind': 'CelExample', 'metadata': {'name': name, 'namespace': 'default'},
            'spec': spec}


def _patch_status(cluster: LocalCluster, name: str, patch: dict) -> dict:
    """A merge patch to the status subresource, as the operator's own writes are sent; the Status if refused."""
    url = f'{cluster.url}/apis/kopf.dev/v1/namespaces/default/celexamples/{name}/status'
    request = urllib.request.Request(url, json.dumps(patch).encode(), method='PATCH',
                                     headers={'Content-Type': 'application/merge-patch+json'})
    try:
        with urllib.request.urlopen(request) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as e:
        return json.loads(e.read())


def _phase(cluster: LocalCluster, name: str) -> str | None:
    for _ in range(300):  # up to 30 seconds
        phase = ((cluster.get('kopf.dev/v1', 'CelExample', name, 'default') or {}).get('status') or {}).get('phase')
        if phase:
            return str(phase)
        time.sleep(0.1)
    return None


def test_rules_are_enforced(kopf_local_cluster: LocalCluster) -> None:  # noqa: F811
    kopf_local_cluster.apply(HERE / 'crd.yaml')
    with pytest.raises(Exception, match='minReplicas must not exceed maxReplicas'):
        kopf_local_cluster.apply(obj('bad', minReplicas=5, maxReplicas=2))
    with KopfRunner(['run', '-A', '--verbose', str(HERE / 'example.py')],
                    cluster=kopf_local_cluster, registry=kopf.OperatorRegistry(), timeout=30) as runner:
        assert runner.wait_ready(timeout=30)
        kopf_local_cluster.apply(obj('good', mode='fast'))
        assert _phase(kopf_local_cluster, 'good') == 'Scaling'
        with pytest.raises(Exception, match='mode is immutable'):
            kopf_local_cluster.apply(obj('good', mode='slow'))
        refused = _patch_status(kopf_local_cluster, 'good', {'status': {'phase': 'Broken'}})
        assert refused['code'] == 422 and refused['message'].endswith('status.phase: Invalid value: "string": '
                                                                     'unknown phase: Broken')
    assert runner.exit_code == 0 and runner.exception is None
