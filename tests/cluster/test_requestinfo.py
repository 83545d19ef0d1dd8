"""A URL as the authorizer sees it: upstream's RequestInfo, table-driven."""
import pytest

from kopf._cluster.rbac import requestinfo
from kopf._cluster.rbac.subjects import User

ALICE = User('alice')


@pytest.mark.parametrize('method, path, query, expected', [
    ('GET', '/api/v1/namespaces/ns/pods', {}, ('list', True, '', 'pods', '', 'ns', '')),
    ('GET', '/api/v1/namespaces/ns/pods', {'watch': 'true'}, ('watch', True, '', 'pods', '', 'ns', '')),
    ('GET', '/api/v1/namespaces/ns/pods', {'watch': '0'}, ('list', True, '', 'pods', '', 'ns', '')),
    ('GET', '/api/v1/namespaces/ns/pods', {'fieldSelector': 'metadata.name=p1'}, ('list', True, '', 'pods', '',
         'ns', 'p1')),
    ('GET', '/api/v1/namespaces/ns/pods', {'fieldSelector': 'a=b,metadata.name==p1', 'watch': '1'},
     ('watch', True, '', 'pods', '', 'ns', 'p1')),
    ('GET', '/api/v1/namespaces/ns/pods', {'fieldSelector': 'metadata.name!=p1'}, ('list', True, '', 'pods', '',
         'ns', '')),
    ('GET', '/api/v1/namespaces/ns/pods/p1', {}, ('get', True, '', 'pods', '', 'ns', 'p1')),
    ('GET', '/api/v1/namespaces/ns/pods/p1/log', {}, ('get', True, '', 'pods', 'log', 'ns', 'p1')),
    ('POST', '/api/v1/namespaces/ns/serviceaccounts/sa/token', {}, ('create', True, '', 'serviceaccounts',
         'token', 'ns', 'sa')),
    ('DELETE', '/apis/apps/v1/namespaces/ns/deployments', {}, ('deletecollection', True, 'apps', 'deployments',
         '', 'ns', '')),
    ('DELETE', '/apis/apps/v1/namespaces/ns/deployments/d', {}, ('delete', True, 'apps', 'deployments', '', 'ns', 'd')),
    ('PATCH', '/apis/apps/v1/namespaces/ns/deployments/d/scale', {}, ('patch', True, 'apps', 'deployments',
         'scale', 'ns', 'd')),
    ('PUT', '/apis/kopf.dev/v1/kopfexamples/x', {}, ('update', True, 'kopf.dev', 'kopfexamples', '', '', 'x')),
    ('GET', '/api/v1/namespaces', {}, ('list', True, '', 'namespaces', '', '', '')),
    ('GET', '/api/v1/namespaces/ns', {}, ('get', True, '', 'namespaces', '', 'ns', 'ns')),
    ('PUT', '/api/v1/namespaces/ns/finalize', {}, ('update', True, '', 'namespaces', 'finalize', 'ns', 'ns')),
    ('GET', '/api/v1/watch/namespaces/ns/pods', {}, ('watch', True, '', 'pods', '', 'ns', '')),
    ('GET', '/api', {}, ('get', False, '', '', '', '', '')),
    ('GET', '/api/v1', {}, ('get', False, '', '', '', '', '')),
    ('GET', '/apis/apps/v1', {}, ('get', False, '', '', '', '', '')),
    ('POST', '/version', {}, ('post', False, '', '', '', '', '')),
])
def test_attributes(method: str, path: str, query: dict[str, str], expected: tuple[object, ...]) -> None:
    found = requestinfo.attributes(ALICE, method, path, query)
    assert (found.verb, found.resource_request, found.group, found.resource, found.subresource, found.namespace,
            found.name) == expected
    assert found.path == path and found.user is ALICE
