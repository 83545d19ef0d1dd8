import asyncio
import dataclasses
import logging
from typing import Any

import pytest

from kopf._api import apierrors, discovery
from kopf._api import client as client_
from kopf._core import resources, selectors
from kopf._core.selectors import EVERYTHING, parse_selector
from kopf._core.settings import OperatorSettings


def test_parse_resource_list() -> None:
    payload = {'kind': 'APIResourceList', 'groupVersion': 'apps/v1', 'resources': [
        {'name': 'deployments', 'singularName': '', 'namespaced': True, 'kind': 'Deployment',
         'verbs': ['get', 'list', 'watch', 'patch'], 'shortNames': ['deploy'], 'categories': ['all']},
        {'name': 'deployments/status', 'singularName': '', 'namespaced': True, 'kind': 'Deployment',
         'verbs': ['get', 'patch']},
        {'name': 'deployments/scale', 'singularName': '', 'namespaced': True, 'kind': 'Scale', 'verbs': ['get']},
    ]}
    [deployments] = discovery.parse_resource_list(payload, 'apps', 'v1', preferred=True)
    assert deployments == resources.Resource('apps', 'v1', 'deployments')
    assert deployments.kind == 'Deployment'
    assert deployments.singular == 'deployment'  # lower-cased kind when the server says ''
    assert deployments.shortcuts == {'deploy'}
    assert deployments.categories == {'all'}
    assert deployments.subresources == {'status', 'scale'}
    assert deployments.namespaced is True
    assert deployments.preferred is True
    assert 'watch' in deployments.verbs


async def test_scan_has_core_and_crd_resources(client: client_.APIClient, crd: resources.Resource) -> None:
    found = await discovery.Discovery(client).scan()
    by_name = {(r.group, r.version, r.plural): r for r in found}
    assert ('', 'v1', 'pods') in by_name
    assert ('', 'v1', 'configmaps') in by_name
    kex = by_name[('kopf.dev', 'v1', 'kopfexamples')]
    assert kex.kind == 'KopfExample'
    assert kex.namespaced
    assert 'status' in kex.subresources
    assert {'kex', 'kopfex'} <= kex.shortcuts
    assert not any('/' in r.plural for r in found)


@pytest.mark.parametrize('args', [
    ('kopfexamples',),
    ('kopf.dev', 'kopfexamples'),
    ('kopf.dev/v1', 'kopfexamples'),
    ('kopf.dev', 'v1', 'kopfexamples'),
    ('kopfexamples.kopf.dev',),
    ('kopfexamples.v1.kopf.dev',),
    ('kex',),
    ('KopfExample',),
    ('kopfexample',),
])
async def test_select_by_names(client: client_.APIClient, crd: resources.Resource, args: tuple[str, ...]) -> None:
    selected = await discovery.Discovery(client).select(parse_selector(*args))
    assert selected == {crd}


async def test_select_core_pods(client: client_.APIClient) -> None:
    selected = await discovery.Discovery(client).select(parse_selector('v1', 'pods'))
    assert selected == {resources.Resource('', 'v1', 'pods')}


async def test_select_everything_excludes_events(client: client_.APIClient, crd: resources.Resource) -> None:
    selected = await discovery.Discovery(client).select(parse_selector(EVERYTHING))
    assert crd in selected
    assert resources.Resource('', 'v1', 'events') not in selected
    assert resources.Resource('', 'v1', 'configmaps') in selected


async def test_select_callable(client: client_.APIClient, crd: resources.Resource) -> None:
    selected = await discovery.Discovery(client).select(parse_selector(lambda r: r.group == 'kopf.dev'))
    assert selected == {crd}


async def test_a_new_crd_is_found_by_a_refresh_on_miss(client: client_.APIClient, cluster: Any) -> None:
    disco = discovery.Discovery(client)
    selector = selectors.parse_selector('kopfexamples')
    assert await disco.select(selector) == set()
    from .conftest import CRD
    cluster.apply(str(CRD))
    assert len(await disco.select(selector)) == 1


async def test_crd_schema(client: client_.APIClient, crd: resources.Resource) -> None:
    schema = await discovery.Discovery(client).schema(crd)
    assert schema is not None
    assert schema['properties']['spec']['x-kubernetes-preserve-unknown-fields'] is True
    assert await discovery.Discovery(client).schema(resources.Resource('', 'v1', 'pods')) is None


async def test_core_group_wins_for_ambiguous_names(client: client_.APIClient) -> None:
    disco = discovery.Discovery(client)
    everything = await disco.scan()
    assert any(r.plural == 'events' and r.group == 'events.k8s.io' for r in everything)
    assert await disco.select(parse_selector('events')) == {resources.Resource('', 'v1', 'events')}


def _recording(client: client_.APIClient) -> list[str]:
    """The paths that the client requests from now on."""
    paths: list[str] = []
    request = client.request

    async def recorded(method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        paths.append(path)
        return await request(method, path, *args, **kwargs)
    client.request = recorded  # type: ignore[method-assign]
    return paths


@pytest.mark.parametrize('args, expected', [
    (('kopf.dev', 'v1', 'kopfexamples'), ['/apis/kopf.dev', '/apis/kopf.dev/v1']),
    (('kopfexamples.kopf.dev',), ['/apis/kopf.dev', '/apis/kopf.dev/v1']),
    (('kopf.dev', 'kex'), ['/apis/kopf.dev', '/apis/kopf.dev/v1']),
])
async def test_a_group_selector_reads_only_its_group(client: client_.APIClient, crd: resources.Resource,
                                                     args: tuple[str, ...], expected: list[str]) -> None:
    paths = _recording(client)
    [found] = await discovery.Discovery(client).select(parse_selector(*args))
    assert sorted(paths) == expected
    assert found == crd
    assert (found.kind, found.namespaced, found.subresources, found.preferred) == ('KopfExample', True,
                                                                                  {'status'}, True)


async def test_a_core_selector_reads_only_the_core_group(client: client_.APIClient) -> None:
    paths = _recording(client)
    selected = await discovery.Discovery(client).select(parse_selector('v1', 'pods'))
    assert selected == {resources.Resource('', 'v1', 'pods')}
    assert sorted(paths) == ['/api', '/api/v1']


@pytest.mark.parametrize('group', ['', 'apps', 'kopf.dev', 'apiextensions.k8s.io', 'events.k8s.io'])
async def test_a_group_scan_equals_the_full_scans_part(client: client_.APIClient, crd: resources.Resource,
                                                       group: str) -> None:
    full = [r for r in await discovery.Discovery(client).scan() if r.group == group]
    for version in [None, 'v1']:
        alone = await discovery.Discovery(client).scan_group(group, version)
        assert sorted(map(dataclasses.astuple, alone)) == sorted(map(dataclasses.astuple, full))
        assert full


async def test_after_a_full_scan_group_selectors_make_no_requests(client: client_.APIClient,
                                                                  crd: resources.Resource) -> None:
    disco = discovery.Discovery(client)
    await disco.scan()
    paths = _recording(client)
    assert await disco.select(parse_selector('kopf.dev', 'v1', 'kopfexamples')) == {crd}
    assert paths == []


async def test_a_group_not_served_yet_is_found_by_a_refresh_on_miss(client: client_.APIClient, cluster: Any) -> None:
    disco = discovery.Discovery(client)
    selector = selectors.parse_selector('kopf.dev', 'v1', 'kopfexamples')
    assert await disco.select(selector) == set()
    from .conftest import CRD
    cluster.apply(str(CRD))
    assert len(await disco.select(selector)) == 1
    assert await disco.select(selectors.parse_selector('kopf.dev', 'v2', 'kopfexamples')) == set()


async def test_a_group_refresh_keeps_the_full_scan_whole(client: client_.APIClient, cluster: Any) -> None:
    disco = discovery.Discovery(client)
    before = await disco.scan()
    from .conftest import CRD
    cluster.apply(str(CRD))
    assert len(await disco.select(selectors.parse_selector('kopf.dev', 'v1', 'kopfexamples'))) == 1
    after = await disco.scan()
    assert set(after) == set(before) | {resources.Resource('kopf.dev', 'v1', 'kopfexamples')}


KOPF_V1 = '/apis/kopf.dev/v1'


def _gets(cluster: Any, path: str) -> list[int]:
    return [r['code'] for r in cluster.request_log() if r['method'] == 'GET' and r['path'] == path]


def _skips(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if 'Discovery skips' in r.getMessage()]


@pytest.mark.looptime
@pytest.mark.parametrize('status', [503, 500])
async def test_a_failing_group_version_is_skipped_in_a_full_scan(
        client: client_.APIClient, cluster: Any, crd: resources.Resource, caplog: pytest.LogCaptureFixture,
        status: int,
) -> None:
    cluster.fail('GET', KOPF_V1, status, count=None)  # like a broken aggregated API (metrics-server)
    disco = discovery.Discovery(client)
    start = asyncio.get_running_loop().time()
    with caplog.at_level(logging.WARNING):
        found = await disco.scan()
        assert asyncio.get_running_loop().time() == start  # no backoffs slept
        assert crd not in found
        assert resources.Resource('', 'v1', 'pods') in found
        assert resources.Resource('apps', 'v1', 'deployments') in found
        assert _gets(cluster, KOPF_V1) == [status]  # not retried
        [warning] = _skips(caplog)
        assert 'kopf.dev/v1' in warning
        await disco.scan(refresh=True)  # still failing: skipped again, not warned again
        assert _gets(cluster, KOPF_V1) == [status, status]
        assert len(_skips(caplog)) == 1
        cluster.clear_faults()
        assert crd in await disco.scan(refresh=True)  # a later rescan finds it
        cluster.fail('GET', KOPF_V1, status, count=None)
        assert crd not in await disco.scan(refresh=True)
        assert len(_skips(caplog)) == 2  # failing anew after answering: warned anew


@pytest.mark.looptime
async def test_a_failing_group_version_is_skipped_for_a_group_selector(
        client: client_.APIClient, cluster: Any, crd: resources.Resource, caplog: pytest.LogCaptureFixture,
) -> None:
    cluster.fail('GET', KOPF_V1, 503, count=None)
    disco = discovery.Discovery(client)
    start = asyncio.get_running_loop().time()
    with caplog.at_level(logging.WARNING):
        assert await disco.select(parse_selector('kopf.dev', 'v1', 'kopfexamples')) == set()
    assert asyncio.get_running_loop().time() == start
    assert _gets(cluster, KOPF_V1) == [503, 503]  # the group's scan, and one refresh on the miss
    assert len(_skips(caplog)) == 1
    cluster.clear_faults()
    assert await disco.select(parse_selector('kopf.dev', 'v1', 'kopfexamples')) == {crd}


@pytest.mark.looptime
async def test_connection_errors_of_a_group_version_are_retried(
        client: client_.APIClient, cluster: Any, crd: resources.Resource, caplog: pytest.LogCaptureFixture,
) -> None:
    cluster.drop('GET', KOPF_V1, count=2)
    with caplog.at_level(logging.WARNING):
        assert crd in await discovery.Discovery(client).scan()
    assert not _skips(caplog)


@pytest.mark.looptime
async def test_the_core_group_is_retried_and_not_skipped(
        client: client_.APIClient, cluster: Any, settings: OperatorSettings, caplog: pytest.LogCaptureFixture,
) -> None:
    cluster.fail('GET', '/api/v1', 503, count=2)
    with caplog.at_level(logging.WARNING):
        assert resources.Resource('', 'v1', 'pods') in await discovery.Discovery(client).scan()
    assert _gets(cluster, '/api/v1') == [503, 503, 200]
    assert not _skips(caplog)
    settings.networking.error_backoffs = [1]
    cluster.fail('GET', '/api/v1', 503, count=None)
    with pytest.raises(apierrors.APIServerError):
        await discovery.Discovery(client).scan()


@pytest.mark.looptime
async def test_failing_group_versions_are_named_until_they_answer_and_then_taken_once(
        client: client_.APIClient, cluster: Any, crd: resources.Resource,
) -> None:
    cluster.fail('GET', KOPF_V1, 503, count=None)
    disco = discovery.Discovery(client)
    assert crd not in await disco.scan()
    assert disco.failing == {('kopf.dev', 'v1')}
    assert disco.take_recovered() == []
    assert await disco.select(parse_selector('kopf.dev', 'v1', 'kopfexamples'), rescan=False) == set()
    assert _gets(cluster, KOPF_V1) == [503]  # not rescanned on the miss when told so
    cluster.clear_faults()
    assert crd in await disco.scan_group('kopf.dev', refresh=True)  # only the group: the full scan stays whole
    assert crd in await disco.scan()
    assert disco.failing == set()
    assert disco.take_recovered() == [('kopf.dev', 'v1')]
    assert disco.take_recovered() == []  # named once


@pytest.mark.looptime
async def test_a_failing_group_version_no_longer_listed_is_forgotten(
        client: client_.APIClient, cluster: Any, crd: resources.Resource,
) -> None:
    cluster.fail('GET', KOPF_V1, 503, count=None)
    disco = discovery.Discovery(client)
    await disco.scan_group('kopf.dev', 'v1')
    assert disco.failing == {('kopf.dev', 'v1')}
    await client.request('DELETE', f'{discovery.CRD_PATH}/{crd.name}')
    await disco.scan_group('kopf.dev', refresh=True)  # the group is not served anymore
    assert disco.failing == set()
    assert disco.take_recovered() == []  # gone is not recovered


@pytest.mark.looptime
@pytest.mark.parametrize('status', [404, 503])
async def test_a_group_version_that_answers_is_served_when_its_group_does_not(
        client: client_.APIClient, cluster: Any, crd: resources.Resource, status: int) -> None:
    cluster.fail('GET', '/apis/kopf.dev', status, count=None)  # seen on proxies and minimal API servers
    [found] = await discovery.Discovery(client).select(parse_selector('kopf.dev', 'v1', 'kopfexamples'))
    assert found == crd
    assert (found.kind, found.namespaced, found.subresources) == ('KopfExample', True, {'status'})


async def test_a_group_that_does_not_answer_and_no_version_is_still_not_found(
        client: client_.APIClient, cluster: Any, crd: resources.Resource) -> None:
    cluster.fail('GET', '/apis/kopf.dev', 404, count=None)
    cluster.fail('GET', KOPF_V1, 404, count=None)
    assert await discovery.Discovery(client).select(parse_selector('kopf.dev', 'v1', 'kopfexamples')) == set()
