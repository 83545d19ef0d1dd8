"""The RBAC of the framework's own requests, from a registry and the options (pure; table tests)."""
from collections.abc import Callable
from typing import Any

import pytest

import kopf
from kopf._core.resources import Resource
from kopf._rbac import rules as rbac

KEX = Resource('kopf.dev', 'v1', 'kopfexamples', kind='KopfExample', singular='kopfexample',
               shortcuts={'kex'}, subresources={'status'}, namespaced=True)
NOSTATUS = Resource('kopf.dev', 'v1', 'plainthings', kind='PlainThing', namespaced=True)
CLUSTERED = Resource('kopf.dev', 'v1', 'clusterthings', kind='ClusterThing', namespaced=False,
                     subresources={'status'})
PODS = Resource('', 'v1', 'pods', kind='Pod', subresources={'status'}, namespaced=True)
KNOWN = [KEX, NOSTATUS, CLUSTERED, PODS]

Decorate = Callable[[kopf.OperatorRegistry], Any]


def fn(**_: Any) -> None:
    pass


def registry_of(*decorators: Decorate) -> kopf.OperatorRegistry:
    registry = kopf.OperatorRegistry()
    for decorate in decorators:
        decorate(registry)(fn)
    return registry


def table(registry: kopf.OperatorRegistry, options: rbac.Options = rbac.Options()) -> set[tuple[Any, ...]]:
    grants, _ = rbac.grants(registry, KNOWN, options)
    return {(g.namespace, g.group, g.resource, ','.join(sorted(g.verbs))) for g in grants}


CRDS = (None, 'apiextensions.k8s.io', 'customresourcedefinitions', 'get,list,watch')
EVENTS = (None, '', 'events', 'create')


@pytest.mark.parametrize('decorate, expected', [
    (lambda r: kopf.on.create('kopfexamples', registry=r),
     {(None, 'kopf.dev', 'kopfexamples', 'list,watch'), (None, 'kopf.dev', 'kopfexamples', 'get,patch'),
      (None, 'kopf.dev', 'kopfexamples/status', 'patch'), CRDS, EVENTS}),
    (lambda r: kopf.daemon('kex', registry=r),  # a short name resolves to the plural
     {(None, 'kopf.dev', 'kopfexamples', 'list,watch'), (None, 'kopf.dev', 'kopfexamples', 'get,patch'),
      (None, 'kopf.dev', 'kopfexamples/status', 'patch'), CRDS, EVENTS}),
    (lambda r: kopf.timer('plainthings', interval=1, registry=r),  # no status subresource: no status patch
     {(None, 'kopf.dev', 'plainthings', 'list,watch'), (None, 'kopf.dev', 'plainthings', 'get,patch'), CRDS, EVENTS}),
    (lambda r: kopf.on.event('pods', registry=r),  # watching only: no writes
     {(None, '', 'pods', 'list,watch'), CRDS, EVENTS}),
    (lambda r: kopf.index('pods', registry=r),
     {(None, '', 'pods', 'list,watch'), CRDS, EVENTS}),
    (lambda r: kopf.on.validate('kopfexamples', registry=r),  # served (watched) + managed configurations
     {(None, 'kopf.dev', 'kopfexamples', 'list,watch'), CRDS, EVENTS,
      (None, 'admissionregistration.k8s.io', 'validatingwebhookconfigurations', 'create,patch'),
      (None, 'admissionregistration.k8s.io', 'mutatingwebhookconfigurations', 'create,patch')}),
    (lambda r: kopf.on.startup(registry=r),  # no resources: only the events
     {EVENTS}),
])
def test_grants_cluster_wide(decorate: Decorate, expected: set[tuple[Any, ...]]) -> None:
    assert table(registry_of(decorate)) == expected


def test_exact_namespaces_get_roles_and_cluster_things_stay_cluster_wide() -> None:
    registry = registry_of(lambda r: kopf.on.event('kopfexamples', registry=r),
                           lambda r: kopf.on.event('clusterthings', registry=r))
    assert table(registry, rbac.Options(namespaces=('ns1', 'ns2'))) == {
        ('ns1', 'kopf.dev', 'kopfexamples', 'list,watch'), ('ns2', 'kopf.dev', 'kopfexamples', 'list,watch'),
        (None, 'kopf.dev', 'clusterthings', 'list,watch'), CRDS,
        ('ns1', '', 'events', 'create'), ('ns2', '', 'events', 'create'),
        ('default', '', 'events', 'create'),  # the events of cluster-scoped objects
    }
    with_account = table(registry, rbac.Options(namespaces=('ns1',), service_accounts=('ops/op',)))
    assert {('ops', '', 'events', 'create'), ('default', '', 'events', 'create')} <= with_account


def test_globs_need_the_namespaces_and_cluster_wide_rules() -> None:
    registry = registry_of(lambda r: kopf.on.event('kopfexamples', registry=r))
    assert table(registry, rbac.Options(globs=('team-*',))) == {
        (None, 'kopf.dev', 'kopfexamples', 'list,watch'), CRDS, EVENTS, (None, '', 'namespaces', 'list,watch')}


LEASE = ('coordination.k8s.io', 'leases', 'create,get,update,watch')


def peerings(place: str | None, plural: str) -> set[tuple[Any, ...]]:
    """Both groups: the legacy zalando.org one is looked up when kopf.dev has no such peering."""
    return {(place, group, plural, 'get,list,patch,watch') for group in ('kopf.dev', 'zalando.org')}


@pytest.mark.parametrize('options, expected', [
    (rbac.Options(peering='main'), peerings(None, 'clusterkopfpeerings')),
    (rbac.Options(peering='main', namespaces=('ns1',)), peerings('ns1', 'kopfpeerings')),
    (rbac.Options(peering='main', globs=('ns*',)),
     peerings(None, 'kopfpeerings') | {(None, '', 'namespaces', 'list,watch')}),
    (rbac.Options(lease='op'), {(None, *LEASE)}),
    (rbac.Options(lease='kube-system/op'), {('kube-system', *LEASE)}),
    (rbac.Options(lease='op', namespaces=('ns1',)), {('ns1', *LEASE)}),
    (rbac.Options(lease='op', shards=True), {(None, 'coordination.k8s.io', 'leases', 'create,get,list,update,watch')}),
])
def test_peering_and_leases_from_the_options(options: rbac.Options, expected: set[tuple[Any, ...]]) -> None:
    assert table(kopf.OperatorRegistry(), options) - {EVENTS, ('ns1', '', 'events', 'create')} == expected


def test_posting_and_scanning_off() -> None:
    registry = registry_of(lambda r: kopf.on.event('pods', registry=r))
    assert table(registry, rbac.Options(posting=False, scanning=False)) == {
        (None, '', 'pods', 'list,watch'), (None, 'apiextensions.k8s.io', 'customresourcedefinitions', 'get')}


@pytest.mark.parametrize('decorate, group, plural', [
    (lambda r: kopf.on.event('unknownthings', registry=r), '*', 'unknownthings'),
    (lambda r: kopf.on.event('example.com', 'v1', 'unknownthings', registry=r), 'example.com', 'unknownthings'),
    (lambda r: kopf.on.event(kind='UnknownThing', registry=r), '*', '*'),
    (lambda r: kopf.on.event(kopf.EVERYTHING, registry=r), '*', '*'),
    (lambda r: kopf.on.event('example.com', kopf.EVERYTHING, registry=r), 'example.com', '*'),
    (lambda r: kopf.on.event(lambda resource: True, registry=r), '*', '*'),
])
def test_unresolved_selectors_are_granted_as_written(decorate: Decorate, group: str, plural: str) -> None:
    grants, _ = rbac.grants(registry_of(decorate), KNOWN, rbac.Options())
    assert (group, plural) in {(g.group, g.resource) for g in grants}


def test_a_warning_names_the_unknown_resource() -> None:
    _, warnings = rbac.grants(registry_of(lambda r: kopf.on.create('unknownthings', registry=r)), KNOWN, rbac.Options())
    assert warnings == ['The resource unknownthings is not among the known resources (give its CRD with --crd); '
                        'granted as unknownthings.*.']


def test_rules_unite_the_verbs_and_group_the_resources() -> None:
    grants = [rbac.Grant('g', 'a', frozenset({'list', 'watch'}), None, ''),
              rbac.Grant('g', 'a', frozenset({'get', 'patch'}), None, ''),
              rbac.Grant('g', 'b', frozenset({'list', 'watch', 'get', 'patch'}), None, ''),
              rbac.Grant('', 'events', frozenset({'create'}), None, '')]
    assert rbac.rules(grants, [{'apiGroups': [''], 'resources': ['secrets'], 'verbs': ['get']}]) == [
        {'apiGroups': [''], 'resources': ['events'], 'verbs': ['create']},
        {'apiGroups': ['g'], 'resources': ['a', 'b'], 'verbs': ['get', 'list', 'patch', 'watch']},
        {'apiGroups': [''], 'resources': ['secrets'], 'verbs': ['get']},
    ]


def test_manifests_bind_the_roles_to_the_subjects() -> None:
    registry = registry_of(lambda r: kopf.on.create('kopfexamples', registry=r))
    options = rbac.Options(namespaces=('ns1',), name='op', service_accounts=('ops/op',), users=('me',))
    grants, _ = rbac.grants(registry, KNOWN, options)
    docs = rbac.manifests(grants, options, extra_namespaced=[{'apiGroups': [''], 'resources': ['pods'],
                                                              'verbs': ['create']}])
    assert [(d['kind'], d['metadata']) for d in docs] == [
        ('ClusterRole', {'name': 'op'}), ('ClusterRoleBinding', {'name': 'op'}),
        ('Role', {'name': 'op', 'namespace': 'ns1'}), ('RoleBinding', {'name': 'op', 'namespace': 'ns1'})]
    assert docs[1]['subjects'] == docs[3]['subjects'] == [
        {'kind': 'ServiceAccount', 'name': 'op', 'namespace': 'ops'},
        {'kind': 'User', 'apiGroup': 'rbac.authorization.k8s.io', 'name': 'me'}]
    assert docs[3]['roleRef'] == {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'Role', 'name': 'op'}
    assert {'apiGroups': [''], 'resources': ['pods'], 'verbs': ['create']} in docs[2]['rules']
    assert docs[0]['rules'] == [{'apiGroups': ['apiextensions.k8s.io'], 'resources': ['customresourcedefinitions'],
                                 'verbs': ['get', 'list', 'watch']}]


def test_the_default_subject_and_a_bad_one() -> None:
    assert rbac.subjects(rbac.Options()) == [{'kind': 'ServiceAccount', 'name': 'kopf', 'namespace': 'default'}]
    with pytest.raises(ValueError, match=r"NAMESPACE/NAME, not 'kopf'"):
        rbac.subjects(rbac.Options(service_accounts=('kopf',)))


@pytest.mark.parametrize('docs, cluster, namespaced', [
    ([[{'apiGroups': [''], 'resources': ['secrets'], 'verbs': ['get']}]], [],
     [{'apiGroups': [''], 'resources': ['secrets'], 'verbs': ['get']}]),
    ([{'kind': 'ClusterRole', 'rules': [{'apiGroups': [''], 'resources': ['nodes'], 'verbs': ['list']}]},
      None, {'kind': 'Role', 'rules': [{'apiGroups': [''], 'resources': ['pods'], 'verbs': ['create']}]}],
     [{'apiGroups': [''], 'resources': ['nodes'], 'verbs': ['list']}],
     [{'apiGroups': [''], 'resources': ['pods'], 'verbs': ['create']}]),
])
def test_extra_rules(docs: list[Any], cluster: list[Any], namespaced: list[Any]) -> None:
    assert rbac.split_extra(docs, 'x.yaml') == (cluster, namespaced)


@pytest.mark.parametrize('doc', [{'kind': 'Pod'}, 'text', [{'resources': ['pods']}]])
def test_bad_extra_rules_name_the_file(doc: Any) -> None:
    with pytest.raises(ValueError, match=r'^x\.yaml: expected a list of RBAC rules'):
        rbac.split_extra([doc], 'x.yaml')
