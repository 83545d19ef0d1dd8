"""The envtest backend itself (only with `--backend=envtest`): what `EnvtestCluster` promises."""
import asyncio
import pathlib
import subprocess
from typing import Any

import pytest

from kopf.testing import EnvtestCluster

from .. import backends
from ..docs_blocks import blocks
from ..test_docs import DOCS, ROOT, _exec


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
