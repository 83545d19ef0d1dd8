"""The costs of calls: cel-go's built-in cases, its extension libraries' estimators, Kubernetes' library.

Each estimator returns `(cost, result size or None)` or None when it does not apply; `Node` is cel-go's
`AstNode` (the argument's path in the schema, its type, its expression, its computed size).
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from kopf._cluster.cel import celtypes, nodes
from kopf._cluster.cel.costmath import MAX, UNKNOWN, Size, add, by_factor, fixed, mul, union
from kopf._cluster.cel.nodes import Expr

STRING_FACTOR = 0.1
REGEX_FACTOR = 0.25
Estimate = tuple[Size, Size | None]


class Node:
    __slots__ = ('expr', 'path', 'size', 'type')

    def __init__(self, path: list[str] | None, t: celtypes.Type, expr: Expr | None, size: Size | None) -> None:
        self.path = path
        self.type = t
        self.expr = expr
        self.size = size


def size_or_unknown(size: Size | None) -> Size:
    return UNKNOWN if size is None else size


def node_size(coster: Any, node: Node) -> Size:
    if node.size is not None:
        return node.size
    found = coster.estimate_size(node.path)
    return UNKNOWN if found is None else found


def call_cost(coster: Any, e: Expr, overload: str, target: Node | None, args: list[Node], arg_costs: list[Size],
              arg_sum: Size) -> Estimate:
    """cel-go's `functionCost` defaults, after the estimators."""
    sz = functools.partial(node_size, coster)
    if overload == 'string_format' and target is not None:
        return add(by_factor(sz(target), STRING_FACTOR), arg_sum), None
    if overload in ('string_to_bytes', 'bytes_to_string', 'strings_quote') and len(args) == 1:
        s = sz(args[0])
        result = {'string_to_bytes': (s[0], min(s[1] * 4, MAX)), 'bytes_to_string': (s[0] // 4, s[1]),
                  'strings_quote': (min(s[0] + 2, MAX), min(s[1] * 2 + 2, MAX))}[overload]
        return add(by_factor(s, STRING_FACTOR), arg_sum), result
    if overload in ('starts_with_string', 'ends_with_string') and len(args) == 1:
        return add(by_factor(sz(args[0]), STRING_FACTOR), arg_sum), None
    if overload == 'in_list' and len(args) == 2:
        return add(by_factor(sz(args[1]), 1), arg_sum), None
    if overload == 'matches_string' and target is not None and len(args) == 1:
        text = by_factor(add(sz(target), (1, 1)), STRING_FACTOR)
        regex = by_factor(sz(args[0]), REGEX_FACTOR)
        return add(mul(text, regex), arg_sum), None
    if overload == 'contains_string' and target is not None and len(args) == 1:
        return add(mul(by_factor(sz(target), STRING_FACTOR), by_factor(sz(args[0]), STRING_FACTOR)), arg_sum), None
    if overload in ('logical_or', 'logical_and'):
        lhs, rhs = arg_costs
        return (lhs[0], add(lhs, rhs)[1]), None
    if overload == 'conditional':
        size = union(sz(args[1]), sz(args[2]))
        left, right = coster.entry_size(e.args[1]), coster.entry_size(e.args[2])
        if left is not None and right is not None:
            coster.entries[e.id] = (left[0], union(left[1], right[1]), union(left[2], right[2]))
        return add(arg_costs[0], union(arg_costs[1], arg_costs[2])), size
    if overload in ('add_string', 'add_bytes', 'add_list') and len(args) == 2:
        result = add(sz(args[0]), sz(args[1]))
        left, right = coster.entry_size(e.args[0]), coster.entry_size(e.args[1])
        if left is not None and right is not None:
            coster.entries[e.id] = (left[0], union(left[1], right[1]), union(left[2], right[2]))
        if overload == 'add_list':
            return add((1, 1), arg_sum), result
        return add(by_factor(result, STRING_FACTOR), arg_sum), result
    if overload in COMPARISONS:
        lhs, rhs = sz(args[0]), sz(args[1])
        smallest = min(lhs[1], rhs[1])
        return add(by_factor((1 if smallest > 0 else 0, smallest), STRING_FACTOR), arg_sum), None
    return add((1, 1), arg_sum), None


COMPARISONS = frozenset({'less_string', 'greater_string', 'less_equals_string', 'greater_equals_string',
                         'less_bytes', 'greater_bytes', 'less_equals_bytes', 'greater_equals_bytes',
                         'equals', 'not_equals'})


def list_call(factor: float, size: Size, allocates: bool = True) -> Estimate:
    cost = add(by_factor(size, factor), (1, 1))
    if allocates:
        cost = add(cost, (10, 10))
    return cost, size


def int_literal(node: Node, default: int) -> int:
    e = node.expr
    if e is None or e.kind != nodes.LITERAL or type(e.value) is not int:
        return default
    return max(e.value, 0)


Estimator = Callable[[Any, Node | None, list[Node]], Estimate | None]


def _estimate_slice(c: Any, target: Node | None, args: list[Node]) -> Estimate | None:
    if target is None or len(args) != 2:
        return None
    s = node_size(c, target)
    start, end = int_literal(args[0], 0), int_literal(args[1], s[1])
    return list_call(1, fixed(max(end - start, 0) if end >= start else (end - start) % 2 ** 64))


def _estimate_range(c: Any, target: Node | None, args: list[Node]) -> Estimate | None:
    if target is not None or len(args) != 1:
        return None
    return list_call(1, fixed(int_literal(args[0], MAX)))


def _estimate_reverse(c: Any, target: Node | None, args: list[Node]) -> Estimate | None:
    return None if target is None or args else list_call(1, node_size(c, target))


def _estimate_flatten(c: Any, target: Node | None, args: list[Node]) -> Estimate | None:
    if target is None or len(args) > 1:
        return None
    depth = int_literal(args[0], MAX) if args else 1
    return list_call(float(depth), node_size(c, target))


def _estimate_distinct(c: Any, target: Node | None, args: list[Node]) -> Estimate | None:
    if target is None or args:
        return None
    s = node_size(c, target)
    return list_call(2.0, mul(s, s))


def _estimate_sort_by(elem: celtypes.Type, by_keys: bool) -> Estimator:
    def estimate(c: Any, target: Node | None, args: list[Node]) -> Estimate | None:
        if target is None or len(args) != (1 if by_keys else 0):
            return None
        s = node_size(c, args[0] if by_keys else target)
        factor = 2.0 + (STRING_FACTOR if elem.kind in (celtypes.STRING, celtypes.BYTES) else 0)
        return list_call(factor, mul(s, s))
    return estimate


def _estimate_sets(c: Any, target: Node | None, args: list[Node]) -> Estimate | None:
    if len(args) != 2:
        return None
    return add(by_factor(mul(node_size(c, args[0]), node_size(c, args[1])), 1.0), (1, 1)), None


@functools.lru_cache(maxsize=1)
def overload_estimators() -> dict[str, Estimator]:
    """cel-go's per-overload estimators of the ext libraries (lists v3, sets)."""
    found: dict[str, Estimator] = {
        'list_slice': _estimate_slice, 'lists_range': _estimate_range, 'list_reverse': _estimate_reverse,
        'list_flatten': _estimate_flatten, 'list_flatten_int': _estimate_flatten, 'list_distinct': _estimate_distinct}
    for t in (celtypes.BoolType, celtypes.BytesType, celtypes.DoubleType, celtypes.DurationType, celtypes.IntType,
              celtypes.StringType, celtypes.TimestampType, celtypes.UintType):
        found[f'list_{t.name}_sort'] = _estimate_sort_by(t, False)
        found[f'list_{t.name}_sortByAssociatedKeys'] = _estimate_sort_by(t, True)
    for name in ('list_sets_contains_list', 'list_sets_equivalent_list', 'list_sets_intersects_list'):
        found[name] = _estimate_sets
    return found


ONE = {'serviceAccount', 'path', 'group', 'resource', 'subresource', 'namespace', 'name', 'allowed', 'reason',
       'error', 'errored', 'masked', 'prefixLength', 'family', 'isUnspecified', 'isLoopback',
       'isLinkLocalMulticast', 'isLinkLocalUnicast', 'isGlobalUnicast', 'format.named', 'sign', 'asInteger',
       'isInteger', 'asApproximateFloat', 'isGreaterThan', 'isLessThan', 'compareTo', 'add', 'sub', 'major',
       'minor', 'patch', 'getScheme', 'getHostname', 'getHost', 'getPort', 'getEscapedPath', 'getQuery'}


def k8s_call_cost(c: Any, function: str, overload: str, target: Node | None, args: list[Node]) -> Estimate | None:
    """Kubernetes' `library.CostEstimator.EstimateCallCost` (None: cel-go's defaults apply)."""
    sz = functools.partial(node_size, c)
    if function == 'check':
        return (350000, 350000), None
    if function in ONE:
        return (1, 1), None
    if function in ('isSorted', 'sum', 'max', 'min', 'indexOf', 'lastIndexOf') and target is not None:
        if target.type.params:
            elem_type = target.type.params[0]
            elem_cost: Size = (1, 1)
            if elem_type.kind in (celtypes.STRING, celtypes.BYTES):
                elem_path = [*target.path, '@items'] if target.path is not None else None
                elem = node_size(c, Node(elem_path, elem_type, None, None))
                elem_cost = add(elem_cost, by_factor(elem, STRING_FACTOR))
            return mul(sz(target), elem_cost), None
        return by_factor(sz(target), STRING_FACTOR), None
    strings = _string_call_cost(c, function, target, args)
    if strings is not None:
        return strings
    if function in ('cidr', 'isIP', 'isCIDR', 'quantity', 'isQuantity', 'semver', 'isSemver') and args:
        return by_factor(sz(args[0]), STRING_FACTOR), None
    if function == 'ip':
        if overload == 'cidr_ip':
            return (1, 1), None
        if args:
            return by_factor(sz(args[0]), STRING_FACTOR), None
    if function == 'ip.isCanonical' and args:
        return by_factor(sz(args[0]), 2 * STRING_FACTOR), None
    if function in ('containsIP', 'containsCIDR') and args:
        return contains_cost(c, function, overload, args)
    if function == 'validate' and args:
        return by_factor(by_factor(sz(args[0]), STRING_FACTOR), 128 * REGEX_FACTOR), None
    return None


def _string_call_cost(c: Any, function: str, target: Node | None, args: list[Node]) -> Estimate | None:
    """The string library's calls (and `url`, `jsonpatch.escapeKey`) of `k8s_call_cost`."""
    sz = functools.partial(node_size, c)
    if function in ('url', 'jsonpatch.escapeKey') and len(args) == 1:
        s = sz(args[0])
        return by_factor(s, STRING_FACTOR), s
    if target is None:
        return None
    if function in ('lowerAscii', 'upperAscii', 'substring', 'trim'):
        s = sz(target)
        return by_factor(s, STRING_FACTOR), s
    if function == 'replace' and len(args) >= 2:
        return replace_cost(sz(target), sz(args[0]), sz(args[1]))
    if function == 'split':
        s = sz(target)
        maximum = s[1]
        if len(args) > 1 and args[1].expr is not None and args[1].expr.kind == nodes.LITERAL \
                and type(args[1].expr.value) is int:
            maximum = args[1].expr.value % 2 ** 64
        return by_factor(s, 2 * STRING_FACTOR), (0, maximum)
    if function == 'join':
        return join_cost(c, target, args)
    if function in ('find', 'findAll') and args:
        s = sz(target)
        text = by_factor(add(s, (1, 1)), STRING_FACTOR)
        return mul(text, by_factor(sz(args[0]), REGEX_FACTOR)), (0, s[1])
    return None



def replace_cost(s: Size, old: Size, new: Size) -> Estimate:
    count_max = retained_max = count_min = retained_min = 0
    if old[0] == 0:
        count_max = s[1] + 1 if s[1] < MAX else s[1]
        retained_max = s[1]
    elif new[1] <= old[0]:
        count_max, retained_max = 0, s[1]
    else:
        count_max = math.ceil(s[1] / old[0])
    if old[1] == 0:
        count_min = s[0] + 1 if s[0] < MAX else s[0]
        retained_min = s[0]
    elif old[1] <= new[0]:
        count_min, retained_min = 0, s[0]
    else:
        count_min = math.ceil(s[0] / old[1])
    size = add(mul((count_min, count_max), new), (retained_min, retained_max))
    return by_factor(s, 2 * STRING_FACTOR), size


def join_cost(c: Any, target: Node, args: list[Node]) -> Estimate:
    size: Size = (0, 0)
    count = node_size(c, target)
    if target.type.params:
        elem_path = [*target.path, '@items'] if target.path is not None else None
        size = mul(count, node_size(c, Node(elem_path, target.type.params[0], None, None)))
    if args:
        separators = (max(count[0] - 1, 0), max(count[1] - 1, 0))
        size = add(size, mul(node_size(c, args[0]), separators))
    return by_factor(size, STRING_FACTOR), size


def contains_cost(c: Any, function: str, overload: str, args: list[Node]) -> Estimate:
    ip: Size = (4, 16)
    cost = by_factor(add(ip, ip), STRING_FACTOR)
    if function == 'containsCIDR':
        cost = add(cost, by_factor(ip, STRING_FACTOR))
        cost = add(cost, (1, 1))
    if overload in ('cidr_contains_ip_string', 'cidr_contains_cidr_string'):
        cost = add(cost, by_factor(node_size(c, args[0]), STRING_FACTOR))
    return cost, None
