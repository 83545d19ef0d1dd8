"""Field sets as structured-merge-diff computes them, by the schema: compared objects, applied configurations.

A path is a tuple of path elements in upstream's spelling: `f:name` (a field or a map key),
`k:{"name":"x"}` (an item of an associative list, by its keys), `v:"x"` (an item of a set),
`i:0` (by position). A set of paths is what a manager owns; `encode`/`decode` convert it to and
from `fieldsV1` (`{"f:spec": {".": {}, "f:x": {}}}`), in upstream's order.

    compare(live, new, schema) -> (added, modified, removed)   # typed.Compare
    of_config(config, schema) -> paths                           # typed.ToFieldSet of an applied configuration

Types come from the schema node (built-ins' OpenAPI, CRDs' structural schemas): maps are separable
unless `x-kubernetes-map-type: atomic`; lists are associative (`map` by keys, `set` by value, or a
strategic `merge` key), else atomic; values without a schema are deduced (maps separable, lists
atomic). Empty or absent on both sides counts as a leaf. Pure: no I/O.
"""
import functools
import json
from collections.abc import Iterable, Mapping
from typing import Any

from kopf._cluster.openapi import fieldorder, kindschemas
from kopf._cluster.patchtypes import fieldowners

Path = tuple[str, ...]
Node = Mapping[str, Any] | None
MISSING: Any = object()
OBJECT_META = kindschemas.definition(fieldowners.OBJECT_META)


_ROOTS: dict[int, tuple[Node, dict[str, Any]]] = {}   # id(schema) -> (schema, its root): schemas are never changed


def root(schema: Node) -> dict[str, Any]:
    """An object's schema with `metadata` as ObjectMeta (as upstream types every object's metadata)."""
    known = _ROOTS.get(id(schema))
    if known is not None and known[0] is schema:
        return known[1]
    node = dict(schema or {})
    node['properties'] = {**(node.get('properties') or {}), 'metadata': OBJECT_META}
    node.setdefault('type', 'object')
    if len(_ROOTS) >= 1000:
        _ROOTS.clear()
    _ROOTS[id(schema)] = (schema, node)   # kept alive with it: its id is not reused while it is here
    return node


_SHAPES: dict[int, tuple[Node, str]] = {}   # id(node) -> (node, its shape): schema nodes are never changed


def _shape(node: Node, value: Any) -> str:
    """'map' (separable), 'list' (associative) or 'leaf' (scalars, atomic maps and lists)."""
    if node is None or not node:
        return 'map' if isinstance(value, dict) else 'leaf'
    known = _SHAPES.get(id(node))
    if known is not None and known[0] is node:
        return known[1]
    shape = _node_shape(node)
    if len(_SHAPES) >= 10000:
        _SHAPES.clear()
    _SHAPES[id(node)] = (node, shape)   # kept alive with it: its id is not reused while it is here
    return shape


def _node_shape(node: Mapping[str, Any]) -> str:
    if node.get('x-kubernetes-int-or-string'):
        return 'leaf'
    if node.get('type') == 'array' or 'items' in node:
        return 'list' if fieldowners.list_type(node)[0] != 'atomic' else 'leaf'
    if node.get('type') == 'object' or 'properties' in node or 'additionalProperties' in node or \
            node.get('x-kubernetes-preserve-unknown-fields'):
        return 'leaf' if node.get('x-kubernetes-map-type') == 'atomic' else 'map'
    return 'leaf'


def _child(node: Node, key: str) -> tuple[Node, bool]:
    """The schema of a map's key, and whether it is a declared field (not an element of a free map)."""
    properties = (node or {}).get('properties') or {}
    if key in properties:
        return properties[key], True
    additional = (node or {}).get('additionalProperties')
    return (additional if additional is not None and isinstance(additional, Mapping) else None), False


def _item_node(node: Node) -> Node:
    items = (node or {}).get('items')
    return items if items is not None and isinstance(items, Mapping) else None


def element(item: Any, node: Node) -> str:
    """The path element of a list item: by its keys (`k:`), or by its value (`v:`)."""
    kind, keys = fieldowners.list_type(node)
    if kind == 'map' and isinstance(item, Mapping):
        found = []
        for key in sorted(keys):
            value = item.get(key, fieldowners.KEY_DEFAULTS.get(key))
            if value is not None:
                found.append(f'{json.dumps(key)}:{_json(value)}')
        return 'k:{' + ','.join(found) + '}'
    return f'v:{_json(item)}'


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(',', ':'))


def compare(live: Any, new: Any, schema: Node) -> tuple[set[Path], set[Path], set[Path]]:
    """The paths added, modified and removed from `live` to `new` (`MISSING` for an absent object)."""
    added: set[Path] = set()
    modified: set[Path] = set()
    removed: set[Path] = set()
    _compare(live, new, root(schema), (), (added, modified, removed))
    return added, modified, removed


def _compare(left: Any, right: Any, node: Node, path: Path, out: tuple[set[Path], set[Path], set[Path]]) -> None:
    if not node and (left is MISSING or right is MISSING):   # a free value added or removed: all its paths
        _free(left if right is MISSING else right, path, out[2] if right is MISSING else out[0])
        return
    shape = _shape(node, right if right is not MISSING else left)
    if shape == 'map':
        lmap = left if isinstance(left, dict) else {}
        rmap = right if isinstance(right, dict) else {}
        if not lmap and not rmap:
            shape = 'leaf'
        else:
            for key in dict.fromkeys([*lmap, *rmap]) if lmap and rmap else lmap or rmap:
                lv, rv = lmap.get(key, MISSING), rmap.get(key, MISSING)
                if lv is not rv and (lv is MISSING or rv is MISSING or lv != rv or type(lv) is not type(rv)):
                    _compare(lv, rv, _child(node, key)[0], path + (f'f:{key}',), out)
    elif shape == 'list':
        llist = left if isinstance(left, list) else []
        rlist = right if isinstance(right, list) else []
        if not llist and not rlist:
            shape = 'leaf'
        else:
            _compare_items(llist, rlist, node, path, out)
    if shape == 'leaf':
        if left is MISSING:
            out[0].add(path)
        elif right is MISSING:
            out[2].add(path)
        elif left != right or type(left) is not type(right):
            out[1].add(path)
    elif left is MISSING:
        out[0].add(path)
    elif right is MISSING:
        out[2].add(path)


def _free(value: Any, path: Path, out: set[Path]) -> None:
    """The paths of a value without a schema (maps separable, the rest leaves), all added or all removed:
    what `_compare` finds with one side missing, without asking the schema at every level."""
    if isinstance(value, dict):
        for key, item in value.items():
            _free(item, path + (f'f:{key}',), out)
    out.add(path)


def _compare_items(left: list[Any], right: list[Any], node: Node, path: Path,
                   out: tuple[set[Path], set[Path], set[Path]]) -> None:
    items = _item_node(node)
    lhs = _indexed(left, node)
    rhs = _indexed(right, node)
    for pe in dict.fromkeys([*lhs, *rhs]):
        lvals, rvals = lhs.get(pe, []), rhs.get(pe, [])
        if len(lvals) <= 1 and len(rvals) <= 1:
            lv = lvals[0] if lvals else MISSING
            rv = rvals[0] if rvals else MISSING
            if lv is MISSING or rv is MISSING or lv != rv:
                _compare(lv, rv, items, path + (pe,), out)
        elif len(lvals) >= 2 and len(rvals) >= 2:
            if lvals != rvals:
                out[1].add(path + (pe,))
        elif len(lvals) >= 2:
            if rvals:
                _compare(MISSING, rvals[0], items, path + (pe,), out)
            out[2].add(path + (pe,))
        else:
            if lvals:
                _compare(lvals[0], MISSING, items, path + (pe,), out)
            out[0].add(path + (pe,))


def _indexed(values: list[Any], node: Node) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for item in values:
        found.setdefault(element(item, node), []).append(item)
    return found


def of_config(config: Any, schema: Node) -> set[Path]:
    """What an applied configuration sets (typed.ToFieldSet): its leaves, list items, free maps' keys."""
    out: set[Path] = set()
    _fieldset(config, root(schema), (), out)
    return out


def _fieldset(value: Any, node: Node, path: Path, out: set[Path]) -> None:
    shape = _shape(node, value)
    if shape == 'map':
        for key, item in (value.items() if isinstance(value, dict) else ()):
            child, declared = _child(node, key)
            sub = path + (f'f:{key}',)
            _fieldset(item, child, sub, out)
            if item is None or item == {} or not declared:
                out.add(sub)
    elif shape == 'list':
        seen: set[str] = set()
        duplicated: set[str] = set()
        for item in value if isinstance(value, list) else ():
            pe = element(item, node)
            if pe in seen and pe not in duplicated:
                out.add(path + (pe,))
                duplicated.add(pe)
            seen.add(pe)
        for item in value if isinstance(value, list) else ():
            pe = element(item, node)
            if pe not in duplicated:
                _fieldset(item, _item_node(node), path + (pe,), out)
                out.add(path + (pe,))
    elif path:
        out.add(path)


def without_prefixes(paths: Iterable[Path], prefixes: Iterable[Path]) -> set[Path]:
    """RecursiveDifference: the paths not under (nor at) any of the prefixes."""
    if not paths:
        return set()
    gone = set(prefixes)
    if () in gone:
        return set()
    if all(len(prefix) == 1 for prefix in gone):   # the usual: a top-level field (`f:status`, `f:spec`)
        return {path for path in paths if not path or path[:1] not in gone}
    lengths = sorted({len(prefix) for prefix in gone})   # only slices as long as a prefix can be in it
    return {path for path in paths if not any(path[:n] in gone for n in lengths if n <= len(path))}


def encode(paths: Iterable[Path]) -> dict[str, Any]:
    """The `fieldsV1` of a set of paths: members as `{}`, members with children also as `".": {}`."""
    tree: dict[str, Any] = {}
    members: set[int] = set()
    for path in paths:
        node = tree
        for pe in path:
            node = node.setdefault(pe, {})
        members.add(id(node))
    return _ordered(tree, members)


_SHARED: dict[frozenset[Path], dict[str, Any]] = {}   # paths -> their `fieldsV1`, shared by the entries
SHARED_KEPT = 1000


def encode_shared(paths: Iterable[Path]) -> dict[str, Any]:
    """`encode(paths)`, the same dict for the same set of fields-only paths (every resumed object's entry gets the
    same fields): made once, in both orders at once (fields only: upstream's path element order is the sorted
    one), and marked in field order already (`fieldorder.settle`), so that storing it costs no walk. Shared, as
    stored values are: never changed in place."""
    key = paths if isinstance(paths, frozenset) else frozenset(paths)
    found = _SHARED.get(key)
    if found is not None:
        return found
    found = encode(key)
    if _fields_only(found):
        if len(_SHARED) >= SHARED_KEPT:
            for value in _SHARED.values():
                fieldorder.unsettle(value)
            _SHARED.clear()
        _SHARED[key] = found
        fieldorder.settle(found)
    return found


def _fields_only(fields: dict[str, Any]) -> bool:
    """Whether a `fieldsV1` has only fields (`f:`) and members (`.`): its keys sort alike either way."""
    return all((pe == '.' or pe.startswith('f:')) and (not child or _fields_only(child))
               for pe, child in fields.items())


def _ordered(node: dict[str, Any], members: set[int]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for pe in sorted(node, key=_order):
        child = node[pe]
        rendered = _ordered(child, members)
        if child and id(child) in members:
            rendered = {'.': {}, **rendered}
        result[pe] = rendered
    return result


def decode(fields: Any, prefix: Path = ()) -> set[Path]:
    """The set of paths of a `fieldsV1` value."""
    found: set[Path] = set()
    for pe, child in (fields.items() if isinstance(fields, dict) else ()):
        if pe == '.':
            found.add(prefix)
            continue
        if isinstance(child, dict) and child:
            found |= decode(child, prefix + (pe,))
        else:
            found.add(prefix + (pe,))
    return found


def owns(fields: Any, paths: Iterable[Path]) -> bool:
    """Whether any of `paths` is in `decode(fields)`, without decoding it (a walk along each path)."""
    if not isinstance(fields, dict):
        return False
    for path in paths:
        if not path:
            if '.' in fields:
                return True
            continue
        if path[0] not in fields:   # the usual: not even its top-level field (checked below again, as any)
            continue
        node: Any = fields
        last = len(path) - 1
        for index, pe in enumerate(path):
            child = node.get(pe, MISSING) if pe != '.' else MISSING
            if child is MISSING:
                break
            nested = isinstance(child, dict) and bool(child)
            if index == last:
                if not nested or '.' in child:
                    return True
            elif not nested:
                break
            node = child
    return False


@functools.lru_cache(maxsize=4096)   # the same few path elements, again and again
def _order(pe: str) -> tuple[Any, ...]:
    """Upstream's PathElement order: fields by name, then keys, then values, then indexes."""
    kind, rest = pe[:1], pe[2:]
    if kind == 'f':
        return (0, rest.encode())
    if kind == 'k':
        try:
            fields = json.loads(rest)
        except ValueError:
            return (1, ())
        return (1, tuple((name.encode(), _value_order(value)) for name, value in fields.items()))
    if kind == 'v':
        try:
            return (2, _value_order(json.loads(rest)))
        except ValueError:
            return (2, ())
    return (3, int(rest) if rest.lstrip('-').isdigit() else 0)


def _value_order(value: Any) -> tuple[Any, ...]:
    if isinstance(value, bool):
        return (2, value)
    if isinstance(value, int | float):
        return (0, value)
    if isinstance(value, str):
        return (1, value.encode())
    if isinstance(value, list):
        return (3, tuple(_value_order(item) for item in value))
    if isinstance(value, dict):
        return (4, tuple((key.encode(), _value_order(item)) for key, item in sorted(value.items())))
    return (5,)
