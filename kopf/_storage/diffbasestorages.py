"""Diff-base storages: where the last handled essence of an object lives.

`build()` computes the essence of a body (see `kopf._core.essences`); subclasses extend it via `super()`.
Storages read from a body and write only into a patch; arguments after `self` are keyword-only
(except the constructor's), and the framework always passes them by name.
"""
import abc
from collections.abc import Collection, Iterable, Mapping, MutableMapping
from typing import Any

from kopf._core import essences
from kopf._shared import encoding, fields
from kopf._storage import keys as keying

Body = Mapping[str, Any]
Patch = MutableMapping[str, Any]
Essence = dict[str, Any]


class DiffBaseStorage(metaclass=abc.ABCMeta):
    """The base class of diff-base storages; subclass it for your own."""

    def __init__(self, ignored_fields: Collection[fields.FieldSpec] | None = None) -> None:
        super().__init__()
        self.ignored_fields: list[fields.FieldPath] = [fields.parse_field(f) for f in ignored_fields or ()]

    def build(self, *, body: Body, extra_fields: Iterable[fields.FieldSpec] | None = None) -> Essence:
        """The essence of a body: what is compared with the diff-base to detect changes."""
        return essences.build(body, extra_fields=extra_fields, ignored_fields=self.ignored_fields)

    @abc.abstractmethod
    def fetch(self, *, body: Body) -> Essence | None:
        raise NotImplementedError

    @abc.abstractmethod
    def store(self, *, body: Body, patch: Patch, essence: Essence) -> None:
        raise NotImplementedError

    def unchanged(self, *, body: Body, cleared: tuple[str, ...]) -> bool | None:
        """Whether the body's essence equals the stored diff-base, told without building the essence.

        Asked where the essence is the default one (no extra fields) as the progress storage clears it of
        the annotations whose keys start with `cleared` (`ProgressStorage.cleared_prefixes()`). None if not
        told so: by default, as a subclass may build and fetch anything (the reactor builds and compares then).
        """
        return None

    def writes_only_own_fields(self) -> bool:
        """Whether this storage keeps the diff-base in its own annotation or status field, and builds
        essences without status and Kopf's annotations (as the framework's storages do).

        Only then may the reactor skip re-checking the answer to its own patch when that answer differs
        from the body only there. False by default: a user's storage may put anything into the essence.
        """
        return False


class AnnotationsDiffBaseStorage(DiffBaseStorage):
    """The essence as compact JSON plus a newline in `<prefix>/last-handled-configuration` (the default)."""

    def __init__(
            self,
            *,
            prefix: str = 'kopf.zalando.org',
            key: str = 'last-handled-configuration',
            ignored_fields: Collection[fields.FieldSpec] | None = None,
            v1: bool = True,
    ) -> None:
        super().__init__(ignored_fields=ignored_fields)
        self.prefix = keying.validate_prefix(prefix)
        self.key = key
        self.v1 = v1

    def make_keys(self, key: str, *, body: Body | None = None) -> list[str]:
        return keying.make_keys(self.prefix, key, v1=self.v1, body=body)

    def build(self, *, body: Body, extra_fields: Iterable[fields.FieldSpec] | None = None) -> Essence:
        essence = super().build(body=body, extra_fields=extra_fields)
        essences.drop_annotations(essence, self.make_keys(self.key, body=body))
        return essence

    def fetch(self, *, body: Body) -> Essence | None:
        value = keying.read(body, self.make_keys(self.key, body=body))
        essence: Essence | None = encoding.loads_stored(value) if value is not None else None
        return essence

    def store(self, *, body: Body, patch: Patch, essence: Essence) -> None:
        value = encoding.compact(essence) + '\n'
        keying.write(body, patch, self.make_keys(self.key, body=body), value, prefix=self.prefix)


    def unchanged(self, *, body: Body, cleared: tuple[str, ...]) -> bool | None:
        if type(self) is not AnnotationsDiffBaseStorage or self.ignored_fields:
            return None
        keys = self.make_keys(self.key, body=body)  # what `build()` drops, and where `fetch()` reads
        value = keying.read(body, keys)
        return value is not None and essences.unchanged(encoding.loads_stored(value), body, dropped=keys,
                                                        prefixes=cleared)

    def writes_only_own_fields(self) -> bool:
        return type(self) is AnnotationsDiffBaseStorage

class StatusDiffBaseStorage(DiffBaseStorage):
    """The essence as a JSON string (no newline) at `status.<name>.last-handled-configuration`."""

    def __init__(
            self,
            *,
            name: str = 'kopf',
            field: fields.FieldSpec = 'status.{name}.last-handled-configuration',
            ignored_fields: Collection[fields.FieldSpec] | None = None,
    ) -> None:
        super().__init__(ignored_fields=ignored_fields)
        self._name = name
        self.field = field

    @property
    def field(self) -> fields.FieldPath:
        return self._field

    @field.setter
    def field(self, field: fields.FieldSpec) -> None:
        if isinstance(field, str):
            self._field = fields.parse_field(field.format(name=self._name))
        else:
            self._field = tuple(part.format(name=self._name) for part in fields.parse_field(field))

    def build(self, *, body: Body, extra_fields: Iterable[fields.FieldSpec] | None = None) -> Essence:
        essence = super().build(body=body, extra_fields=extra_fields)
        if self.field:
            fields.remove(essence, self.field)
        essences.drop_empty(essence)
        return essence

    def fetch(self, *, body: Body) -> Essence | None:
        value = fields.resolve(body, self.field, None)
        if isinstance(value, str):
            essence: Essence = encoding.loads_stored(value)
            return essence
        return dict(value) if isinstance(value, Mapping) else None

    def store(self, *, body: Body, patch: Patch, essence: Essence) -> None:
        fields.ensure(patch, self.field, encoding.compact(essence))


    def unchanged(self, *, body: Body, cleared: tuple[str, ...]) -> bool | None:
        if type(self) is not StatusDiffBaseStorage or self.ignored_fields or self.field[:1] not in ((), ('status',)):
            return None  # else `build()` may drop more than the status (which the essence has not, unless extra)
        old = self.fetch(body=body)
        return old is not None and essences.unchanged(old, body, dropped=(), prefixes=cleared)

    def writes_only_own_fields(self) -> bool:
        return type(self) is StatusDiffBaseStorage

class MultiDiffBaseStorage(DiffBaseStorage):
    """Several storages: build chained through all, fetch from the first that has one, store in all."""

    def __init__(self, storages: Collection[DiffBaseStorage]) -> None:
        super().__init__()
        self.storages = list(storages)

    def build(self, *, body: Body, extra_fields: Iterable[fields.FieldSpec] | None = None) -> Essence:
        essence: Essence = dict(body)
        extra = list(extra_fields or ())
        for storage in self.storages:
            essence = storage.build(body=essence, extra_fields=extra)
        return essence

    def fetch(self, *, body: Body) -> Essence | None:
        for storage in self.storages:
            essence = storage.fetch(body=body)
            if essence is not None:
                return essence
        return None

    def store(self, *, body: Body, patch: Patch, essence: Essence) -> None:
        for storage in self.storages:
            storage.store(body=body, patch=patch, essence=essence)

    def writes_only_own_fields(self) -> bool:
        return type(self) is MultiDiffBaseStorage and all(s.writes_only_own_fields() for s in self.storages)
