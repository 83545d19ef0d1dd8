"""`kopf rbac` on the local cluster and on a real kube-apiserver (RBAC enforced on both).

An operator whose identity is bound only to the generated rules runs an example's framework traffic
without a 403; with one generated rule deleted, the request that needed it fails with a 403 that the
log names. The identity is a non-admin user: a bearer token on the local cluster, a client
certificate on envtest (`user_kubeconfig()` of either). The envtest half runs with
`--backend=envtest` only; the local half always.
"""
import dataclasses
import functools
import json
import pathlib
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

import kopf
from kopf import cli
from kopf._api import credentials, kubeconfig
from kopf.testing import EnvtestCluster, KopfRunner, LocalCluster

from .. import backends
from ..waiting import wait_for
from .conftest import CRD, ROOT, fast_settings

EXAMPLES = ROOT / 'examples'
USER = 'kopf-rbac-operator'
LAST_HANDLED = 'kopf.zalando.org/last-handled-configuration'
MANAGED = 'auto.kopf.dev'  # the webhook configurations of 17-admission
Obj = dict[str, Any]
Cluster = LocalCluster | EnvtestCluster


@pytest.fixture(params=['local', 'envtest'])
def envtest(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """Either backend (the name stays: the tests were written for envtest first)."""
    if request.param == 'local':
        with LocalCluster() as local:
            local.apply(str(CRD))
            yield local
        return
    if backends.backend(request.config) != 'envtest':
        pytest.skip('needs --backend=envtest (a real kube-apiserver with RBAC: make envtest)')
    shared: EnvtestCluster = request.getfixturevalue('envtest_cluster')
    with backends.cluster_cleaned(shared):
        shared.apply(str(CRD))
        yield shared
        for kind in ('ClusterRoleBinding', 'ClusterRole'):
            shared.delete('rbac.authorization.k8s.io/v1', kind, USER)
        for kind in ('RoleBinding', 'Role'):
            shared.delete('rbac.authorization.k8s.io/v1', kind, USER, 'default')
        for kind in ('ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'):
            shared.delete('admissionregistration.k8s.io/v1', kind, MANAGED)


def request(cluster: Cluster, method: str, path: str, body: Obj | None = None) -> Obj:
    """A request as the admin (the local cluster: plain HTTP without credentials)."""
    if isinstance(cluster, EnvtestCluster):
        return cluster.request(method, path, body)[1]  # type: ignore[no-any-return]
    data = json.dumps(body).encode() if body is not None else None
    sent = urllib.request.Request(f'{cluster.url}{path}', data=data, method=method,
                                  headers={'Content-Type': 'application/json'})
    try:
        with urllib.request.urlopen(sent, timeout=30) as response:
            return json.loads(response.read())  # type: ignore[no-any-return]
    except urllib.error.HTTPError as exc:
        return json.loads(exc.read())  # type: ignore[no-any-return]


def delete(cluster: Cluster, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
    if isinstance(cluster, EnvtestCluster):
        cluster.delete(api_version, kind, name, namespace)
        return
    plural = cluster.emulator.target(api_version, kind).resource.plural
    prefix = f'/apis/{api_version}' if '/' in api_version else f'/api/{api_version}'
    where = f'/namespaces/{namespace}' if namespace else ''
    request(cluster, 'DELETE', f'{prefix}{where}/{plural}/{name}')


def generated(*args: str) -> list[Obj]:
    """What `kopf rbac` prints (the command run in this process: a fresh interpreter per call costs ~0.6 s)."""
    result = CliRunner().invoke(cli.main, ['rbac', '--name', USER, '--user', USER, '--crd', str(CRD), *args])
    assert result.exit_code == 0, result.output
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def allowed(cluster: Cluster, verb: str, resource: str, group: str = '', namespace: str = 'default') -> bool:
    review = {'apiVersion': 'authorization.k8s.io/v1', 'kind': 'SubjectAccessReview',
              'spec': {'user': USER, 'groups': ['system:authenticated'], 'resourceAttributes': {
                  'verb': verb, 'resource': resource, 'group': group, 'namespace': namespace}}}
    answer = request(cluster, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', review)
    return bool(answer['status']['allowed'])


def bind(cluster: Cluster, docs: list[Obj]) -> None:
    """Apply the roles and bindings; wait until the authorizer knows them (its cache follows a watch)."""
    cluster.apply(*docs)
    wait_for(lambda: allowed(cluster, 'list', 'kopfexamples', 'kopf.dev'), within=30)


def operator(cluster: Cluster, example: str, *args: str) -> KopfRunner:
    info = kubeconfig.load([cluster.user_kubeconfig(USER)])
    vault = credentials.Vault()
    vault.populate([dataclasses.replace(info, default_namespace='default')])
    return KopfRunner(['run', '--verbose', *args, str(EXAMPLES / example / 'example.py')], vault=vault,
                      registry=kopf.OperatorRegistry(), settings=fast_settings(), timeout=60)


def webhooks(cluster: Cluster, kind: str) -> list[Obj]:
    found = cluster.get('admissionregistration.k8s.io/v1', kind, MANAGED) or {}
    return [webhook for webhook in found.get('webhooks') or [] if webhook.get('rules')]


def kex(cluster: Cluster) -> Obj:
    return cluster.get('kopf.dev/v1', 'KopfExample', 'kopf-example-1', 'default') or {}


def forbidden(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The log lines of the operator (in a thread of this process) about a 403."""
    lines = [record.getMessage() for record in caplog.records]
    # As the API errors are logged ("failed ((403) … is forbidden …)"): a uid's digits ("…-4034-…") or a
    # resourceVersion of "403" in a logged body are no status code.
    return [line for line in lines if '(403)' in line or 'orbidden' in line]


Check = Callable[[Cluster], Any]


@dataclasses.dataclass(frozen=True)
class Run:
    """An example run as an operator bound to the generated rules: what proves it worked, and what it needs."""
    example: str
    check: Check
    options: tuple[str, ...] = ()   # of both `kopf rbac` and `kopf run` (e.g. `--peering NAME`)
    applied: tuple[str, ...] = ()   # manifests applied before the start (e.g. the peering CRDs and objects)
    extra: str | None = None        # `kopf rbac --extra` (YAML): what the handlers themselves request
    client: bool = False            # the handlers use their own client (pykube-ng, kubernetes): $KUBECONFIG
    run_only: tuple[str, ...] = ()  # of `kopf run` only


def peered(cluster: Cluster) -> bool:
    """A keep-alive entry in the `example` peering (either scope): the operator patched its peering object."""
    objs = [cluster.get('kopf.dev/v1', 'ClusterKopfPeering', 'example'),
            cluster.get('kopf.dev/v1', 'KopfPeering', 'example', 'default')]
    return any((obj or {}).get('status') for obj in objs)


def leased(cluster: Cluster) -> bool:
    lease = cluster.get('coordination.k8s.io/v1', 'Lease', 'example-operator', 'default') or {}
    return bool((lease.get('spec') or {}).get('holderIdentity'))


PEERING = (str(ROOT / 'kopf' / 'peering.yaml'), str(EXAMPLES / '06-peering' / 'peering.yaml'))
PODS_CREATE = '- apiGroups: [""]\n  resources: [pods]\n  verbs: [create]\n'
EXAMPLE_RUNS: list[Run] = [
    Run('01-minimal', lambda c: (kex(c).get('status') or {}).get('create_fn')),
    Run('02-children', lambda c: ((kex(c).get('status') or {}).get('create_fn') or {}).get('children'),
        extra=PODS_CREATE, client=True),
    Run('03-exceptions', lambda c: (kex(c).get('metadata') or {}).get('annotations', {}).get(LAST_HANDLED)),
    Run('04-events', lambda c: [e for e in c.list('v1', 'Event', 'default') if e.get('reason') == 'Greeting']),
    Run('05-handlers', lambda c: (kex(c).get('status') or {}).get('create_fn_2')),
    Run('06-peering', lambda c: (kex(c).get('status') or {}).get('create_fn') and peered(c),
        options=('--peering', 'example'), applied=PEERING),
    Run('07-subhandlers', lambda c: (kex(c).get('status') or {}).get('create_fn/item2')),
    Run('11-filtering-handlers', lambda c: (kex(c).get('metadata') or {}).get('annotations', {}).get(LAST_HANDLED)),
    Run('14-daemons', lambda c: (kex(c).get('status') or {}).get('accompany')),
    Run('15-timers', lambda c: (kex(c).get('status') or {}).get('tick')),
    Run('16-indexing', lambda c: (kex(c).get('status') or {}).get('summarize')),
    Run('17-admission', lambda c: len(webhooks(c, 'ValidatingWebhookConfiguration')) == 2 and kex(c)),
    Run('20-leases', lambda c: (kex(c).get('status') or {}).get('create_fn') and leased(c),
        options=('--lease', 'example-operator'), run_only=('--lease-namespace', 'default')),
]


SCOPES = {'clusterwide': ('-A',), 'namespaced': ('-n', 'default')}
# The examples' own delays (3 s of retries, 1.5 s of a daemon) in fewer scopes on the local cluster (the suite's
# time): their requests are those of the others (01-minimal, 04-events); envtest runs them all.
LOCAL_SCOPES = {'03-exceptions': (), '14-daemons': ('clusterwide',)}
CASES = [pytest.param(backend, scope, run, id=f'{backend}-{name}-{run.example}')
         for backend in ('local', 'envtest') for name, scope in SCOPES.items() for run in EXAMPLE_RUNS
         if backend == 'envtest' or name in LOCAL_SCOPES.get(run.example, SCOPES)]


@pytest.mark.parametrize('envtest, scope, run', CASES, indirect=['envtest'])
def test_the_generated_rules_are_enough(envtest: Cluster, run: Run, scope: tuple[str, ...],
                                        caplog: pytest.LogCaptureFixture, tmp_path: pathlib.Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    extra: tuple[str, ...] = ()
    if run.extra is not None:
        (tmp_path / 'extra.yaml').write_text(run.extra)
        extra = ('--extra', str(tmp_path / 'extra.yaml'))
    if run.client:
        monkeypatch.setenv('KUBECONFIG', str(envtest.user_kubeconfig(USER)))
    for manifest in run.applied:  # a CRD first (until established), then its objects
        wait_for(functools.partial(applied, envtest, manifest), within=30)
    bind(envtest, generated(str(EXAMPLES / run.example / 'example.py'), *scope, *run.options, *extra))
    assert not allowed(envtest, 'list', 'secrets')  # a non-admin: only what is bound
    with operator(envtest, run.example, *scope, *run.options, *run.run_only) as running:
        assert running.wait_ready(30)
        envtest.apply(str(EXAMPLES / 'obj.yaml'))
        wait_for(lambda: run.check(envtest), within=30)
        delete(envtest, 'kopf.dev/v1', 'KopfExample', 'kopf-example-1', 'default')
        wait_for(lambda: not kex(envtest), within=30)  # the finalizer (if any) is released
    assert not forbidden(caplog), running.output


def applied(cluster: Cluster, manifest: str) -> bool:
    """Apply, unless a CRD of it is not established yet: then False, to be tried again."""
    try:
        cluster.apply(manifest)
    except Exception:
        return False
    return True


def test_the_generated_rules_are_enough_for_shards(envtest: Cluster, caplog: pytest.LogCaptureFixture) -> None:
    shards = ('--lease', 'example-operator', '--shards', '3')
    bind(envtest, generated(str(EXAMPLES / '21-shards' / 'example.py'), '-A', *shards))
    with operator(envtest, '21-shards', '-A', '--lease-namespace', 'default', *shards) as running:
        assert running.wait_ready(30)
        envtest.apply(str(EXAMPLES / 'obj.yaml'))
        wait_for(lambda: (kex(envtest).get('status') or {}).get('create_fn'), within=30)
        wait_for(lambda: any('the shards held: [0, 1, 2] of 3.' in r.getMessage() for r in caplog.records), within=30)
        delete(envtest, 'kopf.dev/v1', 'KopfExample', 'kopf-example-1', 'default')
        wait_for(lambda: not kex(envtest), within=30)
    assert not forbidden(caplog), running.output
    for i in range(3):
        delete(envtest, 'coordination.k8s.io/v1', 'Lease', f'example-operator-{i}', 'default')


def without(docs: list[Obj], group: str, resource: str) -> list[Obj]:
    """The manifests with one resource (and its verbs) taken out of the rules."""
    result = []
    for doc in docs:
        if 'rules' in doc:
            rules = [{**rule, 'resources': [r for r in rule['resources'] if r != resource]}
                     if rule['apiGroups'] == [group] else rule for rule in doc['rules']]
            doc = {**doc, 'rules': [rule for rule in rules if rule['resources']]}
        result.append(doc)
    return result


@pytest.mark.parametrize('example, group, resource, named, options', [
    ('01-minimal', 'kopf.dev', 'kopfexamples/status',
     'PATCH /apis/kopf.dev/v1/namespaces/default/kopfexamples/kopf-example-1/status', ()),
    ('01-minimal', 'apiextensions.k8s.io', 'customresourcedefinitions',
     'GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions', ()),
    ('04-events', '', 'events', 'POST /api/v1/namespaces/default/events', ()),
    ('06-peering', 'kopf.dev', 'clusterkopfpeerings', 'GET /apis/kopf.dev/v1/clusterkopfpeerings/example',
     ('--peering', 'example')),
    ('20-leases', 'coordination.k8s.io', 'leases', 'Writing the lease default/example-operator failed: (403)',
     ('--lease', 'example-operator')),
    ('17-admission', 'admissionregistration.k8s.io', 'validatingwebhookconfigurations',
     'POST /apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', ()),
], ids=['status', 'crds', 'events', 'peering', 'leases', 'webhooks'])
def test_a_deleted_rule_fails_a_named_request_with_403(envtest: Cluster, example: str, group: str,
                                                        resource: str, named: str, options: tuple[str, ...],
                                                        caplog: pytest.LogCaptureFixture) -> None:
    if '--peering' in options:
        for manifest in PEERING:
            wait_for(functools.partial(applied, envtest, manifest), within=30)
    docs = generated(str(EXAMPLES / example / 'example.py'), '-A', *options)
    bind(envtest, without(docs, group, resource))
    with operator(envtest, example, '-A', *options):
        envtest.apply(str(EXAMPLES / 'obj.yaml'))
        wait_for(lambda: [line for line in forbidden(caplog) if named in line], within=30)
