"""Testing helpers: `LocalCluster` (an in-memory Kubernetes API on loopback), `EnvtestCluster` (a real
etcd + kube-apiserver on loopback, from `$KUBEBUILDER_ASSETS` or `make envtest`), `KopfRunner` (the CLI
in a thread), and pytest fixtures `kopf_local_cluster(_async)`, `kopf_envtest_cluster` (when pytest is
installed).

    async with kopf.testing.LocalCluster() as cluster:        # in the current event loop
        cluster.apply('examples/crd.yaml')
        ...  # point clients at cluster.kubeconfig or cluster.url

    with kopf.testing.LocalCluster() as cluster:              # its own event loop in a thread
        subprocess.run(['kubectl', '--kubeconfig', str(cluster.kubeconfig), 'get', 'ns'])

The fixtures need no import: kopf's pytest plugin (the `pytest11` entry point `kopf`) provides them in every
pytest run; `pytest_plugins = ['kopf.testing']` in a `conftest.py` still works (e.g. with `-p no:kopf`).
"""
from kopf._cluster.control.local import LocalCluster as LocalCluster
from kopf._kits.clirunner import KopfRunner as KopfRunner
from kopf._kits.clirunner import cluster_vault as cluster_vault
from kopf._kits.envtest import EnvtestCluster as EnvtestCluster

try:
    from kopf._kits.fixtures import kopf_envtest_cluster as kopf_envtest_cluster
    from kopf._kits.fixtures import kopf_local_cluster as kopf_local_cluster
    from kopf._kits.fixtures import kopf_local_cluster_async as kopf_local_cluster_async
except ImportError:  # pytest is not installed: no fixtures
    pass
