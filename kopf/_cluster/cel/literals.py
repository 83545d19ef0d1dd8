"""cel-go's literal validators, as Kubernetes enables them: `duration('...')`, `timestamp('...')` and
`matches('...')` with constant arguments are checked when an expression is compiled
(`invalid duration argument`, at the argument).
"""
from __future__ import annotations

import re

from kopf._cluster.cel import nodes
from kopf._cluster.cel.celvalues import EvalError
from kopf._cluster.cel.checker import Checked
from kopf._cluster.cel.decls import Env
from kopf._cluster.cel.nodes import Expr, Issues
from kopf._cluster.cel.regex import translate


def walk(e: Expr | None) -> list[Expr]:
    if e is None:
        return []
    found = [e]
    for child in (e.operand, e.target, e.iter_range, e.accu_init, e.loop_condition, e.loop_step, e.result):
        found += walk(child)
    for child in (*e.args, *e.elements):
        found += walk(child)
    for entry in e.entries:
        if isinstance(entry.key, Expr):
            found += walk(entry.key)
        found += walk(entry.value)
    return found


def validate(checked: Checked, env: Env) -> Issues:
    issues = Issues(checked.source)
    for e in walk(checked.expr):
        if e.kind != nodes.CALL or not e.args or e.args[0].kind != nodes.LITERAL:
            continue
        arg = e.args[0]
        if e.function in ('duration', 'timestamp') and not valid_conversion(e, env):
            issues.report(checked.source.offsets.get(arg.id, -1), f'invalid {e.function} argument', arg.id)
        elif e.function == 'matches' and isinstance(arg.value, str) and not valid_regex(arg.value):
            issues.report(checked.source.offsets.get(arg.id, -1), 'invalid matches argument', arg.id)
    return issues


def valid_conversion(e: Expr, env: Env) -> bool:
    function = env.functions.get(e.function)
    if function is None or not function.overloads:
        return True
    value = e.args[0].value
    for overload in function.overloads:
        if overload.impl is None:
            continue
        try:
            overload.impl(value)
            return True
        except EvalError:
            continue
        except Exception:
            continue
    return False


def valid_regex(pattern: str) -> bool:
    try:
        re.compile(translate(pattern))
    except re.error:
        return False
    return True
