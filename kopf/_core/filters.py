"""Object filters of the decorators: labels, annotations, `when`, field values, old/new values.

A filter is a literal (exact match), `kopf.PRESENT`, `kopf.ABSENT`, or a callable. Metadata and
value callables get `(value, **kwargs)`; `when` callables get `(**kwargs)`; both see the cause's
kwargs without the per-attempt ones (param, retry, started, runtime, stopped).
`kopf.not_`, `kopf.all_`, `kopf.any_`, `kopf.none_` combine callables of either form.
"""
import enum
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from kopf._shared import fields


class MetaFilterToken(enum.Enum):
    """Tokens for metadata and value filters: whether the key (or field) exists at all."""

    PRESENT = 'PRESENT'
    ABSENT = 'ABSENT'

    def __repr__(self) -> str:
        return f'kopf.{self.value}'


#: A filter value: the label, annotation or field exists (whatever its value).
PRESENT: Final = MetaFilterToken.PRESENT
#: A filter value: the label, annotation or field does not exist.
ABSENT: Final = MetaFilterToken.ABSENT

FilterFn = Callable[..., bool]               # (value, **kwargs) for metadata/values; (**kwargs) for `when`
ValueFilter = Any                            # a literal, a token, or a FilterFn
MetaFilter = Mapping[str, ValueFilter]       # labels/annotations: key → literal | token | FilterFn


def not_(fn: FilterFn) -> FilterFn:
    """A filter that passes when `fn` does not."""
    def not_fn(*args: Any, **kwargs: Any) -> bool:
        return not fn(*args, **kwargs)
    return not_fn


def all_(fns: Iterable[FilterFn]) -> FilterFn:
    """A filter that passes when every one of `fns` passes (also when there are none)."""
    fns = list(fns)

    def all_fn(*args: Any, **kwargs: Any) -> bool:
        return all(fn(*args, **kwargs) for fn in fns)
    return all_fn


def any_(fns: Iterable[FilterFn]) -> FilterFn:
    """A filter that passes when at least one of `fns` passes."""
    fns = list(fns)

    def any_fn(*args: Any, **kwargs: Any) -> bool:
        return any(fn(*args, **kwargs) for fn in fns)
    return any_fn


def none_(fns: Iterable[FilterFn]) -> FilterFn:
    """A filter that passes when none of `fns` passes."""
    fns = list(fns)

    def none_fn(*args: Any, **kwargs: Any) -> bool:
        return not any(fn(*args, **kwargs) for fn in fns)
    return none_fn


def check_metadata_filter(name: str, filters: MetaFilter | None) -> dict[str, ValueFilter] | None:
    """Validate a labels/annotations filter at decoration time: a mapping with no None values."""
    if filters is None:
        return None
    if not isinstance(filters, Mapping):
        raise TypeError(f'The {name} filter must be a mapping, got {filters!r}.')
    nones = [key for key, value in filters.items() if value is None]
    if nones:
        raise ValueError(f'The {name} filter has None for {nones!r}: use kopf.PRESENT or kopf.ABSENT instead.')
    return dict(filters)


def match_value(flt: ValueFilter, value: Any, kwargs: Mapping[str, Any]) -> bool:
    """One value against one filter; `fields.MISSING` is a value that is absent (not None)."""
    if flt is PRESENT:
        return value is not fields.MISSING
    if flt is ABSENT:
        return value is fields.MISSING
    if callable(flt):
        return bool(flt(None if value is fields.MISSING else value, **kwargs))
    return value is not fields.MISSING and bool(value == flt)


def match_metadata(filters: MetaFilter | None, actual: Mapping[str, Any] | None, kwargs: Mapping[str, Any]) -> bool:
    """All keys of a labels/annotations filter against the object's labels/annotations."""
    actual = actual if actual is not None else {}
    return all(match_value(flt, actual.get(key, fields.MISSING), kwargs) for key, flt in (filters or {}).items())


def match_when(when: FilterFn | None, kwargs: Mapping[str, Any]) -> bool:
    return when is None or bool(when(**kwargs))


def match_field_value(
        field: fields.FieldPath | None,
        value: ValueFilter,
        objs: Iterable[Mapping[str, Any] | None],
        kwargs: Mapping[str, Any],
) -> bool:
    """The `field=`+`value=` filter: passes if the field of any of the objects matches.

    Change causes pass (new, old) — the filter passes if either matches; other causes pass (body,).
    With `field=` but no `value=`, the field must be present.
    """
    if field is None:
        return True
    flt = PRESENT if value is None else value
    return any(match_value(flt, fields.resolve(obj, field), kwargs) for obj in objs)


def match_old_new(
        field: fields.FieldPath | None,
        old_filter: ValueFilter,
        new_filter: ValueFilter,
        old: Mapping[str, Any] | None,
        new: Mapping[str, Any] | None,
        kwargs: Mapping[str, Any],
) -> bool:
    """The `old=`/`new=` filters of update/field handlers: each independently; omitted ones pass."""
    if field is None:
        return True
    old_value = fields.resolve(old, field)
    new_value = fields.resolve(new, field)
    return (
        (old_filter is None or match_value(old_filter, old_value, kwargs)) and
        (new_filter is None or match_value(new_filter, new_value, kwargs))
    )


def field_changed(field: fields.FieldPath, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
    """Whether the field differs between the old and new objects (appearing/vanishing counts)."""
    return bool(fields.resolve(old, field) != fields.resolve(new, field))
