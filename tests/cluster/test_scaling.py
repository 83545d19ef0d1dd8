"""The `scale` subresource's view of an object (`kopf._cluster.pipeline.scaling`)."""
import dataclasses

from kopf._cluster.pipeline import scaling
from kopf._shared.resourcetable import Resource

CR = Resource(group='kopf.dev', version='v1', plural='diffs', kind='Diff', namespaced=True, custom=True)
OBJ = {'apiVersion': 'kopf.dev/v1', 'kind': 'Diff', 'metadata': {'name': 's', 'namespace': 'ns'},
       'spec': {'replicas': 2, 'selector': {'matchLabels': {'a': 'b'}}}, 'status': {'replicas': 1}}


def test_no_label_selector_path_means_no_selector() -> None:
    resource = dataclasses.replace(CR, scale={'specReplicasPath': '.spec.replicas',
                                              'statusReplicasPath': '.status.replicas'})
    view = scaling.view(resource, OBJ)  # type: ignore[arg-type]
    assert view['spec'] == {'replicas': 2}
    assert view['status'] == {'replicas': 1}  # not the whole object as a selector string


def test_a_label_selector_path_gives_the_selector_as_a_string() -> None:
    resource = dataclasses.replace(CR, scale={'specReplicasPath': '.spec.replicas',
                                              'statusReplicasPath': '.status.replicas',
                                              'labelSelectorPath': '.spec.selector'})
    assert scaling.view(resource, OBJ)['status'] == {'replicas': 1, 'selector': 'a=b'}  # type: ignore[arg-type]
