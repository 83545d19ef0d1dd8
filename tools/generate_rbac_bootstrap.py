"""Generate the emulator's RBAC bootstrap policy from k8s.io/kubernetes's own fixtures.

Run (needs Go and the module proxy, or the module already in the Go module cache)::

    python tools/generate_rbac_bootstrap.py

It reads `plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata/*.yaml` of k8s.io/kubernetes at
the envtest version (`tools/envtest/VERSION`): the ClusterRoles, ClusterRoleBindings, Roles and
RoleBindings a kube-apiserver creates at its start (with the default feature gates), as upstream's
own tests pin them. It writes them (package data, committed) to
`kopf/_cluster/rbac/data/bootstrap.json`, compact, in the fixtures' order. The aggregated roles
(admin, edit, view) have no rules there: the emulator's aggregation fills them in, as
kube-controller-manager's clusterrole-aggregation controller does.
"""
import json
import os
import pathlib
import subprocess

import yaml

ROOT = pathlib.Path(__file__).parent.parent
OUTPUT = ROOT / 'kopf' / '_cluster' / 'rbac' / 'data' / 'bootstrap.json'
VERSION = (ROOT / 'tools' / 'envtest' / 'VERSION').read_text().strip()
FIXTURES = ('cluster-roles.yaml', 'controller-roles.yaml', 'cluster-role-bindings.yaml',
            'controller-role-bindings.yaml', 'namespace-roles.yaml', 'namespace-role-bindings.yaml')


def module_dir() -> pathlib.Path:
    found = subprocess.run(['go', 'mod', 'download', '-json', f'k8s.io/kubernetes@{VERSION}'], cwd='/tmp',
                           env={**os.environ, 'GOFLAGS': '-mod=mod'},
                           check=True, capture_output=True, text=True)
    return pathlib.Path(json.loads(found.stdout)['Dir'])


def main() -> None:
    testdata = module_dir() / 'plugin' / 'pkg' / 'auth' / 'authorizer' / 'rbac' / 'bootstrappolicy' / 'testdata'
    objects = []
    for name in FIXTURES:
        for item in yaml.safe_load((testdata / name).read_text())['items']:
            objects.append({key: value for key, value in item.items() if value is not None})
    OUTPUT.write_text(json.dumps({'version': VERSION, 'objects': objects}, separators=(',', ':')) + '\n')
    print(f'{OUTPUT}: {len(objects)} objects')


if __name__ == '__main__':
    main()
