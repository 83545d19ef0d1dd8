"""Embedding options: `kopf.run(memo=, priority=, standalone=, namespaces=<globs, exclusions>)` in a
thread beside other code, and two operators in one process isolated by their own registries."""
import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

import kopf
from kopf.testing import cluster_vault

from .. import backends
from ..backends import Cluster
from ..waiting import wait_for
from .conftest import CRD, example, fast_settings

Obj = dict[str, Any]


@pytest.fixture
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    with backends.cluster(request) as local:
        local.apply(str(CRD))
        for name in ['team-a', 'team-b', 'team-x', 'other']:
            local.apply({'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': name}})
        yield local



def handled(cluster: Cluster, namespace: str, name: str = 'kopf-example-1') -> Obj:
    obj = cluster.get('kopf.dev/v1', 'KopfExample', name, namespace) or {}
    return dict(obj.get('status') or {})


class Operator:
    """`kopf.run()` in a thread, with thread-safe flags: as an application embeds it."""

    def __init__(self, cluster: Cluster, registry: kopf.OperatorRegistry, **kwargs: Any) -> None:
        self.stop, self.ready = threading.Event(), threading.Event()
        self.errors: list[BaseException] = []
        kwargs.update(registry=registry, settings=fast_settings(), vault=cluster_vault(cluster),
                      stop_flag=self.stop, ready_flag=self.ready)
        self.thread = threading.Thread(target=self._run, kwargs=kwargs)

    def _run(self, **kwargs: Any) -> None:
        try:
            kopf.run(**kwargs)
        except BaseException as exc:
            self.errors.append(exc)

    def __enter__(self) -> 'Operator':
        self.thread.start()
        assert self.ready.wait(20), self.errors
        return self

    def __exit__(self, *_: Any) -> None:
        self.stop.set()
        self.thread.join(20)
        assert not self.thread.is_alive()
        assert not self.errors


def test_run_with_memo_priority_standalone_and_namespace_globs(cluster: Cluster) -> None:
    registry = kopf.OperatorRegistry()
    seen: list[tuple[str, Any]] = []

    class Config(kopf.Memo):
        pass

    @kopf.on.create('kopfexamples', id='create_fn', registry=registry)
    def create_fn(namespace: str, memo: Any, **_: Any) -> Any:
        seen.append((namespace, type(memo)))
        return {'greeting': memo.greeting}

    memo = Config(greeting='hello')
    with Operator(cluster, registry, memo=memo, priority=100, standalone=True, namespaces=['team-*,!team-x']):
        for namespace in ['team-a', 'team-b', 'team-x', 'other']:
            cluster.apply(example(namespace=namespace))
        wait_for(lambda: handled(cluster, 'team-a') and handled(cluster, 'team-b'))
        main_thread_work = sum(range(1000))  # other code runs meanwhile, in this thread
    assert main_thread_work == 499500
    assert handled(cluster, 'team-a') == {'create_fn': {'greeting': 'hello'}}
    assert handled(cluster, 'team-x') == {} and handled(cluster, 'other') == {}
    assert sorted(seen) == [('team-a', Config), ('team-b', Config)]  # shallow copies of the custom memo


def test_two_operators_in_one_process_are_isolated_by_registries(cluster: Cluster) -> None:
    registry_a, registry_b = kopf.OperatorRegistry(), kopf.OperatorRegistry()
    calls: list[str] = []

    @kopf.on.create('kopfexamples', id='by_a', registry=registry_a)
    def by_a(namespace: str, **_: Any) -> str:
        calls.append(f'a:{namespace}')
        return 'a'

    @kopf.on.create('kopfexamples', id='by_b', registry=registry_b)
    def by_b(namespace: str, **_: Any) -> str:
        calls.append(f'b:{namespace}')
        return 'b'

    with Operator(cluster, registry_a, namespaces=['team-a']), Operator(cluster, registry_b, namespaces=['team-b']):
        cluster.apply(example(namespace='team-a'), example(namespace='team-b'))
        wait_for(lambda: handled(cluster, 'team-a') and handled(cluster, 'team-b'))
    assert handled(cluster, 'team-a') == {'by_a': 'a'}
    assert handled(cluster, 'team-b') == {'by_b': 'b'}
    assert sorted(calls) == ['a:team-a', 'b:team-b']
    assert not kopf.get_default_registry().handlers or all(
        h.id not in {'by_a', 'by_b'} for h in kopf.get_default_registry().handlers)


async def test_the_peering_options_go_to_the_settings() -> None:
    settings = kopf.OperatorSettings()
    tasks = await kopf.spawn_tasks(registry=kopf.OperatorRegistry(), settings=settings, peering_name='example',
                                   priority=5, namespaces=['ns1'])
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    assert (settings.peering.name, settings.peering.priority, settings.peering.mandatory) == ('example', 5, True)
    assert not settings.peering.clusterwide and not settings.peering.standalone
