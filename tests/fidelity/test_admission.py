"""Admission webhooks called by the emulator: a real HTTPS webhook server on loopback."""
import asyncio
import base64
import json
import pathlib
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import pytest
import yaml
from aiohttp import web

from kopf._cluster.web import tlsmode
from kopf.testing import LocalCluster
from tests.fidelity.conftest import Kubectl, kubectl_binary

pytest.importorskip('cryptography')
KEX = '/apis/kopf.dev/v1/namespaces/default/kopfexamples'
CRD = {
    'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
    'metadata': {'name': 'kopfexamples.kopf.dev'},
    'spec': {'group': 'kopf.dev', 'scope': 'Namespaced',
             'names': {'plural': 'kopfexamples', 'kind': 'KopfExample', 'shortNames': ['kex']},
             'versions': [{'name': 'v1', 'served': True, 'storage': True, 'subresources': {'status': {}},
                           'schema': {'openAPIV3Schema': {'type': 'object', 'properties': {
                               'spec': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True},
                               'status': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True}}}}}]},
}


class Webhook:
    """A kopf-like webhook server: records reviews; denies objects with spec.deny; labels on /mutate."""

    def __init__(self) -> None:
        self.certs = tlsmode.make('127.0.0.1')
        self.reviews: list[tuple[str, dict[str, Any]]] = []
        self.runner: web.AppRunner | None = None
        self.port = 0

    async def handle(self, request: web.Request) -> web.Response:
        review = await request.json()
        self.reviews.append((request.path_qs, review))
        req = review['request']
        response: dict[str, Any] = {'uid': req['uid'], 'allowed': True}
        if request.path == '/validate' and ((req['object'] or {}).get('spec') or {}).get('deny'):
            response = {'uid': req['uid'], 'allowed': False, 'status': {'code': 403, 'message': 'no denials here'}}
        if request.path == '/mutate' and req['operation'] == 'CREATE':
            ops = [{'op': 'add', 'path': '/metadata/labels', 'value': {'mutated': 'yes'}}]
            response.update(patchType='JSONPatch', patch=base64.b64encode(json.dumps(ops).encode()).decode(),
                            warnings=['mutated by the test'])
        return web.json_response({'apiVersion': review['apiVersion'], 'kind': 'AdmissionReview',
                                  'response': response})

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post('/{tail:.*}', self.handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, '127.0.0.1', self.port, ssl_context=tlsmode.server_context(self.certs))
        await site.start()
        self.port = self.runner.addresses[0][1]

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    def config(self, kind: str, path: str, policy: str = 'Fail') -> dict[str, Any]:
        hook = {'name': f'{path.strip("/")}.kopf.dev', 'sideEffects': 'None', 'admissionReviewVersions': ['v1'],
                'failurePolicy': policy, 'timeoutSeconds': 30,
                'clientConfig': {'url': f'https://127.0.0.1:{self.port}{path}',
                                 'caBundle': base64.b64encode(self.certs.ca_pem).decode()},
                'rules': [{'operations': ['CREATE', 'UPDATE', 'DELETE'], 'apiGroups': ['kopf.dev'],
                           'apiVersions': ['v1'], 'resources': ['kopfexamples']}]}
        return {'apiVersion': 'admissionregistration.k8s.io/v1', 'kind': kind,
                'metadata': {'name': f'{path.strip("/")}-{policy.lower()}'}, 'webhooks': [hook]}


@pytest.fixture
async def webhook() -> AsyncIterator[Webhook]:
    server = Webhook()
    await server.start()
    yield server
    await server.stop()


def _request(url: str, method: str, body: Any = None, ctype: str = 'application/json') -> tuple[int, Any, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={'Content-Type': ctype})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, json.loads(exc.read())


async def call(cluster: LocalCluster, method: str, path: str, body: Any = None,
               ctype: str = 'application/json') -> tuple[int, Any, Any]:
    return await asyncio.to_thread(_request, cluster.url + path, method, body, ctype)


def _kex(name: str, **spec: Any) -> dict[str, Any]:
    return {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': name}, 'spec': spec}


async def test_validating_webhook_denies_and_allows(local_cluster: LocalCluster, webhook: Webhook) -> None:
    local_cluster.apply(CRD, webhook.config('ValidatingWebhookConfiguration', '/validate'))
    status, _, body = await call(local_cluster, 'POST', KEX, _kex('denied', deny=True))
    assert status == 403 and 'reason' not in body  # the webhook's own (none here: omitted), as a real server says it
    assert body['message'] == 'admission webhook "validate.kopf.dev" denied the request: no denials here'
    status, _, body = await call(local_cluster, 'POST', KEX, _kex('allowed'))
    assert status == 201
    path, review = webhook.reviews[-1]
    assert path == '/validate?timeout=30s'
    request = review['request']
    assert review['apiVersion'] == 'admission.k8s.io/v1' and request['operation'] == 'CREATE'
    assert request['resource'] == {'group': 'kopf.dev', 'version': 'v1', 'resource': 'kopfexamples'}
    assert request['object']['metadata']['name'] == 'allowed' and request['oldObject'] is None
    status, _, _ = await call(local_cluster, 'PATCH', f'{KEX}/allowed', {'spec': {'deny': True}},
                              'application/merge-patch+json')
    assert status == 403
    assert webhook.reviews[-1][1]['request']['oldObject']['spec'] == {}
    assert (await call(local_cluster, 'DELETE', f'{KEX}/allowed'))[0] == 200
    assert webhook.reviews[-1][1]['request']['operation'] == 'DELETE'


async def test_mutating_webhook_patches_the_object(local_cluster: LocalCluster, webhook: Webhook) -> None:
    local_cluster.apply(CRD, webhook.config('MutatingWebhookConfiguration', '/mutate'))
    status, headers, body = await call(local_cluster, 'POST', KEX, _kex('mutant'))
    assert status == 201 and body['metadata']['labels'] == {'mutated': 'yes'}
    assert 'mutated by the test' in headers.get('Warning', '')
    stored = local_cluster.get('kopf.dev/v1', 'KopfExample', 'mutant', 'default')
    assert stored is not None and stored['metadata']['labels'] == {'mutated': 'yes'}


async def test_unreachable_webhook_obeys_the_failure_policy(local_cluster: LocalCluster, webhook: Webhook) -> None:
    local_cluster.apply(CRD, webhook.config('ValidatingWebhookConfiguration', '/validate', 'Fail'))
    await webhook.stop()
    status, _, body = await call(local_cluster, 'POST', KEX, _kex('failing'))
    assert status == 500 and body['reason'] == 'InternalError'
    assert body['message'].startswith('Internal error occurred: failed calling webhook "validate.kopf.dev"')
    local_cluster.apply(webhook.config('ValidatingWebhookConfiguration', '/validate', 'Ignore'))
    config = local_cluster.get('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'validate-fail')
    assert config is not None
    status, _, _ = await call(local_cluster, 'DELETE',
                              '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/validate-fail')
    assert status == 200
    assert (await call(local_cluster, 'POST', KEX, _kex('ignored')))[0] == 201


async def test_reinvocation_if_needed(local_cluster: LocalCluster, webhook: Webhook) -> None:
    first = webhook.config('MutatingWebhookConfiguration', '/first')
    first['webhooks'][0]['reinvocationPolicy'] = 'IfNeeded'
    second = webhook.config('MutatingWebhookConfiguration', '/mutate')
    local_cluster.apply(CRD, first, second)   # configurations run by name: first-fail, then mutate-fail
    status, _, body = await call(local_cluster, 'POST', KEX, _kex('again'))
    assert status == 201 and body['metadata']['labels'] == {'mutated': 'yes'}
    assert [path.split('?')[0] for path, _ in webhook.reviews] == ['/first', '/mutate', '/first']


async def test_webhook_decisions_reach_kubectl(local_cluster: LocalCluster, webhook: Webhook,
                                               tmp_path: pathlib.Path) -> None:
    """The Done-when of the local-cluster issue: an aiohttp webhook's deny/patch/warnings, as kubectl shows them."""
    binary = kubectl_binary()
    if binary is None:
        pytest.skip('kubectl is not installed on this machine')
    kubectl = Kubectl(binary, local_cluster.kubeconfig, tmp_path / 'cache')
    local_cluster.apply(CRD, webhook.config('ValidatingWebhookConfiguration', '/validate'),
                        webhook.config('MutatingWebhookConfiguration', '/mutate'))
    denied = yaml.safe_dump(_kex('denied', deny=True))
    result = await asyncio.to_thread(kubectl, 'create', '-f', '-', input=denied)
    assert result.returncode == 1
    # No reason in the webhook's status, so none in kubectl's line: as against a real server.
    assert ('Error from server: error when creating "STDIN": admission webhook "validate.kopf.dev" '
            'denied the request: no denials here') in result.stderr
    result = await asyncio.to_thread(kubectl, 'create', '-f', '-', input=yaml.safe_dump(_kex('mutant')))
    assert result.returncode == 0 and result.stdout.strip() == 'kopfexample.kopf.dev/mutant created', result.stderr
    assert 'Warning: mutated by the test' in result.stderr
    result = await asyncio.to_thread(kubectl, 'get', 'kex', 'mutant', '-o', 'jsonpath={.metadata.labels.mutated}')
    assert result.stdout == 'yes'
    applied = await asyncio.to_thread(kubectl, 'apply', '--server-side', '-f', '-',
                                      input=yaml.safe_dump(_kex('applied')))
    assert applied.returncode == 0 and 'serverside-applied' in applied.stdout, applied.stderr
    stored = local_cluster.get('kopf.dev/v1', 'KopfExample', 'applied', 'default')
    assert stored is not None and stored['metadata']['labels'] == {'mutated': 'yes'}
    result = await asyncio.to_thread(kubectl, 'apply', '--server-side', '-f', '-',
                                     input=yaml.safe_dump(_kex('applied', deny=True)))
    assert result.returncode == 1 and 'denied the request: no denials here' in result.stderr
    operations = [review['request']['operation'] for path, review in webhook.reviews if path.startswith('/validate')]
    assert operations == ['CREATE', 'CREATE', 'CREATE', 'UPDATE']


async def test_webhook_decisions_reach_the_python_client(local_cluster: LocalCluster, webhook: Webhook) -> None:
    kubernetes = pytest.importorskip('kubernetes')
    local_cluster.apply(CRD, webhook.config('ValidatingWebhookConfiguration', '/validate'),
                        webhook.config('MutatingWebhookConfiguration', '/mutate'))
    client = kubernetes.config.new_client_from_config(config_file=str(local_cluster.kubeconfig))
    custom = kubernetes.client.CustomObjectsApi(client)
    args = ('kopf.dev', 'v1', 'default', 'kopfexamples')
    try:
        with pytest.raises(kubernetes.client.ApiException) as exc:
            await asyncio.to_thread(custom.create_namespaced_custom_object, *args, _kex('denied', deny=True))
        assert exc.value.status == 403
        assert json.loads(exc.value.body)['message'] == ('admission webhook "validate.kopf.dev" denied the request: '
                                                         'no denials here')
        created = await asyncio.to_thread(custom.create_namespaced_custom_object, *args, _kex('mutant'))
        assert created['metadata']['labels'] == {'mutated': 'yes'}
    finally:
        client.close()
