"""The CEL category of the differential suite: CRDs with `x-kubernetes-validations`, objects that pass
and fail them, transition rules, ratcheting, and CRDs that a real server refuses for their rules.
"""
from typing import Any

from .harness import MERGE, Step
from .steps import GROUP, namespace, ns

CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'
RULED = f'rules.{GROUP}'


def rules(*specs: Any) -> list[dict[str, Any]]:
    return [s if isinstance(s, dict) else {'rule': s} for s in specs]


#: The category's CRD: rules at every level, with messages, expressions, reasons, field paths, old values.
RULES_SCHEMA: dict[str, Any] = {'type': 'object', 'properties': {
    'spec': {'type': 'object', 'x-kubernetes-validations': rules(
        {'rule': 'self.minReplicas <= self.maxReplicas', 'message': 'minReplicas must not exceed maxReplicas'},
        {'rule': "!has(self.mode) || self.mode in ['fast', 'slow']",
         'messageExpression': "'mode ' + self.mode + ' is not supported'"},
        {'rule': "self.image.matches('^[a-z]+:[0-9.]+$')", 'fieldPath': '.image', 'reason': 'FieldValueInvalid'},
        {'rule': '!has(self.owner) || self.owner.size() > 2', 'reason': 'FieldValueForbidden',
         'message': 'owner is too short'},
        {'rule': '!has(self.tier) || has(self.owner)', 'reason': 'FieldValueRequired',
         'message': 'a tier needs an owner', 'fieldPath': '.owner'},
    ), 'properties': {
        'minReplicas': {'type': 'integer', 'default': 0},
        'maxReplicas': {'type': 'integer', 'default': 5},
        'mode': {'type': 'string', 'maxLength': 10},
        'image': {'type': 'string', 'default': 'app:1.0', 'maxLength': 64},
        'owner': {'type': 'string', 'maxLength': 64},
        'tier': {'type': 'string'},
        'ratio': {'type': 'number', 'x-kubernetes-validations': rules(
            {'rule': 'self >= 0.0 && self <= 1.0', 'message': 'ratio is a fraction'})},
        'immutable': {'type': 'string', 'x-kubernetes-validations': rules(
            {'rule': 'self == oldSelf', 'message': 'immutable is immutable'})},
        'grow': {'type': 'integer', 'x-kubernetes-validations': rules(
            {'rule': 'self >= oldSelf', 'message': 'may only grow'})},
        'first': {'type': 'string', 'x-kubernetes-validations': rules(
            {'rule': "oldSelf.hasValue() || self == 'initial'", 'optionalOldSelf': True,
             'message': 'first must start as initial'})},
        'labels': {'type': 'object', 'additionalProperties': {'type': 'string'},
                   'x-kubernetes-validations': rules(
                       {'rule': 'self.all(k, k.size() <= 5)', 'message': 'label keys are short'},
                       "self.all(k, v, !v.startsWith('-'))")},
        'ports': {'type': 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'],
                  'items': {'type': 'object', 'required': ['name'], 'properties': {
                      'name': {'type': 'string', 'maxLength': 10}, 'port': {'type': 'integer'}},
                      'x-kubernetes-validations': rules(
                          {'rule': 'self.port > 1024', 'messageExpression': "'port ' + self.name + ' is privileged'"},
                          {'rule': '!has(oldSelf.port) || self.port == oldSelf.port', 'message': 'ports are fixed'})},
                  'x-kubernetes-validations': rules(
                      {'rule': 'self.map(p, p.port).isSorted()', 'message': 'ports are sorted'})},
        'count': {'x-kubernetes-int-or-string': True, 'x-kubernetes-validations': rules(
            "type(self) == int ? self > 0 : self.endsWith('%')")},
        'words': {'type': 'array', 'maxItems': 5, 'items': {'type': 'string', 'maxLength': 10},
                  'x-kubernetes-validations': rules(
            {'rule': "self.join(' ').size() < 20", 'message': 'too many words'},
            "self.exists_one(w, w == 'main') || size(self) == 0",
            "self.filter(w, w.contains('x')).size() == 0")},
        'free': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True},
        'when': {'type': 'string', 'format': 'date-time', 'x-kubernetes-validations': rules(
            "self > timestamp('2000-01-01T00:00:00Z')")},
        'delay': {'type': 'string', 'format': 'duration', 'x-kubernetes-validations': rules(
            "self < duration('1h')")},
        'division': {'type': 'integer', 'x-kubernetes-validations': rules('10 / self > 0')},
        'choice': {'type': 'object', 'properties': {'a': {'type': 'string'}, 'b': {'type': 'string'}},
                   'oneOf': [{'required': ['a']}, {'required': ['b']}]},
        'either': {'type': 'string', 'anyOf': [{'pattern': '^x'}, {'maxLength': 2}]},
        'both': {'type': 'integer', 'allOf': [{'minimum': 1}, {'maximum': 5}]},
        'never': {'type': 'string', 'not': {'enum': ['bad']}},
    }},
    'status': {'type': 'object', 'properties': {'phase': {'type': 'string'}},
               'x-kubernetes-validations': rules(
                   {'rule': "self.phase != 'Broken'", 'message': 'status cannot be broken'})},
}, 'x-kubernetes-validations': rules(
    {'rule': "self.metadata.name.startsWith('r')", 'message': 'names start with r'})}


def crd(name: str, schema: dict[str, Any], kind: str = '') -> dict[str, Any]:
    plural = name.split('.')[0]
    kind = kind or plural.capitalize()[:-1]
    return {'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition', 'metadata': {'name': name},
            'spec': {'group': GROUP, 'scope': 'Namespaced',
                     'names': {'plural': plural, 'singular': plural[:-1], 'kind': kind},
                     'versions': [{'name': 'v1', 'served': True, 'storage': True, 'subresources': {'status': {}},
                                   'schema': {'openAPIV3Schema': schema}}]}}


RULED_CRD = crd(RULED, RULES_SCHEMA, 'Rule')


def path(name: str = '', sub: str = '') -> str:
    return f'/apis/{GROUP}/v1/namespaces/{ns("cel")}/rules' + (f'/{name}' if name else '') + (
        f'/{sub}' if sub else '')


def obj(name: str, **spec: Any) -> dict[str, Any]:
    return {'apiVersion': f'{GROUP}/v1', 'kind': 'Rule', 'metadata': {'name': name}, 'spec': spec}


PORTS = [{'name': 'http', 'port': 8080}, {'name': 'https', 'port': 8443}]
GOOD = [
    {}, {'minReplicas': 2, 'maxReplicas': 2}, {'mode': 'fast'}, {'image': 'web:2.1.3'}, {'owner': 'team'},
    {'tier': 'gold', 'owner': 'ops'}, {'ratio': 0.5}, {'ratio': 1}, {'labels': {'a': 'b'}}, {'ports': PORTS},
    {'count': 3}, {'count': '50%'}, {'words': ['main', 'alt']}, {'free': {'a': 1}},
    {'when': '2024-05-01T10:00:00Z'}, {'delay': '30m'}, {'first': 'initial'},
    {'choice': {'a': '1'}}, {'either': 'xyz'}, {'either': 'ab'}, {'both': 3}, {'never': 'good'},
]
BAD = [
    {'minReplicas': 3, 'maxReplicas': 2}, {'mode': 'turbo'}, {'image': 'Web:latest'}, {'owner': 'x'},
    {'tier': 'gold'}, {'ratio': 1.5}, {'labels': {'toolong': 'b'}}, {'labels': {'a': '-b'}},
    {'ports': [{'name': 'ssh', 'port': 22}]}, {'ports': [{'name': 'b', 'port': 9000}, {'name': 'a', 'port': 8000}]},
    {'count': 0}, {'count': 'half'}, {'words': ['alt']}, {'words': ['main', 'xray']},
    {'words': ['main', 'main']}, {'when': '1999-05-01T10:00:00Z'},
    {'delay': '2h'}, {'division': 0}, {'division': 20}, {'first': 'later'},
    {'minReplicas': 9, 'mode': 'turbo', 'owner': 'x'},
    {'minReplicas': 9, 'maxReplicas': 5, 'image': 'X', 'tier': 'gold'},
    {'choice': {}}, {'choice': {'a': '1', 'b': '2'}}, {'either': 'abc'}, {'both': 0}, {'both': 9},
    {'never': 'bad'}, {'both': 0, 'minReplicas': 9},
]

OBJECTS = [
    namespace('cel'),
    *[Step('POST', path(), obj(f'rgood{i}', **spec)) for i, spec in enumerate(GOOD)],
    *[Step('POST', path(), obj(f'rbad{i}', **spec)) for i, spec in enumerate(BAD)],
    Step('POST', path(), obj('wrong-name')),
    Step('POST', path(), obj('rmissing', mode=5)),
    Step('POST', path(), obj('rmissing', ports=[{'port': 9000}])),
]
TRANSITIONS = [
    Step('POST', path(), obj('rtrans', immutable='a', grow=3, ports=PORTS, first='initial')),
    Step('PATCH', path('rtrans'), {'spec': {'immutable': 'b'}}, MERGE),
    Step('PATCH', path('rtrans'), {'spec': {'grow': 2}}, MERGE),
    Step('PATCH', path('rtrans'), {'spec': {'grow': 4}}, MERGE),
    Step('PATCH', path('rtrans'), {'spec': {'first': 'other'}}, MERGE),
    Step('PATCH', path('rtrans'), {'spec': {'ports': [{'name': 'http', 'port': 9090}, PORTS[1]]}}, MERGE),
    Step('PATCH', path('rtrans'), {'spec': {'ports': [*PORTS, {'name': 'x', 'port': 9999}]}}, MERGE),
    Step('PATCH', path('rtrans'), {'spec': {'immutable': None}}, MERGE),
    Step('PATCH', path('rtrans'), {'spec': {'immutable': 'c'}}, MERGE),
    Step('PATCH', path('rtrans', 'status'), {'status': {'phase': 'Broken'}}, MERGE),
    Step('PATCH', path('rtrans', 'status'), {'status': {'phase': 'Fine'}}, MERGE),
    Step('GET', path('rtrans')),
]

SIMPLE = {'a': {'type': 'string'}, 'n': {'type': 'integer'},
          'list': {'type': 'array', 'items': {'type': 'string'}},
          'limited': {'type': 'array', 'maxItems': 10, 'items': {'type': 'string', 'maxLength': 10}}}


def refused(index: int, *specs: Any, properties: dict[str, Any] | None = None, root: bool = False) -> Step:
    """A CRD whose spec declares `specs` as its rules (or the root does): a real server refuses it."""
    spec_schema: dict[str, Any] = {'type': 'object', 'properties': properties or SIMPLE}
    schema: dict[str, Any] = {'type': 'object', 'properties': {'spec': spec_schema}}
    if specs:
        (schema if root else spec_schema)['x-kubernetes-validations'] = rules(*specs)
    return Step('POST', CRDS, crd(f'refused{index}s.{GROUP}', schema))


ITEMS_WITH_OLD = {'list': {'type': 'array', 'items': {'type': 'object', 'properties': {'a': {'type': 'string'}},
                                                        'x-kubernetes-validations': rules('self.a == oldSelf.a')}}}
ATOMIC_WITH_OLD = {'m': {'type': 'object', 'x-kubernetes-map-type': 'atomic', 'properties': {
    'a': {'type': 'string', 'x-kubernetes-validations': rules('self == oldSelf')}}}}
REFUSED_RULES: list[tuple[Any, ...]] = [
    ('self.nope == 1',), ('self.a ==',), ('self.a',), ("self.a + 1 == 'x'",), ('self.a.frob()',),
    ({'rule': 'self.n > 0', 'message': 'two\nlines'},), (' ',), ({'rule': 'self.n > 0', 'reason': 'FieldValueBogus'},),
    ({'rule': 'self.n > 0', 'fieldPath': '.nope'},), ({'rule': 'self.n > 0', 'optionalOldSelf': True},),
    ({'rule': 'self.n > 0', 'messageExpression': '1'},), ({'rule': 'self.n > 0', 'messageExpression': 'self.nope'},),
    ('self.n > 0 &&\nself.n < 5',), ("[1, 'a'].size() == 2",), ('self.list.all(1, true)',),
    ('self.n in [1, 2] || self.a.startsWith(1)',), ("self.a.size() == 1 && self.b == 'x' && self.c",),
    ('has(self.a.b)',), ('self.list.map(x, x + 1).size() > 0',), ("self.n == 'x'",),
    ('self.a.matches(1)',), ('size(self.n) > 0',), ('self.limited.exists(x, x = 1)',), ('self.n > 0 ? 1 : 2',),
    ('self.n.foo()',), ('oldSelf.nope == 1',), ('self.list[0] == 1',), ('{1: 2}[1] == 2 && self.x',),
    ('self.list.exists_one(x, x)',), ('int(self.a) == 1u',),
]
REFUSED = [
    *[refused(i, *specs) for i, specs in enumerate(REFUSED_RULES)],
    refused(40, "self.metadata.labels.size() > 0", root=True),
    refused(41, 'self.spec.a == oldSelf.spec.a', root=True),
    refused(42, properties=ITEMS_WITH_OLD),
    refused(43, properties=ATOMIC_WITH_OLD),
    refused(44, 'self.free.size() < 3', properties={'free': {'type': 'object',
                                                              'x-kubernetes-preserve-unknown-fields': True}}),
    refused(45, 'self.list.all(x, self.list.all(y, x == y))'),
    refused(46, 'self.limited.all(x, self.limited.all(y, x == y))', "self.list.exists(x, x.contains(self.a))"),
    refused(47, properties={'deep': {'type': 'array', 'items': {'type': 'object', 'properties': {
        'words': {'type': 'array', 'items': {'type': 'string'}}},
        'x-kubernetes-validations': rules("self.words.all(w, w.matches('^[a-z]+$'))")}}}),
    refused(48, *[f"self.limited.all(x, x.matches('^[a-z]{{{i}}}$'))" for i in range(1, 13)],
            properties={'limited': {'type': 'array', 'maxItems': 7000,
                                    'items': {'type': 'string', 'maxLength': 1000}}}),
    Step('GET', f'{CRDS}/refused0s.{GROUP}'),
]
CEL = [*OBJECTS, *TRANSITIONS, *REFUSED]

# ---- ValidatingAdmissionPolicies: the fixture `policed` stores these on both sides and waits until they act.
ADMISSION = '/apis/admissionregistration.k8s.io/v1'
VAP_NS = 'd-vap'
CM_RULES = [{'apiGroups': [''], 'apiVersions': ['v1'], 'operations': ['CREATE', 'UPDATE'], 'resources': ['configmaps']}]
SCOPE = {'namespaceSelector': {'matchLabels': {'vap': 'yes'}}}


def vap(name: str, **spec: Any) -> dict[str, Any]:
    return {'apiVersion': 'admissionregistration.k8s.io/v1', 'kind': 'ValidatingAdmissionPolicy',
            'metadata': {'name': name}, 'spec': {'matchConstraints': {'resourceRules': CM_RULES, **SCOPE}, **spec}}


def vap_binding(name: str, policy: str, *actions: str, **spec: Any) -> dict[str, Any]:
    return {'apiVersion': 'admissionregistration.k8s.io/v1', 'kind': 'ValidatingAdmissionPolicyBinding',
            'metadata': {'name': name}, 'spec': {'policyName': policy, 'validationActions': list(actions), **spec}}


POLICIES = [
    vap('d-size', variables=[{'name': 'keys', 'expression': "has(object.data) ? size(object.data) : 0"}],
        validations=[{'expression': 'variables.keys <= 3', 'messageExpression': "'too many keys: ' + "
                                                                                 "string(variables.keys)"},
                     {'expression': "!object.metadata.name.startsWith('forbidden')", 'reason': 'Forbidden',
                      'message': 'forbidden names are forbidden'},
                     {'expression': "!has(object.data) || !('bad' in object.data)"}]),
    vap('d-params', paramKind={'apiVersion': 'v1', 'kind': 'ConfigMap'},
        matchConditions=[{'name': 'not-params', 'expression': "!object.metadata.name.startsWith('param')"}],
        validations=[{'expression': "!has(object.data) || !('limit' in object.data) || "
                                    "int(object.data.limit) <= int(params.data.max)",
                      'message': 'over the limit'}]),
    vap('d-transition', validations=[{'expression': "request.operation != 'UPDATE' || !has(oldObject.data) || "
                                                    "!has(object.data) || !has(oldObject.data.fixed) || "
                                                    "object.data.fixed == oldObject.data.fixed",
                                      'message': 'fixed is fixed'},
                                     {'expression': "namespaceObject.metadata.labels['vap'] == 'yes'"},
                                     {'expression': "authorizer.group('').resource('secrets').namespace('d-vap')"
                                                    ".check('get').allowed()"}]),
    vap('d-errors', failurePolicy='Fail', validations=[{'expression': "!has(object.data) || "
                                                                      "!('boom' in object.data) || 1 / 0 == 1"}]),
    vap('d-ignored', failurePolicy='Ignore', validations=[{'expression': "!has(object.data) || "
                                                                         "!('quiet' in object.data) || 1 / 0 == 1"}]),
    vap('d-warned', validations=[{'expression': "!has(object.data) || !('warn' in object.data)",
                                  'message': 'just a warning'}]),
    vap_binding('d-size', 'd-size', 'Deny'),
    vap_binding('d-params', 'd-params', 'Deny', paramRef={'name': 'param-limits', 'namespace': VAP_NS,
                                                          'parameterNotFoundAction': 'Deny'}),
    vap_binding('d-transition', 'd-transition', 'Deny'),
    vap_binding('d-errors', 'd-errors', 'Deny'),
    vap_binding('d-ignored', 'd-ignored', 'Deny'),
    vap_binding('d-warned', 'd-warned', 'Warn', 'Audit'),
]
PARAMS = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'param-limits', 'namespace': VAP_NS},
          'data': {'max': '5'}}
NAMESPACE = {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': VAP_NS, 'labels': {'vap': 'yes'}}}


def cms(name: str = '') -> str:
    return f'/api/v1/namespaces/{VAP_NS}/configmaps' + (f'/{name}' if name else '')


def cmap(name: str, **data: str) -> dict[str, Any]:
    return {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': name}, 'data': data}


def refused_vap(index: int, **spec: Any) -> Step:
    return Step('POST', f'{ADMISSION}/validatingadmissionpolicies', vap(f'd-refused{index}', **spec))


POLICY_STEPS = [
    Step('POST', cms(), cmap('fine', a='1')),
    Step('POST', cms(), cmap('big', a='1', b='2', c='3', d='4')),
    Step('POST', cms(), cmap('forbidden-x')),
    Step('POST', cms(), cmap('badkey', bad='1')),
    Step('POST', cms(), cmap('limited', limit='3')),
    Step('POST', cms(), cmap('overlimit', limit='9')),
    Step('POST', cms(), cmap('param-extra', limit='9')),
    Step('POST', cms(), cmap('boom', boom='1')),
    Step('POST', cms(), cmap('quiet', quiet='1')),
    Step('POST', cms(), cmap('warned', warn='1')),
    Step('POST', cms(), cmap('fixed', fixed='a')),
    Step('PATCH', cms('fixed'), {'data': {'fixed': 'b'}}, MERGE),
    Step('PATCH', cms('fixed'), {'data': {'other': 'x'}}, MERGE),
    Step('PATCH', cms('fine'), {'data': {'b': '2', 'c': '3', 'd': '4'}}, MERGE),
    Step('GET', cms()),
    refused_vap(0, validations=[{'expression': 'object.x +'}]),
    refused_vap(1, validations=[{'expression': '1'}]),
    refused_vap(2, validations=[{'expression': 'params.x == 1'}]),
    refused_vap(3, validations=[{'expression': 'true', 'messageExpression': '1'}]),
    refused_vap(4, validations=[{'expression': 'variables.x == 1'}]),
    refused_vap(5, variables=[{'name': 'a', 'expression': 'variables.b'}, {'name': 'b', 'expression': '1'}],
                validations=[{'expression': 'variables.a == 1'}]),
    refused_vap(6, validations=[{'expression': 'request.nope == 1'}]),
    refused_vap(7, matchConditions=[{'name': 'c', 'expression': "'x'"}], validations=[{'expression': 'true'}]),
    refused_vap(8, validations=[{'expression': 'true', 'messageExpression': "authorizer.path('/').check('get')"
                                                                          ".reason()"}]),
    Step('POST', f'{ADMISSION}/validatingadmissionpolicybindings', vap_binding('d-refused', 'x', 'Deny', 'Warn')),
    Step('POST', f'{ADMISSION}/validatingadmissionpolicybindings', vap_binding('d-refused', 'x', 'Nope')),
    Step('POST', f'{ADMISSION}/validatingadmissionpolicybindings', vap_binding('d-refused', 'x')),
    Step('POST', f'{ADMISSION}/validatingadmissionpolicybindings', vap_binding('d-refused', 'x', 'Deny', paramRef={
        'name': 'a', 'selector': {}, 'parameterNotFoundAction': 'Nope'})),
]
