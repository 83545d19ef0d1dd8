"""The envtest backend itself (only with `--backend=envtest`): what `EnvtestCluster` promises."""
import asyncio
import pathlib
import signal
import subprocess
import sys
from typing import Any

import pytest

from kopf._kits.envtest import ApiError
from kopf.testing import EnvtestCluster

from .. import backends
from ..docs_blocks import blocks
from ..test_docs import DOCS, ROOT, _exec
from ..waiting import wait_for


@pytest.fixture
def envtest(request: pytest.FixtureRequest) -> EnvtestCluster:
    if backends.backend(request.config) != 'envtest':
        pytest.skip('needs --backend=envtest (a real kube-apiserver: make envtest)')
    shared: EnvtestCluster = request.getfixturevalue('envtest_cluster')
    return shared


def test_version_is_stamped(envtest: EnvtestCluster) -> None:
    version = envtest.version
    assert version['gitVersion'].startswith('v1.') and version['gitVersion'] != 'v0.0.0-master', version
    assert version['major'] == '1'


def whoami(envtest: EnvtestCluster, kubeconfig: pathlib.Path) -> str:
    """`kubectl auth whoami` of the kubeconfig's identity (with the envtest binaries' kubectl)."""
    kubectl = envtest.assets / 'kubectl'
    if not kubectl.exists():
        pytest.skip('no kubectl among the envtest binaries')
    result = subprocess.run([str(kubectl), f'--kubeconfig={kubeconfig}', 'auth', 'whoami', '-o', 'json'],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_kubectl_of_the_same_version_works_with_the_kubeconfig(envtest: EnvtestCluster) -> None:
    assert 'system:masters' in whoami(envtest, envtest.kubeconfig)


def test_a_user_kubeconfig_is_not_an_admin(envtest: EnvtestCluster) -> None:
    identity = whoami(envtest, envtest.user_kubeconfig('kopf-test-user', ['kopf-testers']))
    assert 'kopf-test-user' in identity and 'kopf-testers' in identity and 'system:masters' not in identity
    with pytest.raises(ValueError):
        envtest.user_kubeconfig('root', ['system:masters'])


def test_rbac_is_on(envtest: EnvtestCluster) -> None:
    review = {'apiVersion': 'authorization.k8s.io/v1', 'kind': 'SubjectAccessReview',
              'spec': {'user': 'nobody', 'resourceAttributes': {'verb': 'list', 'resource': 'secrets'}}}
    _, answer = envtest.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', review)
    assert answer['status']['allowed'] is False


def test_a_second_cluster_starts_and_leaves_nothing(envtest: EnvtestCluster) -> None:
    with EnvtestCluster(assets=envtest.assets, controller_manager=False) as other:
        assert other.url != envtest.url
        directory = other.dir
        assert directory is not None and directory.exists()
        processes = list(other._processes.values())
        assert other.get('v1', 'Namespace', 'default') is not None
    assert not directory.exists()
    assert all(process.poll() is not None for process in processes)


def test_a_failure_inside_the_block_stops_everything(envtest: EnvtestCluster) -> None:
    directory: pathlib.Path | None = None
    with pytest.raises(ZeroDivisionError):
        with EnvtestCluster(assets=envtest.assets, controller_manager=False) as other:
            directory = other.dir
            processes = list(other._processes.values())
            1 / 0  # noqa: B018
    assert directory is not None and not directory.exists()
    assert all(process.poll() is not None for process in processes)


def test_compact_history_expires_older_resource_versions(envtest: EnvtestCluster) -> None:
    with EnvtestCluster(assets=envtest.assets, controller_manager=False, apiserver_flags=['--watch-cache=false']) as c:
        old = c.apply({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'old', 'namespace': 'default'}})
        c.apply({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'new', 'namespace': 'default'}})
        compacted = c.compact_history()
        assert compacted > int(old[0]['metadata']['resourceVersion'])
        assert c.compact_history(compacted) == compacted  # again to the same revision: compacted already, no error
        assert c.compact_history() >= compacted  # the apiserver writes on its own meanwhile (its Lease): not less
        rv = old[0]['metadata']['resourceVersion']
        with pytest.raises(ApiError) as err:
            c.request('GET', f'/api/v1/namespaces/default/configmaps?resourceVersion={rv}&resourceVersionMatch=Exact')
        assert err.value.status == 410



def test_a_watch_cache_started_anew_expires_what_a_compaction_alone_does_not(envtest: EnvtestCluster) -> None:
    """kube-apiserver 1.34 serves watches and `continue` tokens from its watch cache, past etcd's compaction."""
    kexes = '/apis/kopf.dev/v1/namespaces/default/kopfexamples'
    crd = ('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'kopfexamples.kopf.dev')
    with backends.cluster_cleaned(envtest):
        envtest.apply(*[{'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': f'cached-{idx}'}}
                        for idx in range(3)])
        page = envtest.request('GET', f'{kexes}?limit=1')[1]
        token, rv = page['metadata']['continue'], page['metadata']['resourceVersion']
        envtest.apply({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'after-the-page'}})
        assert envtest.compact_history() > int(rv)
        assert envtest.request('GET', f'{kexes}?limit=1&continue={token}')[0] == 200  # the cache's snapshot
        assert envtest.request('GET', f'{kexes}?watch=true&resourceVersion={rv}&timeoutSeconds=1')[1] is None  # served
        spec = envtest.get(*crd)['spec']  # type: ignore[index]
        envtest.restart_watch_cache('kopfexamples.kopf.dev')
        status, body = envtest.request('GET', f'{kexes}?limit=1&continue={token}', check=False)
        assert status == 410 and body['message'].startswith('The provided continue parameter is too old')
        watched = envtest.request('GET', f'{kexes}?watch=true&resourceVersion={rv}&timeoutSeconds=1')[1]
        assert watched['type'] == 'ERROR' and watched['object']['code'] == 410
        assert watched['object']['message'].startswith('too old resource version')
        assert envtest.get(*crd)['spec'] == spec  # type: ignore[index]  # changed and changed back

SIGTERMED = """
import sys
from kopf._kits.envtest import ApiError
from kopf.testing import EnvtestCluster
cluster = EnvtestCluster(assets=sys.argv[1], controller_manager=False).start()
print(cluster.dir, *[process.pid for process in cluster._processes.values()], flush=True)
sys.stdin.read()
"""


def test_a_sigterm_stops_the_clusters_of_the_process(envtest: EnvtestCluster) -> None:
    """SIGTERM skips atexit: without the handler, etcd and kube-apiserver (own sessions) outlived their user."""
    process = subprocess.Popen([sys.executable, '-c', SIGTERMED, str(envtest.assets)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    directory, *pids = process.stdout.readline().split()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == -signal.SIGTERM  # ended by the signal, as without the handler
    assert not pathlib.Path(directory).exists()
    for pid in pids:
        assert not pathlib.Path(f'/proc/{pid}').exists() or 'Z' in _state(pid), f'{pid} outlived the SIGTERM'


def test_a_sigkill_leaves_no_cluster_process_behind(envtest: EnvtestCluster) -> None:
    """Nothing of ours runs after a SIGKILL (a CI timeout, the OOM killer): the cluster's lifeline stops them."""
    process = subprocess.Popen([sys.executable, '-c', SIGTERMED, str(envtest.assets)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    directory, *pids = process.stdout.readline().split()
    process.kill()
    process.wait(timeout=60)
    wait_for(lambda: not any(pathlib.Path(f'/proc/{pid}').exists() and 'Z' not in _state(pid) for pid in pids)
             and not pathlib.Path(directory).exists(), within=30)  # else: they outlived the SIGKILL


def _state(pid: str) -> str:
    try:
        return pathlib.Path(f'/proc/{pid}/stat').read_text().split(')')[-1].split()[0]
    except OSError:
        return 'Z'


def test_async_with(envtest: EnvtestCluster) -> None:
    async def main() -> Any:
        async with EnvtestCluster(assets=envtest.assets, controller_manager=False) as other:
            return other.get('v1', 'Namespace', 'kube-system')
    assert asyncio.run(main()) is not None


def test_the_documented_example_runs(envtest: EnvtestCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    namespace: dict[str, Any] = {}
    for code in blocks(DOCS / 'testing.md'):
        namespace.update(_exec('testing.md', code))
    with backends.cluster_cleaned(envtest):
        namespace['test_against_a_real_apiserver'](envtest)
