"""The macros of Kubernetes' CEL environment, expanded at parse time as cel-go expands them.

Standard: `has`, `all`, `exists`, `exists_one`, `existsOne`, `map` (2 and 3 arguments), `filter`;
optional types: `optMap`, `optFlatMap`; two-variable comprehensions (cel-go's ext.TwoVarComprehensions):
`all`, `exists`, `existsOne`/`exists_one` with 3 arguments, `transformList`, `transformMap`,
`transformMapEntry` (3 and 4 arguments). Macro argument errors use cel-go's texts.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from kopf._cluster.cel import nodes
from kopf._cluster.cel.nodes import Expr, Source


class Parser(Protocol):
    """What an expansion needs of the parser: fresh ids at offsets, and error reporting."""
    source: Source

    def new_id(self, offset: int) -> int: ...

    def error(self, offset: int, message: str) -> Expr: ...

ACCU = '__result__'


class MacroError(Exception):
    def __init__(self, expr_id: int, message: str) -> None:
        super().__init__(message)
        self.expr_id = expr_id
        self.message = message


class Factory:
    """New nodes for an expansion, all located where the macro call was (cel-go's `nextMacroID`)."""

    def __init__(self, parser: Parser, call_id: int) -> None:
        self.parser = parser
        self.offset = parser.source.offsets.get(call_id, 0)

    def id(self) -> int:
        return self.parser.new_id(self.offset)

    def lit(self, value: object) -> Expr:
        return Expr(self.id(), nodes.LITERAL, value=value)

    def ident(self, name: str) -> Expr:
        return Expr(self.id(), nodes.IDENT, name=name)

    def accu(self) -> Expr:
        return self.ident(ACCU)

    def call(self, function: str, *args: Expr) -> Expr:
        return Expr(self.id(), nodes.CALL, function=function, args=list(args))

    def member(self, function: str, target: Expr, *args: Expr) -> Expr:
        return Expr(self.id(), nodes.CALL, function=function, target=target, args=list(args))

    def list(self, *elements: Expr) -> Expr:
        return Expr(self.id(), nodes.LIST, elements=list(elements))

    def map(self) -> Expr:
        return Expr(self.id(), nodes.MAP)

    def fold(self, iter_range: Expr, iter_var: str, accu_var: str, init: Expr, cond: Expr, step: Expr,
             result: Expr, iter_var2: str = '') -> Expr:
        return Expr(self.id(), nodes.COMPREHENSION, iter_range=iter_range, iter_var=iter_var, iter_var2=iter_var2,
                    accu_var=accu_var, accu_init=init, loop_condition=cond, loop_step=step, result=result)


def simple_name(arg: Expr, message: str) -> str:
    if arg.kind != nodes.IDENT:
        raise MacroError(arg.id, message)
    if arg.name == ACCU:
        raise MacroError(arg.id, 'iteration variable overwrites accumulator variable')
    return arg.name


def two_names(args: list[Expr]) -> tuple[str, str]:
    for arg in args[:2]:
        if arg.kind != nodes.IDENT:
            raise MacroError(arg.id, 'argument must be a simple name')
    first, second = args[0].name, args[1].name
    if first == second:
        raise MacroError(args[1].id, f'duplicate variable name: {first}')
    if first == ACCU:
        raise MacroError(args[0].id, 'iteration variable overwrites accumulator variable')
    if second == ACCU:
        raise MacroError(args[1].id, 'iteration variable overwrites accumulator variable')
    return first, second


def has(f: Factory, target: Expr | None, args: list[Expr]) -> Expr | None:
    arg = args[0]
    if arg.kind != nodes.SELECT:
        raise MacroError(arg.id, 'invalid argument to has() macro')
    return Expr(f.id(), nodes.SELECT, operand=arg.operand, field=arg.field, test_only=True)


def quantifier(kind: str) -> Callable[[Factory, Expr | None, list[Expr]], Expr | None]:
    def expand(f: Factory, target: Expr | None, args: list[Expr]) -> Expr | None:
        assert target is not None
        var2 = ''
        if len(args) == 3:
            var, var2 = two_names(args)
        else:
            var = simple_name(args[0], 'argument must be a simple name')
        predicate = args[-1]
        if kind == 'all':
            init, cond = f.lit(True), f.call('@not_strictly_false', f.accu())
            step, result = f.call('_&&_', f.accu(), predicate), f.accu()
        elif kind == 'exists':
            init, cond = f.lit(False), f.call('@not_strictly_false', f.call('!_', f.accu()))
            step, result = f.call('_||_', f.accu(), predicate), f.accu()
        else:
            init, cond = f.lit(0), f.lit(True)
            step = f.call('_?_:_', predicate, f.call('_+_', f.accu(), f.lit(1)), f.accu())
            result = f.call('_==_', f.accu(), f.lit(1))
        fold = f.fold(target, var, ACCU, init, cond, step, result, var2)
        fold.macro = kind
        return fold
    return expand


def map_macro(f: Factory, target: Expr | None, args: list[Expr]) -> Expr | None:
    assert target is not None
    var = simple_name(args[0], 'argument is not an identifier')
    fn = args[-1]
    step = f.call('_+_', f.accu(), f.list(fn))
    if len(args) == 3:
        step = f.call('_?_:_', args[1], step, f.accu())
    fold = f.fold(target, var, ACCU, f.list(), f.lit(True), step, f.accu())
    fold.macro = 'map'
    return fold


def filter_macro(f: Factory, target: Expr | None, args: list[Expr]) -> Expr | None:
    assert target is not None
    var = simple_name(args[0], 'argument is not an identifier')
    step = f.call('_+_', f.accu(), f.list(args[0]))
    step = f.call('_?_:_', args[1], step, f.accu())
    fold = f.fold(target, var, ACCU, f.list(), f.lit(True), step, f.accu())
    fold.macro = 'map'   # a filter is a map whose transform is the element itself
    return fold


def transform(kind: str) -> Callable[[Factory, Expr | None, list[Expr]], Expr | None]:
    def expand(f: Factory, target: Expr | None, args: list[Expr]) -> Expr | None:
        assert target is not None
        var, var2 = two_names(args)
        fn = args[-1]
        if kind == 'list':
            step, init = f.call('_+_', f.accu(), f.list(fn)), f.list()
        elif kind == 'map':
            step, init = f.call('cel.@mapInsert', f.accu(), f.ident(var), fn), f.map()
        else:
            step, init = f.call('cel.@mapInsert', f.accu(), fn), f.map()
        if len(args) == 4:
            step = f.call('_?_:_', args[2], step, f.accu())
        return f.fold(target, var, ACCU, init, f.lit(True), step, f.accu(), var2)
    return expand


def optional_map(flat: bool) -> Callable[[Factory, Expr | None, list[Expr]], Expr | None]:
    name = 'optFlatMap' if flat else 'optMap'

    def expand(f: Factory, target: Expr | None, args: list[Expr]) -> Expr | None:
        assert target is not None
        if args[0].kind != nodes.IDENT:
            raise MacroError(args[0].id, f'{name}() variable name must be a simple identifier')
        var = args[0].name
        fold = f.fold(f.list(), '#unused', var, f.member('value', copy(f, target)), f.lit(False), f.ident(var),
                      args[1])
        body = fold if flat else f.call('optional.of', fold)
        return f.call('_?_:_', f.member('hasValue', target), body, f.call('optional.none'))
    return expand


def copy(f: Factory, e: Expr) -> Expr:
    """A deep copy with fresh ids (cel-go's `Copy` for a macro's repeated target)."""
    clone = Expr(f.parser.new_id(f.parser.source.offsets.get(e.id, f.offset)), e.kind)
    for slot in Expr.__slots__:
        if slot == 'id':
            continue
        value = getattr(e, slot)
        if isinstance(value, Expr):
            value = copy(f, value)
        elif isinstance(value, list) and value and isinstance(value[0], Expr):
            value = [copy(f, v) for v in value]
        elif isinstance(value, list) and value and isinstance(value[0], nodes.Entry):
            value = [nodes.Entry(f.id(), k if isinstance(k := en.key, str) else copy(f, k), copy(f, en.value),
                                 en.optional) for en in value]
        setattr(clone, slot, value)
    return clone


Expander = Callable[[Factory, Expr | None, list[Expr]], Expr | None]
# (name, argument count, receiver-style) -> expander.
MACROS: dict[tuple[str, int, bool], Expander] = {
    ('has', 1, False): has,
    ('all', 2, True): quantifier('all'),
    ('exists', 2, True): quantifier('exists'),
    ('exists_one', 2, True): quantifier('exists_one'),
    ('existsOne', 2, True): quantifier('exists_one'),
    ('map', 2, True): map_macro,
    ('map', 3, True): map_macro,
    ('filter', 2, True): filter_macro,
    ('optMap', 2, True): optional_map(False),
    ('optFlatMap', 2, True): optional_map(True),
    ('all', 3, True): quantifier('all'),
    ('exists', 3, True): quantifier('exists'),
    ('existsOne', 3, True): quantifier('exists_one'),
    ('exists_one', 3, True): quantifier('exists_one'),
    ('transformList', 3, True): transform('list'),
    ('transformList', 4, True): transform('list'),
    ('transformMap', 3, True): transform('map'),
    ('transformMap', 4, True): transform('map'),
    ('transformMapEntry', 3, True): transform('entry'),
    ('transformMapEntry', 4, True): transform('entry'),
}


def expand(parser: Parser, call_id: int, function: str, target: Expr | None, args: list[Expr]) -> Expr | None:
    expander = MACROS.get((function, len(args), target is not None))
    if expander is None:
        return None
    try:
        return expander(Factory(parser, call_id), target, args)
    except MacroError as e:
        offset = parser.source.offsets.get(e.expr_id, parser.source.offsets.get(call_id, 0))
        return parser.error(offset, e.message)
