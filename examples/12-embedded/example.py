"""Embedding: the operator runs in a thread of a bigger application, beside the application's own code.

- `kopf.operator()` in its own thread and event loop, with thread-safe `ready_flag`/`stop_flag`
  (`threading.Event`): the main thread waits until the operator is ready and stops it at the end.
- Its own registry (`kopf.OperatorRegistry()`): several operators in one process stay isolated.
- A custom operator memo: the greetings' templates and where the cluster is (used by the login
  handler); each object's handlers get a shallow copy of it.

The main thread creates `kopf-example-0..2` and deletes them; the handlers print "Hello, …!" and
"Good bye, …!". Run it as a script: it starts an in-memory local cluster for itself.
"""
import asyncio
import threading
import time

import kopf
from kopf.testing import LocalCluster

registry = kopf.OperatorRegistry()


@kopf.on.login(registry=registry)
def login(memo, **_):
    return kopf.ConnectionInfo(server=memo.server, default_namespace='default')


@kopf.on.create('kopfexamples', registry=registry)
def greet(name, memo, **_):
    print(memo.hello.format(name=name), flush=True)
    return {'greeted': True}


@kopf.on.delete('kopfexamples', registry=registry)
def farewell(name, memo, **_):
    print(memo.goodbye.format(name=name), flush=True)


def run_operator(memo, ready_flag, stop_flag):
    """The operator's thread: a new event loop, no signal handlers (those are for the main thread)."""
    asyncio.run(kopf.operator(registry=registry, memo=memo, clusterwide=True, standalone=True,
                              ready_flag=ready_flag, stop_flag=stop_flag))


def main(cluster, count=3, timeout=30.0):
    """The application: start the operator, create & delete some objects, stop the operator."""
    import kubernetes

    memo = kopf.Memo(hello='Hello, {name}!', goodbye='Good bye, {name}!', server=cluster.url)
    ready_flag, stop_flag = threading.Event(), threading.Event()
    thread = threading.Thread(target=run_operator, args=(memo, ready_flag, stop_flag), name='operator')
    thread.start()
    try:
        if not ready_flag.wait(timeout):
            raise RuntimeError('The operator did not start in time.')
        api = kubernetes.client.CustomObjectsApi(
            kubernetes.config.new_client_from_config(config_file=str(cluster.kubeconfig)))
        names = [f'kopf-example-{i}' for i in range(count)]
        for name in names:
            body = {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': name}, 'spec': {}}
            api.create_namespaced_custom_object('kopf.dev', 'v1', 'default', 'kopfexamples', body)
        _wait(lambda: all(cluster.get('kopf.dev/v1', 'KopfExample', name, 'default').get('status')
                          for name in names), timeout)
        for name in names:
            api.delete_namespaced_custom_object('kopf.dev', 'v1', 'default', 'kopfexamples', name)
        _wait(lambda: not cluster.list('kopf.dev/v1', 'KopfExample', 'default'), timeout)
    finally:
        stop_flag.set()
        thread.join(timeout)


def _wait(check, timeout):
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError('The operator did not handle the objects in time.')
        time.sleep(0.05)


if __name__ == '__main__':
    import pathlib

    kopf.configure(verbose=False)
    with LocalCluster() as local_cluster:
        local_cluster.apply(pathlib.Path(__file__).parent.parent / 'crd.yaml')
        main(local_cluster)
