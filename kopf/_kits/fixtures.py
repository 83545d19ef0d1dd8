"""Pytest fixtures for testing operators, re-exported by `kopf.testing` when pytest is installed.

They are defined in the top-level module `_kopf_pytest`, which pytest loads as a plugin (the `pytest11` entry
point `kopf`) without importing kopf itself; `pytest_plugins = ['kopf.testing']` in a conftest.py works too.

- `kopf_local_cluster`: a `LocalCluster` in its own thread and loop, for `KopfRunner` and sync tests.
- `kopf_local_cluster_async`: a `LocalCluster` in the test's own event loop (async tests, looptime).
- `kopf_envtest_cluster`: ONE `EnvtestCluster` (a real kube-apiserver) per pytest run (session scope).
"""
from _kopf_pytest import kopf_envtest_cluster as kopf_envtest_cluster
from _kopf_pytest import kopf_local_cluster as kopf_local_cluster
from _kopf_pytest import kopf_local_cluster_async as kopf_local_cluster_async
