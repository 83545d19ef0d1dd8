"""The request sequences, by category: each a list of steps (tables of data, no logic but loops).

Every category works in its own namespace `d-<category>`, made by its first step.
"""
from typing import Any

from .harness import APPLY, MERGE, PATCH, SMP, TABLE, Step

GROUP = 'kopf.dev'
CRD_NAME = f'diffs.{GROUP}'
#: The suite's CRD: status and scale subresources, defaults, pruning, validation, printer columns.
CRD: dict[str, Any] = {
    'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition', 'metadata': {'name': CRD_NAME},
    'spec': {'group': GROUP, 'scope': 'Namespaced',
             'names': {'plural': 'diffs', 'singular': 'diff', 'kind': 'Diff', 'shortNames': ['dif']},
             'versions': [{
                 'name': 'v1', 'served': True, 'storage': True,
                 'subresources': {'status': {}, 'scale': {'specReplicasPath': '.spec.replicas',
                                                          'statusReplicasPath': '.status.replicas'}},
                 'additionalPrinterColumns': [{'name': 'Size', 'type': 'integer', 'jsonPath': '.spec.size'},
                                              {'name': 'Mode', 'type': 'string', 'jsonPath': '.spec.mode'},
                                              {'name': 'Title', 'type': 'string', 'jsonPath': '.spec.title',
                                               'description': 'The title, when one is set', 'priority': 1}],
                 'schema': {'openAPIV3Schema': {'type': 'object', 'properties': {
                     'spec': {'type': 'object', 'required': ['size'], 'properties': {
                         'size': {'type': 'integer', 'minimum': 1, 'maximum': 10},
                         'replicas': {'type': 'integer', 'default': 1},
                         'mode': {'type': 'string', 'enum': ['fast', 'slow'], 'default': 'fast'},
                         'title': {'type': 'string', 'maxLength': 8, 'pattern': '^[a-z]+$'},
                         'tags': {'type': 'array', 'maxItems': 3, 'items': {'type': 'string'}},
                         'nested': {'type': 'object', 'default': {},
                                    'properties': {'depth': {'type': 'integer', 'default': 2}}},
                         'free': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True},
                         'ratio': {'type': 'number'}, 'flag': {'type': 'boolean'},
                         'items': {'type': 'array', 'x-kubernetes-list-type': 'map',
                                   'x-kubernetes-list-map-keys': ['name'],
                                   'items': {'type': 'object', 'required': ['name'],
                                             'properties': {'name': {'type': 'string'},
                                                            'value': {'type': 'string'}}}}}},
                     'status': {'type': 'object', 'properties': {
                         'phase': {'type': 'string'}, 'replicas': {'type': 'integer'}}}}}},
             }]},
}


def ns(cat: str) -> str:
    return f'd-{cat}'


def core(cat: str, plural: str, name: str = '', query: str = '') -> str:
    path = f'/api/v1/namespaces/{ns(cat)}/{plural}' + (f'/{name}' if name else '')
    return path + (f'?{query}' if query else '')


def apps(cat: str, plural: str, name: str = '', query: str = '') -> str:
    path = f'/apis/apps/v1/namespaces/{ns(cat)}/{plural}' + (f'/{name}' if name else '')
    return path + (f'?{query}' if query else '')


def diffs(cat: str, name: str = '', query: str = '') -> str:
    path = f'/apis/{GROUP}/v1/namespaces/{ns(cat)}/diffs' + (f'/{name}' if name else '')
    return path + (f'?{query}' if query else '')


def namespace(cat: str, **labels: str) -> Step:
    return Step('POST', '/api/v1/namespaces', {'apiVersion': 'v1', 'kind': 'Namespace',
                                               'metadata': {'name': ns(cat), 'labels': labels}})


def cm(name: str, data: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    return {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': name, **meta}, 'data': data or {'a': '1'}}


def diff(name: str, spec: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {'apiVersion': f'{GROUP}/v1', 'kind': 'Diff', 'metadata': {'name': name},
            'spec': {'size': 3} if spec is None else spec, **extra}


def deployment(name: str, replicas: int = 1) -> dict[str, Any]:
    labels = {'app': name}
    return {'apiVersion': 'apps/v1', 'kind': 'Deployment', 'metadata': {'name': name},
            'spec': {'replicas': replicas, 'selector': {'matchLabels': labels},
                     'template': {'metadata': {'labels': labels}, 'spec': {'containers': [
                         {'name': 'main', 'image': 'busybox:1', 'env': [{'name': 'A', 'value': '1'}]},
                         {'name': 'side', 'image': 'busybox:1'}]}}}}


def resource(name: str) -> Any:
    """Pick one resource of an APIResourceList (discovery), as served by both."""
    return lambda body: next((r for r in body.get('resources', []) if r['name'] == name), None)


def group(name: str) -> Any:
    return lambda body: next((g for g in body.get('groups', []) if g['name'] == name), None)


PODS = ('pod-admission',)
#: A Pod no scheduler takes (the local cluster's simulated kubelet would run it; envtest has none): API semantics only.
UNSCHEDULED = {'schedulerName': 'none', 'containers': [{'name': 'c', 'image': 'busybox:1'}]}
CONTROLLERS = ('no-controllers',)
EVENTS = ('event-nulls',)
COLUMNS = ('column-descriptions',)
TYPES = ('column-types',)
DISCOVERY = [
    Step('GET', '/version', known=('version',), pick=lambda b: {k: b.get(k) for k in ('major', 'minor', 'gitVersion')}),
    Step('GET', '/api', pick=lambda b: b.get('versions')),
    Step('GET', '/apis', pick=lambda b: sorted(g['name'] for g in b['groups'] if g['name'] in {
        'apps', 'coordination.k8s.io', 'apiextensions.k8s.io', 'admissionregistration.k8s.io', GROUP})),
    *[Step('GET', '/apis', pick=group(name)) for name in
      ('apps', 'coordination.k8s.io', 'apiextensions.k8s.io', 'admissionregistration.k8s.io', GROUP)],
    *[Step('GET', '/api/v1', pick=resource(name)) for name in
      ('configmaps', 'secrets', 'namespaces', 'namespaces/status', 'pods', 'pods/status', 'services',
       'serviceaccounts', 'events')],
    *[Step('GET', '/apis/apps/v1', pick=resource(name)) for name in
      ('deployments', 'deployments/scale', 'deployments/status', 'replicasets', 'replicasets/scale')],
    Step('GET', '/apis/coordination.k8s.io/v1', pick=resource('leases')),
    Step('GET', '/apis/apiextensions.k8s.io/v1', pick=resource('customresourcedefinitions')),
    *[Step('GET', '/apis/admissionregistration.k8s.io/v1', pick=resource(name)) for name in
      ('mutatingwebhookconfigurations', 'validatingwebhookconfigurations')],
    *[Step('GET', f'/apis/{GROUP}/v1', pick=resource(name))
      for name in ('diffs', 'diffs/status', 'diffs/scale')],
    Step('GET', f'/apis/{GROUP}', pick=lambda b: {k: b.get(k) for k in ('name', 'versions', 'preferredVersion')}),
    Step('GET', '/apis/nonexistent.example.com/v1', known=('text-404',)),
    Step('GET', '/openapi/v2', pick=lambda b: 'io.k8s.api.core.v1.ConfigMap' in b.get('definitions', {})),
    Step('GET', '/openapi/v3', pick=lambda b: sorted(
        p for p in b.get('paths', {}) if p in {'api/v1', 'apis/apps/v1', f'apis/{GROUP}/v1'})),
    Step('GET', f'/openapi/v3/apis/{GROUP}/v1', pick=lambda b: sorted(
        k for k in b.get('components', {}).get('schemas', {}) if k.startswith('dev.kopf.v1.Diff'))),
]

CRUD = [
    namespace('crud'),
    Step('GET', f'/api/v1/namespaces/{ns("crud")}'),
    Step('POST', core('crud', 'configmaps'), cm('one', {'x': 'y'}, labels={'k': 'v'})),
    Step('GET', core('crud', 'configmaps', 'one'), save='one'),
    Step('PUT', core('crud', 'configmaps', 'one'), cm('one', {'x': 'z'})),
    Step('POST', core('crud', 'configmaps'), cm('one')),
    Step('POST', core('crud', 'configmaps'), cm('', generateName='gen-')),
    Step('GET', core('crud', 'configmaps', 'absent')),
    Step('DELETE', core('crud', 'configmaps', 'one')),
    Step('DELETE', core('crud', 'configmaps', 'one')),
    Step('POST', core('crud', 'secrets'), {'apiVersion': 'v1', 'kind': 'Secret', 'metadata': {'name': 's1'},
                                           'stringData': {'user': 'admin'}}),
    Step('POST', core('crud', 'secrets'), {'apiVersion': 'v1', 'kind': 'Secret', 'metadata': {'name': 's2'},
                                           'type': 'kubernetes.io/tls',
                                           'data': {'tls.crt': 'YQ==', 'tls.key': 'Yg=='}}),
    Step('GET', core('crud', 'secrets', 's1')),
    Step('POST', core('crud', 'serviceaccounts'), {'apiVersion': 'v1', 'kind': 'ServiceAccount',
                                                   'metadata': {'name': 'sa1'}}),
    Step('GET', core('crud', 'serviceaccounts', 'sa1')),
    Step('POST', core('crud', 'services'), {'apiVersion': 'v1', 'kind': 'Service', 'metadata': {'name': 'svc'},
                                            'spec': {'selector': {'app': 'x'}, 'ports': [{'port': 80}]}}),
    Step('POST', core('crud', 'pods'), {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'p1'},
                                        'spec': UNSCHEDULED}, known=PODS),
    Step('POST', apps('crud', 'deployments'), deployment('dep')),
    Step('POST', apps('crud', 'replicasets'), {**deployment('rs'), 'kind': 'ReplicaSet'}),
    Step('POST', f'/apis/coordination.k8s.io/v1/namespaces/{ns("crud")}/leases', {
        'apiVersion': 'coordination.k8s.io/v1', 'kind': 'Lease', 'metadata': {'name': 'l1'},
        'spec': {'holderIdentity': 'me', 'leaseDurationSeconds': 15}}),
    Step('POST', core('crud', 'events'), {
        'apiVersion': 'v1', 'kind': 'Event', 'metadata': {'name': 'e1'}, 'reason': 'Tested', 'message': 'hi',
        'type': 'Normal', 'involvedObject': {'kind': 'ConfigMap', 'name': 'one', 'namespace': ns('crud')}},
        known=EVENTS),
    Step('POST', diffs('crud'), diff('d1')),
    Step('GET', diffs('crud', 'd1')),
    Step('PUT', diffs('crud', 'd1'), diff('d1', {'size': 4})),
    Step('GET', diffs('crud', 'd1')),
    Step('POST', diffs('crud'), diff('d1')),
    Step('DELETE', diffs('crud', 'd1')),
    Step('GET', diffs('crud', 'd1')),
    Step('GET', f'/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD_NAME}',
         pick=lambda b: {'spec': b['spec'], 'accepted': b['status']['acceptedNames']}),
    Step('DELETE', core('crud', 'secrets', 's1')),
    Step('DELETE', core('crud', 'serviceaccounts', 'sa1')),
]

DEPLOY = apps('patch', 'deployments', 'dep')
PATCHES = [
    namespace('patch'),
    Step('POST', core('patch', 'configmaps'), cm('m', {'a': '1', 'b': '2'})),
    Step('PATCH', core('patch', 'configmaps', 'm'), {'data': {'a': None, 'c': '3'}}, MERGE),
    Step('PATCH', core('patch', 'configmaps', 'm'), {'metadata': {'labels': {'x': 'y'}}}, MERGE),
    Step('PATCH', core('patch', 'configmaps', 'm'), '[1, 2]', MERGE),
    Step('PATCH', core('patch', 'configmaps', 'absent'), {'data': {}}, MERGE),
    Step('PATCH', core('patch', 'configmaps', 'm'), [{'op': 'add', 'path': '/data/d', 'value': '4'}], PATCH),
    Step('PATCH', core('patch', 'configmaps', 'm'), [{'op': 'test', 'path': '/data/d', 'value': '4'},
                                                     {'op': 'replace', 'path': '/data/d', 'value': '5'}], PATCH),
    Step('PATCH', core('patch', 'configmaps', 'm'), [{'op': 'test', 'path': '/data/d', 'value': 'no'}], PATCH),
    Step('PATCH', core('patch', 'configmaps', 'm'), [{'op': 'remove', 'path': '/data/zz'}], PATCH),
    Step('PATCH', core('patch', 'configmaps', 'm'), [{'op': 'move', 'from': '/data/d', 'path': '/data/e'}], PATCH),
    Step('PATCH', core('patch', 'configmaps', 'm'), [{'op': 'copy', 'from': '/data/e', 'path': '/data/f'}], PATCH),
    Step('PATCH', core('patch', 'configmaps', 'm'), [{'op': 'frobnicate', 'path': '/data'}], PATCH),
    Step('PATCH', core('patch', 'configmaps', 'm'), {'op': 'add'}, PATCH),
    Step('PATCH', core('patch', 'configmaps', 'm'), {'data': {'s': 'm'}}, SMP),
    Step('POST', apps('patch', 'deployments'), deployment('dep')),
    Step('PATCH', DEPLOY, {'spec': {'template': {'spec': {'containers': [{'name': 'main', 'image': 'busybox:2'}]}}}},
         SMP, known=CONTROLLERS),
    Step('PATCH', DEPLOY, {'spec': {'template': {'spec': {'containers': [{'name': 'side', '$patch': 'delete'}]}}}},
         SMP, known=CONTROLLERS),
    Step('PATCH', DEPLOY, {'spec': {'template': {'spec': {'containers': [
        {'name': 'main', 'env': [{'name': 'B', 'value': '2'}]}]}}}}, SMP, known=CONTROLLERS),
    Step('PATCH', DEPLOY, {'spec': {'template': {'spec': {'$setElementOrder/containers': [{'name': 'main'}],
                                                          'containers': [{'name': 'main', 'image': 'b:3'}]}}}},
         SMP, known=CONTROLLERS),
    Step('POST', diffs('patch'), diff('d')),
    Step('PATCH', diffs('patch', 'd'), {'spec': {'size': 5}}, SMP),
    Step('PATCH', diffs('patch', 'd'), {'spec': {'tags': ['a', 'b']}}, MERGE),
    Step('PATCH', core('patch', 'configmaps', 'ap', 'fieldManager=alice'), cm('ap', {'k': 'alice'}), APPLY),
    Step('PATCH', core('patch', 'configmaps', 'ap', 'fieldManager=alice'), cm('ap', {'k': 'alice', 'l': '1'}), APPLY),
    Step('PATCH', core('patch', 'configmaps', 'ap', 'fieldManager=bob'), cm('ap', {'k': 'bob'}), APPLY),
    Step('PATCH', core('patch', 'configmaps', 'ap', 'fieldManager=bob&force=true'), cm('ap', {'k': 'bob'}), APPLY),
    Step('PATCH', core('patch', 'configmaps', 'ap', 'fieldManager=alice'), cm('ap', {'l': '1'}), APPLY),
    Step('PATCH', core('patch', 'configmaps', 'ap'), cm('ap', {'k': 'x'}), APPLY),
    Step('PATCH', core('patch', 'configmaps', 'ap', 'fieldManager=carol'), {'data': {'k': 'c'}}, APPLY),
    Step('PATCH', core('patch', 'configmaps', 'ap', 'fieldManager=dave'), '{not yaml: [', APPLY),
    Step('PATCH', diffs('patch', 'ad', 'fieldManager=alice'), diff('ad', {'size': 2, 'items': [
        {'name': 'a', 'value': '1'}]}), APPLY),
    Step('PATCH', diffs('patch', 'ad', 'fieldManager=bob'), diff('ad', {'size': 2, 'items': [
        {'name': 'b', 'value': '2'}]}), APPLY),
    Step('PATCH', diffs('patch', 'ad', 'fieldManager=bob'), diff('ad', {'size': 9}), APPLY),
    Step('PATCH', core('patch', 'configmaps', 'm'), {'data': {'q': '1'}}, 'application/x-unknown'),
    Step('PATCH', core('patch', 'configmaps', 'm'), {'metadata': {'resourceVersion': '1'}, 'data': {'q': '1'}},
         MERGE),
]

def template(name: str, *ports: dict[str, Any], **container: Any) -> dict[str, Any]:
    """A PodTemplate (no controller acts on it): one container `c` with these ports."""
    return {'apiVersion': 'v1', 'kind': 'PodTemplate', 'metadata': {'name': name},
            'template': {'spec': {'containers': [{'name': 'c', 'image': 'busybox:1', **container,
                                                  **({'ports': list(ports)} if ports else {})}]}}}


def service(name: str, *ports: dict[str, Any]) -> dict[str, Any]:
    return {'apiVersion': 'v1', 'kind': 'Service', 'metadata': {'name': name},
            'spec': {'selector': {'app': name}, **({'ports': list(ports)} if ports else {})}}


def applied(plural: str, name: str, manager: str, body: Any, force: bool = False) -> Step:
    query = f'fieldManager={manager}' + ('&force=true' if force else '')
    return Step('PATCH', core('apply', plural, name, query), body, APPLY)


P80, P80_TCP, P80_UDP = {'containerPort': 80}, {'containerPort': 80, 'protocol': 'TCP'}, {'containerPort': 80,
                                                                                          'protocol': 'UDP'}
S80, S80_TCP, S80_UDP = {'port': 80}, {'port': 80, 'protocol': 'TCP'}, {'port': 80, 'protocol': 'UDP'}
#: Server-side apply where the server defaults a list-map key (ports' `protocol`): merges and conflicts.
APPLIES = [
    namespace('apply'),
    Step('POST', core('apply', 'podtemplates', query='fieldManager=creator'), template('t', P80)),
    applied('podtemplates', 't', 'alice', template('t', P80)),                       # the same port: merged
    applied('podtemplates', 't', 'bob', template('t', P80_TCP)),                     # the default, spelled out
    applied('podtemplates', 't', 'alice', template('t', {**P80, 'name': 'http'})),
    applied('podtemplates', 't', 'bob', template('t', {**P80_TCP, 'name': 'web'})),  # alice's name: conflict
    applied('podtemplates', 't', 'bob', template('t', {**P80, 'name': 'web'}), force=True),
    applied('podtemplates', 't', 'carol', template('t', P80_UDP)),                   # another item
    Step('GET', core('apply', 'podtemplates', 't')),
    applied('podtemplates', 't', 'carol', template('t', P80_UDP, {'containerPort': 81})),
    applied('podtemplates', 't', 'carol', template('t', {'containerPort': 81, 'protocol': 'TCP'})),
    Step('GET', core('apply', 'podtemplates', 't')),
    applied('podtemplates', 't', 'alice', template('t')),                            # alice lets go of hers
    applied('podtemplates', 't', 'bob', template('t')),
    Step('GET', core('apply', 'podtemplates', 't')),
    applied('podtemplates', 'new', 'alice', template('new', P80, {'containerPort': 8080, 'hostPort': 8080})),
    applied('podtemplates', 'new', 'bob', template('new', {'containerPort': 8080, 'hostPort': 9090})),
    applied('podtemplates', 'new', 'alice', template('new', P80, P80)),              # a duplicate item
    applied('podtemplates', 'new', 'alice', template('new', P80, P80_TCP)),          # the same, once defaulted
    applied('podtemplates', 'new', 'alice', template('new', P80_UDP, {**P80, 'hostPort': 80})),
    Step('PATCH', core('apply', 'podtemplates', 'new'), {'template': {'spec': {'containers': [
        {'name': 'c', 'ports': [{'containerPort': 80, 'name': 'smp'}]}]}}}, SMP),
    applied('podtemplates', 'new', 'alice', template('new', {**P80, 'name': 'mine'})),
    applied('podtemplates', 'new', 'alice', template('new', {**P80, 'name': 'mine'}), force=True),
    Step('GET', core('apply', 'podtemplates', 'new')),
    Step('POST', core('apply', 'services', query='fieldManager=creator'), service('s', S80)),
    applied('services', 's', 'alice', service('s', S80)),
    applied('services', 's', 'alice', service('s', {**S80, 'targetPort': 8080})),
    applied('services', 's', 'bob', service('s', {**S80_TCP, 'targetPort': 9090})),
    applied('services', 's', 'bob', service('s', {**S80, 'name': 'a', 'targetPort': 80},
                                            {**S80_UDP, 'name': 'b'})),
    applied('services', 's', 'bob', service('s', {**S80, 'name': 'a', 'targetPort': 81},
                                            {**S80_UDP, 'name': 'b'}), force=True),
    Step('GET', core('apply', 'services', 's')),
    applied('services', 's', 'alice', service('s')),
    applied('services', 's', 'bob', service('s', {**S80_UDP, 'name': 'b'})),
    Step('GET', core('apply', 'services', 's')),
    applied('services', 'fresh', 'alice', service('fresh', {**S80, 'name': 'a'}, {**S80_UDP, 'name': 'b'})),
    applied('services', 'fresh', 'bob', service('fresh', {**S80_TCP, 'name': 'a', 'targetPort': 8080})),
    applied('services', 'fresh', 'bob', service('fresh', {**S80, 'name': 'a', 'targetPort': 8080}), force=True),
    Step('GET', core('apply', 'services', 'fresh')),
]


SUB = [
    namespace('sub'),
    Step('POST', diffs('sub'), diff('s', {'size': 2, 'replicas': 2}, status={'phase': 'ignored'})),
    Step('GET', diffs('sub', 's/status')),
    Step('PATCH', diffs('sub', 's/status'), {'status': {'phase': 'Ready', 'replicas': 1}, 'spec': {'size': 9}},
         MERGE),
    Step('GET', diffs('sub', 's')),
    Step('PUT', diffs('sub', 's'), diff('s', {'size': 4, 'replicas': 2}, status={'phase': 'nope'})),
    Step('PATCH', diffs('sub', 's/status'), [{'op': 'replace', 'path': '/status/phase', 'value': 'Done'}], PATCH),
    Step('PATCH', diffs('sub', 's'), {'metadata': {'labels': {'a': 'b'}}}, MERGE),
    Step('PATCH', diffs('sub', 's'), {'spec': {'size': 5}}, MERGE),
    Step('GET', diffs('sub', 's/scale')),
    Step('PUT', diffs('sub', 's/scale'), {'apiVersion': 'autoscaling/v1', 'kind': 'Scale',
                                          'metadata': {'name': 's', 'namespace': ns('sub')},
                                          'spec': {'replicas': 4}}),
    Step('PATCH', diffs('sub', 's/scale'), {'spec': {'replicas': 6}}, MERGE),
    Step('PATCH', diffs('sub', 's/scale'), {'spec': {'replicas': -1}}, MERGE),
    Step('GET', diffs('sub', 's')),
    Step('PATCH', diffs('sub', 's/status'), {'status': {'replicas': 6}}, MERGE),
    Step('GET', diffs('sub', 's/scale')),
    Step('GET', diffs('sub', 'absent/status')),
    Step('GET', diffs('sub', 'absent/scale')),
    Step('GET', diffs('sub', 's/nonsense')),
    Step('GET', diffs('sub', 'absent/nonsense')),
    Step('PATCH', diffs('sub', 's/nonsense'), {'spec': {}}, MERGE),
    Step('PATCH', diffs('sub', 's/status'), {'status': {'phase': 7}}, MERGE),
    Step('PUT', diffs('sub', 's/status'), diff('s', {'size': 1}, status={'phase': 'Put'})),
    Step('POST', core('sub', 'configmaps'), cm('c')),
    Step('GET', core('sub', 'configmaps', 'c/status')),
    Step('GET', core('sub', 'configmaps', 'c/scale')),
    Step('POST', apps('sub', 'deployments'), deployment('dep', 2)),
    Step('GET', apps('sub', 'deployments', 'dep/scale'), known=('no-controllers',)),
    Step('PATCH', apps('sub', 'deployments', 'dep/scale'), {'spec': {'replicas': 3}}, MERGE, known=('no-controllers',)),
    Step('PATCH', apps('sub', 'deployments', 'dep/status'), {'status': {'readyReplicas': 1}}, MERGE, known=CONTROLLERS),
    Step('GET', apps('sub', 'deployments', 'dep'), known=CONTROLLERS),
    Step('PATCH', f'/api/v1/namespaces/{ns("sub")}/status', {'status': {'phase': 'Active'}}, MERGE),
]

BAD_SPECS: list[dict[str, Any]] = [
    {'size': 'three'}, {'size': 0}, {'size': 11}, {}, {'size': 1, 'mode': 'medium'},
    {'size': 1, 'title': 'UPPER'}, {'size': 1, 'title': 'waytoolongtitle'}, {'size': 1, 'tags': ['a', 'b', 'c', 'd']},
    {'size': 1, 'tags': 'notalist'}, {'size': 1, 'ratio': 'x'}, {'size': 1, 'flag': 'yes'},
    {'size': 1, 'nested': {'depth': 'deep'}}, {'size': 1, 'items': [{'value': 'x'}]},
    {'size': 1, 'items': [{'name': 'a'}, {'name': 'a'}]}, {'size': 2.5},
]
GOOD_SPECS: list[dict[str, Any]] = [
    {'size': 1}, {'size': 2, 'unknown': 'pruned'}, {'size': 3, 'nested': {}}, {'size': 4, 'nested': {'x': 1}},
    {'size': 5, 'free': {'any': {'thing': [1, 'two']}}}, {'size': 6, 'mode': 'slow', 'ratio': 1},
    {'size': 7, 'replicas': None}, {'size': 8, 'tags': []},
]
SCHEMA = [
    namespace('schema'),
    *[Step('POST', diffs('schema'), diff(f'bad{i}', spec)) for i, spec in enumerate(BAD_SPECS)],
    *[Step('POST', diffs('schema'), diff(f'good{i}', spec, extra={'top': 1})) for i, spec in enumerate(GOOD_SPECS)],
    Step('POST', diffs('schema'), {'apiVersion': f'{GROUP}/v1', 'kind': 'Diff', 'metadata': {'name': 'nospec'}}),
    Step('POST', diffs('schema'), diff('withstatus', {'size': 1}, status={'phase': 'x', 'junk': 1})),
    Step('PATCH', diffs('schema', 'good0'), {'spec': {'size': 99}}, MERGE),
    Step('PATCH', diffs('schema', 'good0'), {'spec': {'nested': None}}, MERGE),
    Step('PATCH', diffs('schema', 'good0'), {'spec': {'extra': 'pruned'}}, MERGE),
    Step('PATCH', diffs('schema', 'good0/status'), {'status': {'phase': 1}}, MERGE),
    Step('GET', diffs('schema')),
]

GONE = dict(until_gone=True)
DELETION = [
    namespace('del'),
    Step('POST', core('del', 'configmaps'), cm('fin', finalizers=['kopf.dev/hold'])),
    Step('DELETE', core('del', 'configmaps', 'fin')),
    Step('GET', core('del', 'configmaps', 'fin')),
    Step('PATCH', core('del', 'configmaps', 'fin'), {'data': {'late': 'edit'}}, MERGE),
    Step('PATCH', core('del', 'configmaps', 'fin'), {'metadata': {'finalizers': ['kopf.dev/new']}}, MERGE),
    Step('DELETE', core('del', 'configmaps', 'fin')),
    Step('PATCH', core('del', 'configmaps', 'fin'), {'metadata': {'finalizers': None}}, MERGE),
    Step('GET', core('del', 'configmaps', 'fin'), **GONE),
    Step('POST', core('del', 'configmaps'), cm('pre')),
    Step('DELETE', core('del', 'configmaps', 'pre'), {'kind': 'DeleteOptions', 'apiVersion': 'v1',
                                                      'preconditions': {'uid': 'not-the-uid'}}),
    Step('DELETE', core('del', 'configmaps', 'pre'), {'kind': 'DeleteOptions', 'apiVersion': 'v1',
                                                      'preconditions': {'resourceVersion': '1'}}),
    Step('DELETE', core('del', 'configmaps', 'pre'), {'propagationPolicy': 'Sideways'}),
    Step('DELETE', core('del', 'configmaps', 'pre'), {'gracePeriodSeconds': 0}),
    Step('GET', core('del', 'configmaps', 'pre')),
    *[step for policy in ('Background', 'Foreground', 'Orphan') for step in [
        Step('POST', core('del', 'configmaps'), cm(f'owner-{policy.lower()}'), save=policy),
        Step('POST', core('del', 'configmaps'), cm(f'child-{policy.lower()}', ownerReferences=[{
            'apiVersion': 'v1', 'kind': 'ConfigMap', 'name': f'owner-{policy.lower()}', 'uid': f'{{{policy}_uid}}'}])),
        Step('DELETE', core('del', 'configmaps', f'owner-{policy.lower()}'), {'propagationPolicy': policy}),
        Step('GET', core('del', 'configmaps', f'owner-{policy.lower()}'), **GONE),
        Step('GET', core('del', 'configmaps', f'child-{policy.lower()}'), until_gone=policy != 'Orphan'),
    ]],
    Step('DELETE', core('del', 'configmaps', 'absent')),
    Step('POST', core('del', 'configmaps'), cm('l1', labels={'batch': 'x'})),
    Step('POST', core('del', 'configmaps'), cm('l2', labels={'batch': 'x'})),
    Step('DELETE', core('del', 'configmaps', query='labelSelector=batch%3Dx')),
    Step('GET', core('del', 'configmaps', query='labelSelector=batch%3Dx')),
    Step('POST', diffs('del'), diff('crfin', {'size': 1}, ) | {'metadata': {'name': 'crfin',
                                                                          'finalizers': ['kopf.dev/hold']}}),
    Step('DELETE', diffs('del', 'crfin')),
    Step('GET', diffs('del', 'crfin')),
    Step('PATCH', diffs('del', 'crfin'), [{'op': 'remove', 'path': '/metadata/finalizers'}], PATCH),
    Step('GET', diffs('del', 'crfin'), **GONE),
]

WCM = core('watch', 'configmaps')
WATCH = [
    namespace('watch'),
    Step('GET', WCM, save='start'),
    *[Step('POST', WCM, cm(f'w{i}', labels={'i': str(i)})) for i in range(4)],
    Step('PATCH', core('watch', 'configmaps', 'w1'), {'data': {'b': '2'}}, MERGE),
    Step('DELETE', core('watch', 'configmaps', 'w2')),
    Step('GET', WCM, save='later'),
    Step('GET', WCM + '?watch=1&timeoutSeconds=2&resourceVersion={start}', events=6),
    Step('GET', WCM + '?watch=1&timeoutSeconds=2&resourceVersion={start}&labelSelector=i%3D1', events=2),
    Step('GET', WCM + '?watch=1&timeoutSeconds=2&resourceVersion={start}&fieldSelector=metadata.name%3Dw2', events=2),
    Step('GET', WCM + '?watch=1&timeoutSeconds=2&resourceVersion={later}', events=1),
    Step('GET', WCM + '?watch=1&timeoutSeconds=2&resourceVersion={start}&labelSelector=i%20in%20(0,3)', events=2),
    Step('GET', WCM + '?watch=1&timeoutSeconds=2&sendInitialEvents=true&resourceVersionMatch=NotOlderThan'
                      '&allowWatchBookmarks=true', events=4),
    Step('GET', WCM + '?watch=1&timeoutSeconds=2&sendInitialEvents=true&resourceVersionMatch=NotOlderThan'
                      '&allowWatchBookmarks=true&labelSelector=i%3D3', events=2),
    Step('GET', WCM + '?watch=1&timeoutSeconds=2&sendInitialEvents=true'),
    Step('GET', WCM + '?watch=1&timeoutSeconds=2&sendInitialEvents=true&resourceVersionMatch=NotOlderThan', events=3),
    Step('GET', WCM + '?watch=1&timeoutSeconds=2&resourceVersionMatch=NotOlderThan'),
    Step('GET', WCM + '?watch=1&timeoutSeconds=2&resourceVersionMatch=Exact&resourceVersion={start}'),
    Step('GET', WCM + '?watch=1&timeoutSeconds=2&resourceVersion=abc', known=('status-500',)),
    Step('GET', WCM + '?watch=1&timeoutSeconds=2&labelSelector=%3D%3D%3D'),
    Step('POST', diffs('watch'), diff('wd'), save='wd'),
    Step('PATCH', diffs('watch', 'wd/status'), {'status': {'phase': 'Ready'}}, MERGE),
    Step('PATCH', diffs('watch', 'wd'), {'spec': {'size': 4}}, MERGE),
    Step('GET', diffs('watch', query='watch=1&timeoutSeconds=2&resourceVersion={wd}'), events=2),
    Step('GET', diffs('watch', query='watch=1&timeoutSeconds=2&resourceVersion={wd}&fieldSelector=metadata.name%3Dwd'),
         events=2),
    Step('GET', '/api/v1/configmaps?watch=1&timeoutSeconds=2&resourceVersion={start}&labelSelector=i%3D0', events=1),
    Step('GET', WCM + '?resourceVersion={start}&resourceVersionMatch=NotOlderThan'),
    Step('GET', WCM + '?resourceVersion=0'),
]
#: Run against a kube-apiserver without the watch cache (`--watch-cache=false`), so that an etcd
#: compaction is what a watch from an old resourceVersion meets.
EXPIRED = [
    namespace('expire'),
    Step('POST', core('expire', 'configmaps'), cm('x0'), save='old'),
    *[Step('PATCH', core('expire', 'configmaps', 'x0'), {'data': {'n': str(i)}}, MERGE) for i in range(3)],
    Step('POST', core('expire', 'configmaps'), cm('x1'), save='new'),
    Step('GET', core('expire', 'configmaps', query='watch=1&timeoutSeconds=2&resourceVersion={old}'), events=4),
    Step('compact', '', action='compact'),
    Step('GET', core('expire', 'configmaps', query='watch=1&timeoutSeconds=2&resourceVersion={old}'), events=1),
    Step('GET', core('expire', 'configmaps', query='resourceVersion={old}&resourceVersionMatch=Exact')),
    Step('GET', core('expire', 'configmaps', query='watch=1&timeoutSeconds=2&resourceVersion={new}'), events=1),
]

SCM = core('select', 'configmaps')
SELECTED = [('red', 'small'), ('red', 'large'), ('blue', 'small'), ('blue', 'large'), ('green', '')]
SELECTORS = [
    namespace('select'),
    *[Step('POST', SCM, cm(f's{i}', labels={'color': c, **({'size': z} if z else {})}))
      for i, (c, z) in enumerate(SELECTED)],
    *[Step('GET', f'{SCM}?labelSelector={query}') for query in (
        'color%3Dred', 'color%3D%3Dred', 'color!%3Dred', 'color%20in%20(red,blue)', 'color%20notin%20(red)',
        'size', '!size', 'color%3Dred,size%3Dlarge', 'color%3Dpurple', 'size%20in%20()', 'color%3D',
        'bad%20key%3Dx', 'color%3D%3D%3Dx', 'a/b/c%3Dx')],
    *[Step('GET', f'{SCM}?fieldSelector={query}') for query in (
        'metadata.name%3Ds1', 'metadata.name!%3Ds1', f'metadata.namespace%3D{ns("select")}',
        'metadata.name%3Ds1,metadata.name%3Ds2', 'spec.nothing%3Dx', 'metadata.name%3D%3Ds3')],
    Step('GET', '/api/v1/configmaps?labelSelector=color%3Dgreen'),
    Step('GET', f'{SCM}?limit=2&labelSelector=color', save='page1'),
    Step('GET', SCM + '?limit=2&labelSelector=color&continue={page1_continue}', save='page2'),
    Step('GET', SCM + '?limit=2&labelSelector=color&continue={page2_continue}'),
    Step('GET', f'{SCM}?limit=2&labelSelector=size', save='lpage1'),
    Step('GET', SCM + '?limit=2&labelSelector=size&continue={lpage1_continue}'),
    Step('GET', f'{SCM}?limit=0&labelSelector=color'),
    Step('GET', f'{SCM}?limit=-1&labelSelector=color'),
    Step('GET', f'{SCM}?continue=garbage'),
    Step('GET', f'{SCM}?limit=abc'),
    Step('POST', core('select', 'pods'), {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'p'},
                                          'spec': UNSCHEDULED}, known=PODS),
    *[Step('GET', core('select', 'pods', query=f'fieldSelector={q}'), known=PODS) for q in (
        'status.phase%3DPending', 'spec.nodeName%3D', 'status.phase%3DRunning', 'spec.restartPolicy%3DAlways')],
    Step('GET', core('select', 'secrets', query='fieldSelector=type%3DOpaque')),
]

TCM = core('tables', 'configmaps')
TABLES = [
    namespace('tables'),
    *[Step('POST', TCM, cm(f't{i}', {str(k): 'v' for k in range(i)}, labels={'n': str(i)})) for i in range(1, 4)],
    Step('GET', TCM, accept=TABLE, known=COLUMNS + TYPES),
    Step('GET', core('tables', 'configmaps', 't1'), accept=TABLE, known=COLUMNS + TYPES),
    Step('GET', TCM + '?includeObject=None', accept=TABLE, known=COLUMNS + TYPES),
    Step('GET', TCM + '?includeObject=Object', accept=TABLE, known=COLUMNS + TYPES),
    Step('GET', TCM + '?includeObject=Metadata', accept=TABLE, known=COLUMNS + TYPES),
    Step('GET', TCM + '?includeObject=Bogus', accept=TABLE, known=COLUMNS + TYPES),
    Step('GET', TCM + '?labelSelector=n%3D2', accept=TABLE, known=COLUMNS + TYPES),
    Step('GET', TCM + '?limit=1&labelSelector=n', accept=TABLE, known=COLUMNS + TYPES),
    Step('GET', core('tables', 'configmaps', 'absent'), accept=TABLE, known=COLUMNS + TYPES),
    Step('POST', diffs('tables'), diff('t', {'size': 7, 'mode': 'slow'})),
    Step('GET', diffs('tables'), accept=TABLE),
    Step('GET', diffs('tables', 't'), accept=TABLE),
    Step('GET', diffs('tables', query='includeObject=Object'), accept=TABLE),
    Step('POST', core('tables', 'secrets'), {'apiVersion': 'v1', 'kind': 'Secret', 'metadata': {'name': 's'},
                                             'data': {'a': 'YQ=='}}),
    Step('GET', core('tables', 'secrets'), accept=TABLE, known=COLUMNS + TYPES),
    Step('POST', core('tables', 'serviceaccounts'), {'apiVersion': 'v1', 'kind': 'ServiceAccount',
                                                     'metadata': {'name': 'sa'}}),
    Step('GET', core('tables', 'serviceaccounts'), accept=TABLE),
    Step('POST', core('tables', 'pods'), {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'p'},
                                          'spec': UNSCHEDULED}, known=PODS),
    Step('GET', core('tables', 'pods'), accept=TABLE),
    Step('POST', apps('tables', 'deployments'), deployment('d')),
    Step('GET', apps('tables', 'deployments'), accept=TABLE, known=CONTROLLERS),
    Step('GET', f'/api/v1/namespaces/{ns("tables")}', accept=TABLE, known=COLUMNS + TYPES),
    Step('GET', f'/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD_NAME}', accept=TABLE,
         known=COLUMNS + TYPES),
    Step('GET', f'/apis/coordination.k8s.io/v1/namespaces/{ns("tables")}/leases', accept=TABLE, known=COLUMNS + TYPES),
    Step('GET', TCM, accept='application/json;as=Table;v=v1beta1;g=meta.k8s.io'),
    Step('GET', TCM, accept='application/json;as=Table;v=v9;g=meta.k8s.io'),
    Step('GET', diffs('tables'), accept='application/json;as=Table;v=v1beta1;g=meta.k8s.io'),
    Step('GET', TCM, accept='application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json'),
    Step('GET', TCM, accept='application/xml'),
    Step('GET', core('tables', 'configmaps', 't1'), accept='text/html'),
]

DRY = 'dryRun=All'
DCM = core('dry', 'configmaps')
DRYRUN = [
    namespace('dry'),
    Step('POST', f'{DCM}?{DRY}', cm('dc')),
    Step('GET', core('dry', 'configmaps', 'dc')),
    Step('POST', f'{DCM}?{DRY}', cm('', generateName='dry-')),
    Step('POST', f'{DCM}?dryRun=Some', cm('dc')),
    Step('POST', f'{DCM}?dryRun=All&dryRun=All', cm('dc')),
    Step('POST', DCM, cm('real', {'a': '1'})),
    Step('PUT', core('dry', 'configmaps', 'real', DRY), cm('real', {'a': '2'})),
    Step('GET', core('dry', 'configmaps', 'real')),
    Step('PATCH', core('dry', 'configmaps', 'real', DRY), {'data': {'b': '3'}}, MERGE),
    Step('PATCH', core('dry', 'configmaps', 'real', DRY), [{'op': 'add', 'path': '/data/c', 'value': '4'}], PATCH),
    Step('PATCH', core('dry', 'configmaps', 'real', DRY), {'data': {'d': '5'}}, SMP),
    Step('PATCH', core('dry', 'configmaps', 'real', f'{DRY}&fieldManager=m'), cm('real', {'e': '6'}), APPLY),
    Step('PATCH', core('dry', 'configmaps', 'new', f'{DRY}&fieldManager=m'), cm('new'), APPLY),
    Step('GET', core('dry', 'configmaps', 'new')),
    Step('GET', core('dry', 'configmaps', 'real')),
    Step('DELETE', core('dry', 'configmaps', 'real', DRY)),
    Step('GET', core('dry', 'configmaps', 'real')),
    Step('DELETE', core('dry', 'configmaps', 'absent', DRY)),
    Step('POST', f'{DCM}?{DRY}', cm('Invalid_Name')),
    Step('POST', f'{DCM}?{DRY}', cm('real')),
    Step('POST', f'{diffs("dry")}?{DRY}', diff('dd', {'size': 2, 'junk': 1})),
    Step('POST', f'{diffs("dry")}?{DRY}', diff('dd', {'size': 20})),
    Step('GET', diffs('dry', 'dd')),
    Step('POST', diffs('dry'), diff('dd')),
    Step('PATCH', diffs('dry', 'dd/status', DRY), {'status': {'phase': 'Dry'}}, MERGE),
    Step('PATCH', diffs('dry', 'dd/scale', DRY), {'spec': {'replicas': 5}}, MERGE),
    Step('GET', diffs('dry', 'dd')),
    Step('DELETE', core('dry', 'configmaps', query=DRY)),
    Step('GET', DCM),
    Step('POST', f'/api/v1/namespaces?{DRY}', {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': 'd-x'}}),
    Step('GET', '/api/v1/namespaces/d-x'),
]

BCM = core('bad', 'configmaps')
BAD_NAMES = ['UPPER', 'under_score', 'a' * 254, '-start', 'end-', 'a..b', 'sp ace', '.', 'a/b', 'x' * 253]
BAD_LABELS: list[dict[str, str]] = [
    {'bad key': 'v'}, {'k': 'bad value'}, {'k': 'v' * 64}, {'a/b/c': 'v'}, {'-k': 'v'}, {'k': '-v'},
    {'x' * 64: 'v'}, {'UPPER.example.com/k': 'v'}, {'': 'v'}, {'ok.example.com/': 'v'},
]
BAD_INPUT = [
    namespace('bad'),
    Step('POST', BCM, '{'),
    Step('POST', BCM, '[]'),
    Step('POST', BCM, '"string"'),
    Step('POST', BCM, ''),
    Step('POST', BCM, {'apiVersion': 'v1', 'kind': 'Secret', 'metadata': {'name': 'wrongkind'}}),
    Step('POST', BCM, {'apiVersion': 'v2', 'kind': 'ConfigMap', 'metadata': {'name': 'wrongversion'}}),
    Step('POST', BCM, {'kind': 'ConfigMap', 'metadata': {'name': 'noversion'}}),
    Step('POST', BCM, cm('otherns', namespace='elsewhere')),
    Step('POST', BCM, cm('')),
    Step('POST', BCM, cm('', generateName='Bad_')),
    Step('POST', BCM, {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'baddata'}, 'data': {'a b': 'x'}}),
    Step('POST', BCM, {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'wrongtype'}, 'data': 'x'}),
    Step('POST', BCM, {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 7}}),
    *[Step('POST', BCM, cm(name)) for name in BAD_NAMES],
    *[Step('POST', BCM, cm(f'label{i}', labels=labels)) for i, labels in enumerate(BAD_LABELS)],
    Step('POST', BCM, cm('bigann', annotations={'a': 'x' * (256 * 1024)})),
    Step('POST', BCM, cm('bigann2', annotations={f'k{i}': 'x' * 30000 for i in range(9)})),
    Step('POST', BCM, cm('badann', annotations={'bad key': 'v'})),
    Step('POST', BCM, cm('stale'), save='stale'),
    Step('PATCH', core('bad', 'configmaps', 'stale'), {'data': {'b': '2'}}, MERGE),
    Step('PUT', core('bad', 'configmaps', 'stale'), cm('stale') | {'metadata': {'name': 'stale',
                                                                             'resourceVersion': '{stale}'}}),
    Step('PUT', core('bad', 'configmaps', 'stale'), cm('stale') | {'metadata': {'name': 'stale',
                                                                             'resourceVersion': 'abc'}},
         known=('status-500',)),
    Step('PUT', core('bad', 'configmaps', 'stale'), cm('other')),
    Step('PUT', core('bad', 'configmaps', 'absent'), cm('absent')),
    Step('PATCH', core('bad', 'configmaps', 'stale'), {'metadata': {'name': 'renamed'}}, MERGE),
    Step('PATCH', core('bad', 'configmaps', 'stale'), {'metadata': {'uid': 'other'}}, MERGE),
    Step('PATCH', core('bad', 'configmaps', 'stale'), {'metadata': {'namespace': 'other'}}, MERGE),
    Step('POST', BCM, {'x': 1}, 'text/plain'),
    Step('POST', BCM, cm('form'), 'application/x-www-form-urlencoded'),
    Step('PUT', core('bad', 'configmaps', 'stale'), cm('stale'), 'application/x-www-form-urlencoded'),
    Step('POST', BCM, cm('yamlbody'), 'application/yaml'),
    Step('GET', core('bad', 'nonexistents')),
    Step('GET', '/api/v1/namespaces/Bad_NS/configmaps'),
    Step('POST', core('nope', 'configmaps'), cm('nons')),
    Step('GET', f'{BCM}?resourceVersion=abc'),
    Step('GET', f'{BCM}?resourceVersionMatch=Exact'),
    Step('GET', f'{BCM}?timeoutSeconds=abc&watch=1'),
    Step('DELETE', BCM + '/stale', '{', known=('status-500',)),
    Step('POST', diffs('bad'), {'apiVersion': f'{GROUP}/v2', 'kind': 'Diff', 'metadata': {'name': 'v2'}}),
    Step('POST', diffs('bad'), {'apiVersion': f'{GROUP}/v1', 'kind': 'Other', 'metadata': {'name': 'k'},
                                'spec': {'size': 1}}),
    Step('PUT', '/api/v1/namespaces/d-bad', {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': 'd-other'}}),
]

ACM = '/api/v1/namespaces/d-admit/configmaps'
REVIEWS = Step('reviews', '', action='reviews')
ADMISSION = [
    Step('POST', ACM, cm('a1')), REVIEWS,
    Step('POST', ACM, cm('a2', {'x': '1'}, labels={'own': 'label'})), REVIEWS,
    Step('POST', ACM, cm('denied', {'deny': 'yes'})), REVIEWS,
    Step('GET', f'{ACM}/denied'),
    Step('PATCH', f'{ACM}/a1', {'data': {'b': '2'}}, MERGE), REVIEWS,
    Step('PATCH', f'{ACM}/a1', {'data': {'deny': 'now'}}, MERGE), REVIEWS,
    Step('PUT', f'{ACM}/a2', cm('a2', {'x': '2'})), REVIEWS,
    Step('POST', f'{ACM}?dryRun=All', cm('dry')), REVIEWS,
    Step('POST', ACM, cm('', generateName='gen-')), REVIEWS,
    Step('PATCH', f'{ACM}/applied?fieldManager=m', cm('applied'), APPLY), REVIEWS,
    Step('PATCH', f'{ACM}/applied?fieldManager=m', cm('applied', {'a': '2'}), APPLY), REVIEWS,
    Step('DELETE', f'{ACM}/a1'), REVIEWS,
    Step('DELETE', f'{ACM}/a2?dryRun=All'), REVIEWS,
    Step('POST', '/api/v1/namespaces/d-admit/secrets', {'apiVersion': 'v1', 'kind': 'Secret',
                                                         'metadata': {'name': 's'}}), REVIEWS,
    Step('GET', ACM), REVIEWS,
    Step('POST', core('crud', 'configmaps'), cm('not-selected')), REVIEWS,
]
