"""The CEL type checker: cel-go's `checker/checker.go`, with its unification and its error texts.

`check(expr, source, env)` annotates every node with a type (`Checked.types`) and each identifier and
call with what it refers to (`Checked.refs`: a variable name, or the ids of the overloads that may
apply), and reports what cel-go reports: undeclared references, undefined fields, no matching overloads,
type mismatches.
"""
from __future__ import annotations

from kopf._cluster.cel import celtypes, nodes
from kopf._cluster.cel.celtypes import (
    BoolType,
    DynType,
    ErrorType,
    IntType,
    Mapping_,
    Type,
    format,
    format_function,
    substitute,
)
from kopf._cluster.cel.decls import Env, Function, Scope
from kopf._cluster.cel.nodes import Expr, Issues, Source

RESERVED_FIELDS = frozenset({'true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for',
                             'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void',
                             'while'})
LITERAL_TYPES = {bool: celtypes.BoolType, int: celtypes.IntType, float: celtypes.DoubleType,
                 str: celtypes.StringType, bytes: celtypes.BytesType, type(None): celtypes.NullType}


class Checked:
    def __init__(self, expr: Expr, source: Source) -> None:
        self.expr = expr
        self.source = source
        self.types: dict[int, Type] = {}
        self.refs: dict[int, str | list[str]] = {}   # ident name, or overload ids for a call

    @property
    def output_type(self) -> Type:
        return self.types.get(self.expr.id, DynType)


class Checker:
    def __init__(self, checked: Checked, env: Env, issues: Issues) -> None:
        self.c = checked
        self.scope = Scope(env)
        self.env = env
        self.issues = issues
        self.mappings = Mapping_()
        self.free = 0

    # ---- bookkeeping ----

    def offset(self, id: int) -> int:
        return self.c.source.offsets.get(id, -1)

    def error(self, id: int, message: str) -> None:
        self.issues.report(self.offset(id), message, id)

    def set_type(self, e: Expr, t: Type) -> None:
        self.c.types[e.id] = t

    def get_type(self, e: Expr) -> Type:
        return self.c.types.get(e.id, ErrorType)

    def new_type_var(self) -> Type:
        t = celtypes.param(f'_var{self.free}')
        self.free += 1
        return t

    def is_assignable(self, t1: Type, t2: Type) -> bool:
        subs = celtypes.is_assignable(self.mappings, t1, t2)
        if subs is not None:
            self.mappings = subs
            return True
        return False

    def type_mismatch(self, id: int, expected: Type, actual: Type) -> None:
        self.error(id, f"expected type '{format(expected)}' but found '{format(actual)}'")

    # ---- the walk ----

    def check(self, e: Expr | None) -> None:
        if e is None:
            return
        kind = e.kind
        if kind == nodes.LITERAL:
            from kopf._cluster.cel.celvalues import UInt
            self.set_type(e, celtypes.UintType if type(e.value) is UInt else LITERAL_TYPES[type(e.value)])
        elif kind == nodes.IDENT:
            self.check_ident(e)
        elif kind == nodes.SELECT:
            self.check_select(e)
        elif kind == nodes.CALL:
            self.check_call(e)
        elif kind == nodes.LIST:
            self.check_list(e)
        elif kind == nodes.MAP:
            self.check_map(e)
        elif kind == nodes.STRUCT:
            self.check_struct(e)
        elif kind == nodes.COMPREHENSION:
            self.check_comprehension(e)
        else:
            self.error(e.id, 'unexpected unspecified type: Expr')

    def check_ident(self, e: Expr) -> None:
        name = e.name.lstrip('.')
        t = self.scope.lookup(e.name)
        if t is not None:
            self.set_type(e, t)
            self.c.refs[e.id] = name
            e.name = name
            return
        self.set_type(e, ErrorType)
        self.error(e.id, f"undeclared reference to '{e.name}' (in container '')")

    def qualified_name(self, e: Expr) -> str | None:
        if e.kind == nodes.IDENT:
            return e.name
        if e.kind == nodes.SELECT and not e.test_only and e.operand is not None:
            prefix = self.qualified_name(e.operand)
            return None if prefix is None else f'{prefix}.{e.field}'
        return None

    def check_select(self, e: Expr) -> None:
        qname = self.qualified_name(e)
        if qname is not None:
            t = self.scope.lookup(qname)
            if t is not None:
                self.set_type(e, t)
                self.c.refs[e.id] = qname.lstrip('.')
                e.kind, e.name = nodes.IDENT, qname.lstrip('.')
                return
        assert e.operand is not None
        result = self.check_select_field(e, e.operand, e.field, False)
        if e.test_only:
            result = BoolType
        self.set_type(e, substitute(self.mappings, result, False))

    def check_select_field(self, e: Expr, operand: Expr, field: str, optional: bool) -> Type:
        self.check(operand)
        operand_type = substitute(self.mappings, self.get_type(operand), False)
        target, is_opt = celtypes.unwrap_optional(operand_type)
        result = ErrorType
        if target.kind == celtypes.MAP:
            result = target.params[1]
        elif target.kind == celtypes.STRUCT:
            fields = target.fields or {}
            if field not in fields and f'__{field}__' in fields and field in RESERVED_FIELDS:
                field = f'__{field}__'   # Kubernetes recognises reserved words as field names
                if e.kind == nodes.SELECT:
                    e.field = field
                elif e.kind == nodes.CALL and len(e.args) == 2:
                    e.args[1].value = field
            if field in fields:
                result = fields[field]
            else:
                self.error(e.id, f"undefined field '{field}'")
        elif target.kind == celtypes.TYPEPARAM:
            self.is_assignable(DynType, target)
            result = DynType
        else:
            if not celtypes.is_dyn_or_error(target):
                self.error(e.id, f"type '{format(target)}' does not support field selection")
            result = DynType
        if is_opt or optional:
            return celtypes.optional_of(result)
        return result

    def check_opt_select(self, e: Expr) -> None:
        operand, field = e.args[0], e.args[1]
        if field.kind != nodes.LITERAL or not isinstance(field.value, str):
            self.error(field.id, f'unsupported optional field selection: {nodes.debug(field)}')
            return
        result = self.check_select_field(e, operand, field.value, True)
        self.set_type(e, substitute(self.mappings, result, False))
        self.c.refs[e.id] = ['select_optional_field']

    def check_call(self, e: Expr) -> None:
        if e.function == '_?._':
            self.check_opt_select(e)
            return
        for arg in e.args:
            self.check(arg)
        if e.target is None:
            fn = self.lookup_function(e.function)
            if fn is None:
                self.error(e.id, f"undeclared reference to '{e.function}' (in container '')")
                self.set_type(e, ErrorType)
                return
            e.function = fn.name
            self.resolve(e, fn, None)
            return
        qualified = self.qualified_name(e.target)
        if qualified is not None:
            fn = self.lookup_function(f'{qualified}.{e.function}')
            if fn is not None:
                e.function, e.target = fn.name, None
                self.resolve(e, fn, None)
                return
        self.check(e.target)
        fn = self.lookup_function(e.function)
        if fn is not None:
            self.resolve(e, fn, e.target)
            return
        self.set_type(e, ErrorType)
        self.error(e.id, f"undeclared reference to '{e.function}' (in container '')")

    def lookup_function(self, name: str) -> Function | None:
        return self.env.functions.get(name.lstrip('.'))

    def resolve(self, e: Expr, fn: Function, target: Expr | None) -> None:
        arg_types = ([self.get_type(target)] if target is not None else []) + [self.get_type(a) for a in e.args]
        args = ([target] if target is not None else []) + e.args
        result: Type | None = None
        ref: list[str] = []
        for overload in fn.overloads:
            if overload.member != (target is not None):
                continue
            if fn.name in ('_&&_', '_||_'):
                failed = False
                for arg, t in zip(args, arg_types, strict=False):
                    if not self.is_assignable(t, BoolType):
                        self.type_mismatch(arg.id, BoolType, t)
                        failed = True
                if failed:
                    self.set_type(e, ErrorType)
                    return
                self.c.refs[e.id] = [overload.id]
                self.set_type(e, BoolType)
                return
            params, res = list(overload.args), overload.result
            if overload.type_params:
                subs = Mapping_()
                for name in overload.type_params:
                    subs.add(celtypes.param(name), self.new_type_var())
                params = [substitute(subs, p, False) for p in params]
                res = substitute(subs, res, False)
            mapping = celtypes.is_assignable_list(self.mappings, arg_types, params)
            if mapping is None:
                continue
            self.mappings = mapping
            ref.append(overload.id)
            fn_result = substitute(self.mappings, res, False)
            if result is None:
                result = fn_result
            elif result.kind not in (celtypes.DYN, celtypes.ANY) and not fn_result.exact(result):
                result = DynType
        if result is None:
            shown = [substitute(self.mappings, t, True) for t in arg_types]
            signature = format_function(None, shown, target is not None)
            self.error(e.id, f"found no matching overload for '{fn.name}' applied to '{signature}'")
            self.set_type(e, ErrorType)
            return
        self.set_type(e, result)
        self.c.refs[e.id] = ref

    def join_types(self, e: Expr, previous: Type | None, current: Type) -> Type:
        if previous is None:
            return current
        if self.is_assignable(previous, current):
            return celtypes.most_general(previous, current)
        return DynType   # mixed literals are dyn here; the homogeneous-literals validator refuses them

    def check_list(self, e: Expr) -> None:
        elem: Type | None = None
        for i, element in enumerate(e.elements):
            self.check(element)
            t = self.get_type(element)
            if i in e.optional_indices:
                t, is_opt = celtypes.unwrap_optional(t)
                if not is_opt and not t.is_dyn():
                    self.type_mismatch(element.id, celtypes.optional_of(t), t)
            elem = self.join_types(element, elem, t)
        self.set_type(e, celtypes.list_of(elem if elem is not None else self.new_type_var()))

    def check_map(self, e: Expr) -> None:
        key_type: Type | None = None
        value_type: Type | None = None
        for entry in e.entries:
            assert isinstance(entry.key, Expr)
            self.check(entry.key)
            key_type = self.join_types(entry.key, key_type, self.get_type(entry.key))
            self.check(entry.value)
            t = self.get_type(entry.value)
            if entry.optional:
                t, is_opt = celtypes.unwrap_optional(t)
                if not is_opt and not t.is_dyn():
                    self.type_mismatch(entry.value.id, celtypes.optional_of(t), t)
            value_type = self.join_types(entry.value, value_type, t)
        if key_type is None or value_type is None:
            key_type, value_type = self.new_type_var(), self.new_type_var()
        self.set_type(e, celtypes.map_of(key_type, value_type))

    def check_struct(self, e: Expr) -> None:
        self.error(e.id, f"undeclared reference to '{e.name.lstrip('.')}' (in container '')")
        self.set_type(e, ErrorType)

    def check_comprehension(self, e: Expr) -> None:
        assert e.iter_range is not None and e.accu_init is not None
        self.check(e.iter_range)
        self.check(e.accu_init)
        range_type = substitute(self.mappings, self.get_type(e.iter_range), False)
        accu_type = self.get_type(e.accu_init)
        outer = self.scope
        self.scope = self.scope.enter()
        self.scope.local[e.accu_var] = accu_type
        var2: Type | None = None
        if range_type.kind == celtypes.LIST:
            var = range_type.params[0]
            if e.iter_var2:
                var, var2 = IntType, var
        elif range_type.kind == celtypes.MAP:
            var = range_type.params[0]
            var2 = range_type.params[1] if e.iter_var2 else None
        elif range_type.kind in (celtypes.DYN, celtypes.ERROR, celtypes.TYPEPARAM):
            self.is_assignable(DynType, range_type)
            var = DynType
            var2 = DynType if e.iter_var2 else None
        else:
            self.error(e.iter_range.id, f"expression of type '{format(range_type)}' cannot be range of a "
                                        f"comprehension (must be list, map, or dynamic)")
            var = ErrorType
            var2 = ErrorType if e.iter_var2 else None
        self.scope = self.scope.enter()
        self.scope.local[e.iter_var] = var
        if e.iter_var2 and var2 is not None:
            self.scope.local[e.iter_var2] = var2
        self.check(e.loop_condition)
        assert e.loop_condition is not None and e.loop_step is not None and e.result is not None
        self.assert_type(e.loop_condition, BoolType)
        self.check(e.loop_step)
        self.assert_type(e.loop_step, accu_type)
        assert self.scope.parent is not None
        self.scope = self.scope.parent
        self.check(e.result)
        self.scope = outer
        self.set_type(e, substitute(self.mappings, self.get_type(e.result), False))

    def assert_type(self, e: Expr, t: Type) -> None:
        if not self.is_assignable(t, self.get_type(e)):
            self.type_mismatch(e.id, t, self.get_type(e))


def check(expr: Expr, source: Source, env: Env) -> tuple[Checked, Issues]:
    checked = Checked(expr, source)
    issues = Issues(source)
    checker = Checker(checked, env, issues)
    checker.check(expr)
    for id, t in checked.types.items():
        checked.types[id] = substitute(checker.mappings, t, True)
    return checked, issues
