"""Indices end to end: an operator task against the local cluster in the test's loop (real HTTP on loopback)."""
import asyncio
from collections.abc import Mapping
from typing import Any

import kopf
from kopf.testing import LocalCluster

from .conftest import eventually, example


def pod(name: str, app: str | None, namespace: str = 'default') -> dict[str, Any]:
    labels = {} if app is None else {'app': app}
    return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': name, 'namespace': namespace, 'labels': labels},
            'spec': {'containers': [{'name': 'main', 'image': 'busybox'}]}}


async def relabel(kube: Any, name: str, labels: dict[str, Any], namespace: str = 'default') -> None:
    """A label patch (a whole-pod update would change its spec, which a real API server forbids)."""
    await asyncio.to_thread(kube.core.patch_namespaced_pod, name, namespace, {'metadata': {'labels': labels}})


def snapshot(index: kopf.Index[Any, Any]) -> dict[Any, list[Any]]:
    return {key: sorted(store) for key, store in index.items()}


async def test_an_index_is_complete_before_the_first_handler_and_follows_the_pods(
        cluster: LocalCluster, registry: kopf.OperatorRegistry, start_operator: Any, kube: Any,
        caplog: Any) -> None:
    cluster.apply(*[pod(f'pod-{i}', f'app-{i % 5}') for i in range(500)])
    seen: list[dict[Any, list[Any]]] = []
    indices: list[kopf.Index[Any, Any]] = []

    @kopf.index('pods', id='by_app', registry=registry)
    def by_app(labels: Any, name: str, **_: Any) -> Any:
        return {labels['app']: name} if 'app' in labels else None

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(by_app: kopf.Index[Any, Any], **_: Any) -> None:
        seen.append(snapshot(by_app))
        indices.append(by_app)

    cluster.apply(example())
    await start_operator()
    await eventually(lambda: seen)
    assert sum(len(names) for names in seen[0].values()) == 500  # complete before the first handler ran
    assert len(seen[0]['app-0']) == 100
    assert 'Indexing is complete: 500 objects' in caplog.text
    index = indices[0]

    cluster.apply(pod('new', 'app-new'))
    await eventually(lambda: 'app-new' in index)
    await relabel(kube, 'new', {'app': 'app-other'})  # relabelled: moves to the other key
    await eventually(lambda: 'app-new' not in index and sorted(index['app-other']) == ['new'])
    await asyncio.to_thread(kube.core.delete_namespaced_pod, 'new', 'default')
    await eventually(lambda: 'app-other' not in index)  # deleted: its values are gone, empty keys too


async def test_index_results_of_all_shapes(cluster: LocalCluster, registry: kopf.OperatorRegistry,
                                           start_operator: Any) -> None:
    found: dict[str, Any] = {}

    @kopf.index('pods', id='as_memo', registry=registry)
    def as_memo(name: str, **_: Any) -> Any:
        return kopf.Memo(key=name)  # any mapping: each key gets the value

    @kopf.index('pods', id='as_scalar', registry=registry)
    def as_scalar(name: str, **_: Any) -> Any:
        return name.upper()  # not a mapping: under the key None

    @kopf.index('pods', id='as_none', registry=registry)
    def as_none(name: str, **_: Any) -> Any:
        return None  # nothing indexed

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(as_memo: Any, as_scalar: Any, as_none: Any, **_: Any) -> None:
        found.update(memo=snapshot(as_memo), scalar=snapshot(as_scalar), none=snapshot(as_none))

    cluster.apply(pod('p1', 'a'), example())
    await start_operator()
    await eventually(lambda: found)
    assert found == {'memo': {'key': ['p1']}, 'scalar': {None: ['P1']}, 'none': {}}


async def test_index_errors_by_mode(cluster: LocalCluster, registry: kopf.OperatorRegistry,
                                    start_operator: Any, kube: Any, caplog: Any) -> None:
    fail = {'ignored': False, 'permanent': False, 'temporary': False}
    calls: dict[str, int] = {'ignored': 0, 'permanent': 0, 'temporary': 0}
    indices: dict[str, Any] = {}

    def indexer(mode: str) -> Any:
        def fn(labels: Any, **_: Any) -> Any:
            calls[mode] += 1
            if fail[mode]:
                raise ValueError(f'{mode} failure')
            return {'v': labels.get('v')}
        return fn

    kopf.index('pods', id='ignored', registry=registry)(indexer('ignored'))
    kopf.index('pods', id='permanent', errors=kopf.ErrorsMode.PERMANENT, registry=registry)(indexer('permanent'))
    kopf.index('pods', id='temporary', errors=kopf.ErrorsMode.TEMPORARY, backoff=0.5,
               registry=registry)(indexer('temporary'))

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(ignored: Any, permanent: Any, temporary: Any, **_: Any) -> None:
        indices.update(ignored=ignored, permanent=permanent, temporary=temporary)

    cluster.apply(pod('p1', 'a'), example())
    await start_operator()
    await eventually(lambda: indices)
    assert all(dict(snapshot(index)) == {'v': [None]} for index in indices.values())

    fail.update(ignored=True, permanent=True, temporary=True)
    await relabel(kube, 'p1', {'v': '1'})
    await eventually(lambda: all(calls[m] >= 2 for m in calls)
                     and not snapshot(indices['permanent']) and not snapshot(indices['temporary']))  # after the calls
    assert snapshot(indices['ignored']) == {'v': [None]}  # IGNORED keeps the stale values
    assert snapshot(indices['permanent']) == {}           # PERMANENT drops them
    assert snapshot(indices['temporary']) == {}           # TEMPORARY drops them, until the delay passes
    assert "[default/p1] Indexer 'permanent' failed" in caplog.text  # named: the object and the index

    fail.update(permanent=False, temporary=False)
    before = dict(calls)
    await relabel(kube, 'p1', {'v': '2'})  # during the delay: the temporary one is not called
    await eventually(lambda: calls['ignored'] > before['ignored'])
    assert calls['permanent'] == before['permanent']  # excluded for good
    # After the delay, indexed again on its next event: relabelled until it is (each event's cycle seen
    # through the IGNORED index, which every cycle calls), not after a sleep as long as the delay.
    for step in range(3, 1000):
        seen = calls['ignored']
        await relabel(kube, 'p1', {'v': str(step)})
        await eventually(lambda seen=seen: calls['ignored'] > seen)
        if snapshot(indices['temporary']) == {'v': [str(step)]}:
            break
    else:
        raise AssertionError('the TEMPORARY index was never refilled')
    assert calls['permanent'] == before['permanent']
    assert snapshot(indices['permanent']) == {}


async def test_an_unhashable_key_is_logged_and_other_indices_go_on(
        cluster: LocalCluster, registry: kopf.OperatorRegistry, start_operator: Any, caplog: Any) -> None:
    found: dict[str, Any] = {}

    class Weird(Mapping[Any, Any]):
        """A mapping with an unhashable key (a list): it cannot be indexed."""

        def __iter__(self) -> Any:
            return iter([['unhashable']])

        def __len__(self) -> int:
            return 1

        def __getitem__(self, key: Any) -> Any:
            return 1

    @kopf.index('pods', id='bad', registry=registry)
    def bad(**_: Any) -> Any:
        return Weird()

    @kopf.index('pods', id='good', registry=registry)
    def good(name: str, **_: Any) -> Any:
        return {name: 1}

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(bad: Any, good: Any, **_: Any) -> None:
        found.update(bad=snapshot(bad), good=snapshot(good))

    cluster.apply(pod('p1', 'a'), example())
    await start_operator()
    await eventually(lambda: found)
    assert found == {'bad': {}, 'good': {'p1': [1]}}
    assert "[default/p1] Indexer 'bad' returned what cannot be indexed in index 'bad'" in caplog.text


async def test_a_missing_index_kwarg_is_warned_of_at_start(registry: kopf.OperatorRegistry,
                                                           start_operator: Any, caplog: Any) -> None:
    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(pods_by_app: Any, **_: Any) -> None:
        pass

    await start_operator()
    assert "Handler 'test_a_missing_index_kwarg_is_warned_of_at_start.<locals>.create_fn' asks for 'pods_by_app'" \
        in caplog.text


async def test_the_start_waits_for_namespaces_found_by_a_pattern(
        cluster: LocalCluster, registry: kopf.OperatorRegistry, start_operator: Any) -> None:
    cluster.apply({'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': 'team-a'}})
    cluster.apply(*[pod(f'p{i}', 'x', 'team-a') for i in range(50)], example(namespace='team-a'))
    seen: list[int] = []

    @kopf.index('pods', id='by_app', registry=registry)
    def by_app(labels: Any, name: str, **_: Any) -> Any:
        return {labels['app']: name}

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(by_app: kopf.Index[Any, Any], **_: Any) -> None:
        seen.append(len(by_app.get('x', ())))

    await start_operator(clusterwide=False, namespaces=['team-*'])
    await eventually(lambda: seen)
    assert seen[0] == 50


async def test_a_failing_index_filter_does_not_hold_the_start(
        cluster: LocalCluster, registry: kopf.OperatorRegistry, start_operator: Any, caplog: Any) -> None:
    calls = {'filter': 0}
    seen: list[int] = []

    def flaky(**_: Any) -> bool:
        calls['filter'] += 1
        if calls['filter'] == 1:
            raise RuntimeError('filter boom')
        return True

    @kopf.index('pods', id='by_app', when=flaky, registry=registry)
    def by_app(labels: Any, name: str, **_: Any) -> Any:
        return {labels.get('app'): name}

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(**_: Any) -> None:
        seen.append(1)

    cluster.apply(pod('p1', 'x'), example())
    await start_operator()
    await eventually(lambda: seen)
    assert 'The filters of the index handlers failed' in caplog.text
