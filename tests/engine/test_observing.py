"""The observer against the local cluster: what a CRD event makes discovery re-read."""
import asyncio
import logging
import pathlib
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

import kopf
from kopf._api import credentials, discovery
from kopf.testing import LocalCluster

from ..waiting import eventually

CRD = pathlib.Path(__file__).parent.parent.parent / 'examples' / 'crd.yaml'
CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'
OTHER_CRD = {
    'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
    'metadata': {'name': 'others.other.dev'},
    'spec': {'group': 'other.dev', 'scope': 'Namespaced',
             'names': {'plural': 'others', 'singular': 'other', 'kind': 'Other'},
             'versions': [{'name': 'v1', 'served': True, 'storage': True,
                           'schema': {'openAPIV3Schema': {'type': 'object',
                                                          'x-kubernetes-preserve-unknown-fields': True}}}]},
}
EXAMPLE = {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
           'metadata': {'name': 'kex-1', 'namespace': 'default'}, 'spec': {}}
DISCOVERY_PATH = re.compile(r'/apis?|/api/[^/?]+|/apis/[^/?]+(/[^/?]+)?')  # not the resources' own paths


Operate = Callable[..., Any]  # (registry, **options of kopf.operator)


@pytest.fixture
async def operate(local_cluster: LocalCluster) -> AsyncIterator[Operate]:
    """Start an operator with a registry; stopped at the end of the test."""
    stop = asyncio.Event()
    tasks: list[asyncio.Task[None]] = []

    async def start(registry: kopf.OperatorRegistry, **options: Any) -> None:
        vault = credentials.Vault()
        vault.populate([kopf.ConnectionInfo(server=local_cluster.url, default_namespace='default')])
        ready = asyncio.Event()
        options.setdefault('clusterwide', not options.get('namespaces'))
        tasks.append(asyncio.create_task(kopf.operator(registry=registry, vault=vault,
                                                       stop_flag=stop, ready_flag=ready, **options)))
        await ready.wait()

    yield start
    stop.set()
    await eventually(lambda: all(task.done() for task in tasks))  # a real-time guard against a hang
    await asyncio.gather(*tasks)


def _discovery_gets(cluster: LocalCluster, since: int) -> list[str]:
    return [r['path'] for r in cluster.request_log()[since:]
            if r['method'] == 'GET' and DISCOVERY_PATH.fullmatch(r['path'])]


async def _run(cluster: LocalCluster, operate: Operate, *selector: str) -> list[str]:
    """The discovery requests made for the CRD events after the operator's start, until it serves the CRD."""
    registry = kopf.OperatorRegistry()
    seen = asyncio.Event()

    @kopf.on.event(*selector, registry=registry)
    async def fn(**_: Any) -> None:
        seen.set()

    await operate(registry)
    await asyncio.sleep(0.2)  # the startup's own discovery and the CRDs' initial listing are done
    since = len(cluster.request_log())
    cluster.apply(OTHER_CRD)  # a group that no selector names
    cluster.apply(str(CRD))   # the events of the CRDs are handled in order: this one after the other
    cluster.apply(EXAMPLE)
    await eventually(seen.is_set)
    return _discovery_gets(cluster, since)


async def test_crd_events_refresh_only_the_named_groups(local_cluster: LocalCluster, operate: Operate) -> None:
    paths = await _run(local_cluster, operate, 'kopf.dev', 'v1', 'kopfexamples')
    assert '/apis/kopf.dev/v1' in paths  # the group was re-read for its CRD's events
    assert set(paths) <= {'/apis/kopf.dev', '/apis/kopf.dev/v1'}  # no full scan; not other.dev


@pytest.mark.parametrize('selector', [('kopfexamples',), ('kopfexamples.kopf.dev',)])
async def test_crd_events_refresh_everything_for_selectors_without_a_group(
        local_cluster: LocalCluster, operate: Operate, selector: tuple[str, ...]) -> None:
    paths = await _run(local_cluster, operate, *selector)
    if selector == ('kopfexamples.kopf.dev',):  # the group is parsed from the name: per-group
        assert set(paths) <= {'/apis/kopf.dev', '/apis/kopf.dev/v1'}
    else:
        assert '/apis' in paths and '/api' in paths and '/apis/apps/v1' in paths


KOPF_V1 = '/apis/kopf.dev/v1'


def _failed_gets(cluster: LocalCluster) -> int:
    return len([r for r in cluster.request_log() if r['path'] == KOPF_V1 and r['code'] == 503])


def _recheck_tasks() -> list[asyncio.Task[Any]]:
    return [task for task in asyncio.all_tasks() if task.get_name() == 'kopf discovery re-checks']


@pytest.mark.parametrize('selector', [('kopf.dev', 'v1', 'kopfexamples'), ('kopfexamples',), ('kex',)])
async def test_a_transient_5xx_of_a_group_version_at_startup_is_recovered(
        local_cluster: LocalCluster, operate: Operate, caplog: pytest.LogCaptureFixture,
        selector: tuple[str, ...],
) -> None:
    """The CRD exists, but its group-version answers 503 at startup (skipped): re-checked, then served."""
    local_cluster.apply(str(CRD))
    local_cluster.fail('GET', KOPF_V1, 503, count=2)  # the scan and the refresh-on-miss
    registry = kopf.OperatorRegistry()
    seen = asyncio.Event()

    @kopf.on.event(*selector, registry=registry)
    async def fn(**_: Any) -> None:
        seen.set()

    with caplog.at_level(logging.INFO, logger='kopf'):
        await operate(registry)
        await eventually(lambda: _failed_gets(local_cluster) >= 2)  # the observer starts after `ready`
        local_cluster.clear_faults()  # the API answers again
        local_cluster.apply(EXAMPLE)
        await eventually(seen.is_set)
        await asyncio.sleep(0)
        assert not _recheck_tasks()  # nothing is left to re-check: the task has ended
    messages = [r.getMessage() for r in caplog.records]
    assert len([m for m in messages if 'Discovery skips the API kopf.dev/v1' in m]) == 1
    assert [m for m in messages if 'answers again' in m] == [
        'Discovery: the API kopf.dev/v1 answers again; serving kopfexamples.kopf.dev.']


async def test_no_rechecks_when_nothing_fails_or_is_unresolved(local_cluster: LocalCluster, operate: Operate) -> None:
    local_cluster.apply(str(CRD))
    registry = kopf.OperatorRegistry()

    @kopf.on.event('kopf.dev', 'v1', 'kopfexamples', registry=registry)
    async def fn(**_: Any) -> None:
        pass

    await operate(registry)
    await eventually(lambda: any(r['path'].startswith(f'{KOPF_V1}/kopfexamples')  # resolved and served
                             for r in local_cluster.request_log()))
    assert not _recheck_tasks()


@pytest.mark.looptime
async def test_a_permanently_failing_group_version_is_rechecked_with_backoff_and_warned_once(
        local_cluster: LocalCluster, operate: Operate, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch,
) -> None:
    local_cluster.apply(str(CRD))
    local_cluster.fail('GET', KOPF_V1, 503, count=None)  # a broken aggregated API
    times: list[float] = []
    original = discovery.Discovery._get_group_version

    async def spy(self: discovery.Discovery, group: str, version: str) -> Any:
        if (group, version) == ('kopf.dev', 'v1'):
            times.append(asyncio.get_running_loop().time())
        return await original(self, group, version)

    monkeypatch.setattr(discovery.Discovery, '_get_group_version', spy)
    registry = kopf.OperatorRegistry()

    @kopf.on.event('kopf.dev', 'v1', 'kopfexamples', registry=registry)
    async def fn(**_: Any) -> None:
        pass

    with caplog.at_level(logging.WARNING, logger='kopf'):
        await operate(registry)
        await asyncio.sleep(300)
        assert len(_recheck_tasks()) == 1  # still failing: still re-checked, by one task
    startup, rechecks = times[:2], times[2:]  # the scan and its refresh-on-miss; then the re-checks
    intervals = [later - earlier for earlier, later in zip([startup[1], *rechecks], rechecks, strict=False)]
    assert 4 <= len(intervals) <= 9  # 1, 2, 4, 8, 16, 32, 60, 60, 60 s: within 300 s, no more than 9
    for interval, backoff in zip(intervals, [1, 2, 4, 8, 16, 32, 60, 60, 60], strict=False):
        assert interval >= backoff  # never sooner than the backoff: no busy loop
    assert len([r for r in caplog.records if 'Discovery skips the API kopf.dev/v1' in r.getMessage()]) == 1


@pytest.mark.parametrize('failing', [False, True])
async def test_with_scanning_disabled_only_skipped_group_versions_are_rechecked(
        local_cluster: LocalCluster, operate: Operate, failing: bool,
) -> None:
    if failing:  # the CRD exists, its group-version fails at startup: re-checked, then served
        local_cluster.apply(str(CRD))
        local_cluster.fail('GET', KOPF_V1, 503, count=2)
    registry, seen = _with_scanning_disabled()
    await operate(registry)
    if failing:
        await eventually(lambda: _failed_gets(local_cluster) >= 2)
        assert len(_recheck_tasks()) == 1
        local_cluster.apply(EXAMPLE)
        await eventually(seen.is_set)
    else:  # no CRD: unresolved, not re-checked (nothing is polled; with scanning disabled, no CRD events either)
        await eventually(lambda: [r['path'] for r in local_cluster.request_log()].count('/apis/kopf.dev') >= 2)
        await asyncio.sleep(0.1)  # the scan and its refresh-on-miss have been answered: the refresh is done
    await asyncio.sleep(0)
    assert not _recheck_tasks()


@pytest.mark.looptime
async def test_an_unresolved_selector_is_not_polled_but_served_on_its_crd_event(
        local_cluster: LocalCluster, operate: Operate) -> None:
    registry = kopf.OperatorRegistry()
    seen = asyncio.Event()

    @kopf.on.event('kopf.dev', 'v1', 'kopfexamples', registry=registry)
    async def fn(**_: Any) -> None:
        seen.set()

    await operate(registry)  # no CRD: unresolved
    await asyncio.sleep(300)
    assert not _recheck_tasks()
    polls = [r['path'] for r in local_cluster.request_log()].count('/apis/kopf.dev')
    assert polls <= 3  # the startup scan, its refresh-on-miss, one more at the CRDs' listing's end: no polling
    local_cluster.apply(str(CRD))
    local_cluster.apply(EXAMPLE)
    await eventually(seen.is_set)


def _with_scanning_disabled() -> tuple[kopf.OperatorRegistry, asyncio.Event]:
    """A registry whose startup disables scanning, and an event set when a kopfexample is seen."""
    registry = kopf.OperatorRegistry()
    seen = asyncio.Event()

    @kopf.on.startup(registry=registry)
    async def startup(settings: kopf.OperatorSettings, **_: Any) -> None:
        settings.scanning.disabled = True

    @kopf.on.event('kopf.dev', 'v1', 'kopfexamples', registry=registry)
    async def fn(**_: Any) -> None:
        seen.set()
    return registry, seen


async def test_with_scanning_disabled_the_namespaces_are_not_watched_for_glob_patterns(
        local_cluster: LocalCluster, operate: Operate, caplog: pytest.LogCaptureFixture) -> None:
    local_cluster.apply(str(CRD))
    registry, seen = _with_scanning_disabled()
    await operate(registry, namespaces=['team-*', 'default'])
    local_cluster.apply(EXAMPLE)  # in `default`: named exactly, so served
    await eventually(seen.is_set)
    assert not [r for r in local_cluster.request_log() if r['path'] == '/api/v1/namespaces']  # not listed, not watched
    warnings = [r.getMessage() for r in caplog.records if 'settings.scanning.disabled' in r.getMessage()]
    assert warnings == ["settings.scanning.disabled: the namespaces matching ['team-*', 'default'] are not looked "
                        "for; served are only those named exactly: ['default']."]


def widgets_crd(group: str) -> dict[str, Any]:
    return {'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
            'metadata': {'name': f'widgets.{group}'},
            'spec': {'group': group, 'scope': 'Namespaced',
                     'names': {'plural': 'widgets', 'singular': 'widget', 'kind': 'Widget'},
                     'versions': [{'name': 'v1', 'served': True, 'storage': True,
                                   'schema': {'openAPIV3Schema': {'type': 'object',
                                                                  'x-kubernetes-preserve-unknown-fields': True}}}]}}


async def test_an_ambiguous_name_of_two_groups_is_not_served_and_warned_once(
        local_cluster: LocalCluster, operate: Operate, caplog: pytest.LogCaptureFixture) -> None:
    local_cluster.apply(widgets_crd('alpha.example.com'), widgets_crd('beta.example.com'))
    registry = kopf.OperatorRegistry()

    @kopf.on.event('widgets', registry=registry)
    async def fn(**_: Any) -> None:
        pass

    @kopf.on.event('kopf.dev', 'v1', 'kopfexamples', registry=registry)  # to know when the serving has begun
    async def other(**_: Any) -> None:
        pass

    local_cluster.apply(str(CRD))
    with caplog.at_level(logging.WARNING, logger='kopf'):
        await operate(registry)
        await eventually(lambda: any('Ambiguous' in r.getMessage() for r in caplog.records))  # resolved
        await eventually(lambda: any(r['path'] == CRD_PATH and 'watch=' in r['query']   # CRD events are seen
                                     for r in local_cluster.request_log()))
        since = len(local_cluster.request_log())
        local_cluster.apply(OTHER_CRD)  # a CRD event: the selectors are resolved again, no second warning
        await eventually(lambda: any(r['path'] == '/apis' or r['path'].startswith('/apis/other.dev')
                                     for r in local_cluster.request_log()[since:]))
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == ["Ambiguous resources will not be served (try specifying API groups): "
                        "Selector(any_name='widgets') => "
                        "{widgets.v1.alpha.example.com, widgets.v1.beta.example.com}"]
    assert not [r for r in local_cluster.request_log() if '/widgets' in r['path']]  # neither is watched
