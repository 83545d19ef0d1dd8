"""Patching over real HTTP: endpoints per subresource, guarded JSON-patches, dropped fields."""
import asyncio
import logging
from typing import Any

import pytest

import kopf
from kopf._api import apierrors, credentials, objectwrites
from kopf._api import client as client_
from kopf._core import patches, resources

from ..waiting import eventually

STRICT_CRD = {
    'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
    'metadata': {'name': 'stricts.kopf.dev'},
    'spec': {
        'group': 'kopf.dev', 'scope': 'Namespaced',
        'names': {'plural': 'stricts', 'singular': 'strict', 'kind': 'Strict'},
        'versions': [{'name': 'v1', 'served': True, 'storage': True, 'subresources': {'status': {}},
                      'schema': {'openAPIV3Schema': {'type': 'object', 'properties': {
                          'spec': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True},
                          'status': {'type': 'object', 'properties': {'phase': {'type': 'string'}}},
                      }}}}],
    },
}
STRICTS = resources.Resource('kopf.dev', 'v1', 'stricts', kind='Strict', namespaced=True,
                             subresources=frozenset({'status'}))
NOSTATUS = resources.Resource('', 'v1', 'configmaps', kind='ConfigMap', namespaced=True)


def test_split_patch_with_status_subresource() -> None:
    res = resources.Resource('g', 'v1', 'xs', subresources=frozenset({'status'}))
    assert objectwrites.split_patch({'spec': {'a': 1}, 'status': {'b': 2}}, res) == (
        {'spec': {'a': 1}}, {'status': {'b': 2}})
    assert objectwrites.split_patch({'spec': {'a': 1}}, res) == ({'spec': {'a': 1}}, {})


def test_split_patch_without_status_subresource() -> None:
    res = resources.Resource('g', 'v1', 'xs')
    assert objectwrites.split_patch({'spec': {'a': 1}, 'status': {'b': 2}}, res) == (
        {'spec': {'a': 1}, 'status': {'b': 2}}, {})


def test_split_json_patch() -> None:
    res = resources.Resource('g', 'v1', 'xs', subresources=frozenset({'status'}))
    ops: list[dict[str, Any]] = [{'op': 'add', 'path': '/metadata/finalizers', 'value': []},
           {'op': 'add', 'path': '/status/x', 'value': 1},
           {'op': 'remove', 'path': '/status'}]
    assert objectwrites.split_json_patch(ops, res) == (ops[:1], ops[1:])
    assert objectwrites.split_json_patch(ops, resources.Resource('g', 'v1', 'xs')) == (ops, [])


@pytest.mark.parametrize('sent, received, dropped', [
    ({}, {}, []),
    ({'status': {'a': 1}}, {'status': {'a': 1}}, []),
    ({'status': {'a': 1, 'b': {'c': 2}}}, {'status': {'a': 1}}, [('status', 'b')]),
    ({'status': {'a': None}}, {'status': {}}, []),  # deletions are not expected back
    ({'status': {'a': {'b': 1}}}, {}, [('status',)]),
    ({'metadata': {'annotations': {'x': 'y'}}}, {'metadata': {'annotations': {'x': 'y', 'z': '1'}}}, []),
    ({'spec': {'l': [1, 2]}}, {'spec': {'l': [1]}}, []),  # changed values are not "dropped"
])
def test_find_dropped(sent: dict[str, Any], received: dict[str, Any], dropped: list[tuple[str, ...]]) -> None:
    assert objectwrites.find_dropped(sent, received) == dropped


async def _create(client: client_.APIClient, resource: resources.Resource, name: str, **extra: Any) -> Any:
    body = {'apiVersion': resource.api_version, 'kind': resource.kind, 'metadata': {'name': name}, **extra}
    return await client.request('POST', resource.get_url(namespace='default'), payload=body)


async def test_status_goes_to_the_status_subresource(client: client_.APIClient, crd: resources.Resource,
                                                     cluster: Any) -> None:
    await _create(client, crd, 'x', spec={'a': 1})
    patch = patches.Patch({'spec': {'b': 2}, 'status': {'c': 3}, 'metadata': {'labels': {'l': 'v'}}})
    result = await objectwrites.patch_obj(client, crd, namespace='default', name='x', patch=patch)
    assert result.body is not None
    assert result.body['spec'] == {'a': 1, 'b': 2}
    assert result.body['status'] == {'c': 3}
    assert result.body['metadata']['labels'] == {'l': 'v'}
    assert not result.dropped and not result.gone and not result.conflict
    patches_sent = [(r['path'], r['contentType']) for r in cluster.request_log() if r['method'] == 'PATCH']
    assert patches_sent == [  # status first: a failure in between means "run again", not "result lost"
        ('/apis/kopf.dev/v1/namespaces/default/kopfexamples/x/status', 'application/merge-patch+json'),
        ('/apis/kopf.dev/v1/namespaces/default/kopfexamples/x', 'application/merge-patch+json'),
    ]


async def test_only_status_sends_one_request(client: client_.APIClient, crd: resources.Resource,
                                            cluster: Any) -> None:
    await _create(client, crd, 'x')
    result = await objectwrites.patch_obj(client, crd, namespace='default', name='x',
                                      patch=patches.Patch({'status': {'c': 3}}))
    assert result.body is not None and result.body['status'] == {'c': 3}
    assert [r['path'] for r in cluster.request_log() if r['method'] == 'PATCH'] == [
        '/apis/kopf.dev/v1/namespaces/default/kopfexamples/x/status']


async def test_without_status_subresource_all_goes_to_the_main_body(client: client_.APIClient,
                                                                   cluster: Any) -> None:
    await _create(client, NOSTATUS, 'x', data={'a': '1'})
    result = await objectwrites.patch_obj(client, NOSTATUS, namespace='default', name='x',
                                      patch=patches.Patch({'data': {'b': '2'}}))
    assert result.body is not None and result.body['data'] == {'a': '1', 'b': '2'}
    assert len([r for r in cluster.request_log() if r['method'] == 'PATCH']) == 1


async def test_gone_object(client: client_.APIClient, crd: resources.Resource) -> None:
    result = await objectwrites.patch_obj(client, crd, namespace='default', name='missing',
                                      patch=patches.Patch({'spec': {'a': 1}}))
    assert result.gone
    assert result.body is None


async def test_finalizers_via_guarded_json_patch(client: client_.APIClient, crd: resources.Resource,
                                                 cluster: Any) -> None:
    body = await _create(client, crd, 'x')
    patch = patches.Patch()
    patch.fns.append(lambda b: b.setdefault('metadata', {}).setdefault('finalizers', []).append('kopf/x'))
    result = await objectwrites.patch_obj(client, crd, namespace='default', name='x', patch=patch, body=body)
    assert result.body is not None
    assert result.body['metadata']['finalizers'] == ['kopf/x']
    [sent] = [r for r in cluster.request_log() if r['method'] == 'PATCH']
    assert sent['contentType'] == 'application/json-patch+json'


async def test_stale_json_patch_is_recomputed_on_a_fresh_body(client: client_.APIClient, crd: resources.Resource,
                                                              cluster: Any) -> None:
    body = await _create(client, crd, 'x')
    await objectwrites.patch_obj(client, crd, namespace='default', name='x', patch=patches.Patch({'spec': {'a': 1}}))
    patch = patches.Patch()
    patch.fns.append(lambda b: b.setdefault('metadata', {}).setdefault('finalizers', []).append('kopf/x'))
    result = await objectwrites.patch_obj(client, crd, namespace='default', name='x', patch=patch, body=body)
    assert not result.conflict
    assert result.body is not None and result.body['metadata']['finalizers'] == ['kopf/x']
    stored = await client.request('GET', crd.get_url(namespace='default', name='x'))
    assert stored['metadata']['finalizers'] == ['kopf/x']
    assert stored['spec']['a'] == 1  # the concurrent change is kept


async def test_json_patch_of_an_object_that_keeps_changing_means_next_cycle(
        client: client_.APIClient, crd: resources.Resource, cluster: Any) -> None:
    body = await _create(client, crd, 'x')
    writes = iter(range(100))

    def add_finalizer(b: dict[str, Any]) -> None:  # another writer changes it each time we decide
        cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'spec': {'n': next(writes)},
                       'metadata': {'name': 'x', 'namespace': 'default'}})
        b.setdefault('metadata', {}).setdefault('finalizers', []).append('kopf/x')

    patch = patches.Patch()
    patch.fns.append(add_finalizer)
    result = await objectwrites.patch_obj(client, crd, namespace='default', name='x', patch=patch, body=body)
    assert result.conflict
    assert [(r['method'], r['code']) for r in cluster.request_log() if r['method'] != 'POST'] == [
        ('PATCH', 422), ('GET', 200)] * objectwrites.CONFLICT_ATTEMPTS
    assert result.body is None
    stored = await client.request('GET', crd.get_url(namespace='default', name='x'))
    assert 'finalizers' not in stored['metadata']


async def test_rejected_json_patch_is_raised_not_taken_as_a_conflict(
        client: client_.APIClient, crd: resources.Resource, cluster: Any) -> None:
    body = await _create(client, crd, 'x')
    patch = patches.Patch()
    patch.fns.append(lambda b: b['metadata'].setdefault('labels', {}).update(bad='not a valid label value!'))
    with pytest.raises(apierrors.APIUnprocessableEntityError) as info:
        await objectwrites.patch_obj(client, crd, namespace='default', name='x', patch=patch, body=body)
    assert 'not a valid label value!' in str(info.value)  # the server's message
    # one attempt: the re-read shows the resourceVersion that the rejected request tested (no conflict)
    assert [(r['method'], r['code']) for r in cluster.request_log() if r['method'] != 'POST'] == [
        ('PATCH', 422), ('GET', 200)]


async def test_rejected_main_part_after_the_status_part_is_raised(
        client: client_.APIClient, crd: resources.Resource, cluster: Any) -> None:
    body = await _create(client, crd, 'x')
    patch = patches.Patch()
    patch.fns.append(lambda b: (b['metadata'].setdefault('labels', {}).update(bad='not a valid label value!'),
                                b.setdefault('status', {}).update(result=1)))
    with pytest.raises(apierrors.APIUnprocessableEntityError):
        await objectwrites.patch_obj(client, crd, namespace='default', name='x', patch=patch, body=body)
    assert [(r['method'], r['path'].rsplit('/', 1)[-1], r['code'])
            for r in cluster.request_log() if r['method'] != 'POST'] == [
        ('PATCH', 'status', 200), ('PATCH', 'x', 422), ('GET', 'x', 200)]
    stored = await client.request('GET', crd.get_url(namespace='default', name='x'))
    assert stored['status'] == {'result': 1}  # committed first: the handlers run again (at-least-once)
    assert 'labels' not in stored['metadata']


async def test_conflict_then_rejection_is_raised_on_the_fresh_body(
        client: client_.APIClient, crd: resources.Resource, cluster: Any) -> None:
    body = await _create(client, crd, 'x')
    await objectwrites.patch_obj(client, crd, namespace='default', name='x', patch=patches.Patch({'spec': {'a': 1}}))
    since = len(cluster.request_log())
    patch = patches.Patch()
    patch.fns.append(lambda b: b['metadata'].setdefault('labels', {}).update(bad='not a valid label value!'))
    with pytest.raises(apierrors.APIUnprocessableEntityError):
        await objectwrites.patch_obj(client, crd, namespace='default', name='x', patch=patch, body=body)
    assert [(r['method'], r['code']) for r in cluster.request_log()[since:]] == [
        ('PATCH', 422), ('GET', 200), ('PATCH', 422), ('GET', 200)]  # a conflict (stale rv), then a rejection


async def test_json_patch_of_a_gone_object(client: client_.APIClient, crd: resources.Resource) -> None:
    body = {'metadata': {'name': 'x', 'namespace': 'default', 'resourceVersion': '1'}}
    patch = patches.Patch()
    patch.fns.append(lambda b: b['metadata'].update(finalizers=['kopf/x']))
    result = await objectwrites.patch_obj(client, crd, namespace='default', name='x', patch=patch, body=body)
    assert result.gone


async def test_pruned_status_fields_are_reported_in_one_warning(
        client: client_.APIClient, cluster: Any, caplog: pytest.LogCaptureFixture) -> None:
    cluster.apply(STRICT_CRD)
    await _create(client, STRICTS, 'x', spec={})
    patch = patches.Patch({'status': {'phase': 'ok', 'kopf': {'progress': {'h': {}}}, 'create_fn': {'m': 1}}})
    with caplog.at_level(logging.WARNING, logger='kopf._api'):
        result = await objectwrites.patch_obj(client, STRICTS, namespace='default', name='x', patch=patch)
    assert result.body is not None and result.body['status'] == {'phase': 'ok'}
    assert result.dropped == (('status', 'kopf'), ('status', 'create_fn'))
    [record] = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert 'stricts.kopf.dev default/x' in record.getMessage()
    assert 'status.kopf, status.create_fn' in record.getMessage()


async def test_status_is_sent_before_the_main_body(client: client_.APIClient, crd: resources.Resource,
                                                   cluster: Any) -> None:
    await _create(client, crd, 'x')
    patch = patches.Patch({'metadata': {'annotations': {'a': 'b'}}, 'status': {'c': 3}})
    result = await objectwrites.patch_obj(client, crd, namespace='default', name='x', patch=patch)
    assert [r['path'] for r in cluster.request_log() if r['method'] == 'PATCH'] == [
        '/apis/kopf.dev/v1/namespaces/default/kopfexamples/x/status',
        '/apis/kopf.dev/v1/namespaces/default/kopfexamples/x',
    ]
    stored = await client.request('GET', crd.get_url(namespace='default', name='x'))
    assert result.body == stored  # the newest body: the last answer


async def test_failed_status_part_commits_nothing_of_the_merge_patch(
        client: client_.APIClient, crd: resources.Resource, cluster: Any) -> None:
    await _create(client, crd, 'x')
    cluster.fail('PATCH', '*/kopfexamples/x/status', status=400)  # final: not retried
    patch = patches.Patch({'metadata': {'annotations': {'handled': 'yes'}}, 'status': {'result': 1}})
    with pytest.raises(apierrors.APIClientError):
        await objectwrites.patch_obj(client, crd, namespace='default', name='x', patch=patch)
    stored = await client.request('GET', crd.get_url(namespace='default', name='x'))
    assert 'handled' not in (stored['metadata'].get('annotations') or {})  # so the handler runs again


async def test_failed_status_part_commits_nothing_of_the_json_patch(
        client: client_.APIClient, crd: resources.Resource, cluster: Any) -> None:
    body = await _create(client, crd, 'x')
    cluster.fail('PATCH', '*/kopfexamples/x/status', status=400)  # final: not retried
    patch = patches.Patch()
    patch.fns.append(lambda b: (b['metadata'].setdefault('annotations', {}).update(handled='yes'),
                                b.setdefault('status', {}).update(result=1)))
    with pytest.raises(apierrors.APIClientError):
        await objectwrites.patch_obj(client, crd, namespace='default', name='x', patch=patch, body=body)
    stored = await client.request('GET', crd.get_url(namespace='default', name='x'))
    assert 'handled' not in (stored['metadata'].get('annotations') or {})


async def test_json_patch_status_first_then_main_guarded_by_the_status_answer(
        client: client_.APIClient, crd: resources.Resource, cluster: Any) -> None:
    body = await _create(client, crd, 'x')
    patch = patches.Patch()
    patch.fns.append(lambda b: (b['metadata'].setdefault('annotations', {}).update(handled='yes'),
                                b.setdefault('status', {}).update(result=1)))
    result = await objectwrites.patch_obj(client, crd, namespace='default', name='x', patch=patch, body=body)
    assert not result.conflict and result.body is not None
    sent = [r for r in cluster.request_log() if r['method'] == 'PATCH']
    assert [r['path'] for r in sent] == [
        '/apis/kopf.dev/v1/namespaces/default/kopfexamples/x/status',
        '/apis/kopf.dev/v1/namespaces/default/kopfexamples/x',
    ]
    stored = await client.request('GET', crd.get_url(namespace='default', name='x'))
    assert stored['metadata']['annotations']['handled'] == 'yes'
    assert stored['status'] == {'result': 1}
    assert result.body == stored  # the newest body: the last answer


@pytest.mark.looptime
async def test_a_rejected_patch_is_logged_and_retried_with_the_error_delays_not_in_a_hot_loop(
        client: client_.APIClient, crd: resources.Resource, cluster: Any, caplog: pytest.LogCaptureFixture) -> None:
    registry = kopf.OperatorRegistry()
    calls: list[int] = []

    @kopf.on.delete('kopf.dev', 'v1', 'kopfexamples', registry=registry)
    def delete_fn(patch: kopf.Patch, **_: Any) -> Any:
        calls.append(len(calls))
        patch.metadata.labels['bad'] = 'not a valid label value!'  # 422 Invalid for the main body
        return {'run': len(calls)}  # a result that differs per run: the /status part is committed each time

    settings = kopf.OperatorSettings()
    settings.networking.request_timeout = None  # no timers that looptime could fire while bytes are in flight
    vault = credentials.Vault()
    vault.populate([kopf.ConnectionInfo(server=cluster.url, default_namespace='default')])
    stop, ready = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(kopf.operator(registry=registry, settings=settings, vault=vault, clusterwide=True,
                                             stop_flag=stop, ready_flag=ready))
    try:
        await eventually(lambda: ready.is_set() or task.done())
        await _create(client, crd, 'kex-1', spec={})
        url = crd.get_url(namespace='default', name='kex-1')
        await eventually(lambda: (cluster.get('kopf.dev/v1', 'KopfExample', 'kex-1', 'default') or {})
                         .get('metadata', {}).get('finalizers') or task.done())
        with caplog.at_level(logging.ERROR, logger='kopf.objects'):
            await client.request('DELETE', url)

            def rejected() -> list[logging.LogRecord]:
                return [r for r in caplog.records if 'not a valid label value!' in r.getMessage()]
            await eventually(lambda: rejected() or task.done())
            assert not task.done()
            await eventually(lambda: len(calls) >= 2 or task.done())  # a retry came (real-time deadline)
            # Fake time: the error delays 1, 1, 2, 3, 5 -> about 5 more attempts, never a hot loop.
            await asyncio.sleep(10)
        assert 2 <= len(calls) <= 8, len(calls)  # was ~3,500 in 8 s of real time
        records = rejected()
        assert 2 <= len(records) <= 8, len(records)
        assert all('[default/kex-1]' in r.getMessage() for r in records)  # naming the object
    finally:
        stop.set()
        await eventually(task.done)
        await task
