"""One ValidatingAdmissionPolicy over one request: decisions, messages, reasons, failure policies."""
from typing import Any

from kopf._cluster.cel import admissionexprs, admissionruns
from kopf._cluster.cel.admissionruns import Decision


def run(validations: list[dict[str, Any]], obj: Any, failure: str = 'Fail', **spec: Any) -> Any:
    compiled = admissionexprs.compile_policy({'validations': validations, **spec})
    activation = {'object': obj, 'oldObject': None, 'request': {'operation': 'CREATE'}, 'namespaceObject': None}
    return admissionruns.run(compiled, activation, failure)


def test_messages_in_order_of_preference() -> None:
    decisions = run([{'expression': 'object.n < 3', 'messageExpression': "'n is ' + string(object.n)"},
                     {'expression': 'object.n < 3', 'message': 'n too big'},
                     {'expression': 'object.n < 3', 'messageExpression': "'a\\nb'", 'message': 'fallback'},
                     {'expression': ' object.n < 3 '},
                     {'expression': 'object.n < 9'}], {'n': 5})
    assert decisions == [Decision('deny', 'n is 5'), Decision('deny', 'n too big'), Decision('deny', 'fallback'),
                         Decision('deny', 'failed expression: object.n < 3'), Decision('admit')]


def test_reasons_are_kept() -> None:
    assert run([{'expression': 'false', 'reason': 'Forbidden'}], {}) == [Decision('deny', 'failed expression: false',
                                                                                   'Forbidden')]


def test_errors_deny_under_fail_and_admit_under_ignore() -> None:
    error = "expression 'object.missing == 1' resulted in error: no such key: missing"
    assert run([{'expression': 'object.missing == 1'}], {}) == [Decision('deny', error)]
    assert run([{'expression': 'object.missing == 1'}], {}, 'Ignore') == [Decision('admit', error)]


def test_false_match_conditions_skip_the_policy() -> None:
    conditions = [{'name': 'only-big', 'expression': 'object.n > 10'}]
    assert run([{'expression': 'false'}], {'n': 1}, matchConditions=conditions) is None
    assert run([{'expression': 'false'}], {'n': 11}, matchConditions=conditions) == [
        Decision('deny', 'failed expression: false')]


def test_variables_are_lazy_and_composed() -> None:
    variables = [{'name': 'n', 'expression': 'object.n'}, {'name': 'twice', 'expression': 'variables.n * 2'},
                 {'name': 'broken', 'expression': 'object.missing'}]
    assert run([{'expression': 'variables.twice == 4'}], {'n': 2}, variables=variables) == [Decision('admit')]
    decisions = run([{'expression': 'variables.broken == 1'}], {'n': 2}, variables=variables)
    assert decisions == [Decision('deny', "expression 'variables.broken == 1' resulted in error: composited variable "
                                          '"broken" fails to evaluate: no such key: missing')]
