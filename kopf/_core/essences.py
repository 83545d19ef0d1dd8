"""The essence of an object: the part whose changes are worth handling, compared to the diff-base.

Building it from a body:
1. deep-copy; drop `apiVersion`, `kind`, the whole `metadata` and `status`;
2. re-add `metadata.labels` and `metadata.annotations`;
3. drop the annotations of any Kopf-owned prefix (ours or another Kopf operator's, see `kopf_prefixes`)
   and `kubectl.kubernetes.io/last-applied-configuration`;
4. re-add the `extra_fields` (the `field=` paths of the resource's handlers, e.g. `status.x`);
5. drop empty `metadata.annotations`, `metadata.labels`, `metadata`, `status`;
6. drop the `ignored_fields`.
The storages then strip their own data (the diff-base key, the progress keys) from the result.
Key order: `spec` and other top-level fields first, `metadata` after them.
"""
import copy
from collections.abc import Collection, Iterable, Mapping, MutableMapping
from typing import Any

from kopf._shared import fields

MARKER_NAME = 'kopf-managed'  # `<prefix>/kopf-managed: "yes"` marks a custom prefix as Kopf's
KOPF_DOMAIN = 'kopf.zalando.org'
KUBECTL_LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration'


_NOT_ESSENCE = frozenset({'apiVersion', 'kind', 'metadata', 'status'})
_ATOMS = (str, int, float, bool, type(None))


def copy_value(value: Any) -> Any:
    """A deep copy of a JSON-like value (dicts, lists, scalars): like `copy.deepcopy`, without its memo.

    Other values (rare in bodies) are deep-copied as usual.
    """
    if isinstance(value, dict):
        return {key: v if type(v) in _ATOMS else copy_value(v) for key, v in value.items()}
    if isinstance(value, list):
        return [v if type(v) in _ATOMS else copy_value(v) for v in value]
    if type(value) in _ATOMS:
        return value
    return copy.deepcopy(value)


def kopf_prefixes(annotations: Mapping[str, Any]) -> set[str]:
    """The annotation prefixes owned by Kopf operators: marked ones, `kopf.zalando.org`, `*.kopf.zalando.org`."""
    prefixes = set()
    for key in annotations:
        prefix, slash, name = key.rpartition('/')
        if not slash:
            continue
        if name == MARKER_NAME or prefix == KOPF_DOMAIN or prefix.endswith('.' + KOPF_DOMAIN):
            prefixes.add(prefix)
    return prefixes


def is_kopf_key(key: str, prefixes: Collection[str]) -> bool:
    prefix, slash, _ = key.rpartition('/')
    return bool(slash) and prefix in prefixes


def build(
        body: Mapping[str, Any],
        *,
        extra_fields: Iterable[fields.FieldSpec] | None = None,
        ignored_fields: Iterable[fields.FieldSpec] | None = None,
) -> dict[str, Any]:
    """The essence of a body, as the default `DiffBaseStorage.build()` computes it."""
    # Only the stanzas that stay are copied (not metadata with its managedFields, nor status).
    essence: dict[str, Any] = {key: copy_value(value) for key, value in body.items() if key not in _NOT_ESSENCE}

    metadata = body.get('metadata') or {}
    labels = metadata.get('labels')
    annotations = metadata.get('annotations')
    if labels is not None:
        essence.setdefault('metadata', {})['labels'] = copy_value(dict(labels))
    if annotations is not None:
        owned = kopf_prefixes(annotations)
        essence.setdefault('metadata', {})['annotations'] = {
            key: copy_value(value) for key, value in annotations.items()
            if key != KUBECTL_LAST_APPLIED and not is_kopf_key(key, owned)
        }

    for spec in extra_fields or ():
        path = fields.parse_field(spec)
        value = fields.resolve(body, path)
        if path and value is not fields.MISSING:
            fields.ensure(essence, path, copy_value(value))

    drop_empty(essence)
    for spec in ignored_fields or ():
        path = fields.parse_field(spec)
        if path:
            fields.remove(essence, path)
    return essence


def unchanged(old: Any, body: Mapping[str, Any], *, dropped: Collection[str], prefixes: tuple[str, ...]) -> bool | None:
    """Whether `old` equals the body's essence, without building it: `build()` with no extra or ignored fields,
    less the annotations `dropped` and those whose keys start with `prefixes` (the storages' own).

    The same answer as the essence compared (tests/core/test_essences.py holds the two side by side); None
    where the body's metadata is not as `build()` expects it (it is built then, and fails the same way).
    """
    metadata = body.get('metadata') or {}
    if type(metadata) is not dict:
        return None
    labels, annotations = metadata.get('labels'), metadata.get('annotations')
    if not (labels is None or type(labels) is dict) or not (annotations is None or type(annotations) is dict):
        return None
    if type(old) is not dict:
        return False
    count = 0  # the essence's top-level keys
    for key, value in body.items():
        if key not in _NOT_ESSENCE:
            if old.get(key, fields.MISSING) != value:
                return False
            count += 1
    kept = _kept(annotations, dropped, prefixes) if annotations else None
    if labels or kept:
        count += 1
        meta = {'labels': labels, 'annotations': kept} if labels and kept else \
            {'labels': labels} if labels else {'annotations': kept}
        if old.get('metadata') != meta:
            return False
    return len(old) == count


def _kept(annotations: Mapping[str, Any], dropped: Collection[str], prefixes: tuple[str, ...]) -> dict[str, Any]:
    """The annotations of the essence (as `build()` keeps them), less those dropped and those of the prefixes."""
    kept: dict[str, Any] = {}
    owned: set[str] | None = None
    for key, value in annotations.items():
        if key == KUBECTL_LAST_APPLIED or key in dropped or key.startswith(prefixes):
            continue
        if owned is None:
            owned = kopf_prefixes(annotations)
        if not is_kopf_key(key, owned):
            kept[key] = value
    return kept


def drop_empty(essence: MutableMapping[str, Any]) -> None:
    """Drop empty `metadata.annotations`, `metadata.labels`, `metadata` and `status` in place."""
    metadata = essence.get('metadata')
    if fields.is_mutable_mapping(metadata):
        for key in ('annotations', 'labels'):
            if key in metadata and not metadata[key]:
                del metadata[key]
    for key in ('metadata', 'status'):
        if key in essence and not essence[key]:
            del essence[key]


def drop_annotations(essence: MutableMapping[str, Any], keys: Iterable[str]) -> None:
    """Drop some annotations from an essence in place, and the stanzas left empty."""
    annotations = fields.resolve(essence, ('metadata', 'annotations'), None)
    if fields.is_mutable_mapping(annotations):
        for key in keys:
            annotations.pop(key, None)
    drop_empty(essence)
