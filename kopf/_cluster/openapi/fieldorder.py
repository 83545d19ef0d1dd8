"""Objects in the field order kube-apiserver writes them, so that answers are byte for byte a real server's.

kube-apiserver encodes built-in objects with Go's `encoding/json`: a struct's fields in declaration order
(`kind`, `apiVersion`, `metadata`, `spec`, `status`; `name`, `generateName`, `namespace`, `uid`, ... in
metadata), a map's keys sorted; custom resources are maps all the way down, so all their keys are sorted.
The struct orders are generated from the Go sources (`data/field_order.json`, by
`tools/generate_field_order.py`). `arrange()` reorders an object in place (its values untouched), once,
when it is stored: every answer made of it (GET, lists, watch events, Tables) then serializes in that order.
Values kept as the client sent them (`RawExtension`, a CRD's `default`s and `example`s) keep their order.
"""
import functools
import importlib.resources
import json
from typing import Any

Spec = Any   # None (a scalar, or kept as sent) | int (a struct) | ['list', Spec] | ['map', Spec]
UNKNOWN = 1 << 20   # fields no Go struct has (none should be stored) go last, in their own order


class Positions(dict[str, int]):
    """A struct's field positions; a field it does not have goes last."""

    def __missing__(self, key: str) -> int:
        return UNKNOWN


Struct = tuple[Positions, dict[str, Spec]]   # field -> position, field -> child spec (only non-scalars)


@functools.cache
def _table() -> tuple[list[Struct], dict[str, int]]:
    text = importlib.resources.files('kopf._cluster.openapi.data').joinpath('field_order.json').read_text()
    data = json.loads(text)
    structs = [(Positions({name: i for i, (name, _) in enumerate(fields)}),
                {name: child for name, child in fields if child is not None})
               for _, fields in data['types']]
    return structs, data['kinds']


def struct_of(api_version: Any, kind: Any) -> int | None:
    """The struct of a built-in kind (`apps/v1`, `Deployment`); None for custom resources."""
    return _table()[1].get(f'{api_version}/{kind}')


def arrange(obj: dict[str, Any], like: Any = None) -> None:
    """Reorder an object's keys in place: a built-in kind by its Go structs, any other with sorted keys.

    `like`: an arranged object (a stored one) that this one may share parts with: those parts are the very
    same values, in order already, and are not walked again (a new version costs its own changes only)."""
    index = struct_of(obj.get('apiVersion'), obj.get('kind'))
    if index is None:
        sort_keys(obj, like)
    else:
        _struct(obj, index, _table()[0], like)


def arrange_as(value: Any, api_version: str, kind: str) -> None:
    """Reorder a value of a known built-in kind (a Table, a Status) whatever its own `kind` field says."""
    index = struct_of(api_version, kind)
    if index is not None and isinstance(value, dict):
        _struct(value, index, _table()[0])


def sort_keys(value: Any, like: Any = None) -> None:
    """Every map's keys sorted, recursively, in place (Go's encoding of `map[string]interface{}`); and
    whole floats made integers, as a real server keeps them (`1.0` is `1`: Go writes a float64 so).
    What is the very same value at the same place in `like` (arranged already) is left as it is."""
    if type(value) is dict or isinstance(value, dict):
        _sort_map(value, like)
    elif isinstance(value, list):
        _sort_list(value, like)


_SETTLED: dict[int, Any] = {}   # id -> a value known to be in field order already (kept alive here: ids unique)


def settle(value: Any) -> None:
    """Mark a value (a map of maps and strings, never changed in place) as sorted already: `sort_keys` skips it
    wherever it is found (e.g. a `fieldsV1` shared by many objects' entries)."""
    _SETTLED[id(value)] = value


def unsettle(value: Any) -> None:
    if _SETTLED.get(id(value)) is value:
        del _SETTLED[id(value)]


def _sort_map(value: dict[str, Any], like: Any) -> None:
    if len(value) > 1:
        keys = list(value)
        ordered = sorted(keys)
        if keys != ordered:
            _reorder(value, ordered)
    like = like if type(like) is dict else None
    for key, item in value.items():
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:   # the usual scalars: nothing to do
            continue
        if kind is float:
            value[key] = _number(item)
        elif (kind is dict or kind is list or isinstance(item, (dict, list))) and item:   # an empty one: as it is
            known = like.get(key) if like is not None else None
            if known is not item and _SETTLED.get(id(item)) is not item:
                sort_keys(item, known)


def _sort_list(value: list[Any], like: Any) -> None:
    for index, (item, known) in enumerate(zip(value, _alike(value, like), strict=True)):
        if type(item) is float:
            value[index] = _number(item)
        elif isinstance(item, (dict, list)) and item and known is not item:
            sort_keys(item, known)


def _number(value: float) -> float | int:
    return int(value) if value.is_integer() and abs(value) < 1e21 and not (value == 0 and str(value)[0] == '-') \
        else value


def _reorder(value: dict[str, Any], keys: list[str]) -> None:
    if list(value) != keys:
        items = [(key, value.pop(key)) for key in keys]
        value.update(items)


def _struct(value: dict[str, Any], index: int, structs: list[Struct], like: Any = None) -> None:
    positions, children = structs[index]
    last = -1
    for key in value:   # mostly in order already (stored before): checked at the cost of one look-up a key
        position = positions[key]
        if position < last:
            _reorder(value, sorted(value, key=positions.__getitem__))
            break
        last = position
    like = like if type(like) is dict else None
    for key, item in value.items():
        if type(item) is dict or type(item) is list:
            child = children.get(key)
            known = like.get(key) if like is not None else None
            if child is not None and known is not item:
                _child(item, child, structs, known)


def _child(value: Any, spec: Spec, structs: list[Struct], like: Any = None) -> None:
    if isinstance(spec, int):
        if type(value) is dict:
            _struct(value, spec, structs, like)
        elif type(value) is list:   # a schema's `items` may be a list of schemas (JSONSchemaPropsOrArray)
            for item, known in zip(value, _alike(value, like), strict=True):
                if type(item) is dict and known is not item:
                    _struct(item, spec, structs, known)
    elif spec[0] == 'list' and isinstance(value, list):
        if spec[1] is not None:
            for item, known in zip(value, _alike(value, like), strict=True):
                if known is not item:
                    _child(item, spec[1], structs, known)
    elif spec[0] == 'map' and isinstance(value, dict) and value:
        _reorder(value, sorted(value))
        if spec[1] is not None:
            like = like if type(like) is dict else None
            for key, item in value.items():
                known = like.get(key) if like is not None else None
                if known is not item:
                    _child(item, spec[1], structs, known)


def _alike(value: list[Any], like: Any) -> list[Any]:
    """The items of `like` beside those of `value`: by position if as many, else each item itself if `like` has
    that very item anywhere (an item added or removed around the others), else None."""
    if type(like) is not list or not like:
        return [None] * len(value)
    if len(like) == len(value):
        return like
    kept = {id(item) for item in like}
    return [item if id(item) in kept else None for item in value]
