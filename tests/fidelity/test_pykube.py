"""pykube-ng (another real client kopf users bring along): CRUD, patch and watch against the emulator."""
import threading
import time
from typing import Any

import pytest

from kopf.testing import LocalCluster

pykube = pytest.importorskip('pykube')


@pytest.fixture(scope='module')
def api(cluster: LocalCluster) -> Any:
    return pykube.HTTPClient(pykube.KubeConfig.from_file(str(cluster.kubeconfig)))


def test_crud_and_patch(api: Any) -> None:
    cm = pykube.ConfigMap(api, {'metadata': {'name': 'pk1', 'namespace': 'default'}, 'data': {'a': '1'}})
    cm.create()
    assert cm.obj['metadata']['uid']
    cm.obj['data']['a'] = '2'
    cm.update()
    cm.patch({'metadata': {'labels': {'x': 'y'}}})
    found = pykube.ConfigMap.objects(api).filter(namespace='default', selector={'x': 'y'}).get(name='pk1')
    assert found.obj['data'] == {'a': '2'}
    found.delete()
    assert not pykube.ConfigMap.objects(api).filter(namespace='default').get_or_none(name='pk1')


def test_custom_resource_and_watch(api: Any) -> None:
    kex = pykube.object_factory(api, 'kopf.dev/v1', 'KopfExample')
    seen: list[tuple[str, str]] = []

    def watch() -> None:
        for event in kex.objects(api).filter(namespace='default').watch():
            seen.append((event.type, event.object.name))
            if event.type == 'DELETED':
                return

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    time.sleep(0.3)
    obj = kex(api, {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
                    'metadata': {'name': 'pk2', 'namespace': 'default'}, 'spec': {'a': 1}})
    obj.create()
    obj.patch({'spec': {'a': 2}})
    obj.delete()
    thread.join(timeout=10)
    assert ('ADDED', 'pk2') in seen and ('MODIFIED', 'pk2') in seen and seen[-1] == ('DELETED', 'pk2')
