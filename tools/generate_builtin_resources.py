"""Generate the emulator's table of built-in APIs and its OpenAPI documents from a real kube-apiserver.

Run (needs the envtest binaries: `make envtest` builds them once, or `$KUBEBUILDER_ASSETS`)::

    python tools/generate_builtin_resources.py

It starts a real etcd + kube-apiserver (`kopf.testing.EnvtestCluster`, without aggregated servers),
reads what that server says about itself, and writes (package data, committed):

- `kopf/_shared/data/builtin_resources.json`: `/version`, the groups with their versions in
  the server's order (preferred first), and every resource of every group-version as aggregated
  discovery (`/api`, `/apis` with `as=APIGroupDiscoveryList`) lists it: plural, singular, kind,
  scope, verbs, short names, categories, subresources (their verbs and answer kinds); plus the
  columns of its `meta.k8s.io/v1 Table` answer (`columnDefinitions` of an empty list); plus, for
  the kinds with a sample in `tests/fidelity/data/builtins.yaml`, what the server does with one:
  whether it sets `metadata.generation`; and from the OpenAPI, whether DELETE answers with the object
  (when the object is gone at once: with finalizers, every kind answers with the object marked for deletion).
- `kopf/_cluster/openapi/data/openapi.json.xz`: `/openapi/v2` and every `/openapi/v3/...`
  document as the server serves them (xz-compressed: ~8 MB of JSON become ~0.2 MB), and the
  template of a CRD's group-version document (from two CRDs made for it, names made tokens).

The version is the envtest build's (`tools/envtest/VERSION`), the same the emulator reports.
"""
import argparse
import http.client
import json
import lzma
import pathlib
import sys
import time
from typing import Any

import yaml

ROOT = pathlib.Path(__file__).parent.parent
RESOURCES = ROOT / 'kopf' / '_shared' / 'data' / 'builtin_resources.json'
OPENAPI = ROOT / 'kopf' / '_cluster' / 'openapi' / 'data' / 'openapi.json.xz'
SAMPLES = ROOT / 'tests' / 'fidelity' / 'data' / 'builtins.yaml'
AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'
TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io'
SAMPLE_NAMESPACE = 'default'


class Server:
    """GETs and writes against the real server, as its admin."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster

    def call(self, method: str, path: str, accept: str = 'application/json', body: Any = None) -> tuple[int, Any]:
        conn = http.client.HTTPSConnection('127.0.0.1', int(self.cluster.url.rsplit(':', 1)[1]),
                                           context=self.cluster.ssl_context, timeout=60)
        try:
            data = None if body is None else json.dumps(body).encode()
            headers = {'Accept': accept, **({'Content-Type': 'application/json'} if data else {})}
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            raw = response.read()
        finally:
            conn.close()
        return response.status, json.loads(raw) if raw else None

    def get(self, path: str, accept: str = 'application/json') -> Any:
        status, body = self.call('GET', path, accept)
        if status != 200:
            raise RuntimeError(f'GET {path} -> {status}: {body}')
        return body


def prefix_of(group: str, version: str) -> str:
    return f'/apis/{group}/{version}' if group else f'/api/{version}'


def discover(server: Server) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(groups with their versions in the server's order, resources) from aggregated discovery."""
    groups: list[dict[str, Any]] = []
    resources: list[dict[str, Any]] = []
    for path in ('/api', '/apis'):
        for item in server.get(path, AGGREGATED)['items']:
            group = item['metadata'].get('name', '')
            groups.append({'name': group, 'versions': [v['version'] for v in item['versions']]})
            for listed in item['versions']:
                for entry in listed['resources']:
                    resources.append(_resource(server, group, listed['version'], entry))
    return groups, resources


def _resource(server: Server, group: str, version: str, entry: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {
        'group': group, 'version': version, 'plural': entry['resource'],
        'singular': entry.get('singularResource', ''), 'kind': entry['responseKind']['kind'],
        'namespaced': entry['scope'] == 'Namespaced', 'verbs': sorted(entry.get('verbs', [])),
        'shortNames': entry.get('shortNames', []), 'categories': entry.get('categories', []),
        'subresources': [{'name': sub['subresource'], 'verbs': sorted(sub.get('verbs', [])),
                          'kind': _kind(sub.get('responseKind') or {}, group, version)}
                         for sub in entry.get('subresources', [])],
    }
    if 'list' in result['verbs']:
        table = server.get(f'{prefix_of(group, version)}/{entry["resource"]}', TABLE)
        result['columns'] = table['columnDefinitions']
    return result


def _kind(kind: dict[str, str], group: str, version: str) -> dict[str, str]:
    """A subresource's answer kind, with its group and version spelled out (empty ones are the parent's)."""
    same = not kind.get('group') and not kind.get('version')
    return {'group': group if same else kind.get('group', ''), 'version': version if same else kind.get('version', ''),
            'kind': kind.get('kind', '')}


def behaviours(server: Server, resources: list[dict[str, Any]], samples: list[dict[str, Any]]) -> None:
    """Create, read and delete each sample: record what the server does that discovery does not say."""
    by_kind = {(r['group'], r['version'], r['kind']): r for r in resources if 'create' in r['verbs']}
    for sample in samples:
        group, _, version = sample['apiVersion'].rpartition('/')
        resource = by_kind[group, version, sample['kind']]
        path = prefix_of(group, version)
        if resource['namespaced']:
            path += f'/namespaces/{SAMPLE_NAMESPACE}'
        path += f'/{resource["plural"]}'
        status, created = server.call('POST', path, body=sample)
        if status not in (200, 201):
            raise RuntimeError(f'POST {path} {sample["metadata"].get("name")} -> {status}: {created}')
        if 'delete' not in resource['verbs']:
            continue
        resource['generation'] = 'generation' in created['metadata']
        server.call('DELETE', f'{path}/{created["metadata"]["name"]}')


def delete_answers(resources: list[dict[str, Any]], v2: dict[str, Any]) -> None:
    """Whether DELETE answers with the object (not a Status) when it is gone at once, as the OpenAPI says."""
    for resource in resources:
        path = prefix_of(resource['group'], resource['version'])
        path += '/namespaces/{namespace}' if resource['namespaced'] else ''
        operation = v2['paths'].get(f'{path}/{resource["plural"]}/{{name}}', {}).get('delete')
        if operation is not None:
            answer = operation['responses']['200']['schema']['$ref']
            resource['deleteReturnsObject'] = not answer.endswith('meta.v1.Status')


def openapi(server: Server) -> dict[str, Any]:
    index = server.get('/openapi/v3')
    documents = {name: server.get(ref['serverRelativeURL'].split('?')[0])
                 for name, ref in sorted(index['paths'].items())}
    return {'v2': server.get('/openapi/v2'), 'v3': documents, 'crd': crd_template(server)}


# Two CRDs of one group-version, namespaced and cluster-scoped, both with status and scale: the real
# server's v3 document of their group-version, with their names replaced by tokens, is the template
# of every CRD's document (`kopf._cluster.openapi.documents`).
TEMPLATE_GROUP, TEMPLATE_VERSION = 'templates.kopf.dev', 'v1alpha7'
TEMPLATE_KINDS = {'Namespaced': ('Widget', 'widgets'), 'Cluster': ('Gadget', 'gadgets')}
TOKENS = [('dev.kopf.templates', '@REVERSED@'), (TEMPLATE_GROUP, '@GROUP@'), ('TemplatesKopfDev', '@GROUPCAMEL@'),
          ('templatesKopfDev', '@GROUPLOWER@'), (TEMPLATE_VERSION, '@VERSION@'), ('V1alpha7', '@VERSIONCAMEL@')]


def crd_template(server: Server) -> dict[str, Any]:
    for scope, (kind, plural) in TEMPLATE_KINDS.items():
        server.call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body={
            'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
            'metadata': {'name': f'{plural}.{TEMPLATE_GROUP}'},
            'spec': {'group': TEMPLATE_GROUP, 'scope': scope, 'names': {'plural': plural, 'kind': kind},
                     'versions': [{'name': TEMPLATE_VERSION, 'served': True, 'storage': True,
                                   'subresources': {'status': {}, 'scale': {'specReplicasPath': '.spec.replicas',
                                                                            'statusReplicasPath': '.status.replicas'}},
                                   'schema': {'openAPIV3Schema': {'type': 'object'}}}]}})
    path = f'/openapi/v3/apis/{TEMPLATE_GROUP}/{TEMPLATE_VERSION}'
    for _ in range(600):   # the CRDs' documents are published a moment after they are established
        status, document = server.call('GET', path)
        if status == 200 and len(document['components']['schemas']) > 4:
            break
        time.sleep(0.1)
    else:
        raise RuntimeError(f'{path} did not appear')
    text = json.dumps(document)
    for literal, token in TOKENS:
        text = text.replace(literal, token)
    document = json.loads(text)
    templates: dict[str, Any] = {'openapi': document['openapi'], 'info': document['info'], 'scopes': {}}
    schemas = document['components']['schemas']
    for scope, (kind, plural) in TEMPLATE_KINDS.items():
        paths = {p: item for p, item in document['paths'].items() if f'/{plural}' in p}
        text = json.dumps({'paths': paths, 'kind': schemas.pop(f'@REVERSED@.@VERSION@.{kind}'),
                           'list': schemas.pop(f'@REVERSED@.@VERSION@.{kind}List')})
        templates['scopes'][scope] = json.loads(text.replace(f'{kind}List', '@KIND@List')
                                                .replace(plural, '@PLURAL@').replace(kind, '@KIND@'))
    templates['components'] = schemas   # the shared ones: ObjectMeta, ListMeta, Status, Scale, ...
    return templates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--assets', help='the envtest binaries (default: $KUBEBUILDER_ASSETS or the cache)')
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from kopf._kits.envtest import EnvtestCluster
    samples = [doc for doc in yaml.safe_load_all(SAMPLES.read_text()) if doc] if SAMPLES.exists() else []
    with EnvtestCluster(assets=args.assets, controller_manager=False) as cluster:
        server = Server(cluster)
        groups, resources = discover(server)
        behaviours(server, resources, samples)
        documents = openapi(server)
        delete_answers(resources, documents['v2'])
        data = {'source': 'kube-apiserver (envtest, no aggregated servers)', 'version': server.get('/version'),
                'groups': groups, 'resources': resources}
    RESOURCES.parent.mkdir(exist_ok=True)
    RESOURCES.write_text(json.dumps(data, separators=(',', ':'), sort_keys=True) + '\n')
    raw = json.dumps(documents, separators=(',', ':'), sort_keys=True).encode()
    OPENAPI.write_bytes(lzma.compress(raw, preset=9 | lzma.PRESET_EXTREME))
    print(f'{RESOURCES}: {len(resources)} resources in {len(groups)} groups, {RESOURCES.stat().st_size} bytes')
    print(f'{OPENAPI}: {len(documents["v3"])} v3 documents, {len(raw)} bytes, {OPENAPI.stat().st_size} compressed')


if __name__ == '__main__':
    main()
