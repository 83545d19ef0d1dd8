"""One ValidatingAdmissionPolicy evaluated for one request: its decisions, as Kubernetes' validator makes them.

`run(compiled, activation, failure_policy)` returns None when a matchCondition is false (the policy does
not apply), else the decisions: `Decision('deny', message, reason)` for a failed validation (message from
the messageExpression, the message, or `failed expression: ...`), or for an error under
`failurePolicy: Fail` (the expression's error text); errors under `Ignore` admit.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from kopf._cluster.cel.admissionexprs import Compiled, Expression, Variables
from kopf._cluster.cel.celvalues import EvalError

MAX_MESSAGE_BYTES = 5 * 1024


@dataclasses.dataclass(frozen=True)
class Decision:
    action: str           # 'deny' | 'admit'
    message: str = ''
    reason: str = 'Invalid'


def evaluate(expression: Expression, activation: dict[str, Any]) -> Any:
    """The value, or an EvalError with the text Kubernetes reports for it."""
    if expression.compiled is None:
        raise EvalError(expression.error)
    try:
        return expression.compiled.program.eval(activation)
    except EvalError as e:
        raise EvalError(f"expression '{expression.text}' resulted in error: {e}") from None


def run(compiled: Compiled, activation: dict[str, Any], failure_policy: str) -> list[Decision] | None:
    activation = dict(activation)
    activation['variables'] = Variables(compiled.variables, activation)
    errors: list[str] = []
    for _, condition in compiled.conditions:
        try:
            if evaluate(condition, activation) is False:
                return None
        except EvalError as e:
            errors.append(str(e))
    fail = failure_policy != 'Ignore'
    if errors:
        if not fail:
            return None
        return [Decision('deny', errors[0] if len(errors) == 1 else '[' + ', '.join(errors) + ']')]
    decisions = [validate(item, expression, message, activation, fail)
                 for item, expression, message in compiled.validations]
    for _, annotation in compiled.annotations:
        try:
            value = evaluate(annotation, activation)
        except EvalError as e:
            if fail:
                decisions.append(Decision('deny', str(e)))
            continue
        if value is not None and type(value) is not str and fail:
            decisions.append(Decision('deny', f"valueExpression '{annotation.text}' resulted in unsupported return "
                                              f'type: {type(value).__name__}. Return type must be either string or '
                                              'null.'))
    return decisions


def validate(item: Any, expression: Expression, message: Expression | None, activation: dict[str, Any],
             fail: bool) -> Decision:
    try:
        result = evaluate(expression, activation)
    except EvalError as e:
        return Decision('deny' if fail else 'admit', str(e))
    if result is True:
        return Decision('admit')
    text = ''
    if message is not None and message.compiled is not None:
        try:
            value = message.compiled.program.eval(activation)
            if type(value) is str:
                text = value.strip()
                if len(text.encode()) > MAX_MESSAGE_BYTES or '\n' in text:
                    text = ''
        except EvalError:
            text = ''
    if not text and item.get('message'):
        text = str(item['message']).strip()
    if not text:
        text = f"failed expression: {str(item.get('expression') or '').strip()}"
    return Decision('deny', text, str(item.get('reason') or 'Invalid'))
