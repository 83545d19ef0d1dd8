"""`kopf.Patch`: the merge-patch a cycle accumulates, with write views and JSON-patch transformations."""
import copy as copying
import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from typing import Any

from kopf._shared import fields
from kopf._shared.mergepatch import merge

#: A transformation of a raw body in place (`patch.fns`), sent as a JSON-patch.
PatchFn = Callable[[dict[str, Any]], None]
# A PatchFn may also have `json_ops(body) -> list | None`: the exact JSON-patch ops it amounts to on
# that body (as the generic diff would make them), or None to fall back to the generic diff.


class PatchView(MutableMapping[str, Any]):
    """A writable view of one stanza of a patch; its dicts are created on the first write."""

    def __init__(self, patch: 'Patch', path: fields.FieldPath) -> None:
        self._patch = patch
        self._path = path

    def _read(self) -> Mapping[str, Any]:
        value = fields.resolve(self._patch, self._path, None)
        return value if isinstance(value, Mapping) else {}

    def __getitem__(self, key: str) -> Any:
        return self._read()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        fields.ensure(self._patch, self._path + (key,), value)

    def __delitem__(self, key: str) -> None:
        target = fields.resolve(self._patch, self._path, None)
        if not isinstance(target, MutableMapping) or key not in target:
            raise KeyError(key)
        del target[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())

    def __repr__(self) -> str:
        return repr(dict(self._read()))


def as_patch(value: Any, what: str = 'a patch') -> dict[str, Any]:
    """A dict, a pydantic model (the fields that were set) or a dataclass (its non-None fields), as JSON."""
    if isinstance(value, Mapping):
        return dict(value)
    dump = getattr(value, 'model_dump', None)
    if callable(dump) and hasattr(value, '__pydantic_fields_set__'):
        result: dict[str, Any] = dump(mode='json', by_alias=True, exclude_unset=True)
        return result
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        import pydantic  # dataclasses' JSON form (datetimes, enums, nested models): pydantic's
        dumped: dict[str, Any] = pydantic.TypeAdapter(type(value)).dump_python(
            value, mode='json', by_alias=True, exclude_none=True)
        return dumped
    raise TypeError(f'{what} takes a dict, a pydantic model or a dataclass, not {value!r}.')


def _merged(old: Any, new: Mapping[str, Any]) -> dict[str, Any]:
    """A merge-patch's stanza with another merged in: dicts key by key, anything else replaced."""
    result = dict(old) if isinstance(old, Mapping) else {}
    for key, value in new.items():
        result[key] = _merged(result.get(key), value) if isinstance(value, Mapping) and \
            isinstance(result.get(key), Mapping) else value
    return result


class MetaPatch(PatchView):
    @property
    def labels(self) -> PatchView:
        return PatchView(self._patch, self._path + ('labels',))

    @property
    def annotations(self) -> PatchView:
        return PatchView(self._patch, self._path + ('annotations',))


class Patch(dict[str, Any]):
    """A merge-patch (`None` deletes a key) plus `.fns`: transformations sent as a JSON-patch."""

    def __init__(self, src: Mapping[str, Any] | None = None, /, body: Mapping[str, Any] | None = None,
                 fns: Iterable[PatchFn] = ()) -> None:
        super().__init__(src or {})
        self._body = body
        self.fns: list[PatchFn] = list(fns)

    def __repr__(self) -> str:
        return f'Patch({dict(self)!r}{", fns=" + repr(self.fns) if self.fns else ""})'

    def __bool__(self) -> bool:
        return bool(len(self)) or bool(self.fns)

    @property
    def metadata(self) -> MetaPatch:
        return MetaPatch(self, ('metadata',))

    @property
    def meta(self) -> MetaPatch:
        return self.metadata

    @property
    def spec(self) -> PatchView:
        return PatchView(self, ('spec',))

    @spec.setter
    def spec(self, value: Any) -> None:
        self._merge('spec', value)

    @property
    def status(self) -> PatchView:
        return PatchView(self, ('status',))

    @status.setter
    def status(self, value: Any) -> None:
        """`patch.status = MyStatus(...)`: a typed model merged in (docs/models.md), or a dict."""
        self._merge('status', value)

    def _merge(self, key: str, value: Any) -> None:
        if isinstance(value, PatchView) and value._patch is self and value._path == (key,):
            return   # `patch.status = patch.status`, e.g. after `patch.status |= ...` on the view
        merged = _merged(self.get(key), as_patch(value, f'patch.{key}'))
        self[key] = merged

    def as_json_patch(self, body: Mapping[str, Any] | None = None, *, merged: bool = False) -> list[dict[str, Any]]:
        """The JSON-patch that turns `body` into the result of applying the `.fns` to it.

        With `merged`, the merge-patch's own fields are applied first (an admission answer is one JSON-patch);
        without, they are not (the API client sends them as a merge-patch of their own).
        """
        source = body if body is not None else self._body
        if source is None:
            raise ValueError('A JSON-patch needs the body it applies to.')
        if len(self.fns) == 1 and not (merged and self):  # a callable that knows its own ops: no copy, no diff
            known = getattr(self.fns[0], 'json_ops', None)
            ops_or_none: list[dict[str, Any]] | None = known(source) if known is not None else None
            if ops_or_none is not None:
                return ops_or_none
        import jsonpatch  # only for the generic diff: finalizer edits know their ops

        target = copying.deepcopy(dict(source))
        if merged and self:
            target = merge(target, self)
        for fn in self.fns:
            fn(target)
        ops: list[dict[str, Any]] = jsonpatch.make_patch(dict(source), target).patch
        return ops


def copy(patch: Patch) -> Patch:
    """A copy of a patch whose nested dicts can be written without touching the original (values shared)."""
    copied = Patch(body=patch._body, fns=patch.fns)
    for key, value in patch.items():  # the top level here, the nested dicts by `_copy_dicts`
        copied[key] = _copy_dicts(value) if isinstance(value, dict) else value
    return copied


def _copy_dicts(value: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _copy_dicts(v) if isinstance(v, dict) else v for k, v in value.items()}
