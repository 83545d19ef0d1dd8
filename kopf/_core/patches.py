"""`kopf.Patch`: the merge-patch a cycle accumulates, with write views and JSON-patch transformations."""
import copy as copying
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

    @property
    def status(self) -> PatchView:
        return PatchView(self, ('status',))

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
