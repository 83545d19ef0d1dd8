"""The CEL evaluator: a checked tree turned into nested Python closures, once per expression.

`plan(checked, env)` returns a `Program`; `program.eval(activation)` runs it over a dict of variables.
Errors are `EvalError` exceptions; the non-strict operators (`&&`, `||`, `?:`, the comprehensions'
accumulators) absorb them as cel-go's error values are absorbed: `false && error` is `false`.
"""
from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from kopf._cluster.cel import celtypes, nodes
from kopf._cluster.cel.celvalues import NONE, EvalError, Optional, equals, map_lookup, type_of
from kopf._cluster.cel.checker import Checked
from kopf._cluster.cel.decls import Env, Overload
from kopf._cluster.cel.nodes import Expr

Activation = dict[str, Any]
Node = Callable[[Activation], Any]


class ErrorValue:
    """An error held in a comprehension's accumulator: raised again when the accumulator is read."""
    __slots__ = ('error',)

    def __init__(self, error: EvalError) -> None:
        self.error = error


class PlanError(Exception):
    """A constant call that fails when planned (cel-go folds type conversions of constants)."""


FAST_OPERATORS = {'_<_': operator.lt, '_<=_': operator.le, '_>_': operator.gt, '_>=_': operator.ge,
                  '_==_': operator.eq, '_!=_': operator.ne}
NUMERIC_KINDS = frozenset({celtypes.INT, celtypes.UINT})
ORDERED_KINDS = frozenset({celtypes.INT, celtypes.UINT, celtypes.STRING})
CONVERSIONS = frozenset({'bool', 'bytes', 'double', 'duration', 'dyn', 'int', 'string', 'timestamp', 'type', 'uint'})


class Program:
    def __init__(self, root: Node, checked: Checked) -> None:
        self.root = root
        self.checked = checked

    def eval(self, activation: Activation) -> Any:
        return self.root(dict(activation))


def plan(checked: Checked, env: Env) -> Program:
    return Program(Planner(checked, env).plan(checked.expr), checked)


class Planner:
    def __init__(self, checked: Checked, env: Env) -> None:
        self.checked = checked
        self.env = env
        self.accumulators: set[str] = set()
        self.constants: set[int] = set()   # ids of nodes planned as constants

    def is_constant(self, e: Expr) -> bool:
        if e.kind == nodes.LITERAL or e.id in self.constants:
            return True
        if e.kind == nodes.LIST:
            return not e.optional_indices and all(self.is_constant(x) for x in e.elements)
        if e.kind == nodes.MAP:
            return all(isinstance(en.key, Expr) and not en.optional and self.is_constant(en.key)
                       and self.is_constant(en.value) for en in e.entries)
        return False

    def fold(self, e: Expr, node: Node) -> Node:
        """A type conversion of a constant, evaluated now (cel-go's decOptimize); its error fails the plan."""
        try:
            value = node({})
        except EvalError as err:
            raise PlanError(err.message) from None
        self.constants.add(e.id)
        return lambda act: value

    def plan(self, e: Expr) -> Node:
        kind = e.kind
        if kind == nodes.LITERAL:
            value = e.value
            return lambda act: value
        if kind == nodes.IDENT:
            return self.plan_ident(e)
        if kind == nodes.SELECT:
            return self.plan_select(e)
        if kind == nodes.CALL:
            return self.plan_call(e)
        if kind == nodes.LIST:
            return self.plan_list(e)
        if kind == nodes.MAP:
            return self.plan_map(e)
        if kind == nodes.COMPREHENSION:
            return self.plan_comprehension(e)
        raise EvalError(f'unsupported expression kind: {kind}')

    def plan_ident(self, e: Expr) -> Node:
        name = e.name
        if name in self.env.values and name not in self.accumulators:
            value = self.env.values[name]
            return lambda act: act[name] if name in act else value

        if name not in self.accumulators:
            def plain(act: Activation) -> Any:
                try:
                    return act[name]
                except KeyError:
                    raise EvalError(f'no such attribute(s): {name}') from None
            return plain

        def ident(act: Activation) -> Any:
            try:
                value = act[name]
            except KeyError:
                raise EvalError(f'no such attribute(s): {name}') from None
            if type(value) is ErrorValue:
                raise value.error
            return value
        return ident

    def plan_select(self, e: Expr) -> Node:
        assert e.operand is not None
        operand = self.plan(e.operand)
        field = e.field
        if e.test_only:
            def test(act: Activation) -> Any:
                value = operand(act)
                if type(value) is Optional:
                    if not value.present:
                        return False
                    value = value.value
                if type(value) is dict:
                    return field in value
                raise EvalError('invalid type for field selection.')
            return test

        root = e.operand.name if e.operand.kind == nodes.IDENT and e.operand.name not in self.accumulators \
            and e.operand.name not in self.env.values else None
        if root is not None:   # `self.field`: one closure, two lookups
            def variable_select(act: Activation) -> Any:
                try:
                    value = act[root]
                except KeyError:
                    raise EvalError(f'no such attribute(s): {root}') from None
                if type(value) is dict:
                    try:
                        return value[field]
                    except KeyError:
                        raise EvalError(f'no such key: {field}') from None
                return select_from(value, field)
            return variable_select

        def select(act: Activation) -> Any:
            value = operand(act)
            if type(value) is dict:
                try:
                    return value[field]
                except KeyError:
                    raise EvalError(f'no such key: {field}') from None
            return select_from(value, field)
        return select

    def plan_call(self, e: Expr) -> Node:
        fn = e.function
        special = {'_&&_': self.plan_and, '_||_': self.plan_or, '_?_:_': self.plan_conditional,
                   '@not_strictly_false': self.plan_not_strictly_false, '_?._': self.plan_opt_select}.get(fn)
        if special is not None:
            return special(e)
        args = ([self.plan(e.target)] if e.target is not None else []) + [self.plan(a) for a in e.args]
        impl = self.fast(e) or self.resolve(e)
        if len(args) == 1:
            a0 = args[0]
            if fn in CONVERSIONS and e.target is None and self.is_constant(e.args[0]):
                return self.fold(e, lambda act: impl(a0(act)))
            return lambda act: impl(a0(act))
        if len(args) == 2:
            a0, a1 = args
            if e.args and e.args[-1].kind == nodes.LITERAL and e.target is None:
                constant = e.args[-1].value
                return lambda act: impl(a0(act), constant)
            return lambda act: impl(a0(act), a1(act))
        return lambda act: impl(*[a(act) for a in args])

    def fast(self, e: Expr) -> Callable[..., Any] | None:
        """Python's own operators where the checked types make them CEL's (no dyn, no overflow, no NaN rules)."""
        op = FAST_OPERATORS.get(e.function)
        if op is None or len(e.args) != 2:
            return None
        kinds = {self.checked.types.get(a.id, celtypes.DynType).kind for a in e.args}
        if e.function in ('_==_', '_!=_'):
            return op if len(kinds) == 1 and kinds <= {celtypes.INT, celtypes.STRING, celtypes.BOOL} else None
        return op if kinds <= ORDERED_KINDS and (len(kinds) == 1 or kinds <= NUMERIC_KINDS) else None

    def resolve(self, e: Expr) -> Callable[..., Any]:
        function = self.env.functions.get(e.function)
        ids = self.checked.refs.get(e.id, [])
        if function is None or not isinstance(ids, list):
            raise EvalError(f'no such overload: {e.function}')
        overloads = [o for o in (function.by_id(i) for i in ids) if o is not None and o.impl is not None]
        impls = {id(o.impl) for o in overloads}
        if len(impls) == 1:
            impl = overloads[0].impl
            assert impl is not None
            return impl
        if not overloads:
            raise EvalError(f'no such overload: {e.function}')
        return dispatcher(e.function, overloads)

    def plan_and(self, e: Expr) -> Node:
        return logic(self.plan(e.args[0]), self.plan(e.args[1]), False)

    def plan_or(self, e: Expr) -> Node:
        return logic(self.plan(e.args[0]), self.plan(e.args[1]), True)

    def plan_conditional(self, e: Expr) -> Node:
        cond, truthy, falsy = (self.plan(a) for a in e.args)

        def conditional(act: Activation) -> Any:
            c = cond(act)
            if c is True:
                return truthy(act)
            if c is False:
                return falsy(act)
            raise EvalError('no such overload')
        return conditional

    def plan_not_strictly_false(self, e: Expr) -> Node:
        arg = self.plan(e.args[0])

        def nsf(act: Activation) -> Any:
            try:
                return arg(act) is not False
            except EvalError:
                return True
        return nsf

    def plan_opt_select(self, e: Expr) -> Node:
        operand = self.plan(e.args[0])
        field = e.args[1].value

        def opt_select(act: Activation) -> Any:
            value = operand(act)
            if type(value) is Optional:
                return optional_select(value, field)
            if type(value) is dict:
                return Optional(value[field]) if field in value else NONE
            raise EvalError(f"type '{type_of(value).name}' does not support field selection")
        return opt_select

    def plan_macro(self, e: Expr) -> Node:
        assert e.iter_range is not None and e.loop_step is not None
        rng = self.plan(e.iter_range)
        if e.macro == 'map':
            condition, transform = macro_parts(e)
            planned = self.plan(condition) if condition is not None else None
            return mapping(rng, planned, self.plan(transform), e.iter_var, e.iter_var2)
        step = e.loop_step
        predicate = step.args[0] if e.macro == 'exists_one' else step.args[1]
        return quantifier(e.macro, rng, self.plan(predicate), e.iter_var, e.iter_var2)

    def plan_list(self, e: Expr) -> Node:
        elems = [self.plan(x) for x in e.elements]
        if not e.optional_indices:
            return lambda act: [f(act) for f in elems]
        optional = set(e.optional_indices)

        def create(act: Activation) -> Any:
            out = []
            for i, f in enumerate(elems):
                value = f(act)
                if i in optional:
                    if type(value) is not Optional:
                        raise EvalError('no such overload')
                    if not value.present:
                        continue
                    value = value.value
                out.append(value)
            return out
        return create

    def plan_map(self, e: Expr) -> Node:
        entries = [(self.plan(en.key), self.plan(en.value), en.optional) for en in e.entries
                   if isinstance(en.key, Expr)]

        def create(act: Activation) -> Any:
            out: dict[Any, Any] = {}
            for kf, vf, optional in entries:
                key = kf(act)
                value = vf(act)
                if optional:
                    if type(value) is not Optional:
                        raise EvalError('no such overload')
                    if not value.present:
                        continue
                    value = value.value
                if map_lookup(out, key)[0]:
                    raise EvalError(f'Failed with repeated key: {key}')
                out[key] = value
            return out
        return create

    def plan_comprehension(self, e: Expr) -> Node:
        assert e.iter_range and e.accu_init and e.loop_condition and e.loop_step and e.result
        if e.macro:
            return self.plan_macro(e)
        rng, init = self.plan(e.iter_range), self.plan(e.accu_init)
        self.accumulators.add(e.accu_var)
        cond, step, result = self.plan(e.loop_condition), self.plan(e.loop_step), self.plan(e.result)
        var, var2, accu = e.iter_var, e.iter_var2, e.accu_var
        return comprehension(rng, init, cond, step, result, var, var2, accu)


def quantifier(kind: str, rng: Node, predicate: Node, var: str, var2: str) -> Node:
    """all / exists / exists_one as direct loops, with the folds' outcomes (errors absorbed as they are)."""
    def loop(act: Activation) -> Any:
        items = rng(act)
        saved = {k: act[k] for k in (var, var2) if k and k in act}
        error: EvalError | None = None
        count = 0
        try:
            for pair in iterate(items, bool(var2)):
                if var2:
                    act[var], act[var2] = pair
                else:
                    act[var] = pair
                try:
                    value = predicate(act)
                except EvalError as e:
                    if kind == 'exists_one':
                        raise
                    error = error or e
                    continue
                if type(value) is not bool:
                    error = error or EvalError('no such overload')
                elif kind == 'all' and value is False:
                    return False
                elif kind == 'exists' and value is True:
                    return True
                elif kind == 'exists_one' and value:
                    count += 1
        finally:
            for k in (var, var2):
                if k:
                    act.pop(k, None)
            act.update(saved)
        if error is not None:
            raise error
        return kind == 'all' if kind != 'exists_one' else count == 1
    return loop


def mapping(rng: Node, condition: Node | None, transform: Node, var: str, var2: str) -> Node:
    """map / filter / transformList as a direct loop: the list built once, not re-concatenated per item."""
    def loop(act: Activation) -> Any:
        items = rng(act)
        saved = {k: act[k] for k in (var, var2) if k and k in act}
        out = []
        try:
            for pair in iterate(items, bool(var2)):
                if var2:
                    act[var], act[var2] = pair
                else:
                    act[var] = pair
                if condition is not None:
                    keep = condition(act)
                    if keep is False:
                        continue
                    if keep is not True:
                        raise EvalError('no such overload')
                out.append(transform(act))
        finally:
            for k in (var, var2):
                if k:
                    act.pop(k, None)
            act.update(saved)
        return out
    return loop


def comprehension(rng: Node, init: Node, cond: Node, step: Node, result: Node, var: str, var2: str,
                  accu: str) -> Node:
    def fold(act: Activation) -> Any:
        items = rng(act)
        saved = {k: act[k] for k in (var, var2, accu) if k and k in act}
        act[accu] = init(act)
        try:
            for pair in iterate(items, bool(var2)):
                if var2:
                    act[var], act[var2] = pair
                else:
                    act[var] = pair
                if not cond(act):
                    break
                try:
                    act[accu] = step(act)
                except EvalError as err:
                    act[accu] = ErrorValue(err)
            return result(act)
        finally:
            for k in (var, var2, accu):
                if k:
                    act.pop(k, None)
            act.update(saved)
    return fold


def macro_parts(e: Expr) -> tuple[Expr | None, Expr]:
    """A map-like macro's filter (or None) and transform, from its step: `cond ? accu + [x] : accu`."""
    step = e.loop_step
    assert step is not None
    condition = None
    if step.function == '_?_:_':
        condition, step = step.args[0], step.args[1]
    return condition, step.args[1].elements[0]


def iterate(items: Any, pairs: bool) -> Any:
    t = type(items)
    if t in (list, tuple):
        return enumerate(items) if pairs else items
    if t is dict:
        return items.items() if pairs else list(items)
    raise EvalError(f"cannot iterate over '{type_of(items).name}'" if False else 'no such overload')


def logic(left: Node, right: Node, is_or: bool) -> Node:
    stop = is_or   # `||` stops at true, `&&` at false

    def op(act: Activation) -> Any:
        error: EvalError | None = None
        try:
            lv = left(act)
            if lv is stop:
                return stop
            if type(lv) is not bool:
                error = EvalError('no such overload')
        except EvalError as e:
            error = e
        try:
            rv = right(act)
        except EvalError as e:
            raise error or e from None
        if rv is stop:
            return stop
        if type(rv) is not bool:
            raise error or EvalError('no such overload')
        if error is not None:
            raise error
        return not stop
    return op


def select_from(value: Any, field: str) -> Any:
    """Field selection on what is not a plain map: optionals, lazily computed objects (a policy's `variables`)."""
    if type(value) is Optional:
        return optional_select(value, field)
    lazy = getattr(value, 'cel_field', None)
    if lazy is not None:
        return lazy(field)
    raise EvalError(f"type '{type_of(value).name}' does not support field selection")


def optional_select(value: Optional, field: str) -> Optional:
    if not value.present:
        return value
    inner = value.value
    if type(inner) is dict:
        return Optional(inner[field]) if field in inner else NONE
    raise EvalError(f"type '{type_of(inner).name}' does not support field selection")


def dispatcher(function: str, overloads: list[Overload]) -> Callable[..., Any]:
    def dispatch(*args: Any) -> Any:
        for o in overloads:
            if len(o.args) == len(args) and all(runtime_assignable(t, a) for t, a in zip(o.args, args, strict=False)):
                assert o.impl is not None
                return o.impl(*args)
        raise EvalError(f'no such overload: {function}')
    return dispatch


def runtime_assignable(t: celtypes.Type, value: Any) -> bool:
    if t.is_dyn():
        return True
    vt = type_of(value)
    if t.kind == celtypes.STRUCT:
        return vt.kind == celtypes.MAP
    return t.name == vt.name


__all__ = ['Program', 'plan', 'equals']
