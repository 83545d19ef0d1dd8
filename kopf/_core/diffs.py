"""Diffs: what changed between two essences, as `(op, field, old, new)` items; narrowing to a field.

Rules:
- Mappings are recursed; lists and scalars are compared as whole values; equal values give nothing.
- At each level: added keys first, then removed keys, then the common keys (recursed), each group in
  the order of the dicts' keys.
- Comparing against `None` as a whole (e.g. on creation) gives one item at the root:
  `('add', (), None, new)` or `('remove', (), old, None)`.
- Narrowing (`reduce`) re-roots the items under a field at `()`; if the field's parent (or the
  field itself) was added, removed or replaced wholesale, a fresh sub-diff of its values is computed.
"""
import enum
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple, overload

from kopf._shared import fields


class DiffOperation(enum.StrEnum):
    """The operation of a `kopf.DiffItem`: a string, equal to `'add'`, `'change'` or `'remove'`."""

    ADD = 'add'
    CHANGE = 'change'
    REMOVE = 'remove'


class DiffItem(NamedTuple):
    """One change: a 4-tuple `(op, field, old, new)` that unpacks, compares and prints as a plain tuple.

    As upstream users see it: `('change', ('spec', 'size'), 3, 5)`; the names (`.operation`/`.op`,
    `.field`, `.old`, `.new`) are for our own code and for readability.
    """
    operation: DiffOperation
    field: fields.FieldPath
    old: Any
    new: Any

    @property
    def op(self) -> DiffOperation:
        return self.operation

    def __repr__(self) -> str:
        return repr((str(self.operation), self.field, self.old, self.new))


class Diff(Sequence[DiffItem]):
    """An immutable sequence of diff items; equal to any sequence of equal tuples."""

    __slots__ = ('_items',)

    def __init__(self, items: Iterable[DiffItem | tuple[Any, ...]] = ()) -> None:
        self._items: tuple[DiffItem, ...] = tuple(
            DiffItem(DiffOperation(item[0]), tuple(item[1]), item[2], item[3]) for item in items
        )

    @overload
    def __getitem__(self, index: int) -> DiffItem: ...
    @overload
    def __getitem__(self, index: slice) -> 'Diff': ...
    def __getitem__(self, index: int | slice) -> 'DiffItem | Diff':
        if isinstance(index, slice):
            return Diff(self._items[index])
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[DiffItem]:
        return iter(self._items)

    def __repr__(self) -> str:
        return repr(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return self._items == tuple(tuple(item) if isinstance(item, Sequence) else item for item in other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._items)


def diff(old: Any, new: Any, *, path: fields.FieldPath = ()) -> Diff:
    """The difference between two values (normally two essences), with field paths from `path`."""
    if old == new:  # the usual case (an unchanged object): one comparison in C, one shared empty value
        return _NO_DIFF
    return Diff(_walk(old, new, path))


_NO_DIFF = Diff()  # immutable: shared


def _walk(old: Any, new: Any, path: fields.FieldPath) -> Iterator[DiffItem]:
    if old == new:
        return
    if old is None:
        yield DiffItem(DiffOperation.ADD, path, None, new)
    elif new is None:
        yield DiffItem(DiffOperation.REMOVE, path, old, None)
    elif fields.is_mapping(old) and fields.is_mapping(new):
        for key in new:
            if key not in old:
                yield DiffItem(DiffOperation.ADD, path + (key,), None, new[key])
        for key in old:
            if key not in new:
                yield DiffItem(DiffOperation.REMOVE, path + (key,), old[key], None)
        for key in old:
            if key in new:
                yield from _walk(old[key], new[key], path + (key,))
    else:
        yield DiffItem(DiffOperation.CHANGE, path, old, new)


def reduce(d: Diff, field: fields.FieldSpec | None) -> Diff:
    """The diff as seen from a field: items under it re-rooted at `()`; wholesale parents re-diffed."""
    path = fields.parse_field(field)
    if not path:
        return d
    items: list[DiffItem] = []
    for item in d:
        if item.field[:len(path)] == path:
            items.append(item._replace(field=item.field[len(path):]))
        elif path[:len(item.field)] == item.field:
            rest = path[len(item.field):]
            items.extend(_walk(fields.resolve(item.old, rest, None), fields.resolve(item.new, rest, None), ()))
    return Diff(items)


def narrow(old: Any, new: Any, field: fields.FieldSpec | None) -> tuple[Any, Any]:
    """The old and new values of a field (None where absent), as field handlers receive them."""
    path = fields.parse_field(field)
    return fields.resolve(old, path, None), fields.resolve(new, path, None)
