"""Shared fixtures. Keep this file small: area-specific fixtures live in their own directories.

`--backend=envtest` (or `$KOPF_TEST_BACKEND=envtest`) runs the cluster-facing suites against a real
kube-apiserver: see tests/backends.py and `make test-envtest`.
"""
import os
from collections.abc import AsyncIterator, Iterator

# Before kopf is imported: the pure layer's values are frozen at run time too (kopf._core.values),
# here and in the operators that the tests start as processes (they inherit the environment).
os.environ.setdefault('KOPF_STRICT_VALUES', '1')

import pytest

from kopf.testing import EnvtestCluster, LocalCluster

EMULATOR_ONLY_KEY = pytest.StashKey[list[str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption('--backend', choices=['emulator', 'envtest'],
                     default=os.environ.get('KOPF_TEST_BACKEND') or 'emulator',
                     help='the cluster of tests/e2e and tests/fidelity: our emulator or a real kube-apiserver')
    parser.addoption('--run-emulator-only', action='store_true',
                     help='with --backend=envtest, run the emulator-only tests too (to review their reasons)')


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line('markers', 'emulator_only(reason): needs what only the emulator offers '
                                       '(fault injection, introspection); skipped with --backend=envtest')
    config.addinivalue_line('markers', 'envtest_xfail(reason): a known difference of the emulator from the real '
                                       'kube-apiserver (the test states the emulator\'s behaviour); '
                                       'a strict xfail with --backend=envtest')
    config.stash[EMULATOR_ONLY_KEY] = []


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption('--backend') != 'envtest':
        return
    for item in items:
        for known in item.iter_markers('envtest_xfail'):
            reason = known.kwargs.get('reason') or (known.args[0] if known.args else '')
            item.add_marker(pytest.mark.xfail(reason=f'emulator differs from kube-apiserver: {reason}', strict=True))
        marker = item.get_closest_marker('emulator_only')
        if marker is not None:
            reason = marker.kwargs.get('reason') or (marker.args[0] if marker.args else '')
            if not reason:
                raise pytest.UsageError(f'{item.nodeid}: emulator_only needs a reason')
            config.stash[EMULATOR_ONLY_KEY].append(item.nodeid)
            if not config.getoption('--run-emulator-only'):
                item.add_marker(pytest.mark.skip(reason=f'emulator only: {reason}'))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if config.getoption('--backend') == 'envtest':
        count = len(config.stash[EMULATOR_ONLY_KEY])
        done = 'run anyway' if config.getoption('--run-emulator-only') else 'skipped'
        terminalreporter.write_line(f'envtest backend: {count} emulator-only tests {done}')


ENVTEST_KEY = pytest.StashKey[EnvtestCluster]()


def pytest_sessionstart(session: pytest.Session) -> None:
    """With --backend=envtest, start the one real cluster before any test (outside the tests' timeouts)."""
    if session.config.getoption('--backend') == 'envtest':
        from . import backends
        cluster = EnvtestCluster(controller_manager=True).start()
        session.config.stash[ENVTEST_KEY] = cluster
        try:
            backends.prime(cluster)
        except BaseException:
            cluster.stop()
            raise


def pytest_sessionfinish(session: pytest.Session) -> None:
    cluster = session.config.stash.get(ENVTEST_KEY, None)
    if cluster is not None:
        cluster.stop()
        del session.config.stash[ENVTEST_KEY]


@pytest.fixture(scope='session')
def envtest_cluster(request: pytest.FixtureRequest) -> EnvtestCluster:
    """The one real cluster of this pytest run (etcd, kube-apiserver, kube-controller-manager)."""
    cluster = request.config.stash.get(ENVTEST_KEY, None)
    if cluster is None:
        pytest.skip('needs --backend=envtest')
    return cluster


@pytest.fixture
async def local_cluster() -> AsyncIterator[LocalCluster]:
    """A local Kubernetes API in the test's own event loop (so looptime-driven tests see it), on a free port."""
    async with LocalCluster() as cluster:
        yield cluster


@pytest.fixture(scope='session')
def sharding_envtest(request: pytest.FixtureRequest) -> Iterator[EnvtestCluster]:
    """kube-apiserver 1.37.2 with ShardedListAndWatch on (`tools/envtest/build.sh 1.37.2`), once per run, audited."""
    if request.config.getoption('--backend') != 'envtest':
        pytest.skip('needs --backend=envtest')
    from . import backends
    with EnvtestCluster(version=backends.SHARDING_VERSION, feature_gates=backends.SHARDING_GATES,
                        controller_manager=False, audit=True) as cluster:
        yield cluster


@pytest.fixture
def sharding_cluster(request: pytest.FixtureRequest) -> Iterator[LocalCluster | EnvtestCluster]:
    """A cluster that serves `shardSelector=`: a fresh LocalCluster, or (envtest) the run's 1.37.2 with the gate."""
    if request.config.getoption('--backend') != 'envtest':
        with LocalCluster() as local:
            yield local
        return
    yield request.getfixturevalue('sharding_envtest')


@pytest.fixture(autouse=True)
def _gc_threshold_as_found() -> Iterator[None]:
    """gc's thresholds as before the test: a unit test's dispatcher dropped in the middle of its initial
    listing never ends it, so the threshold raised for it (`kopf._engine.memory`) would stay for later tests."""
    import gc

    from kopf._engine import memory
    before = gc.get_threshold()
    yield
    memory._listings, memory._saved, memory._raised = 0, None, None
    gc.set_threshold(*before)
