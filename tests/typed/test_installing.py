"""What `--install-crds` does with a CRD: create it, keep it, replace its spec, or refuse to drop a stored version."""
from typing import Any

import pytest

from kopf._typed import installing


def crd(*versions: str, **spec: Any) -> dict[str, Any]:
    return {'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
            'metadata': {'name': 'things.example.com'},
            'spec': {'group': 'example.com', 'scope': 'Namespaced',
                     'versions': [{'name': name, 'served': True, 'storage': index == 0}
                                  for index, name in enumerate(versions)], **spec}}


def existing(*versions: str, stored: tuple[str, ...] = ('v1',), **spec: Any) -> dict[str, Any]:
    found = crd(*versions, **spec)
    found['metadata'].update(resourceVersion='42', uid='u', labels={'a': 'b'}, creationTimestamp='x')
    found['spec']['conversion'] = {'strategy': 'None'}   # the server's default
    found['status'] = {'storedVersions': list(stored)}
    return found


def test_an_absent_crd_is_created() -> None:
    assert installing.plan(crd('v1'), None) == installing.Action('create', crd('v1'))


def test_a_crd_with_the_same_spec_and_the_servers_defaults_is_kept() -> None:
    assert installing.plan(crd('v1'), existing('v1')) == installing.Action('keep', None)


def test_a_changed_crd_is_replaced_with_its_resource_version_and_labels() -> None:
    action = installing.plan(crd('v2', 'v1'), existing('v1'))
    assert action.verb == 'update' and action.body is not None
    assert action.body['metadata'] == {'name': 'things.example.com', 'resourceVersion': '42', 'labels': {'a': 'b'}}
    assert action.body['spec'] == crd('v2', 'v1')['spec']


@pytest.mark.parametrize('stored, message', [
    (('v1',), 'still stores objects in v1 (status.storedVersions)'),
    (('v1', 'v1beta1'), 'still stores objects in v1, v1beta1 (status.storedVersions)'),
])
def test_a_stored_version_is_never_dropped(stored: tuple[str, ...], message: str) -> None:
    with pytest.raises(installing.InstallError, match=message.replace('(', r'\(').replace(')', r'\)')):
        installing.plan(crd('v2'), existing('v1', 'v1beta1', stored=stored))


def test_a_stored_version_declared_but_not_served_is_fine() -> None:
    wanted = crd('v2', 'v1')
    wanted['spec']['versions'][1]['served'] = False
    assert installing.plan(wanted, existing('v2', 'v1', stored=('v1', 'v2'))).verb == 'update'
