"""ValidatingAdmissionPolicies' expressions compiled in the admission environment, as a real server compiles them."""
from typing import Any

import pytest

from kopf._cluster.cel import admissionexprs

RULES = [{'apiGroups': [''], 'apiVersions': ['v1'], 'operations': ['CREATE'], 'resources': ['configmaps']}]


def spec(**fields: Any) -> dict[str, Any]:
    return {'failurePolicy': 'Fail', 'matchConstraints': {'resourceRules': RULES}, **fields}


def test_a_valid_policy_compiles() -> None:
    compiled = admissionexprs.compile_policy(spec(
        variables=[{'name': 'n', 'expression': 'size(object.data)'}],
        validations=[{'expression': 'variables.n < 3', 'messageExpression': "'too many: ' + string(variables.n)"},
                     {'expression': "authorizer.group('').resource('secrets').check('get').allowed()"}],
        matchConditions=[{'name': 'c', 'expression': "request.operation == 'CREATE'"}],
        auditAnnotations=[{'key': 'k', 'valueExpression': "'v'"}]))
    assert all(e.compiled for _, e in compiled.variables)
    assert all(e.compiled and (m is None or m.compiled) for _, e, m in compiled.validations)
    assert admissionexprs.spec_causes(spec(validations=[{'expression': 'object.x == 1'}])) == []


CASES = [
    ({'validations': [{'expression': '1'}]}, 'spec.validations[0].expression',
     'Invalid value: "1": must evaluate to bool but got int'),
    ({'validations': [{'expression': 'object.x == 1', 'messageExpression': '1'}]},
     'spec.validations[0].messageExpression', 'Invalid value: "1": must evaluate to string but got int'),
    ({'validations': [{'expression': 'params.x == 1'}]}, 'spec.validations[0].expression',
     'Invalid value: "params.x == 1": compilation failed: ERROR: <input>:1:1: undeclared reference to \'params\' '
     "(in container '')\n | params.x == 1\n | ^"),
    ({'validations': [{'expression': 'variables.x == 1'}]}, 'spec.validations[0].expression',
     'Invalid value: "variables.x == 1": compilation failed: ERROR: <input>:1:1: undeclared reference to '
     "'variables' (in container '')\n | variables.x == 1\n | ^"),
    ({'variables': [{'name': 'a', 'expression': 'variables.b'}, {'name': 'b', 'expression': '1'}],
      'validations': [{'expression': 'variables.a == 1'}]}, 'spec.variables[0].expression',
     'Invalid value: "variables.b": compilation failed: ERROR: <input>:1:10: undefined field \'b\'\n'
     ' | variables.b\n | .........^'),
    ({'validations': [{'expression': 'request.nope == 1'}]}, 'spec.validations[0].expression',
     'Invalid value: "request.nope == 1": compilation failed: ERROR: <input>:1:8: undefined field \'nope\'\n'
     ' | request.nope == 1\n | .......^'),
    ({'validations': [{'expression': 'true', 'messageExpression': "authorizer.path('/').check('get').reason()"}]},
     'spec.validations[0].messageExpression',
     'Invalid value: "authorizer.path(\'/\').check(\'get\').reason()": compilation failed: ERROR: <input>:1:1: '
     "undeclared reference to 'authorizer' (in container '')\n"
     " | authorizer.path('/').check('get').reason()\n | ^"),
    ({'matchConditions': [{'name': 'c', 'expression': "'x'"}], 'validations': [{'expression': 'true'}]},
     'spec.matchConditions[0].expression', 'Invalid value: "\'x\'": must evaluate to bool but got string'),
]


@pytest.mark.parametrize('fields, field, message', CASES)
def test_refusals(fields: dict[str, Any], field: str, message: str) -> None:
    causes = admissionexprs.spec_causes(spec(**fields))
    assert {'reason': 'FieldValueInvalid', 'field': field, 'message': message} in causes


def test_type_strings_are_cel_gos() -> None:
    from kopf._cluster.cel import celtypes
    assert admissionexprs.type_string(celtypes.list_of(celtypes.DynType)) == 'list(dyn)'
    assert admissionexprs.type_string(celtypes.map_of(celtypes.StringType, celtypes.IntType)) == 'map(string, int)'
