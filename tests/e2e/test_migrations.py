"""Migrations end to end: legacy `status.kopf.progress`, switching diff-base storages, API writes per lifecycle."""
import asyncio
import json
from typing import Any

import pytest

import kopf
from kopf.testing import LocalCluster

from .conftest import Kube, Sightings, Starter, eventually, example, fast_settings, forgotten, get_example, idle


def handled(cluster: LocalCluster) -> Any:
    obj = get_example(cluster)
    annotations = (obj or {}).get('metadata', {}).get('annotations') or {}
    return obj if any(key.endswith('last-handled-configuration') for key in annotations) else None


async def test_legacy_status_progress_is_honoured_and_purged(
        cluster: LocalCluster, registry: kopf.OperatorRegistry, start_operator: Starter, kube: Kube) -> None:
    calls: list[str] = []
    kopf.on.create('kopfexamples', id='fn1', registry=registry)(lambda **_: calls.append('fn1'))
    kopf.on.create('kopfexamples', id='fn2', registry=registry)(lambda **_: calls.append('fn2'))
    sightings = Sightings(registry)
    legacy = {'started': '2026-01-01T00:00:00.000000', 'stopped': '2026-01-01T00:00:01.000000',
              'purpose': 'create', 'retries': 1, 'success': True, 'failure': False}
    await kube.create(example())
    await asyncio.to_thread(kube.custom.patch_namespaced_custom_object_status, 'kopf.dev', 'v1', 'default',
                            'kopfexamples', 'kopf-example-1', {'status': {'kopf': {'progress': {'fn1': legacy}}}})
    assert (get_example(cluster) or {})['status']['kopf']['progress']['fn1']['success']
    await start_operator()
    await eventually(lambda: handled(cluster))
    await sightings.barrier(kube)
    assert calls == ['fn2']
    obj = get_example(cluster)
    assert obj is not None
    assert not (obj.get('status') or {}).get('kopf', {}).get('progress')


async def test_switching_diffbase_storage_through_multi_reruns_nothing(
        cluster: LocalCluster, registry: kopf.OperatorRegistry, start_operator: Starter, kube: Kube) -> None:
    calls: list[str] = []
    for reason in ('create', 'update'):
        getattr(kopf.on, reason)('kopfexamples', id=reason, registry=registry)(
            lambda reason, **_: calls.append(str(reason)))
    sightings = Sightings(registry)

    stop = asyncio.Event()
    task = await start_operator(stop_flag=stop)
    await kube.create(example())
    await eventually(lambda: handled(cluster))
    stop.set()
    await task

    settings = fast_settings()
    settings.persistence.diffbase_storage = kopf.MultiDiffBaseStorage([
        kopf.StatusDiffBaseStorage(field='status.my-op-base'),
        kopf.AnnotationsDiffBaseStorage(),
    ])
    await start_operator(settings=settings)
    await sightings.barrier(kube)  # the object's listing at the restart is handled (by a NOOP)
    assert calls == ['create']

    await kube.patch('kopf-example-1', {'spec': {'field': 'changed'}})
    await eventually(lambda: 'update' in calls)
    obj = await eventually(lambda: (get_example(cluster) or {}).get('status', {}).get('my-op-base'))
    assert json.loads(obj)['spec']['field'] == 'changed'
    assert calls == ['create', 'update']


@pytest.mark.emulator_only(reason="counts the API writes with the emulator's request counters")
async def test_api_writes_per_create_delete_lifecycle(
        cluster: LocalCluster, registry: kopf.OperatorRegistry, start_operator: Starter, kube: Kube) -> None:
    kopf.on.create('kopfexamples', id='create', registry=registry)(lambda **_: {'ok': 1})
    kopf.on.delete('kopfexamples', id='delete', registry=registry)(lambda **_: None)
    await start_operator()  # ready: nothing of its start writes to the API later (no objects yet)
    cluster.reset_counters()
    uid = (await kube.create(example()))['metadata']['uid']
    await eventually(lambda: handled(cluster) and (get_example(cluster) or {}).get('status'))
    await kube.delete('kopf-example-1')
    await eventually(lambda: get_example(cluster) is None)
    await eventually(lambda: forgotten(registry, uid) and idle(registry))  # its DELETED cycle is over
    writes = {key: n for key, n in cluster.counters().items()
              if key.split()[0] in ('patch', 'update') and 'events' not in key}
    # The finalizer (1 main), the handler's result (1 status) + the diff-base (1 main),
    # the finalizer's release (1 main); the creation and deletion themselves are the test's.
    assert writes == {'patch kopfexamples': 3, 'patch kopfexamples/status': 1}, cluster.counters()
