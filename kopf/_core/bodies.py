"""Read-only views of Kubernetes objects, as handlers receive them (`body`, `spec`, `meta`, `status`)."""
import datetime
from collections.abc import Iterator, Mapping
from typing import Any, Literal

from kopf._shared import fields

#: An object as the API sends it: a plain dict.
RawBody = dict[str, Any]
#: A watch event as the API sends it: `{'type': RawEventType, 'object': RawBody}`.
RawEvent = dict[str, Any]
#: The `type` of a watch event (the `type` kwarg of event handlers); None: the object is from the initial listing.
RawEventType = Literal[None, 'ADDED', 'MODIFIED', 'DELETED']


class View(Mapping[str, Any]):
    """A read-only, live view of one stanza of a body: it sees later changes of the underlying dict."""

    __slots__ = ('_path', '_src')

    def __init__(self, src: Mapping[str, Any], path: fields.FieldPath = ()) -> None:
        self._src = src
        self._path = path

    def _target(self) -> Mapping[str, Any]:
        value = fields.resolve(self._src, self._path, None)
        return value if fields.is_mapping(value) else {}

    def __getitem__(self, key: str) -> Any:
        return self._target()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._target())

    def __len__(self) -> int:
        return len(self._target())

    def __repr__(self) -> str:
        return repr(dict(self._target()))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self._target()) == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class Spec(View):
    """The `spec` of an object."""


class Status(View):
    """The `status` of an object."""


class Labels(View):
    """The `metadata.labels` of an object."""


class Annotations(View):
    """The `metadata.annotations` of an object."""


def parse_timestamp(value: str) -> datetime.datetime:
    """An ISO-8601 timestamp; naive ones are UTC. Raises `ValueError` if it is not a timestamp.

    The formats that Kubernetes, we and upstream Kopf write (`...Z`, `...+00:00`, with or without
    microseconds) are parsed by `datetime.fromisoformat` (in C); anything it
    refuses (e.g. `2024-05`, `2024-5-1T...`) falls back to iso8601, imported only then.
    """
    try:
        parsed = datetime.datetime.fromisoformat(value)
    except ValueError:
        import iso8601  # only for what `fromisoformat` refuses: it loads `decimal`
        return iso8601.parse_date(value, default_timezone=datetime.UTC)  # its ParseError is a ValueError
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=datetime.UTC)


def _parse_time(value: Any) -> datetime.datetime | None:
    return parse_timestamp(value) if isinstance(value, str) else None


class Meta(View):
    """The `metadata` of an object, with shortcuts for the commonly used fields."""

    @property
    def labels(self) -> Labels:
        return Labels(self._src, self._path + ('labels',))

    @property
    def annotations(self) -> Annotations:
        return Annotations(self._src, self._path + ('annotations',))

    @property
    def uid(self) -> str | None:
        return self.get('uid')

    @property
    def name(self) -> str | None:
        return self.get('name')

    @property
    def namespace(self) -> str | None:
        return self.get('namespace')

    @property
    def creation_timestamp(self) -> datetime.datetime | None:
        return _parse_time(self.get('creationTimestamp'))

    @property
    def deletion_timestamp(self) -> datetime.datetime | None:
        return _parse_time(self.get('deletionTimestamp'))


class Body(View):
    """The whole object, read-only; `.meta`/`.metadata`, `.spec`, `.status` are live views of its stanzas."""

    def __init__(self, src: Mapping[str, Any]) -> None:
        super().__init__(src)

    @property
    def raw(self) -> Mapping[str, Any]:
        return self._src

    @property
    def metadata(self) -> Meta:
        return Meta(self._src, ('metadata',))

    @property
    def meta(self) -> Meta:
        return self.metadata

    @property
    def spec(self) -> Spec:
        return Spec(self._src, ('spec',))

    @property
    def status(self) -> Status:
        return Status(self._src, ('status',))


#: The part of a body whose changes are handled, stored as the diff-base: the spec and other top-level
#: fields, the labels and annotations (kopf's own aside); no status but the handlers' `field=` paths.
BodyEssence = dict[str, Any]
