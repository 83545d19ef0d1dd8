"""`make demo`: the embedded default — a local cluster with the demo resource, shown by kubectl.

Starts `kopf cluster` (the in-memory Kubernetes API emulator) on a free port with the demo CRD and
object applied, shows them with kubectl (or over plain HTTP if kubectl is not installed), and stops.
The reactor issue turns this into a running operator.
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
import urllib.request

HERE = pathlib.Path(__file__).parent


def main() -> int:
    with tempfile.TemporaryDirectory(prefix='kopf-demo-') as tmp:
        kubeconfig = pathlib.Path(tmp) / 'kubeconfig'
        command = [sys.executable, '-m', 'kopf', 'cluster', '--port', '0', '--kubeconfig', str(kubeconfig),
                   '--apply', str(HERE / 'crd.yaml'), '--apply', str(HERE / 'obj.yaml')]
        server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None
            lines = [server.stdout.readline() for _ in range(2)]   # the URL, then the kubeconfig path
            if not all(lines):
                return server.wait() or 1
            print(''.join(lines), end='')
            url = lines[0].split()[-1]
            return show(kubeconfig, pathlib.Path(tmp) / 'cache', url)
        finally:
            server.terminate()
            server.wait(timeout=30)


def show(kubeconfig: pathlib.Path, cache: pathlib.Path, url: str) -> int:
    kubectl = shutil.which('kubectl')
    if kubectl is None:
        print('kubectl is not installed; showing the objects over plain HTTP instead.')
        path = '/apis/kopf.dev/v1/namespaces/default/kopfexamples'
        with urllib.request.urlopen(url + path) as response:
            print(json.dumps(json.load(response), indent=2))
        return 0
    base = [kubectl, f'--kubeconfig={kubeconfig}', f'--cache-dir={cache}']
    for args in (['get', 'crd'], ['get', 'kex'], ['get', 'kex', 'kopf-example-1', '-o', 'yaml']):
        print(f'\n$ kubectl {" ".join(args)}', flush=True)
        result = subprocess.run([*base, *args])
        if result.returncode != 0:
            return result.returncode
    return 0


if __name__ == '__main__':
    sys.exit(main())
