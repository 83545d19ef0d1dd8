import pytest

import kopf
from kopf._core.resources import Resource
from kopf._core.selectors import Selector, parse_selector

PODS = Resource('', 'v1', 'pods', kind='Pod', singular='pod', shortcuts={'po'}, categories={'all'}, namespaced=True)
KEX = Resource('kopf.dev', 'v1', 'kopfexamples', kind='KopfExample', singular='kopfexample',
               shortcuts={'kex', 'kexes'}, categories={'kopf'}, namespaced=True)
KEX_OLD = Resource('kopf.dev', 'v1beta1', 'kopfexamples', kind='KopfExample', preferred=False)
OTHER_PODS = Resource('metrics.k8s.io', 'v1beta1', 'pods', kind='PodMetrics')
EVENTS = Resource('', 'v1', 'events', kind='Event')
EVENTS2 = Resource('events.k8s.io', 'v1', 'events', kind='Event')
NODES = Resource('', 'v1', 'nodes', kind='Node', namespaced=False)


def is_kopf(resource: Resource) -> bool:
    return resource.group == 'kopf.dev'


@pytest.mark.parametrize('args, kwargs, expected', [
    (('kopfexamples',), {}, Selector(any_name='kopfexamples')),
    (('kopfexamples.kopf.dev',), {}, Selector(group='kopf.dev', any_name='kopfexamples')),
    (('kopfexamples.v1.kopf.dev',), {}, Selector(group='kopf.dev', version='v1', any_name='kopfexamples')),
    (('deployments.apps',), {}, Selector(group='apps', any_name='deployments')),
    (('kopf.dev', 'kopfexamples'), {}, Selector(group='kopf.dev', any_name='kopfexamples')),
    (('kopf.dev/v1', 'kopfexamples'), {}, Selector(group='kopf.dev', version='v1', any_name='kopfexamples')),
    (('v1', 'pods'), {}, Selector(group='', version='v1', any_name='pods')),
    (('kopf.dev', 'v1', 'kopfexamples'), {}, Selector(group='kopf.dev', version='v1', any_name='kopfexamples')),
    ((kopf.EVERYTHING,), {}, Selector(any_name=kopf.EVERYTHING)),
    (('kopf.dev', kopf.EVERYTHING), {}, Selector(group='kopf.dev', any_name=kopf.EVERYTHING)),
    ((is_kopf,), {}, Selector(callable=is_kopf)),
    ((), {'kind': 'KopfExample'}, Selector(kind='KopfExample')),
    ((), {'plural': 'kopfexamples', 'group': 'kopf.dev'}, Selector(group='kopf.dev', plural='kopfexamples')),
    ((), {'singular': 'kopfexample'}, Selector(singular='kopfexample')),
    ((), {'shortcut': 'kex'}, Selector(shortcut='kex')),
    ((), {'category': 'all'}, Selector(category='all')),
    ((), {'group': 'kopf.dev', 'version': 'v1', 'kind': 'KopfExample'},
     Selector(group='kopf.dev', version='v1', kind='KopfExample')),
])
def test_parsing(args: tuple, kwargs: dict, expected: Selector) -> None:
    assert parse_selector(*args, **kwargs) == expected


@pytest.mark.parametrize('args, kwargs', [
    ((), {}),                                                  # empty
    (('kopf.dev', 'v1', 'kopfexamples', 'extra'), {}),         # too many (a TypeError of the call itself)
    (('kopfexamples',), {'kind': 'KopfExample'}),              # two names
    ((), {'kind': 'KopfExample', 'plural': 'kopfexamples'}),   # two names
    ((is_kopf,), {'plural': 'x'}),                             # callable plus a name
    ((is_kopf, 'x'), {}),                                      # callable not alone
    (('',), {}),                                               # empty strings
    ((), {'plural': ''}),
    ((), {'group': '', 'plural': 'pods'}),
    (('kopf.dev', 'kopfexamples'), {'group': 'kopf.dev'}),     # group twice
    (('kopf.dev/v1', 'kopfexamples'), {'version': 'v1'}),      # version twice
    ((None, 'kopfexamples'), {}),                              # a gap
    ((123,), {}),                                              # not a selector
    ((kopf.EVERYTHING, 'pods'), {}),                           # a marker not last
])
def test_parsing_errors(args: tuple, kwargs: dict) -> None:
    with pytest.raises(TypeError):
        parse_selector(*args, **kwargs)


@pytest.mark.parametrize('selector, resource, expected', [
    (Selector(any_name='pods'), PODS, True),
    (Selector(any_name='Pod'), PODS, True),
    (Selector(any_name='pod'), PODS, True),
    (Selector(any_name='po'), PODS, True),
    (Selector(any_name='nodes'), PODS, False),
    (Selector(plural='pods'), PODS, True),
    (Selector(kind='Pod'), PODS, True),
    (Selector(kind='pods'), PODS, False),
    (Selector(singular='pod'), PODS, True),
    (Selector(shortcut='po'), PODS, True),
    (Selector(category='all'), PODS, True),
    (Selector(category='kopf'), PODS, False),
    (Selector(group='', version='v1', any_name='pods'), PODS, True),
    (Selector(group='apps', any_name='pods'), PODS, False),
    (Selector(version='v2', any_name='pods'), PODS, False),
    (Selector(any_name='kopfexamples'), KEX_OLD, False),                  # versionless: preferred only
    (Selector(version='v1beta1', any_name='kopfexamples'), KEX_OLD, True),
    (Selector(any_name=kopf.EVERYTHING), PODS, True),
    (Selector(any_name=kopf.EVERYTHING), EVENTS, False),                  # never the events
    (Selector(any_name=kopf.EVERYTHING), EVENTS2, False),
    (Selector(any_name='events'), EVENTS, True),                          # unless explicitly
    (Selector(group='kopf.dev', any_name=kopf.EVERYTHING), KEX, True),
    (Selector(group='kopf.dev', any_name=kopf.EVERYTHING), PODS, False),
    (Selector(callable=is_kopf), KEX, True),
    (Selector(callable=is_kopf), KEX_OLD, True),                          # callables see all versions
    (Selector(callable=is_kopf), PODS, False),
    (Selector(callable=lambda r: True), EVENTS, False),
])
def test_check(selector: Selector, resource: Resource, expected: bool) -> None:
    assert selector.check(resource) is expected


@pytest.mark.parametrize('selector, expected', [
    (Selector(any_name='pods'), {PODS}),                      # core group wins for specific names
    (Selector(group='metrics.k8s.io', any_name='pods'), {OTHER_PODS}),
    (Selector(any_name=kopf.EVERYTHING), {PODS, KEX, NODES, OTHER_PODS}),
    (Selector(category='all'), {PODS}),
])
def test_select(selector: Selector, expected: set[Resource]) -> None:
    everything = [PODS, KEX, KEX_OLD, EVENTS, EVENTS2, NODES, Resource('metrics.k8s.io', 'v1beta1', 'pods')]
    assert selector.select(everything) == expected


@pytest.mark.parametrize('selector, text', [
    (Selector(any_name='pods'), 'pods'),
    (Selector(group='kopf.dev', version='v1', plural='kopfexamples'), 'kopfexamples.v1.kopf.dev'),
    (Selector(any_name=kopf.EVERYTHING), 'EVERYTHING'),
    (Selector(callable=is_kopf), 'is_kopf'),
])
def test_selector_str(selector: Selector, text: str) -> None:
    assert str(selector) == text


def test_resource_equality_by_group_version_plural() -> None:
    assert Resource('kopf.dev', 'v1', 'kopfexamples') == KEX
    assert hash(Resource('kopf.dev', 'v1', 'kopfexamples')) == hash(KEX)
    assert Resource('kopf.dev', 'v2', 'kopfexamples') != KEX
    assert KEX.shortcuts == frozenset({'kex', 'kexes'})
    assert kopf.Resource is Resource


@pytest.mark.parametrize('resource, kwargs, url', [
    (PODS, {}, '/api/v1/pods'),
    (PODS, {'namespace': 'ns'}, '/api/v1/namespaces/ns/pods'),
    (PODS, {'namespace': 'ns', 'name': 'p1'}, '/api/v1/namespaces/ns/pods/p1'),
    (PODS, {'namespace': 'ns', 'name': 'p1', 'subresource': 'status'}, '/api/v1/namespaces/ns/pods/p1/status'),
    (KEX, {'server': 'https://k8s:6443/'}, 'https://k8s:6443/apis/kopf.dev/v1/kopfexamples'),
    (KEX, {'params': {'watch': 'true', 'resourceVersion': '5'}},
     '/apis/kopf.dev/v1/kopfexamples?watch=true&resourceVersion=5'),
    (NODES, {'name': 'n1'}, '/api/v1/nodes/n1'),
])
def test_get_url(resource: Resource, kwargs: dict, url: str) -> None:
    assert resource.get_url(**kwargs) == url


@pytest.mark.parametrize('resource, kwargs', [
    (PODS, {'subresource': 'status'}),
    (NODES, {'namespace': 'ns'}),
])
def test_get_url_errors(resource: Resource, kwargs: dict) -> None:
    with pytest.raises(ValueError):
        resource.get_url(**kwargs)


def test_resource_names() -> None:
    assert (PODS.name, PODS.api_version) == ('pods', 'v1')
    assert (KEX.name, KEX.api_version) == ('kopfexamples.kopf.dev', 'kopf.dev/v1')
