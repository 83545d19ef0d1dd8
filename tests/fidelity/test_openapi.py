"""/openapi/v2 and /openapi/v3 as kubectl reads them: `explain` for built-ins and CRDs, validation without false errors.

kubectl decides by the v3 document of a group-version whether the server validates fields
(`fieldValidation`): so create/apply/edit of valid objects must pass, unknown fields must fail
with `--validate` (the default) and pass without it, for built-in kinds and custom ones alike.
"""
import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import pytest

from kopf._shared import resourcetable
from tests import waiting
from tests.backends import Cluster
from tests.fidelity.conftest import Http, Kubectl

STRICT = {'apiVersion': 'kopf.dev/v1', 'kind': 'Strict', 'metadata': {'name': 'strict-1'}, 'spec': {'size': 1}}
DEPLOYMENT = {
    'apiVersion': 'apps/v1', 'kind': 'Deployment', 'metadata': {'name': 'explained', 'labels': {'app': 'x'}},
    'spec': {'replicas': 0, 'selector': {'matchLabels': {'app': 'x'}}, 'strategy': {'type': 'Recreate'},
             'template': {'metadata': {'labels': {'app': 'x'}}, 'spec': {
                 'containers': [{'name': 'main', 'image': 'busybox:1.36', 'ports': [{'containerPort': 80}],
                                 'resources': {'limits': {'cpu': '100m'}}, 'env': [{'name': 'A', 'value': 'b'}],
                                 'readinessProbe': {'httpGet': {'path': '/', 'port': 80}}}],
                 'volumes': [{'name': 'data', 'emptyDir': {}}]}}},
}


def _with(obj: dict[str, Any], **spec: Any) -> str:
    return json.dumps({**obj, 'spec': {**obj['spec'], **spec}})


def test_explain_builtin_kind_and_field(kubectl: Kubectl) -> None:
    result = kubectl('explain', 'deployment.spec.strategy')
    assert result.returncode == 0, result.stderr
    assert 'KIND:       Deployment' in result.stdout and 'VERSION:    v1' in result.stdout
    assert 'rollingUpdate\t<RollingUpdateDeployment>' in result.stdout
    pods = kubectl('explain', 'pods.spec.containers.ports')
    assert pods.returncode == 0, pods.stderr
    assert 'containerPort\t<integer> -required-' in pods.stdout


def _preferred() -> list[resourcetable.Resource]:
    """The resources `kubectl explain` finds by their plural: those of each group's preferred version."""
    preferred = {group['name']: group['versions'][0] for group in resourcetable.data()['groups']}
    return [r for r in resourcetable.BUILTINS if preferred[r.group] == r.version]


@pytest.mark.parametrize('resource', _preferred(), ids=lambda r: f'{r.api_version}/{r.plural}')
def test_explain_every_kind(kubectl: Kubectl, resource: resourcetable.Resource) -> None:
    result = kubectl('explain', resource.plural, f'--api-version={resource.api_version}')
    assert result.returncode == 0, result.stderr
    assert f'KIND:       {resource.kind}' in result.stdout and f'VERSION:    {resource.version}' in result.stdout
    assert 'FIELDS:' in result.stdout


@pytest.mark.parametrize('field', ['cronjobs.spec.jobTemplate', 'roles.rules', 'ingresses.spec',
                                   'persistentvolumeclaims.spec', 'horizontalpodautoscalers.spec.metrics',
                                   'leases.spec'])
def test_explain_fields_of_new_kinds(kubectl: Kubectl, field: str) -> None:
    result = kubectl('explain', field)
    assert result.returncode == 0, result.stderr
    assert 'FIELDS:' in result.stdout


def test_explain_custom_kind_and_field(kubectl: Kubectl) -> None:
    result = kubectl('explain', 'stricts.spec')
    assert result.returncode == 0, result.stderr
    assert 'KIND:       Strict' in result.stdout and 'GROUP:      kopf.dev' in result.stdout
    assert 'size\t<integer>' in result.stdout
    recursive = kubectl('explain', 'stricts', '--recursive')
    assert recursive.returncode == 0, recursive.stderr
    assert 'metadata\t<ObjectMeta>' in recursive.stdout and 'phase\t<string>' in recursive.stdout


@pytest.mark.parametrize('verb', ['create', 'apply'])
@pytest.mark.parametrize('obj', [STRICT, DEPLOYMENT], ids=['custom', 'builtin'])
def test_valid_objects_pass_validation(kubectl: Kubectl, verb: str, obj: dict[str, Any]) -> None:
    what = f'{obj["kind"].lower()}/{obj["metadata"]["name"]}'
    try:
        result = kubectl(verb, '-f', '-', input=json.dumps(obj))
        assert result.returncode == 0, result.stderr
        assert 'unknown field' not in result.stderr
    finally:
        kubectl('delete', what, '--ignore-not-found', '--wait=false')


@pytest.mark.parametrize('verb', ['create', 'apply'])
@pytest.mark.parametrize('obj', [STRICT, DEPLOYMENT], ids=['custom', 'builtin'])
def test_unknown_fields_fail_with_validation_only(kubectl: Kubectl, verb: str, obj: dict[str, Any]) -> None:
    what = f'{obj["kind"].lower()}/{obj["metadata"]["name"]}'
    junk = _with(obj, junk='yes')
    try:
        failed = kubectl(verb, '-f', '-', input=junk)
        assert failed.returncode != 0
        assert 'unknown field "spec.junk"' in failed.stderr
        passed = kubectl(verb, '-f', '-', '--validate=false', input=junk)
        assert passed.returncode == 0, passed.stderr
    finally:
        kubectl('delete', what, '--ignore-not-found', '--wait=false')


EDITOR = """
import os, pathlib, sys
path = pathlib.Path(sys.argv[-1])
text = path.read_text()
if os.environ['EDIT_NEW'] not in text:   # kubectl opens the file again after a rejected edit: leave it as it is
    path.write_text(text.replace(os.environ['EDIT_OLD'], os.environ['EDIT_NEW']))
"""


def _edit(kubectl: Kubectl, tmp_path: pathlib.Path, what: str, old: str, new: str,
          *flags: str) -> subprocess.CompletedProcess[str]:
    """`kubectl edit` with an "editor" that replaces one text by another in the file it is given."""
    editor = tmp_path / 'editor.py'
    editor.write_text(EDITOR)
    env = {**os.environ, 'KUBE_EDITOR': f'{sys.executable} {editor}', 'EDIT_OLD': old, 'EDIT_NEW': new}
    return subprocess.run([*kubectl.base, 'edit', what, '-o', 'json', *flags], capture_output=True, text=True,
                          env=env, timeout=30)


def test_edit_with_and_without_validation(kubectl: Kubectl, tmp_path: pathlib.Path) -> None:
    created = kubectl('create', '-f', '-', input=json.dumps(STRICT))
    assert created.returncode == 0, created.stderr
    try:
        edited = _edit(kubectl, tmp_path, 'strict/strict-1', '"size": 1', '"size": 2')
        assert edited.returncode == 0, edited.stderr
        assert json.loads(kubectl('get', 'strict/strict-1', '-o', 'json').stdout)['spec']['size'] == 2
        rejected = _edit(kubectl, tmp_path, 'strict/strict-1', '"size": 2', '"size": 3, "junk": 1')
        assert rejected.returncode != 0 and 'stricts.kopf.dev "strict-1" is invalid' in rejected.stderr
        ignored = _edit(kubectl, tmp_path, 'strict/strict-1', '"size": 2', '"size": 4, "junk": 1', '--validate=false')
        assert ignored.returncode == 0, ignored.stderr
        assert json.loads(kubectl('get', 'strict/strict-1', '-o', 'json').stdout)['spec'] == {'size': 4}
    finally:
        kubectl('delete', 'strict/strict-1', '--ignore-not-found', '--wait=false')


def test_edit_of_a_builtin_with_and_without_validation(kubectl: Kubectl, tmp_path: pathlib.Path) -> None:
    configmap = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'edited'}, 'data': {'k': 'one'}}
    created = kubectl('create', '-f', '-', input=json.dumps(configmap))
    assert created.returncode == 0, created.stderr
    try:
        edited = _edit(kubectl, tmp_path, 'configmap/edited', '"k": "one"', '"k": "two"')
        assert edited.returncode == 0, edited.stderr
        assert json.loads(kubectl('get', 'configmap/edited', '-o', 'json').stdout)['data'] == {'k': 'two'}
        kind, junk = '"kind": "ConfigMap",', '"kind": "ConfigMap", "junk": 1,'
        rejected = _edit(kubectl, tmp_path, 'configmap/edited', kind, junk)
        assert rejected.returncode != 0 and 'configmaps "edited" is invalid' in rejected.stderr, rejected.stderr
        ignored = _edit(kubectl, tmp_path, 'configmap/edited', '"k": "two"', '"k": "three"', '--validate=false')
        assert ignored.returncode == 0, ignored.stderr
        ignored = _edit(kubectl, tmp_path, 'configmap/edited', kind, junk, '--validate=false')
        assert ignored.returncode == 0, ignored.stderr
        got = json.loads(kubectl('get', 'configmap/edited', '-o', 'json').stdout)
        assert got['data'] == {'k': 'three'} and 'junk' not in got
    finally:
        kubectl('delete', 'configmap/edited', '--ignore-not-found', '--wait=false')


def _served_group_versions(raw: Http) -> dict[str, str]:
    """{'api/v1': '/api/v1', 'apis/apps/v1': '/apis/apps/v1', ...}: every group-version discovery lists."""
    _, _, groups = raw.request('GET', '/apis')
    return {'api/v1': '/api/v1', **{f'apis/{v["groupVersion"]}': f'/apis/{v["groupVersion"]}'
                                    for g in groups['groups'] for v in g['versions']}}


def test_v3_documents_are_complete_for_every_group_version(raw: Http) -> None:
    """Complete or absent: every kind a group-version serves has its schema in that group-version's document."""
    status, _, index = raw.request('GET', '/openapi/v3')
    assert status == 200
    for name, prefix in _served_group_versions(raw).items():
        group_version = name.removeprefix('api/').removeprefix('apis/')
        group, _, version = group_version.rpartition('/')
        _, _, listed = raw.request('GET', prefix)
        kinds = {entry['kind'] for entry in listed['resources']
                 if '/' not in entry['name'] and entry.get('group', group) == group}
        status, _, document = raw.request('GET', index['paths'][name]['serverRelativeURL'])
        assert status == 200, name
        documented = {gvk['kind'] for schema in document['components']['schemas'].values()
                      for gvk in schema.get('x-kubernetes-group-version-kind', [])
                      if (gvk['group'], gvk['version']) == (group, version)}
        assert kinds <= documented, (name, kinds - documented)


def test_builtin_documents_are_the_generated_ones(raw: Http) -> None:
    """The built-in documents are a real server's, generated (`tools/generate_builtin_resources.py`), not written:
    on envtest, the committed data is what the real server serves; on the emulator, what the emulator serves."""
    from kopf._cluster.openapi import documents
    _, _, index = raw.request('GET', '/openapi/v3')
    builtin = set(documents.v3_index([])['paths'])
    assert builtin <= set(index['paths'])
    for name in sorted(builtin):
        status, _, served = raw.request('GET', index['paths'][name]['serverRelativeURL'])
        assert status == 200 and served == documents.v3_document(name, []), name
    _, _, swagger = raw.request('GET', '/openapi/v2', headers={'Accept': 'application/json'})
    generated = documents.v2_document([])['definitions']
    served_builtins = {key: value for key, value in swagger['definitions'].items() if key.startswith('io.k8s.')}
    assert served_builtins == {key: value for key, value in generated.items() if key.startswith('io.k8s.')}


def test_v3_index_lists_every_served_group_version(raw: Http) -> None:
    status, _, index = raw.request('GET', '/openapi/v3')
    assert status == 200
    served = {'api/v1'}
    _, _, groups = raw.request('GET', '/apis')
    served |= {f'apis/{v["groupVersion"]}' for g in groups['groups'] for v in g['versions']}
    assert served <= set(index['paths'])
    for name in ('api/v1', 'apis/apps/v1', 'apis/kopf.dev/v1'):
        status, _, document = raw.request('GET', index['paths'][name]['serverRelativeURL'])
        assert status == 200 and document['openapi'].startswith('3.')
        kinds = {gvk['kind'] for schema in document['components']['schemas'].values()
                 for gvk in schema.get('x-kubernetes-group-version-kind', [])}
        assert {'api/v1': 'Pod', 'apis/apps/v1': 'Deployment', 'apis/kopf.dev/v1': 'KopfExample'}[name] in kinds
    status, _, _ = raw.request('GET', '/openapi/v3/apis/nope.kopf.dev/v1')
    assert status == 404


def test_custom_documents_follow_their_crds(cluster: Cluster, raw: Http) -> None:
    _, _, before = raw.request('GET', '/openapi/v3')
    cluster.apply({'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
                   'metadata': {'name': 'documenteds.openapi.kopf.dev'},
                   'spec': {'group': 'openapi.kopf.dev', 'scope': 'Cluster',
                            'names': {'plural': 'documenteds', 'kind': 'Documented'},
                            'versions': [{'name': 'v1', 'served': True, 'storage': True, 'schema': {'openAPIV3Schema': {
                                'type': 'object', 'properties': {'spec': {'type': 'object', 'properties': {
                                    'colour': {'type': 'string', 'enum': ['red', 'blue']}}}}}}}]}})
    assert 'apis/openapi.kopf.dev/v1' not in before['paths']

    def published() -> str | None:   # a real server publishes a CRD's document a moment after it is established
        _, _, after = raw.request('GET', '/openapi/v3')
        return (after['paths'].get('apis/openapi.kopf.dev/v1') or {}).get('serverRelativeURL')

    url = waiting.wait_for(published)
    status, _, document = raw.request('GET', url)
    assert status == 200
    schema = document['components']['schemas']['dev.kopf.openapi.v1.Documented']
    assert schema['properties']['spec']['properties']['colour']['enum'] == ['red', 'blue']
    assert set(document['paths']) == {'/apis/openapi.kopf.dev/v1/documenteds',
                                      '/apis/openapi.kopf.dev/v1/documenteds/{name}'}
    patch = document['paths']['/apis/openapi.kopf.dev/v1/documenteds/{name}']['patch']
    assert 'fieldValidation' in {p['name'] for p in patch['parameters']}
    status, _, swagger = raw.request('GET', '/openapi/v2', headers={'Accept': 'application/json'})
    assert status == 200 and 'io.k8s.api.core.v1.Pod' in swagger['definitions']


@pytest.mark.parametrize('content_type, shown', [
    ('application/merge-patch+json', '"{\\"apiVersion\\":'),
    ('application/strategic-merge-patch+json', '"map[junk:1]"'),
])
def test_a_strict_patch_with_unknown_fields_is_an_invalid_patch(raw: Http, content_type: str, shown: str) -> None:
    raw.request('POST', '/api/v1/namespaces/default/configmaps', {'metadata': {'name': 'strict-patched'}})
    try:
        status, _, body = raw.request('PATCH', '/api/v1/namespaces/default/configmaps/strict-patched'
                                      '?fieldValidation=Strict', {'junk': 1}, content_type)
        assert (status, body['reason']) == (422, 'Invalid')
        assert body['message'].startswith(f' "" is invalid: patch: Invalid value: {shown}')
        assert body['message'].endswith(': strict decoding error: unknown field "junk"')
        assert [c['field'] for c in body['details']['causes']] == ['patch']
    finally:
        raw.request('DELETE', '/api/v1/namespaces/default/configmaps/strict-patched')
