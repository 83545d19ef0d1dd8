"""An operator whose CRD validates with CEL: the server refuses bad objects and bad status writes.

The CRD (`crd.yaml`) carries `x-kubernetes-validations` rules: `minReplicas <= maxReplicas`, an immutable
`mode`, a closed set of `status.phase` values. The handler reports the phase (`Ready`, or `Scaling` while
`minReplicas` is below `maxReplicas`): a value outside the set would be refused by the server. Its own test
(`test_example.py`) runs it on the local cluster, which evaluates the same rules as a real one.
"""
import kopf


@kopf.on.create('kopf.dev', 'v1', 'celexamples')
@kopf.on.update('kopf.dev', 'v1', 'celexamples')
def report(spec: kopf.Spec, patch: kopf.Patch, **_: object) -> None:
    patch.status['phase'] = 'Ready' if spec.get('minReplicas') == spec.get('maxReplicas') else 'Scaling'
