"""Generate the empty objects of the built-in kinds, as kube-apiserver's `New()` of each serialises.

Run (needs Go and the module proxy, or the modules already in the Go module cache)::

    python tools/generate_zero_objects.py

It builds a small Go program against k8s.io/client-go, k8s.io/apiextensions-apiserver and
k8s.io/kube-aggregator at the envtest version (`tools/envtest/VERSION`), which prints, for every
registered external kind, its Go zero value converted to JSON as the server's field manager converts
it (`runtime.DefaultUnstructuredConverter`): `{"metadata": {"creationTimestamp": null}, "spec": {...}}`.
A create's `managedFields` are computed against it. It writes those of the served kinds (package
data, committed) to `kopf/_cluster/patchtypes/data/zero_objects.json`.
"""
import json
import os
import pathlib
import subprocess
import tempfile

ROOT = pathlib.Path(__file__).parent.parent
OUTPUT = ROOT / 'kopf' / '_cluster' / 'patchtypes' / 'data' / 'zero_objects.json'
RESOURCES = ROOT / 'kopf' / '_cluster' / 'apis' / 'data' / 'builtin_resources.json'
VERSION = 'v0.' + (ROOT / 'tools' / 'envtest' / 'VERSION').read_text().strip().split('.', 1)[1]   # v0.34.4
PROGRAM = '''package main

import (
	"encoding/json"
	"os"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	aggv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

func main() {
	s := runtime.NewScheme()
	_ = scheme.AddToScheme(s)
	_ = apiextv1.AddToScheme(s)
	_ = aggv1.AddToScheme(s)
	out := map[string]interface{}{}
	for gvk := range s.AllKnownTypes() {
		if gvk.Version == "__internal" {
			continue
		}
		obj, err := s.New(gvk)
		if err != nil {
			continue
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err == nil {
			out[gvk.GroupVersion().String()+"/"+gvk.Kind] = u
		}
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
}
'''


def main() -> None:
    served = {f'{r["group"]}/{r["version"]}'.lstrip('/') + f'/{r["kind"]}'
              for r in json.loads(RESOURCES.read_text())['resources']}
    env = {**os.environ, 'GOFLAGS': '-mod=mod', 'GOSUMDB': 'off', 'GOTOOLCHAIN': 'local'}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = pathlib.Path(tmp)
        (workdir / 'main.go').write_text(PROGRAM)
        (workdir / 'go.mod').write_text(f'module zeroobjects\n\ngo 1.24\n\nrequire (\n'
                                        f'\tk8s.io/apiextensions-apiserver {VERSION}\n\tk8s.io/apimachinery {VERSION}\n'
                                        f'\tk8s.io/client-go {VERSION}\n\tk8s.io/kube-aggregator {VERSION}\n)\n')
        subprocess.run(['go', 'mod', 'tidy'], cwd=workdir, env=env, check=True)
        found = subprocess.run(['go', 'run', '.'], cwd=workdir, env=env, check=True, capture_output=True, text=True)
    objects = {key: value for key, value in json.loads(found.stdout).items() if key in served}
    OUTPUT.write_text(json.dumps(dict(sorted(objects.items())), separators=(',', ':')) + '\n')
    print(f'{OUTPUT}: {len(objects)} kinds of {len(served)} served')


if __name__ == '__main__':
    main()
