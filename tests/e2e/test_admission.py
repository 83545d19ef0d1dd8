"""Admission webhooks served by the operator: the local cluster calls them over HTTPS (a self-signed CA
in the managed configurations' caBundle); objects are written with the official `kubernetes` client."""
import asyncio
from typing import Any

import pytest

import kopf
from kopf.testing import LocalCluster

from .conftest import eventually, example, get_example

MANAGED = 'auto.kopf.dev'


def configs(cluster: LocalCluster, kind: str) -> list[Any]:
    obj = cluster.get('admissionregistration.k8s.io/v1', kind, MANAGED)
    return list((obj or {}).get('webhooks') or [])


def serve_webhooks(registry: kopf.OperatorRegistry) -> None:
    """A startup handler: a local HTTPS server and the managed configurations."""
    @kopf.on.startup(registry=registry)
    def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
        settings.admission.server = kopf.WebhookServer(addr='127.0.0.1', host='127.0.0.1')
        settings.admission.managed = MANAGED


@pytest.fixture
def webhooks(registry: kopf.OperatorRegistry) -> list[Any]:
    calls: list[Any] = []
    serve_webhooks(registry)

    @kopf.on.validate('kopfexamples', id='check', registry=registry)
    def check(spec: Any, operation: str, dryrun: bool, warnings: list[str], **_: Any) -> None:
        calls.append((operation, dryrun))
        if spec.get('field') == 'wrong':
            raise kopf.AdmissionError('The field is wrong.', code=422)
        if spec.get('field') == 'doubtful':
            warnings.append('The field is doubtful.')

    @kopf.on.mutate('kopfexamples', id='inject', labels={'inject': 'yes'}, registry=registry)
    def inject(patch: kopf.Patch, **_: Any) -> None:
        patch.spec['injected'] = 123

    return calls


async def test_validation_mutation_warnings_dryrun_and_delete(
        cluster: LocalCluster, registry: kopf.OperatorRegistry, start_operator: Any, kube: Any,
        webhooks: list[Any]) -> None:
    import kubernetes
    await start_operator()
    await eventually(lambda: [w for w in configs(cluster, 'ValidatingWebhookConfiguration') if w.get('rules')]
                     and [w for w in configs(cluster, 'MutatingWebhookConfiguration') if w.get('rules')])
    validating = configs(cluster, 'ValidatingWebhookConfiguration')[0]
    assert validating['name'] == f'check.{MANAGED}'
    assert validating['clientConfig']['url'].endswith('/check') and validating['clientConfig']['caBundle']
    assert validating['rules'][0]['resources'] == ['kopfexamples']
    mutating = configs(cluster, 'MutatingWebhookConfiguration')[0]
    assert mutating['objectSelector'] == {'matchExpressions': [{'key': 'inject', 'operator': 'In', 'values': ['yes']}]}

    with pytest.raises(kubernetes.client.ApiException) as err:
        await kube.create(example(name='bad', field='wrong'))
    assert err.value.status == 422 and 'The field is wrong.' in str(err.value.body)
    assert get_example(cluster, 'bad') is None

    obj = example(name='good', field='doubtful')
    obj['metadata']['labels']['inject'] = 'yes'
    created = await kube.create(obj)
    assert created['spec']['injected'] == 123  # mutated before it was stored
    assert (get_example(cluster, 'good') or {})['spec']['injected'] == 123

    await asyncio.to_thread(kube.custom.create_namespaced_custom_object, 'kopf.dev', 'v1', 'default',
                            'kopfexamples', example(name='dry'), dry_run='All')
    assert ('CREATE', True) in webhooks and get_example(cluster, 'dry') is None
    await kube.delete('good')
    await eventually(lambda: ('DELETE', False) in webhooks)  # validating handlers see DELETE too


async def test_kubectl_shows_the_denials_warnings_and_mutations_of_the_handlers(
        cluster: LocalCluster, registry: kopf.OperatorRegistry, start_operator: Any,
        webhooks: list[Any], tmp_path: Any) -> None:
    """Issue 17's done-when through kubectl (a client we did not write): its lines as users see them."""
    import yaml

    from tests.fidelity.conftest import Kubectl, kubectl_binary
    binary = kubectl_binary(cluster)
    if binary is None:
        pytest.skip('kubectl is not installed on this machine')
    kubectl = Kubectl(binary, cluster.kubeconfig, tmp_path / 'cache')
    await start_operator()
    await eventually(lambda: [w for w in configs(cluster, 'ValidatingWebhookConfiguration') if w.get('rules')]
                     and [w for w in configs(cluster, 'MutatingWebhookConfiguration') if w.get('rules')])

    def run(*args: str, obj: Any = None) -> Any:
        return asyncio.to_thread(kubectl, *args, input=None if obj is None else yaml.safe_dump(obj))

    denied = await run('apply', '-f', '-', obj=example(name='bad', field='wrong'))
    assert denied.returncode == 1
    assert denied.stderr == ('Error from server: error when creating "STDIN": admission webhook '
                             '"check.auto.kopf.dev" denied the request: The field is wrong.\n')
    assert get_example(cluster, 'bad') is None

    doubtful = example(name='good', field='doubtful')
    doubtful['metadata']['labels']['inject'] = 'yes'
    created = await run('apply', '-f', '-', obj=doubtful)
    assert created.returncode == 0, created.stderr
    assert created.stdout.strip() == 'kopfexample.kopf.dev/good created'
    assert 'Warning: The field is doubtful.' in created.stderr  # the handler's `warnings`, printed by kubectl
    injected = await run('get', 'kopfexample', 'good', '-o', 'jsonpath={.spec.injected}')
    assert injected.stdout == '123'  # the mutation is in the stored object

    dry = await run('apply', '--dry-run=server', '-f', '-', obj=example(name='dry'))
    assert dry.returncode == 0 and 'created (server dry run)' in dry.stdout, dry.stderr
    assert ('CREATE', True) in webhooks and get_example(cluster, 'dry') is None  # `dryrun` passed; not stored

    deleted = await run('delete', 'kopfexample', 'good', '--wait=false')
    assert deleted.returncode == 0, deleted.stderr
    await eventually(lambda: ('DELETE', False) in webhooks)  # validating handlers see DELETE too


async def test_unknown_webhook_ids_are_allowed_and_bad_bodies_are_400(
        cluster: LocalCluster, registry: kopf.OperatorRegistry, start_operator: Any, webhooks: list[Any],
        caplog: Any) -> None:
    import base64
    import json
    import ssl
    import urllib.request

    await start_operator()
    await eventually(lambda: [w for w in configs(cluster, 'ValidatingWebhookConfiguration') if w.get('rules')])
    client = configs(cluster, 'ValidatingWebhookConfiguration')[0]['clientConfig']
    context = ssl.create_default_context(cadata=base64.b64decode(client['caBundle']).decode())
    base = client['url'].rsplit('/', 1)[0]

    def post(path: str, body: bytes) -> tuple[int, Any]:
        request = urllib.request.Request(base + path, data=body, headers={'Content-Type': 'application/json'})
        try:
            with urllib.request.urlopen(request, context=context, timeout=10) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, None

    review = {'apiVersion': 'admission.k8s.io/v1', 'kind': 'AdmissionReview',
              'request': {'uid': 'u-1', 'operation': 'CREATE', 'object': example(),
                          'resource': {'group': 'kopf.dev', 'version': 'v1', 'resource': 'kopfexamples'}}}
    status, answer = await asyncio.to_thread(post, '/renamed-handler', json.dumps(review).encode())
    assert status == 200 and answer['response'] == {'uid': 'u-1', 'allowed': True}
    assert "unknown webhook 'renamed-handler'" in caplog.text
    for body in (b'not json', b'[]', b'{"kind": "AdmissionReview"}', json.dumps({**review, 'request': {}}).encode()):
        status, _ = await asyncio.to_thread(post, '/check', body)
        assert status == 400


async def test_managed_configs_are_removed_on_exit_but_persistent_ones(
        cluster: LocalCluster, registry: kopf.OperatorRegistry, start_operator: Any, webhooks: list[Any]) -> None:
    @kopf.on.validate('kopfexamples', id='kept', persistent=True, registry=registry)
    def kept(**_: Any) -> None:
        pass

    stop = asyncio.Event()
    task = await start_operator(stop_flag=stop)
    await eventually(lambda: len(configs(cluster, 'ValidatingWebhookConfiguration')) == 2)
    stop.set()
    await asyncio.wait_for(task, timeout=10)
    assert [w['name'] for w in configs(cluster, 'ValidatingWebhookConfiguration')] == [f'kept.{MANAGED}']
    assert configs(cluster, 'MutatingWebhookConfiguration') == []


async def test_webhooks_without_a_server_refuse_to_start(registry: kopf.OperatorRegistry, start_operator: Any) -> None:
    @kopf.on.validate('kopfexamples', id='lonely', registry=registry)
    def lonely(**_: Any) -> None:
        pass

    with pytest.raises(Exception, match="Admission handlers \\('lonely'\\) need a webhook server"):
        await start_operator()


def _fuzz_bodies(count: int) -> list[bytes]:
    """Random and malformed bodies, the same ones every run (a fixed seed)."""
    import json
    import random
    rng = random.Random(1234)
    review: dict[str, Any] = {'apiVersion': 'admission.k8s.io/v1', 'kind': 'AdmissionReview',
                              'request': {'uid': 'u', 'operation': 'CREATE', 'object': example(),
                                          'resource': {'group': 'kopf.dev', 'version': 'v1',
                                                       'resource': 'kopfexamples'}}}
    values: list[Any] = [None, True, 0, -1, 1.5, '', 'x' * 100, [], {}, [1, [2, [3]]], {'a': {'b': None}}, '\u0000']

    def mutate(obj: Any, depth: int = 0) -> Any:
        if isinstance(obj, dict) and obj and depth < 4:
            obj = dict(obj)
            key = rng.choice(list(obj))
            choice = rng.random()
            if choice < 0.3:
                del obj[key]
            elif choice < 0.7:
                obj[key] = rng.choice(values)
            else:
                obj[key] = mutate(obj[key], depth + 1)
            return obj
        return rng.choice(values)

    bodies = []
    for i in range(count):
        kind = i % 4
        if kind == 0:
            bodies.append(bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 200))))
        elif kind == 1:
            bodies.append(json.dumps(rng.choice(values)).encode())
        else:
            bodies.append(json.dumps(mutate(review)).encode())
    return bodies


async def test_a_thousand_random_and_malformed_bodies_are_all_answered(
        cluster: LocalCluster, registry: kopf.OperatorRegistry, start_operator: Any, kube: Any,
        webhooks: list[Any]) -> None:
    import base64
    import http.client
    import ssl
    import urllib.parse

    handled: list[str] = []

    @kopf.on.create('kopfexamples', registry=registry)
    def create_fn(name: str, **_: Any) -> None:
        handled.append(name)

    await start_operator()
    await eventually(lambda: [w for w in configs(cluster, 'ValidatingWebhookConfiguration') if w.get('rules')])
    client = configs(cluster, 'ValidatingWebhookConfiguration')[0]['clientConfig']
    context = ssl.create_default_context(cadata=base64.b64decode(client['caBundle']).decode())
    url = urllib.parse.urlparse(client['url'])

    def fuzz() -> list[int]:
        statuses = []
        connection = http.client.HTTPSConnection(url.hostname or '', url.port, context=context, timeout=10)
        for body in _fuzz_bodies(1000):
            connection.request('POST', url.path, body=body, headers={'Content-Type': 'application/json'})
            response = connection.getresponse()
            response.read()
            statuses.append(response.status)
        connection.close()
        return statuses

    statuses = await asyncio.to_thread(fuzz)
    assert len(statuses) == 1000 and set(statuses) <= {200, 400}, sorted(set(statuses))
    await kube.create(example(name='after-fuzz'))
    await eventually(lambda: 'after-fuzz' in handled)  # the operator still handles objects


LATER_CRD = {
    'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
    'metadata': {'name': 'kopflaters.kopf.dev'},
    'spec': {'group': 'kopf.dev', 'scope': 'Namespaced',
             'names': {'plural': 'kopflaters', 'singular': 'kopflater', 'kind': 'KopfLater'},
             'versions': [{'name': 'v1', 'served': True, 'storage': True, 'schema': {'openAPIV3Schema': {
                 'type': 'object', 'x-kubernetes-preserve-unknown-fields': True}}}]},
}


async def test_managed_configs_get_the_rules_of_a_crd_that_appears_later(
        cluster: LocalCluster, registry: kopf.OperatorRegistry, start_operator: Any, kube: Any) -> None:
    import kubernetes
    serve_webhooks(registry)

    @kopf.on.validate('kopf.dev', 'v1', 'kopflaters', id='later', registry=registry)
    def later(spec: Any, **_: Any) -> None:
        if spec.get('field') == 'wrong':
            raise kopf.AdmissionError('Wrong, later.', code=422)

    await start_operator()
    await eventually(lambda: configs(cluster, 'ValidatingWebhookConfiguration'))
    assert not configs(cluster, 'ValidatingWebhookConfiguration')[0].get('rules')  # nothing served yet
    if hasattr(cluster, 'request_log'):   # the operator watches the CRDs (a CRD made before its listing is missed)
        await eventually(lambda: any('customresourcedefinitions' in e['path'] and 'watch=' in e['query']
                                     for e in cluster.request_log()))
    cluster.apply(LATER_CRD)
    await eventually(lambda: [w for w in configs(cluster, 'ValidatingWebhookConfiguration') if w.get('rules')],
                     within=60)
    assert configs(cluster, 'ValidatingWebhookConfiguration')[0]['rules'][0]['resources'] == ['kopflaters']
    obj = {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfLater', 'metadata': {'name': 'x'}, 'spec': {'field': 'wrong'}}

    def create() -> None:
        kube.custom.create_namespaced_custom_object('kopf.dev', 'v1', 'default', 'kopflaters', obj)

    def delete() -> None:
        kube.custom.delete_namespaced_custom_object('kopf.dev', 'v1', 'default', 'kopflaters', 'x')

    async def denied() -> bool:
        # The API server may take a moment to serve the new CRD (404), and a real one to see the changed
        # webhook configuration (its informer): an object stored meanwhile is deleted, and created again.
        try:
            await asyncio.to_thread(create)
        except kubernetes.client.ApiException as exc:
            if exc.status == 404:
                return False
            assert exc.status == 422 and 'Wrong, later.' in str(exc.body)
            return True
        await asyncio.to_thread(delete)
        return False

    async with asyncio.timeout(60):
        while True:
            if await denied():
                break
            await asyncio.sleep(0.1)


async def test_failure_policies_apply_while_the_operator_is_down(
        cluster: LocalCluster, registry: kopf.OperatorRegistry, start_operator: Any, kube: Any) -> None:
    """Persistent webhooks outlive the operator: `ignore_failures=True` lets writes in, the default blocks them."""
    import kubernetes
    serve_webhooks(registry)

    @kopf.on.validate('kopfexamples', id='lenient', labels={'policy': 'lenient'}, ignore_failures=True,
                      persistent=True, registry=registry)
    def lenient(**_: Any) -> None:
        pass

    @kopf.on.validate('kopfexamples', id='strict', labels={'policy': 'strict'}, persistent=True, registry=registry)
    def strict(**_: Any) -> None:
        pass

    def labelled(name: str, policy: str) -> Any:
        obj = example(name=name)
        obj['metadata']['labels']['policy'] = policy
        return obj

    admission = kubernetes.client.AdmissionregistrationV1Api(kube.api)
    stop = asyncio.Event()
    task = await start_operator(stop_flag=stop)
    try:
        await eventually(lambda: len([w for w in configs(cluster, 'ValidatingWebhookConfiguration')
                                      if w.get('rules')]) == 2)
        await kube.create(labelled('strict-up', 'strict'))  # served while the operator is up
        stop.set()
        await asyncio.wait_for(task, timeout=10)
        policies = {w['name']: w['failurePolicy'] for w in configs(cluster, 'ValidatingWebhookConfiguration')}
        assert policies == {f'lenient.{MANAGED}': 'Ignore', f'strict.{MANAGED}': 'Fail'}

        await kube.create(labelled('lenient-down', 'lenient'))  # nobody answers: ignored
        assert get_example(cluster, 'lenient-down') is not None
        with pytest.raises(kubernetes.client.ApiException) as err:
            await kube.create(labelled('strict-down', 'strict'))  # nobody answers: rejected
        assert err.value.status == 500 and f'failed calling webhook \\"strict.{MANAGED}\\"' in str(err.value.body)
        assert get_example(cluster, 'strict-down') is None
    finally:
        for kind in ('validating', 'mutating'):  # no webhook may outlive the test (a shared envtest cluster)
            delete = getattr(admission, f'delete_{kind}_webhook_configuration')
            try:
                await asyncio.to_thread(delete, MANAGED)
            except kubernetes.client.ApiException as exc:
                if exc.status != 404:
                    raise
