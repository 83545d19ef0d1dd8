"""cel-go's static cost estimator (`checker/cost.go`) with Kubernetes' library costs (`library/cost.go`).

`estimate(checked, decl)` is the worst-case cost of a checked expression, as `env.EstimateCost` gives it
with apiextensions' size estimator: sizes of strings, lists and maps come from the schema (`maxLength`,
`maxItems`, `maxProperties`, or what fits in a 3 MiB request); every number saturates at 2**64-1 as
Go's uint64 arithmetic does there.
"""
from __future__ import annotations

from kopf._cluster.cel import celtypes, nodes
from kopf._cluster.cel.checker import Checked
from kopf._cluster.cel.costcalls import Node, call_cost, k8s_call_cost, overload_estimators, size_or_unknown
from kopf._cluster.cel.costmath import MAX, Size, add, fixed, mul, union
from kopf._cluster.cel.nodes import Expr
from kopf._cluster.cel.schematypes import Decl


class Var:
    __slots__ = ('entry', 'path', 'size')

    def __init__(self, path: list[str], size: Size | None, entry: tuple[str, Size, Size] | None) -> None:
        self.path = path
        self.size = size
        self.entry = entry


class Coster:
    def __init__(self, checked: Checked, root: Decl | None) -> None:
        self.checked = checked
        self.root = root
        self.paths: dict[int, list[str]] = {}
        self.sizes: dict[int, Size] = {}
        self.entries: dict[int, tuple[str, Size, Size]] = {}   # (container kind, key size, value size)
        self.vars: dict[str, list[Var]] = {}

    # ---- sizes from the schema ----

    def estimate_size(self, path: list[str] | None) -> Size | None:
        if not path or self.root is None:
            return None
        decl: Decl | None = self.root
        for name in path[1:]:
            if decl is None:
                return None
            if name in ('@items', '@values'):
                decl = decl.elem
            elif name == '@keys':
                decl = decl.key
            else:
                decl = decl.fields.get(name)
            if decl is None:
                return None
        return (0, decl.max_elements) if decl is not None else None

    def type_of(self, e: Expr) -> celtypes.Type:
        return self.checked.types.get(e.id, celtypes.DynType)

    def path_of(self, e: Expr) -> list[str]:
        if e.kind == nodes.IDENT and self.vars.get(e.name):
            return list(self.vars[e.name][-1].path)
        return list(self.paths.get(e.id, []))

    def compute_size(self, e: Expr) -> Size | None:
        if e.id in self.sizes:
            return self.sizes[e.id]
        size = expr_size(e)
        if size is not None:
            return size
        size = self.estimate_size(self.path_of(e))
        if size is not None:
            self.sizes[e.id] = size
            return size
        if is_scalar(self.type_of(e)):
            return (1, 1)
        if e.kind == nodes.IDENT and self.vars.get(e.name):
            var = self.vars[e.name][-1]
            if var.size is not None:
                return var.size
        return None

    def entry_size(self, e: Expr) -> tuple[str, Size, Size] | None:
        if e.id in self.entries:
            return self.entries[e.id]
        if e.kind == nodes.IDENT and self.vars.get(e.name):
            return self.vars[e.name][-1].entry
        return None

    def node(self, e: Expr) -> Node:
        path: list[str] | None = self.path_of(e)
        if path and path[0] in ('__result__', '@result'):
            path = None
        return Node(path, self.type_of(e), e, self.compute_size(e))

    def push(self, name: str, path: list[str], size: Size | None, entry: tuple[str, Size, Size] | None) -> None:
        self.vars.setdefault(name, []).append(Var(path, size, entry))

    def pop(self, name: str) -> None:
        self.vars[name].pop()

    # ---- the walk ----

    def cost(self, e: Expr | None) -> Size:
        if e is None:
            return (0, 0)
        kind = e.kind
        if kind == nodes.LITERAL:
            return (0, 0)
        if kind == nodes.IDENT:
            var = self.vars.get(e.name)
            self.paths[e.id] = list(var[-1].path) if var else [e.name]
            return (1, 1)
        if kind == nodes.SELECT:
            return self.cost_select(e)
        if kind == nodes.CALL:
            return self.cost_call(e)
        if kind == nodes.LIST:
            return self.cost_list(e)
        if kind == nodes.MAP:
            return self.cost_map(e)
        if kind == nodes.COMPREHENSION:
            return self.cost_bind(e) if is_bind(e) else self.cost_comprehension(e)
        return (0, 0)

    def cost_select(self, e: Expr) -> Size:
        assert e.operand is not None
        if e.test_only:
            return self.cost(e.operand)   # Kubernetes: presence tests cost nothing
        total = self.cost(e.operand)
        if self.type_of(e.operand).kind in (celtypes.MAP, celtypes.STRUCT, celtypes.TYPEPARAM):
            total = add(total, (1, 1))
        self.paths[e.id] = [*self.path_of(e.operand), e.field]
        return total

    def cost_call(self, e: Expr) -> Size:
        if e.function == 'dyn' and e.target is None and len(e.args) == 1:
            arg_cost = self.cost(e.args[0])
            self.copy_sizes(e, e.args[0])
            return add((1, 1), arg_cost)
        arg_costs = [self.cost(a) for a in e.args]
        arg_nodes = [self.node(a) for a in e.args]
        ids = self.checked.refs.get(e.id)
        if not isinstance(ids, list) or not ids:
            return (0, 0)
        total = (0, 0)
        target: Node | None = None
        if e.target is not None:
            total = add(total, self.cost(e.target))
            target = self.node(e.target)
        fn_cost: Size = (MAX, 0)
        result: Size | None = None
        for overload in ids:
            cost, size = self.function_cost(e, overload, target, arg_nodes, arg_costs)
            fn_cost = union(fn_cost, cost)
            if size is not None:
                result = size if result is None else union(result, size)
            if overload == 'index_list' and e.args:
                entry = self.entry_size(e.args[0])
                result = entry[2] if entry else None
                self.paths[e.id] = [*self.path_of(e.args[0]), '@items']
            elif overload == 'index_map' and e.args:
                entry = self.entry_size(e.args[0])
                result = entry[2] if entry else None
                self.paths[e.id] = [*self.path_of(e.args[0]), '@values']
            if result is None:
                result = self.compute_size(e)
        if result is not None:
            self.sizes[e.id] = result
        return add(total, fn_cost)

    def function_cost(self, e: Expr, overload: str, target: Node | None, args: list[Node],
                      arg_costs: list[Size]) -> tuple[Size, Size | None]:
        arg_sum = (0, 0)
        for c in arg_costs:
            arg_sum = add(arg_sum, c)
        estimator = overload_estimators().get(overload)
        if estimator is not None:
            found = estimator(self, target, args)
            if found is not None:
                return add(found[0], arg_sum), found[1]
        found = k8s_call_cost(self, e.function, overload, target, args)
        if found is not None:
            return add(found[0], arg_sum), found[1]
        return call_cost(self, e, overload, target, args, arg_costs, arg_sum)

    def cost_list(self, e: Expr) -> Size:
        total = (0, 0)
        item: Size = (0 if not e.elements else MAX, 0)
        for x in e.elements:
            total = add(total, self.cost(x))
            item = union(item, size_or_unknown(self.compute_size(x)))
        self.entries[e.id] = (celtypes.LIST, (1, 1), item)
        return add(total, (10, 10))

    def cost_map(self, e: Expr) -> Size:
        total = (0, 0)
        empty = not e.entries
        key: Size = (0 if empty else MAX, 0)
        value: Size = (0 if empty else MAX, 0)
        for entry in e.entries:
            assert isinstance(entry.key, Expr)
            total = add(total, self.cost(entry.key))
            total = add(total, self.cost(entry.value))
            key = union(key, size_or_unknown(self.compute_size(entry.key)))
            value = union(value, size_or_unknown(self.compute_size(entry.value)))
        self.entries[e.id] = (celtypes.MAP, key, value)
        return add(total, (30, 30))

    def cost_comprehension(self, e: Expr) -> Size:
        assert e.iter_range and e.accu_init and e.loop_condition and e.loop_step and e.result
        total = add(self.cost(e.iter_range), self.cost(e.accu_init))
        self.push(e.accu_var, self.path_of(e.accu_init), self.compute_size(e.accu_init), self.entry_size(e.accu_init))
        self.push_iter_vars(e)
        loop = self.cost(e.loop_condition)
        step = self.cost(e.loop_step)
        self.pop(e.iter_var)
        if e.iter_var2:
            self.pop(e.iter_var2)
        total = add(total, self.cost(e.result))
        self.pop(e.accu_var)
        count = size_or_unknown(self.compute_size(e.iter_range))
        total = add(total, mul(count, add(step, loop)))
        if e.accu_init.kind == nodes.LITERAL:
            size = self.compute_size(e.accu_init)
            if size is not None:
                self.sizes[e.id] = size
        elif e.accu_init.kind in (nodes.LIST, nodes.MAP):
            self.sizes[e.id] = count
            entry = self.entry_size(e.loop_step)
            if entry is not None:
                self.entries[e.id] = entry
        return total

    def push_iter_vars(self, e: Expr) -> None:
        assert e.iter_range is not None
        entry = self.entry_size(e.iter_range)
        container = entry[0] if entry else self.type_of(e.iter_range).kind
        path = self.path_of(e.iter_range)
        is_list = container == celtypes.LIST
        if e.iter_var2:
            self.push(e.iter_var, [*path, '@indices' if is_list else '@keys'], entry[1] if entry else None, None)
            self.push(e.iter_var2, [*path, '@items' if is_list else '@values'], entry[2] if entry else None, None)
        elif is_list:
            self.push(e.iter_var, [*path, '@items'], entry[2] if entry else None, None)
        else:
            self.push(e.iter_var, [*path, '@keys'], entry[1] if entry else None, None)

    def cost_bind(self, e: Expr) -> Size:
        assert e.iter_range and e.accu_init and e.result
        total = add(self.cost(e.iter_range), self.cost(e.accu_init))
        self.push(e.accu_var, self.path_of(e.accu_init), self.compute_size(e.accu_init), self.entry_size(e.accu_init))
        total = add(total, self.cost(e.result))
        self.pop(e.accu_var)
        self.copy_sizes(e, e.result)
        return total

    def copy_sizes(self, dst: Expr, src: Expr) -> None:
        size = self.compute_size(src)
        if size is not None:
            self.sizes[dst.id] = size
        entry = self.entry_size(src)
        if entry is not None:
            self.entries[dst.id] = entry


def is_bind(e: Expr) -> bool:
    r, cond = e.iter_range, e.loop_condition
    return (r is not None and r.kind == nodes.LIST and not r.elements and cond is not None
            and cond.kind == nodes.LITERAL and cond.value is False and e.accu_var != '__result__')


def expr_size(e: Expr) -> Size | None:
    if e.kind == nodes.LITERAL:
        if isinstance(e.value, str):
            return fixed(len(e.value))
        if isinstance(e.value, bytes):
            return fixed(len(e.value))
        return (1, 1)
    if e.kind == nodes.LIST:
        return fixed(len(e.elements))
    if e.kind == nodes.MAP:
        return fixed(len(e.entries))
    return None


def is_scalar(t: celtypes.Type) -> bool:
    if t.kind in (celtypes.BOOL, celtypes.DOUBLE, celtypes.DURATION, celtypes.INT, celtypes.TIMESTAMP,
                  celtypes.UINT):
        return True
    if t.kind == celtypes.OPAQUE and t.name == 'optional_type':
        return is_scalar(t.params[0])
    return False


def estimate(checked: Checked, decl: Decl | None) -> int:
    """The worst-case cost (cel-go's CostEstimate.Max)."""
    return Coster(checked, decl).cost(checked.expr)[1]

