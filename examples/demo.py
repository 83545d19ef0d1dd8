"""`make demo`: the minimal operator on the embedded local cluster, end to end, then exit.

1. Starts a local cluster (the in-memory Kubernetes API emulator) in its own thread.
2. Applies the demo CRD, loads `examples/01-minimal/example.py` and runs the operator in a thread.
3. Creates the demo object, waits until the create handler's result is in its status, prints it.
4. Shows the object with kubectl (if installed), stops the operator and the cluster, exits 0.

The long-running form of the same thing is:
    kopf run --local-cluster --apply examples/crd.yaml --apply examples/obj.yaml examples/01-minimal/example.py
"""
import json
import pathlib
import runpy
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

import kopf
from kopf.testing import LocalCluster

HERE = pathlib.Path(__file__).parent
TIMEOUT = 60.0


def main() -> int:
    kopf.configure(verbose=False)
    runpy.run_path(str(HERE / '01-minimal' / 'example.py'))
    with LocalCluster() as cluster, tempfile.TemporaryDirectory(prefix='kopf-demo-') as tmp:
        print(f'Local cluster at {cluster.url}; kubeconfig: {cluster.kubeconfig}', flush=True)
        cluster.apply(HERE / 'crd.yaml')

        @kopf.on.login()
        def login(**_: Any) -> kopf.ConnectionInfo:
            return kopf.ConnectionInfo(server=cluster.url, default_namespace='default')

        stop, ready = threading.Event(), threading.Event()
        operator = threading.Thread(target=kopf.run, name='operator',
                                    kwargs=dict(clusterwide=True, stop_flag=stop, ready_flag=ready))
        operator.start()
        try:
            if not ready.wait(TIMEOUT):
                print('The operator did not start in time.', file=sys.stderr)
                return 1
            cluster.apply(HERE / 'obj.yaml')
            status = wait_for_status(cluster)
            if status is None:
                print('The object was not handled in time.', file=sys.stderr)
                return 1
            print(f'\nThe object is handled; its status: {json.dumps(status)}', flush=True)
            return show(cluster.kubeconfig, pathlib.Path(tmp) / 'cache')
        finally:
            stop.set()
            operator.join(TIMEOUT)


def wait_for_status(cluster: LocalCluster) -> dict[str, Any] | None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        obj = cluster.get('kopf.dev/v1', 'KopfExample', 'kopf-example-1', 'default')
        if obj and obj.get('status', {}).get('create_fn'):
            return dict(obj['status'])
        time.sleep(0.1)
    return None


def show(kubeconfig: pathlib.Path, cache: pathlib.Path) -> int:
    kubectl = shutil.which('kubectl')
    if kubectl is None:
        print('(kubectl is not installed: skipping the kubectl view.)')
        return 0
    args = ['get', 'kex', 'kopf-example-1', '-o', 'yaml']
    print(f'\n$ kubectl {" ".join(args)}', flush=True)
    return subprocess.run([kubectl, f'--kubeconfig={kubeconfig}', f'--cache-dir={cache}', *args]).returncode


if __name__ == '__main__':
    sys.exit(main())
