"""cel-go's AST validators, as Kubernetes enables them: homogeneous list and map literals (but inside
`format()` calls), `duration('...')`, `timestamp('...')` and `matches('...')` with constant arguments
(`invalid duration argument`, at the argument), and `'...'.format([...])` argument counts.
"""
from __future__ import annotations

import re

from kopf._cluster.cel import celtypes, nodes
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
    homogeneous(checked, checked.expr, False, issues)
    for e in walk(checked.expr):
        if e.kind == nodes.CALL and e.function == 'format' and e.target is not None:
            format_call(checked, e, issues)
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


def homogeneous(checked: Checked, e: Expr | None, exempt: bool, issues: Issues) -> None:
    """Mixed element types in list and map literals, outside `format()` calls."""
    if e is None:
        return
    exempt = exempt or (e.kind == nodes.CALL and e.function == 'format')
    if not exempt and e.kind == nodes.LIST:
        types = [checked.types.get(x.id, celtypes.DynType) for x in e.elements]
        types = [celtypes.unwrap_optional(t)[0] if i in e.optional_indices else t for i, t in enumerate(types)]
        for x, t in zip(e.elements[1:], types[1:], strict=False):
            if not equivalent(types[0], t):
                mismatch(checked, x, types[0], t, issues)
                break
    if not exempt and e.kind == nodes.MAP and e.entries:
        first = e.entries[0]
        key_type = checked.types.get(first.key.id, celtypes.DynType) if isinstance(first.key, Expr) else None
        value_type = entry_type(checked, first)
        for entry in e.entries[1:]:
            if isinstance(entry.key, Expr) and key_type is not None:
                kt = checked.types.get(entry.key.id, celtypes.DynType)
                if not equivalent(key_type, kt):
                    mismatch(checked, entry.key, key_type, kt, issues)
            vt = entry_type(checked, entry)
            if not equivalent(value_type, vt):
                mismatch(checked, entry.value, value_type, vt, issues)
    for child in (e.operand, e.target, e.iter_range, e.accu_init, e.loop_condition, e.loop_step, e.result):
        homogeneous(checked, child, exempt, issues)
    for child in (*e.args, *e.elements):
        homogeneous(checked, child, exempt, issues)
    for entry in e.entries:
        if isinstance(entry.key, Expr):
            homogeneous(checked, entry.key, exempt, issues)
        homogeneous(checked, entry.value, exempt, issues)


def entry_type(checked: Checked, entry: nodes.Entry) -> celtypes.Type:
    t = checked.types.get(entry.value.id, celtypes.DynType)
    return celtypes.unwrap_optional(t)[0] if entry.optional else t


def equivalent(a: celtypes.Type, b: celtypes.Type) -> bool:
    """cel-go's `IsEquivalentType`: exact, but for the names of type parameters."""
    if a.kind != b.kind or len(a.params) != len(b.params):
        return False
    if a.kind != celtypes.TYPEPARAM and a.name != b.name:
        return False
    return all(equivalent(x, y) for x, y in zip(a.params, b.params, strict=True))


def mismatch(checked: Checked, e: Expr, expected: celtypes.Type, actual: celtypes.Type, issues: Issues) -> None:
    text = f"expected type '{celtypes.format(expected)}' but found '{celtypes.format(actual)}'"
    issues.report(checked.source.offsets.get(e.id, -1), text, e.id)


CLAUSES = {  # verb -> (the kinds it takes, its error) as cel-go's format checker words them
    'd': ((celtypes.INT, celtypes.UINT), 'decimal clause can only be used on integers'),
    'f': ((celtypes.DOUBLE, celtypes.STRING), 'fixed-point clause can only be used on doubles'),
    'e': ((celtypes.DOUBLE, celtypes.STRING), 'scientific clause can only be used on doubles'),
    'b': ((celtypes.INT, celtypes.UINT, celtypes.BOOL), 'only integers and bools can be formatted as binary'),
    'x': ((celtypes.INT, celtypes.UINT, celtypes.STRING, celtypes.BYTES),
          'only integers, byte buffers, and strings can be formatted as hex'),
    'o': ((celtypes.INT, celtypes.UINT), 'octal clause can only be used on integers'),
    's': ((celtypes.LIST, celtypes.MAP, celtypes.INT, celtypes.UINT, celtypes.DOUBLE, celtypes.BOOL, celtypes.STRING,
           celtypes.TIMESTAMP, celtypes.BYTES, celtypes.DURATION, celtypes.TYPE, celtypes.NULL),
          'string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, '
          'and timestamps'),
}
CLAUSES['X'] = CLAUSES['x']


def format_call(checked: Checked, e: Expr, issues: Issues) -> None:
    """A constant format string with a list literal: clauses against the arguments, as cel-go checks them."""
    target = e.target
    if target is None or target.kind != nodes.LITERAL or not isinstance(target.value, str):
        return
    if len(e.args) != 1 or e.args[0].kind != nodes.LIST:
        return
    args = e.args[0].elements
    offset = checked.source.offsets.get(e.id, -1)
    used = 0
    for m in re.finditer(r'%(\.\d+)?(.?)', target.value):
        verb = m.group(2)
        if verb == '%':
            continue
        if verb not in CLAUSES:
            shown = verb if verb else ''
            issues.report(offset, f'could not parse formatting clause: unrecognized formatting clause "{shown}"', e.id)
            return
        if used >= len(args):
            issues.report(offset, f'index {used} out of range', e.id)
            return
        bad = clause_mismatch(checked, args[used], CLAUSES[verb][0], verb == 's')
        if bad is not None:
            name = checked.types.get(bad.id, celtypes.DynType).name
            issues.report(checked.source.offsets.get(bad.id, -1),
                          f'error during formatting: {CLAUSES[verb][1]}, was given {name}', bad.id)
            return
        used += 1
    if len(args) > used:
        issues.report(offset, f'too many arguments supplied to string.format (expected {used}, got {len(args)})', e.id)


def clause_mismatch(checked: Checked, arg: Expr, kinds: tuple[str, ...], nested: bool) -> Expr | None:
    t = checked.types.get(arg.id, celtypes.DynType)
    if t.kind != celtypes.DYN and t.kind not in kinds:
        return arg
    if nested and arg.kind == nodes.LIST:
        for x in arg.elements:
            found = clause_mismatch(checked, x, kinds, True)
            if found is not None:
                return found
    if nested and arg.kind == nodes.MAP:
        for entry in arg.entries:
            for item in (entry.key, entry.value):
                found = clause_mismatch(checked, item, kinds, True) if isinstance(item, Expr) else None
                if found is not None:
                    return found
    return None
