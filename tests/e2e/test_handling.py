"""Change handlers end to end: create/update/field/delete/resume, finalizer choreography, sub-handlers."""
import asyncio
import logging
from typing import Any

import pytest

import kopf
from kopf.testing import LocalCluster

from .conftest import BARRIER, Kube, Sightings, Starter, eventually, example, forgotten, get_example, idle

FINALIZER = 'kopf.zalando.org/KopfFinalizerMarker'


def handled(cluster: LocalCluster, name: str = 'kopf-example-1') -> Any:
    obj = get_example(cluster, name)
    annotations = (obj or {}).get('metadata', {}).get('annotations') or {}
    return obj if 'kopf.zalando.org/last-handled-configuration' in annotations else None


async def test_create_update_field_delete(cluster: LocalCluster, registry: kopf.OperatorRegistry,
                                         start_operator: Starter, kube: Kube) -> None:
    calls: list[tuple[str, Any, Any, Any, Any]] = []

    def record(reason: str) -> Any:
        def fn(body: Any, diff: Any, old: Any, new: Any, **_: Any) -> None:
            calls.append((reason, diff, old, new, list(body['metadata'].get('finalizers', []))))
        return fn

    kopf.on.create('kopfexamples', id='create', registry=registry)(record('create'))
    kopf.on.update('kopfexamples', id='update', registry=registry)(record('update'))
    kopf.on.field('kopfexamples', field='spec.field', id='field', registry=registry)(record('field'))
    kopf.on.delete('kopfexamples', id='delete', registry=registry)(record('delete'))
    sightings = Sightings(registry)

    await start_operator()
    await kube.create(example())
    await eventually(lambda: handled(cluster) and len(calls) >= 2)
    assert [c[0] for c in calls] == ['create', 'field']
    assert all(FINALIZER in c[4] for c in calls)  # the finalizer came first, in its own cycle
    assert calls[0][2] is None and calls[0][1] == (('add', (), None, calls[0][3]),)
    assert calls[1][1:4] == ((('add', (), None, 'value'),), None, 'value')

    calls.clear()
    await kube.patch('kopf-example-1', {'spec': {'field': 'changed'}})
    await eventually(lambda: len(calls) >= 2)
    await sightings.barrier(kube)
    assert sorted(c[0] for c in calls) == ['field', 'update']
    update = next(c for c in calls if c[0] == 'update')
    field = next(c for c in calls if c[0] == 'field')
    assert update[1] == (('change', ('spec', 'field'), 'value', 'changed'),)
    assert update[2]['spec']['field'] == 'value' and update[3]['spec']['field'] == 'changed'
    assert field[1:4] == ((('change', (), 'value', 'changed'),), 'value', 'changed')

    calls.clear()
    await kube.delete('kopf-example-1')
    await eventually(lambda: get_example(cluster) is None)
    assert [c[0] for c in calls] == ['delete']
    assert FINALIZER in calls[0][4]  # released only after the delete handler


async def test_results_and_progress_across_cycles(cluster: LocalCluster, registry: kopf.OperatorRegistry,
                                                  start_operator: Starter, kube: Kube) -> None:
    attempts: list[str] = []

    @kopf.on.create('kopfexamples', id='first', registry=registry)
    def first(retry: int, **_: Any) -> Any:
        attempts.append(f'first#{retry}')
        if retry == 0:
            raise kopf.TemporaryError('not yet', delay=0.1)
        return {'done': 1}

    @kopf.on.create('kopfexamples', id='second', registry=registry)
    def second(**_: Any) -> Any:
        attempts.append('second')
        return 'scalar'

    sightings = Sightings(registry)
    await start_operator()
    await kube.create(example())
    await eventually(lambda: handled(cluster))
    await sightings.barrier(kube)  # the cycles after the last handler's (the progress purged) have ended
    obj = get_example(cluster)
    assert obj is not None
    assert attempts == ['first#0', 'second', 'first#1']
    assert {key: value for key, value in obj['status'].items() if key != BARRIER} == \
        {'first': {'done': 1}, 'second': 'scalar'}
    annotations = obj['metadata']['annotations']
    assert not [key for key in annotations if key.endswith(('/first', '/second'))]  # progress purged


async def test_resume_on_restart(cluster: LocalCluster, registry: kopf.OperatorRegistry,
                                 start_operator: Starter, kube: Kube) -> None:
    calls: list[str] = []
    kopf.on.create('kopfexamples', id='create', registry=registry)(lambda reason, **_: calls.append(reason))
    kopf.on.resume('kopfexamples', id='resume', registry=registry)(lambda reason, **_: calls.append(reason))
    sightings = Sightings(registry)

    stop = asyncio.Event()
    task = await start_operator(stop_flag=stop)
    await kube.create(example())
    await eventually(lambda: handled(cluster))
    stop.set()
    await task
    assert calls == ['create']

    await start_operator()
    await eventually(lambda: len(calls) == 2)
    await sightings.barrier(kube)
    assert calls == ['create', 'resume']


async def test_subhandlers_and_execute(cluster: LocalCluster, registry: kopf.OperatorRegistry,
                                       start_operator: Starter, kube: Kube) -> None:
    calls: list[str] = []

    @kopf.on.create('kopfexamples', id='implicit', registry=registry)
    def implicit(spec: Any, **_: Any) -> None:
        calls.append('implicit')
        for item in spec['items']:
            @kopf.subhandler(id=item)
            def child(item: str = item, **_: Any) -> Any:
                calls.append(f'implicit/{item}')
                return {'item': item}

    @kopf.on.create('kopfexamples', id='explicit', registry=registry)
    async def explicit(**_: Any) -> None:
        calls.append('explicit:before')
        await kopf.execute(fns={'a': lambda **_: calls.append('explicit/a'),
                                'b': lambda **_: calls.append('explicit/b')})
        calls.append('explicit:after')
    sightings = Sightings(registry)

    await start_operator()
    await kube.create(example())
    await eventually(lambda: handled(cluster))
    await sightings.barrier(kube)
    assert calls.count('implicit/item1') == calls.count('implicit/item2') == 1
    assert calls.count('explicit/a') == calls.count('explicit/b') == 1
    assert calls.count('explicit:after') == 1
    assert calls.index('explicit:after') > calls.index('explicit/b')
    obj = get_example(cluster)
    assert obj is not None
    assert obj['status']['implicit/item1'] == {'item': 'item1'}
    assert not [key for key in obj['metadata']['annotations'] if 'implicit' in key or 'explicit' in key]


async def test_memo_seed(cluster: LocalCluster, registry: kopf.OperatorRegistry,
                         start_operator: Starter, kube: Kube) -> None:
    seen: list[Any] = []

    with pytest.warns(DeprecationWarning):
        @kopf.on.create('kopfexamples', cooldown=0.1, registry=registry)
        def create_fn_1(memo: kopf.Memo, **_: Any) -> None:
            seen.append(('fn1', getattr(memo, 'xyz', AttributeError)))
            memo.xyz  # noqa: B018  # AttributeError on the first attempt

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn_2(memo: kopf.Memo, **_: Any) -> None:
        seen.append(('fn2', getattr(memo, 'xyz', AttributeError)))
        memo.xyz = 100

    await start_operator()
    await kube.create(example())
    await eventually(lambda: handled(cluster))
    assert seen == [('fn1', AttributeError), ('fn2', AttributeError), ('fn1', 100)]

    seen.clear()
    await kube.create(example('kopf-example-2'))
    await eventually(lambda: handled(cluster, 'kopf-example-2'))
    assert seen == [('fn1', AttributeError), ('fn2', AttributeError), ('fn1', 100)]


async def test_optional_delete_handler_runs_without_finalizer(
        cluster: LocalCluster, registry: kopf.OperatorRegistry, start_operator: Starter, kube: Kube) -> None:
    calls: list[str] = []
    kopf.on.create('kopfexamples', id='create', registry=registry)(lambda **_: calls.append('create'))
    kopf.on.delete('kopfexamples', id='delete', optional=True, registry=registry)(lambda **_: calls.append('delete'))
    await start_operator()
    uid = (await kube.create(example()))['metadata']['uid']
    obj = await eventually(lambda: handled(cluster))
    assert FINALIZER not in (obj['metadata'].get('finalizers') or [])
    await kube.delete('kopf-example-1')
    await eventually(lambda: 'delete' in calls)
    await eventually(lambda: forgotten(registry, uid) and idle(registry))  # its DELETED cycle is over
    assert calls == ['create', 'delete']


async def test_event_handlers_and_stealth(cluster: LocalCluster, registry: kopf.OperatorRegistry,
                                          start_operator: Starter, kube: Kube) -> None:
    events: list[Any] = []
    kopf.on.event('kopfexamples', id='ev', registry=registry)(lambda type, **_: events.append(type))
    kopf.on.create('kopfexamples', labels={'other': 'x'}, registry=registry)(lambda **_: None)
    sightings = Sightings(registry)
    await start_operator()
    await kube.create(example())
    await eventually(lambda: events)
    await sightings.barrier(kube)
    obj = get_example(cluster)
    assert obj is not None
    assert not obj['metadata'].get('annotations')  # stealth: nothing written for unmatched objects
    assert events[0] in ('ADDED', None)


async def test_unsupported_handler_kinds_refuse_to_start(registry: kopf.OperatorRegistry,
                                                         start_operator: Starter) -> None:
    @kopf.on.validate('kopfexamples', id='my-webhook', registry=registry)
    def webhook_fn(**_: Any) -> None:
        pass

    with pytest.raises(Exception, match="Admission handlers \\('my-webhook'\\) need a webhook server"):
        await start_operator()


def _crd(plural: str, singular: str, kind: str) -> dict[str, Any]:
    """A namespaced kopf.dev/v1 CRD that keeps any field: a resource the operator does not find at its start."""
    return {
        'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
        'metadata': {'name': f'{plural}.kopf.dev'},
        'spec': {'group': 'kopf.dev', 'scope': 'Namespaced',
                 'names': {'plural': plural, 'singular': singular, 'kind': kind},
                 'versions': [{'name': 'v1', 'served': True, 'storage': True,
                               'schema': {'openAPIV3Schema': {'type': 'object',
                                                              'x-kubernetes-preserve-unknown-fields': True}}}]},
    }


async def test_unresolved_resource_warns_then_is_served(
        cluster: LocalCluster, registry: kopf.OperatorRegistry, start_operator: Starter,
        caplog: pytest.LogCaptureFixture) -> None:
    calls: list[str] = []
    kopf.on.create('kopf.dev', 'v1', 'kopfothers', registry=registry)(lambda name, **_: calls.append(name))
    await start_operator()
    await eventually(lambda: 'Unresolved resources' in caplog.text)
    cluster.apply(_crd('kopfothers', 'kopfother', 'KopfOther'))
    cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfOther',
                   'metadata': {'name': 'other-1', 'namespace': 'default'}, 'spec': {}})
    await eventually(lambda: calls)
    assert calls == ['other-1']
    assert len([r for r in caplog.records if 'Unresolved resources' in r.getMessage()]) == 1


@pytest.mark.emulator_only(reason="holds the CRDs' listing back with the local cluster's delay()")
async def test_a_crd_made_between_the_discovery_and_the_crds_listing_is_served(
        cluster: LocalCluster, registry: kopf.OperatorRegistry, start_operator: Starter,
        caplog: pytest.LogCaptureFixture) -> None:
    # The CRDs' LIST is held back; the CRD is made after the first discovery and before that listing
    # answers: it comes as a listed object (no event), and the unresolved selector is looked at again.
    calls: list[str] = []
    kopf.on.create('kopf.dev', 'v1', 'kopfgaps', registry=registry)(lambda name, **_: calls.append(name))
    cluster.delay('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', seconds=2.0)
    await start_operator()
    await eventually(lambda: 'Starting the watch-stream for customresourcedefinitions' in caplog.text)
    cluster.apply(_crd('kopfgaps', 'kopfgap', 'KopfGap'))
    cluster.apply({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfGap',
                   'metadata': {'name': 'gap-1', 'namespace': 'default'}, 'spec': {}})
    await eventually(lambda: calls)
    assert calls == ['gap-1']
    assert logging.WARNING in [r.levelno for r in caplog.records if 'Unresolved' in r.getMessage()]


async def test_an_unfinished_update_is_superseded_by_deletion(
        cluster: LocalCluster, registry: kopf.OperatorRegistry, start_operator: Starter, kube: Kube,
        caplog: pytest.LogCaptureFixture) -> None:
    calls: list[str] = []
    kopf.on.create('kopfexamples', id='create', registry=registry)(lambda **_: calls.append('create'))
    kopf.on.delete('kopfexamples', id='delete', registry=registry)(lambda **_: calls.append('delete'))

    @kopf.on.update('kopfexamples', id='update', registry=registry)
    def update(**_: Any) -> None:
        calls.append('update')
        raise kopf.TemporaryError('not now', delay=60)

    await start_operator()
    await kube.create(example())
    await eventually(lambda: handled(cluster))
    await kube.patch('kopf-example-1', {'spec': {'field': 'changed'}})
    await eventually(lambda: 'kopf.zalando.org/update' in (get_example(cluster) or {})['metadata']['annotations'])
    await kube.delete('kopf-example-1')
    await eventually(lambda: get_example(cluster) is None)
    assert calls == ['create', 'update', 'delete']
    assert 'Updating is superseded by deletion: 0 succeeded; 0 failed; 1 left to the moment.' in caplog.text
    assert 'Deletion is processed: 1 succeeded; 0 failed.' in caplog.text
