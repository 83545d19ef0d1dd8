"""Hostile input: every malformed request gets a 4xx Status (never a 5xx), and the server stays alive.

A seeded fuzz (random methods, paths, queries, content types and bodies, a few hundred requests) plus
the cases it found, kept as named regressions: 2,000 levels of nested JSON (was a RecursionError 500),
deep YAML, a JSON patch that nests an object too deep, a body over the size limit.
"""
import asyncio
import json
import random
from typing import Any

import aiohttp
import pytest

from kopf._cluster import jsoncodec
from kopf._cluster.control import operations
from kopf._cluster.web import dispatching
from kopf.testing import LocalCluster

SEEDS = (1, 2, 3)
REQUESTS_PER_SEED = 120
NS = '/api/v1/namespaces/default'
PATHS = [
    '/api', '/apis', '/api/v1', '/apis/apps/v1', '/apis/kopf.dev/v1', '/version', '/openapi/v2', '/healthz',
    f'{NS}/configmaps', f'{NS}/configmaps/cm', f'{NS}/pods', f'{NS}/pods/p/status', f'{NS}/events',
    f'{NS}/services/s', f'{NS}/secrets', '/api/v1/namespaces', '/api/v1/namespaces/default',
    '/api/v1/namespaces/default/finalize', '/api/v1/namespaces/default/status', '/api/v1/watch/namespaces',
    '/apis/apps/v1/namespaces/default/deployments', '/apis/apps/v1/namespaces/default/deployments/d/scale',
    '/apis/kopf.dev/v1/namespaces/default/kopfexamples', '/apis/kopf.dev/v1/namespaces/default/kopfexamples/kex',
    '/apis/kopf.dev/v1/namespaces/default/kopfexamples/kex/status', '/apis/kopf.dev/v1/kopfexamples',
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/kopfexamples.kopf.dev',
    '/apis/coordination.k8s.io/v1/namespaces/default/leases/l',
    '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
    '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
    '/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews',
    '/apis/authentication.k8s.io/v1/tokenreviews',
]
METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'BREW', 'PROPFIND']
CONTENT_TYPES = [None, 'application/json', 'application/yaml', 'application/merge-patch+json',
                 'application/json-patch+json', 'application/strategic-merge-patch+json',
                 'application/apply-patch+yaml', 'application/vnd.kubernetes.protobuf', 'text/plain',
                 'application/json; charset=utf-8', '*/*', ';;;']
ACCEPTS = [None, 'application/json', 'application/json;as=Table;v=v1;g=meta.k8s.io',
           'application/vnd.kubernetes.protobuf', 'text/html', '*/*',
           'application/json;as=Table;v=v1;g=meta.k8s.io;includeObject=Object']
QUERY_KEYS = ['watch', 'labelSelector', 'fieldSelector', 'limit', 'continue', 'resourceVersion', 'timeoutSeconds',
              'fieldManager', 'fieldValidation', 'dryRun', 'force', 'propagationPolicy', 'includeObject',
              'resourceVersionMatch', 'sendInitialEvents', 'allowWatchBookmarks', 'timeout', 'gracePeriodSeconds']
ODD_VALUES: list[Any] = [None, '', 0, -1, 2 ** 70, 1e308, True, 'x' * 5000, '\x00', '💥', [], {}, [[]], {'': {}},
                         'a=b,c!=d', '../..', 'true', 'True', 'Object', 'None']
TEMPLATES: list[dict[str, Any]] = [
    {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'cm'}, 'data': {'a': 'b'}},
    {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'p'},
     'spec': {'containers': [{'name': 'c', 'image': 'i'}]}},
    {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': 'fuzzed'}},
    {'apiVersion': 'v1', 'kind': 'Event', 'metadata': {'generateName': 'e-'}, 'involvedObject': {'name': 'cm'},
     'reason': 'R', 'message': 'M'},
    {'apiVersion': 'apps/v1', 'kind': 'Deployment', 'metadata': {'name': 'd'},
     'spec': {'selector': {'matchLabels': {'a': 'b'}}, 'template': {'metadata': {'labels': {'a': 'b'}}}}},
    {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': 'kex'}, 'spec': {'x': 1}},
    {'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
     'metadata': {'name': 'fuzzes.kopf.dev'},
     'spec': {'group': 'kopf.dev', 'scope': 'Namespaced', 'names': {'plural': 'fuzzes', 'kind': 'Fuzz'},
              'versions': [{'name': 'v1', 'served': True, 'storage': True,
                            'schema': {'openAPIV3Schema': {'type': 'object'}}}]}},
    {'apiVersion': 'authorization.k8s.io/v1', 'kind': 'SelfSubjectAccessReview',
     'spec': {'resourceAttributes': {'verb': 'get', 'resource': 'pods'}}},
    [{'op': 'add', 'path': '/metadata/labels', 'value': {'a': 'b'}}],
    {'metadata': {'finalizers': None, 'labels': {'a': None}}},
]


def _mutate(rng: random.Random, value: Any, level: int = 0) -> Any:
    """A copy of a JSON-like value with some leaves or branches replaced by odd values."""
    if isinstance(value, dict):
        result = {key: _mutate(rng, item, level + 1) for key, item in value.items() if rng.random() > 0.1}
        if rng.random() < 0.3:
            result[rng.choice(['spec', 'status', 'metadata', 'kind', 'apiVersion', '$patch', 'x'])] = \
                rng.choice(ODD_VALUES)
        return result
    if isinstance(value, list):
        return [_mutate(rng, item, level + 1) for item in value] + ([rng.choice(ODD_VALUES)] if rng.random() < 0.2
                                                                     else [])
    return rng.choice(ODD_VALUES) if rng.random() < 0.3 else value


def _nested(depth: int, list_form: bool = False) -> str:
    return ('[' * depth + ']' * depth) if list_form else ('{"a":' * depth + '1' + '}' * depth)


def _body(rng: random.Random) -> bytes | None:
    choice = rng.random()
    if choice < 0.15:
        return None
    if choice < 0.25:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    if choice < 0.35:
        return _nested(rng.choice([50, 199, 201, 300, 1100, 2000]), rng.random() < 0.5).encode()
    text = json.dumps(_mutate(rng, rng.choice(TEMPLATES)))
    if choice < 0.45:
        return text[:rng.randrange(len(text))].encode()   # truncated
    return text.encode()


def _path(rng: random.Random) -> str:
    path = rng.choice(PATHS)
    if rng.random() < 0.2:
        path += rng.choice(['/', '//', '/x', '/status', '/scale', '/%00', '/..', '/' + 'n' * 300, '/🙂'])
    if rng.random() < 0.1:
        path = '/' + '/'.join(rng.choice(['api', 'apis', 'v1', 'x', '', 'namespaces', '%2F']) for _ in range(5))
    return path


def _query(rng: random.Random) -> dict[str, str]:
    keys = rng.sample(QUERY_KEYS, rng.randrange(4))
    query = {key: str(rng.choice(ODD_VALUES)) for key in keys}
    if query.get('watch') in ('true', 'True', 'True'):
        query['timeoutSeconds'] = '1'
    if query.get('resourceVersion', '').isdigit():   # one from the future is not malformed: a real server's 504
        query['resourceVersion'] = rng.choice(['0', '1', 'abc', '-1', ''])
    return query


EXISTING = [
    {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'cm'}, 'data': {'a': 'b'}},
    {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'p'},
     'spec': {'containers': [{'name': 'c', 'image': 'i'}]}},
    {'apiVersion': 'v1', 'kind': 'Service', 'metadata': {'name': 's'}, 'spec': {'ports': [{'port': 80}]}},
    {'apiVersion': 'apps/v1', 'kind': 'Deployment', 'metadata': {'name': 'd'},
     'spec': {'selector': {'matchLabels': {'a': 'b'}}, 'template': {'metadata': {'labels': {'a': 'b'}}}}},
    {'apiVersion': 'coordination.k8s.io/v1', 'kind': 'Lease', 'metadata': {'name': 'l'}, 'spec': {}},
    {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': 'kex'}, 'spec': {'x': 1}},
]
SENSIBLE = {'POST': ['application/json', None, 'application/yaml'],
            'PUT': ['application/json', 'application/yaml'],
            'PATCH': ['application/merge-patch+json', 'application/json-patch+json',
                      'application/strategic-merge-patch+json', 'application/apply-patch+yaml']}


def _method(rng: random.Random, path: str) -> str:
    """Mostly what the path serves (so that bodies reach the write pipeline), sometimes anything."""
    if rng.random() < 0.3:
        return rng.choice(METHODS)
    collection = path.rstrip('/').rsplit('/', 1)[-1] in ('configmaps', 'pods', 'events', 'secrets', 'namespaces',
                                                         'deployments', 'kopfexamples', 'customresourcedefinitions',
                                                         'validatingwebhookconfigurations', 'selfsubjectaccessreviews',
                                                         'localsubjectaccessreviews', 'tokenreviews')
    return rng.choice(['POST', 'POST', 'GET', 'DELETE'] if collection else ['PATCH', 'PATCH', 'PUT', 'GET', 'DELETE'])


async def _fuzz(cluster: LocalCluster, seed: int) -> list[tuple[int, str, str, str]]:
    rng = random.Random(seed)
    answers: list[tuple[int, str, str, str]] = []
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        for _ in range(REQUESTS_PER_SEED):
            path, query = _path(rng), _query(rng)
            method = _method(rng, path)
            headers = {}
            content_type, accept = rng.choice(SENSIBLE.get(method, CONTENT_TYPES) if rng.random() < 0.7
                                              else CONTENT_TYPES), rng.choice(ACCEPTS)
            if content_type is not None:
                headers['Content-Type'] = content_type
            if accept is not None:
                headers['Accept'] = accept
            body = _body(rng)
            async with session.request(method, cluster.url + path, params=query, data=body, headers=headers,
                                       skip_auto_headers=['Content-Type']) as response:
                answers.append((response.status, method, path, str(query)))   # a watch: its headers are enough
    return answers


async def _alive(cluster: LocalCluster) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.get(cluster.url + '/version') as response:
            assert response.status == 200
        name = 'alive-after-fuzz'
        body = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': name}, 'data': {'ok': 'yes'}}
        async with session.post(cluster.url + '/api/v1/namespaces/kube-system/configmaps', json=body) as response:
            assert response.status == 201, await response.text()
        async with session.get(cluster.url + f'/api/v1/namespaces/kube-system/configmaps/{name}') as response:
            assert (await response.json())['data'] == {'ok': 'yes'}


@pytest.mark.parametrize('seed', SEEDS)
async def test_fuzzed_requests_never_get_a_5xx(local_cluster: LocalCluster, seed: int) -> None:
    local_cluster.apply('examples/crd.yaml', *EXISTING)
    answers = await asyncio.wait_for(_fuzz(local_cluster, seed), timeout=50)
    server_errors = [answer for answer in answers if answer[0] >= 500]
    assert not server_errors
    assert len(answers) == REQUESTS_PER_SEED
    assert all(entry['code'] < 500 for entry in local_cluster.request_log())
    await _alive(local_cluster)


async def _post(cluster: LocalCluster, path: str, body: bytes, content_type: str = 'application/json',
                method: str = 'POST') -> tuple[int, dict[str, Any]]:
    async with aiohttp.ClientSession() as session:
        async with session.request(method, cluster.url + path, data=body,
                                   headers={'Content-Type': content_type}) as response:
            return response.status, await response.json(content_type=None)


KEX_WITH_SPEC = '{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"deep"},"spec":SPEC}'


@pytest.mark.parametrize('depth, list_form', [(2000, False), (2000, True), (300, False), (201, True)])
async def test_deeply_nested_json_is_a_400(local_cluster: LocalCluster, depth: int, list_form: bool) -> None:
    local_cluster.apply('examples/crd.yaml')
    body = KEX_WITH_SPEC.replace('SPEC', _nested(depth, list_form))
    code, status = await _post(local_cluster, '/apis/kopf.dev/v1/namespaces/default/kopfexamples', body.encode())
    assert (code, status['kind'], status['reason']) == (400, 'Status', 'BadRequest')
    assert 'exceeded max depth' in status['message'] or 'depth limit exceeded' in status['message']
    assert local_cluster.get('kopf.dev/v1', 'KopfExample', 'deep') is None


async def test_nesting_up_to_the_limit_is_stored_and_served(local_cluster: LocalCluster) -> None:
    local_cluster.apply('examples/crd.yaml')
    spec = _nested(jsoncodec.MAX_DEPTH - 1)   # + the object's own level: exactly the limit
    body = KEX_WITH_SPEC.replace('SPEC', spec)
    code, _ = await _post(local_cluster, '/apis/kopf.dev/v1/namespaces/default/kopfexamples', body.encode())
    assert code == 201
    table = 'application/json;as=Table;v=v1;g=meta.k8s.io'
    async with aiohttp.ClientSession() as session:
        for accept, query in [('application/json', ''), (table, '?includeObject=Object')]:
            async with session.get(local_cluster.url + '/apis/kopf.dev/v1/namespaces/default/kopfexamples' + query,
                                   headers={'Accept': accept}) as response:
                assert response.status == 200


async def test_deep_yaml_is_a_400(local_cluster: LocalCluster) -> None:
    block = 'a:\n' + ''.join('  ' * (i + 1) + 'a:\n' for i in range(300))
    for text in (block, _nested(5000, list_form=True)):
        code, status = await _post(local_cluster, f'{NS}/configmaps', text.encode(), 'application/yaml')
        assert (code, status['reason']) == (400, 'BadRequest'), status


async def test_a_json_patch_nesting_too_deep_is_a_400_and_changes_nothing(local_cluster: LocalCluster) -> None:
    local_cluster.apply('examples/crd.yaml', {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
                                              'metadata': {'name': 'kex'}, 'spec': {}})
    before = local_cluster.get('kopf.dev/v1', 'KopfExample', 'kex')
    value = json.loads(_nested(150))
    ops = [{'op': 'add', 'path': '/spec/a', 'value': value}, {'op': 'add', 'path': '/spec/a' + '/a' * 149,
                                                              'value': value}]
    code, status = await _post(local_cluster, '/apis/kopf.dev/v1/namespaces/default/kopfexamples/kex',
                               json.dumps(ops).encode(), 'application/json-patch+json', 'PATCH')
    assert (code, status['reason']) == (400, 'BadRequest'), status
    assert 'kopfexamples.kopf.dev "kex"' in status['message'] and 'nested deeper than' in status['message']
    assert local_cluster.get('kopf.dev/v1', 'KopfExample', 'kex') == before


async def test_a_body_over_the_size_limit_is_a_413(local_cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch
                                                   ) -> None:
    monkeypatch.setattr(dispatching, 'CLIENT_MAX_SIZE', 1024)   # read when each request is made
    code, status = await _post(local_cluster, f'{NS}/configmaps', b'{"a":"' + b'x' * 2048 + b'"}')
    assert (code, status['kind'], status['reason']) == (413, 'Status', 'RequestEntityTooLarge')
    assert status['message'] == 'Request entity too large: limit is 1024'


@pytest.mark.parametrize('raw', [
    b'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
    b'\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03' + b'\x00' * 64,   # a TLS hello to the plain port
    b'POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
    b'GET /' + b'a' * 70000 + b' HTTP/1.1\r\nHost: x\r\n\r\n',
])
async def test_malformed_http_gets_a_4xx(local_cluster: LocalCluster, raw: bytes) -> None:
    host, _, port = local_cluster.url.removeprefix('http://').rpartition(':')
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(raw)
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), timeout=10)
    except OSError:
        line = b''
    finally:
        writer.close()
    if line:   # or the server closed the connection: also fine, as long as it lives on
        assert line.split()[1].startswith(b'4'), line
    await _alive(local_cluster)


@pytest.mark.parametrize('value, deeper', [
    ({}, False), ({'a': 1}, False), (json.loads(_nested(jsoncodec.MAX_DEPTH)), False),
    (json.loads(_nested(jsoncodec.MAX_DEPTH + 1)), True), (json.loads(_nested(jsoncodec.MAX_DEPTH + 1, True)), True),
    ([{'a': [json.loads(_nested(jsoncodec.MAX_DEPTH - 2))]}], True), ('text', False),
])
def test_nesting_depth(value: Any, deeper: bool) -> None:
    assert jsoncodec.nests_deeper(value) is deeper


@pytest.mark.parametrize('path, meta, message', [
    ('/api/v1/namespaces/default/configmaps', {'name': 5},
     'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field '
     'ObjectMeta.metadata.name of type string'),
    ('/api/v1/namespaces/default/configmaps', {'name': 'x', 'labels': {'a': 5}},
     'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field '
     'ObjectMeta.metadata.labels of type string'),
    ('/apis/kopf.dev/v1/namespaces/default/kopfexamples', {'name': 5},
     'KopfExample in version "v1" cannot be handled as a KopfExample: json: cannot unmarshal number into Go struct '
     'field ObjectMeta.name of type string'),
    ('/apis/kopf.dev/v1/namespaces/default/kopfexamples', {'name': 'q', 'labels': {'a': 5}},
     'KopfExample in version "v1" cannot be handled as a KopfExample: json: cannot unmarshal number into Go struct '
     'field ObjectMeta.labels of type string'),
])
async def test_object_meta_of_a_wrong_type_is_a_400_as_real(local_cluster: LocalCluster, path: str,
                                                            meta: dict[str, Any], message: str) -> None:
    """The messages are a real kube-apiserver 1.34's (was a 500: a name that is a number)."""
    local_cluster.apply('examples/crd.yaml')
    api_version, kind = ('v1', 'ConfigMap') if 'configmaps' in path else ('kopf.dev/v1', 'KopfExample')
    body = {'apiVersion': api_version, 'kind': kind, 'metadata': meta}
    code, status = await _post(local_cluster, path, json.dumps(body).encode())
    assert (code, status['message']) == (400, message)


CONTROL_KEYS = ['method', 'path', 'status', 'count', 'retryAfter', 'text', 'message', 'latency', 'drop', 'abort',
                'code', 'keep', 'seconds', 'old', 'new']


@pytest.mark.parametrize('seed', SEEDS)
async def test_fuzzed_control_requests_never_get_a_5xx(local_cluster: LocalCluster, seed: int) -> None:
    """The control API (`/_emulator/`): a body that does not fit is a 400 naming the field."""
    rng = random.Random(seed)
    routes = [(method, operation.route.path) for operation in operations.operations() if operation.route
              for method in operation.route.methods]
    async with aiohttp.ClientSession() as session:
        for _ in range(60):
            method, path = rng.choice(routes)
            fields = {key: rng.choice([*ODD_VALUES, 'GET', '*', 500, 0.5]) for key in rng.sample(CONTROL_KEYS, 3)}
            body = json.dumps(fields).encode() if rng.random() < 0.9 else rng.choice([b'{bad', b'[]', b'1'])
            async with session.request(method, local_cluster.url + '/_emulator' + path, data=body) as response:
                assert response.status < 500, (method, path, fields, await response.text())
            async with session.delete(local_cluster.url + '/_emulator/faults') as response:
                assert response.status == 200
    await _alive(local_cluster)


@pytest.mark.parametrize('path, body, error', [
    ('/faults', {'status': 'x'}, '"status" must be an integer from 100 to 599 or null, not \'x\''),
    ('/faults', {'latency': -1}, '"latency" must be a number from 0, not -1'),
    ('/history/compact', {'keep': -1}, '"keep" must be an integer from 0, not -1'),
    ('/bookmark-interval', {}, '"seconds" is required'),
    ('/watches/close', [], 'the body must be a JSON object'),
])
async def test_control_bodies_that_do_not_fit_name_the_field(local_cluster: LocalCluster, path: str, body: Any,
                                                             error: str) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.post(local_cluster.url + '/_emulator' + path, json=body) as response:
            assert (response.status, await response.json()) == (400, {'error': error})
