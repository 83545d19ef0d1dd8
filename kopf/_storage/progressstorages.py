"""Progress storages: where each handler's state (`ProgressRecord`) lives between cycles.

Storages read from a body and write only into a patch. Every method argument after `self` is
keyword-only, and the framework always passes them by name, so user subclasses plug in unchanged.
"""
import abc
import copy
import json
from collections.abc import Collection, Mapping, MutableMapping
from typing import Any, TypedDict

from kopf._core import essences
from kopf._shared import encoding, fields
from kopf._storage import keys as keying


class ProgressRecord(TypedDict, total=False):
    """The persisted state of one handler for one object (`kopf.ProgressRecord`)."""

    started: str | None
    stopped: str | None
    delayed: str | None
    purpose: str | None
    retries: int | None
    success: bool | None
    failure: bool | None
    message: str | None
    subrefs: list[str] | None


Body = Mapping[str, Any]
Patch = MutableMapping[str, Any]
Essence = dict[str, Any]


class ProgressStorage(metaclass=abc.ABCMeta):
    """The base class of handler progress storages; subclass it for your own."""

    @abc.abstractmethod
    def fetch(self, *, key: str, body: Body) -> ProgressRecord | None:
        raise NotImplementedError

    @abc.abstractmethod
    def store(self, *, key: str, record: ProgressRecord, body: Body, patch: Patch) -> None:
        raise NotImplementedError

    @abc.abstractmethod
    def purge(self, *, key: str, body: Body, patch: Patch) -> None:
        raise NotImplementedError

    @abc.abstractmethod
    def touch(self, *, body: Body, patch: Patch, value: str | None) -> None:
        raise NotImplementedError

    @abc.abstractmethod
    def clear(self, *, essence: Essence) -> Essence:
        """Strip this storage's own data from a diff essence (the base returns a deep copy)."""
        return copy.deepcopy(essence)

    def flush(self) -> None:  # noqa: B027  # not abstract: optional for subclasses
        """Called after each batch of stores and of purges; nothing to do by default."""

    def fetch_all(self, *, keys: Collection[str], body: Body) -> dict[str, ProgressRecord]:
        """The records of these keys (the found ones only), as the reactor reads them in every cycle.

        By default, `fetch()` key by key. The framework's storages look the body up once for all the
        keys, unless a subclass overrides `fetch()`: then it is asked key by key, as here.
        """
        records: dict[str, ProgressRecord] = {}
        for key in keys:
            record = self.fetch(key=key, body=body)
            if record is not None:
                records[key] = record
        return records

    def clear_fresh(self, *, essence: Essence) -> Essence:
        """`clear()` of an essence built for this cycle and never modified afterwards.

        It may return the essence itself when there is nothing to strip (no copy). By default, and
        for subclasses that override `clear()`, it is `clear()`.
        """
        return self.clear(essence=essence)

    def cleared_prefixes(self) -> tuple[str, ...] | None:
        """The starts of the annotation keys (`prefix/`) that `clear_fresh()` strips from an essence without status,
        if that is all it strips.

        Then the reactor may compare the body with the diff-base without building its essence
        (`kopf._core.essences.unchanged`). None by default: a subclass may strip anything.
        """
        return None

    def writes_only_own_fields(self) -> bool:
        """Whether this storage keeps to its own annotations or status fields, out of every essence.

        Only then may the reactor skip re-checking the answer to its own patch when that answer differs
        from the body only in such fields. False by default: a user's storage may keep records anywhere.
        """
        return False


class AnnotationsProgressStorage(ProgressStorage):
    """Each handler's record as compact JSON in `<prefix>/<safe handler id>` annotations."""

    def __init__(
            self,
            *,
            prefix: str = 'kopf.zalando.org',
            verbose: bool = False,
            touch_key: str = 'touch-dummy',
            v1: bool = True,
    ) -> None:
        super().__init__()
        self.prefix = keying.validate_prefix(prefix)
        self.verbose = verbose
        self.touch_key = touch_key
        self.v1 = v1

    def make_keys(self, key: str, *, body: Body | None = None) -> list[str]:
        return keying.make_keys(self.prefix, key, v1=self.v1, body=body)

    def fetch(self, *, key: str, body: Body) -> ProgressRecord | None:
        value = keying.read(body, self.make_keys(key, body=body))
        record: ProgressRecord | None = json.loads(value) if value is not None else None
        return record

    def store(self, *, key: str, record: ProgressRecord, body: Body, patch: Patch) -> None:
        data = {k: v for k, v in record.items() if self.verbose or v is not None}
        value = encoding.compact(data)
        keying.write(body, patch, self.make_keys(key, body=body), value, prefix=self.prefix)

    def purge(self, *, key: str, body: Body, patch: Patch) -> None:
        keying.remove(body, patch, self.make_keys(key, body=body))

    def touch(self, *, body: Body, patch: Patch, value: str | None) -> None:
        keys = self.make_keys(self.touch_key, body=body)
        if value is not None:
            keying.write(body, patch, keys, value, prefix=self.prefix)
        else:  # only what the body has is nulled; a pending touch stays in the patch
            existing = keying.annotations_of(body)
            for k in keys:
                if k in existing:
                    fields.ensure(patch, ('metadata', 'annotations', k), None)

    def clear(self, *, essence: Essence) -> Essence:
        essence = super().clear(essence=essence)
        annotations = fields.resolve(essence, ('metadata', 'annotations'), None) or {}
        ours = [key for key in annotations if key.startswith(self.prefix + '/')]
        essences.drop_annotations(essence, ours)
        return essence

    def fetch_all(self, *, keys: Collection[str], body: Body) -> dict[str, ProgressRecord]:
        kind, plain = type(self), AnnotationsProgressStorage
        if kind.fetch is not plain.fetch or kind.make_keys is not plain.make_keys or body.get('kind') == 'ReplicaSet':
            return super().fetch_all(keys=keys, body=body)  # overridden fetch()/make_keys(), or body-specific keys
        records: dict[str, ProgressRecord] = {}
        annotations = keying.annotations_of(body)
        if annotations and not keying.names_of(self.prefix, tuple(keys), self.v1).isdisjoint(annotations):
            for key in keys:  # some are there: in the reading order, the first name found of each key
                for name in keying.make_keys(self.prefix, key, v1=self.v1):
                    value = annotations.get(name)
                    if value is not None:
                        records[key] = json.loads(str(value))
                        break
        return records

    def clear_fresh(self, *, essence: Essence) -> Essence:
        if type(self).clear is AnnotationsProgressStorage.clear:
            prefix = self.prefix + '/'
            annotations = fields.resolve(essence, ('metadata', 'annotations'), None) or {}
            if not any(key.startswith(prefix) for key in annotations):
                return essence
        return self.clear(essence=essence)

    def cleared_prefixes(self) -> tuple[str, ...] | None:
        kind, plain = type(self), AnnotationsProgressStorage
        return (self.prefix + '/',) if kind.clear is plain.clear and kind.clear_fresh is plain.clear_fresh else None

    def writes_only_own_fields(self) -> bool:
        return type(self) is AnnotationsProgressStorage


class StatusProgressStorage(ProgressStorage):
    """Each handler's record as a dict at `status.<name>.progress.<handler id>` (the raw id, with `/`)."""

    def __init__(
            self,
            *,
            name: str = 'kopf',
            field: fields.FieldSpec = 'status.{name}.progress',
            touch_field: fields.FieldSpec = 'status.{name}.dummy',
    ) -> None:
        super().__init__()
        self._name = name
        self.field = field
        self.touch_field = touch_field

    @property
    def field(self) -> fields.FieldPath:
        return self._field

    @field.setter
    def field(self, field: fields.FieldSpec) -> None:
        self._field = _formatted_path(field, name=self._name)

    @property
    def touch_field(self) -> fields.FieldPath:
        return self._touch_field

    @touch_field.setter
    def touch_field(self, field: fields.FieldSpec) -> None:
        self._touch_field = _formatted_path(field, name=self._name)

    def fetch(self, *, key: str, body: Body) -> ProgressRecord | None:
        container = fields.resolve(body, self.field, None)
        value = container.get(key) if isinstance(container, Mapping) else None
        return ProgressRecord(**copy.deepcopy(dict(value))) if isinstance(value, Mapping) else None  # type: ignore

    def store(self, *, key: str, record: ProgressRecord, body: Body, patch: Patch) -> None:
        # Written as given: None-valued fields null the stale ones in the merge-patch.
        _set(patch, self.field + (key,), copy.deepcopy(dict(record)))

    def purge(self, *, key: str, body: Body, patch: Patch) -> None:
        _unset(body, patch, self.field + (key,))

    def touch(self, *, body: Body, patch: Patch, value: str | None) -> None:
        if value is not None:
            _set(patch, self.touch_field, value)
        elif fields.resolve(body, self.touch_field) is not fields.MISSING:
            _set(patch, self.touch_field, None)  # only what the body has is nulled; a pending touch stays

    def clear(self, *, essence: Essence) -> Essence:
        essence = super().clear(essence=essence)
        if self.field:
            fields.remove(essence, self.field)
        return essence

    def fetch_all(self, *, keys: Collection[str], body: Body) -> dict[str, ProgressRecord]:
        container = fields.resolve(body, self._field, None)
        if not container or not fields.is_mapping(container):
            if type(self).fetch is StatusProgressStorage.fetch:
                return {}  # nothing stored there: no need to ask key by key
        return super().fetch_all(keys=keys, body=body)

    def clear_fresh(self, *, essence: Essence) -> Essence:
        if type(self).clear is StatusProgressStorage.clear:
            if not self.field or fields.resolve(essence, self.field) is fields.MISSING:
                return essence
        return self.clear(essence=essence)

    def cleared_prefixes(self) -> tuple[str, ...] | None:
        kind, plain = type(self), StatusProgressStorage
        if kind.clear is plain.clear and kind.clear_fresh is plain.clear_fresh and self.field[:1] in ((), ('status',)):
            return ()  # an essence without status has nothing of it
        return None

    def writes_only_own_fields(self) -> bool:
        return type(self) is StatusProgressStorage or type(self) is _ReadPurgeOnlyStatusProgressStorage


class MultiProgressStorage(ProgressStorage):
    """Several storages at once: fetch from the first that has a record; store, purge, touch in all."""

    def __init__(self, storages: Collection[ProgressStorage]) -> None:
        super().__init__()
        self.storages = list(storages)

    def fetch(self, *, key: str, body: Body) -> ProgressRecord | None:
        for storage in self.storages:
            record = storage.fetch(key=key, body=body)
            if record is not None:
                return record
        return None

    def store(self, *, key: str, record: ProgressRecord, body: Body, patch: Patch) -> None:
        for storage in self.storages:
            storage.store(key=key, record=record, body=body, patch=patch)

    def purge(self, *, key: str, body: Body, patch: Patch) -> None:
        for storage in self.storages:
            storage.purge(key=key, body=body, patch=patch)

    def touch(self, *, body: Body, patch: Patch, value: str | None) -> None:
        for storage in self.storages:
            storage.touch(body=body, patch=patch, value=value)

    def clear(self, *, essence: Essence) -> Essence:
        for storage in self.storages:
            essence = storage.clear(essence=essence)
        return essence

    def fetch_all(self, *, keys: Collection[str], body: Body) -> dict[str, ProgressRecord]:
        if type(self).fetch is not MultiProgressStorage.fetch:
            return super().fetch_all(keys=keys, body=body)
        records: dict[str, ProgressRecord] = {}
        for storage in reversed(self.storages):  # the first storage with a record wins
            records.update(storage.fetch_all(keys=keys, body=body))
        return {key: records[key] for key in keys if key in records} if records else records

    def clear_fresh(self, *, essence: Essence) -> Essence:
        if type(self).clear is not MultiProgressStorage.clear:
            return self.clear(essence=essence)
        for storage in self.storages:
            essence = storage.clear_fresh(essence=essence)
        return essence

    def cleared_prefixes(self) -> tuple[str, ...] | None:
        kind, plain = type(self), MultiProgressStorage
        if kind.clear is not plain.clear or kind.clear_fresh is not plain.clear_fresh:
            return None
        prefixes: tuple[str, ...] = ()
        for storage in self.storages:
            cleared = storage.cleared_prefixes()
            if cleared is None:
                return None
            prefixes += cleared
        return prefixes

    def writes_only_own_fields(self) -> bool:
        return type(self) in (MultiProgressStorage, SmartProgressStorage) and \
            all(storage.writes_only_own_fields() for storage in self.storages)


class _ReadPurgeOnlyStatusProgressStorage(StatusProgressStorage):
    """The legacy location: read and purged, never written or touched (since 1.44)."""

    def store(self, *, key: str, record: ProgressRecord, body: Body, patch: Patch) -> None:
        pass

    def touch(self, *, body: Body, patch: Patch, value: str | None) -> None:
        pass


class SmartProgressStorage(MultiProgressStorage):
    """The default: writes annotations; reads annotations, then the legacy `status.kopf.progress`; purges both."""

    def __init__(
            self,
            *,
            name: str = 'kopf',
            field: fields.FieldSpec = 'status.{name}.progress',
            touch_key: str = 'touch-dummy',
            touch_field: fields.FieldSpec = 'status.{name}.dummy',
            prefix: str = 'kopf.zalando.org',
            v1: bool = True,
            verbose: bool = False,
    ) -> None:
        super().__init__([
            AnnotationsProgressStorage(prefix=prefix, verbose=verbose, touch_key=touch_key, v1=v1),
            _ReadPurgeOnlyStatusProgressStorage(name=name, field=field, touch_field=touch_field),
        ])


def _formatted_path(field: fields.FieldSpec, *, name: str) -> fields.FieldPath:
    if isinstance(field, str):
        return fields.parse_field(field.format(name=name))
    return tuple(part.format(name=name) for part in fields.parse_field(field))


def _set(patch: Patch, path: fields.FieldPath, value: Any) -> None:
    fields.ensure(patch, path, value)


def _unset(body: Body, patch: Patch, path: fields.FieldPath) -> None:
    """Null the field if the body has it; otherwise drop whatever is pending for it in the patch."""
    if fields.resolve(body, path) is not fields.MISSING:
        fields.ensure(patch, path, None)
    elif len(path) == 1 or (path and patch.get(path[0])):  # else nothing is pending deeper there (no walk)
        fields.remove(patch, path)
