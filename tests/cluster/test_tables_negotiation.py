"""What a request's Accept and Content-Type get, as kube-apiserver 1.34 answers them (found by the differential suite).

A Table of `meta.k8s.io/v1` or `v1beta1` (the first media range served wins), a 406 when no range is
served, a 415 for a form-urlencoded body, and an unknown subresource of a custom resource is a 404
naming the object.
"""
from collections.abc import Iterator

import pytest

from kopf._cluster import statuses
from kopf._cluster.web import tables
from kopf.testing import LocalCluster

from ..fidelity.conftest import Http

TABLE = 'application/json;as=Table;g=meta.k8s.io;v='
CMS = '/api/v1/namespaces/default/configmaps'
CRD = {'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
       'metadata': {'name': 'negotiations.kopf.dev'},
       'spec': {'group': 'kopf.dev', 'scope': 'Namespaced',
                'names': {'plural': 'negotiations', 'singular': 'negotiation', 'kind': 'Negotiation'},
                'versions': [{'name': 'v1', 'served': True, 'storage': True, 'subresources': {'status': {}},
                              'additionalPrinterColumns': [{'name': 'Note', 'type': 'string', 'jsonPath': '.spec.note',
                                                            'description': 'A note of its own'}],
                              'schema': {'openAPIV3Schema': {'type': 'object',
                                                             'x-kubernetes-preserve-unknown-fields': True}}}]}}


@pytest.mark.parametrize('accept, version', [
    ('', None), ('application/json', None), ('*/*', None), ('application/yaml', None),
    (TABLE + 'v1', 'v1'), (TABLE + 'v1beta1', 'v1beta1'), (f'{TABLE}v1,{TABLE}v1beta1,application/json', 'v1'),
    (f'{TABLE}v9,{TABLE}v1beta1', 'v1beta1'), (f'{TABLE}v9,application/json', None),
    ('application/json;as=Table;g=other.io;v=v1,application/json', None),
])
def test_negotiated(accept: str, version: str | None) -> None:
    assert tables.negotiate(accept) == version


@pytest.mark.parametrize('accept', [TABLE + 'v9', 'application/xml', 'text/html', 'application/json;as=Table'])
def test_not_acceptable(accept: str) -> None:
    with pytest.raises(statuses.ApiError) as err:
        tables.negotiate(accept)
    assert err.value.code == 406


@pytest.fixture(scope='module')
def http() -> Iterator[Http]:
    with LocalCluster() as cluster:
        cluster.apply(CRD, {'apiVersion': 'kopf.dev/v1', 'kind': 'Negotiation',
                            'metadata': {'name': 'n', 'namespace': 'default'}, 'spec': {'note': 'hi'}},
                      {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'c', 'namespace': 'default'}})
        yield Http(cluster.url)


def test_tables_of_both_versions(http: Http) -> None:
    for version in ('v1', 'v1beta1'):
        code, _, body = http.request('GET', CMS, headers={'Accept': TABLE + version})
        assert code == 200 and body['apiVersion'] == f'meta.k8s.io/{version}'
        assert {row['object']['apiVersion'] for row in body['rows']} == {f'meta.k8s.io/{version}'}


@pytest.mark.parametrize('accept', [TABLE + 'v9', 'application/xml'])
def test_unacceptable_is_406(http: Http, accept: str) -> None:
    code, _, body = http.request('GET', CMS, headers={'Accept': accept})
    assert (code, body['reason']) == (406, 'NotAcceptable')


def test_form_urlencoded_body_is_415(http: Http) -> None:
    body = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'form'}}
    code, _, answer = http.request('POST', CMS, body, 'application/x-www-form-urlencoded')
    assert (code, answer['reason']) == (415, 'UnsupportedMediaType')


def test_unknown_subresource_of_a_custom_resource_names_the_object(http: Http) -> None:
    for name in ('n', 'absent'):
        code, _, answer = http.request('GET', f'/apis/kopf.dev/v1/namespaces/default/negotiations/{name}/nonsense')
        assert (code, answer['details']) == (404, {'name': name, 'group': 'kopf.dev', 'kind': 'negotiations'})
    code, _, answer = http.request('GET', f'{CMS}/c/nonsense')   # built-ins: the generic 404, as real
    assert code == 404 and not answer['details']


def test_printer_columns_descriptions(http: Http) -> None:
    code, _, body = http.request('GET', '/apis/kopf.dev/v1/namespaces/default/negotiations',
                                 headers={'Accept': TABLE + 'v1'})
    assert code == 200
    name, note = body['columnDefinitions']
    assert name['description'].startswith('Name must be unique within a namespace. Is required when creating')
    assert note['description'] == 'A note of its own'
