"""Annotation key forming, shared by the progress, diff-base and touch annotations.

- Safe characters: in the name part, `/` becomes `.`, and `<`, `>` become `_`.
- V2 key (always): the name part (after `prefix/`) is at most 63 characters.
- V1 key (with `v1=True`): the whole key, prefix included, is at most 63 characters.
- A too-long name is cut and gets `-<hash>`: blake2b with a 4-byte digest, base64 with altchars `-.`,
  trailing `=`, `-`, `.` stripped; V2 hashes the raw name, V1 the safe name (as upstream does).
- ReplicaSets owned by a Deployment get `-ofDRS` appended to every name (annotations propagate
  from Deployments to their ReplicaSets, so the keys must differ).
- Reading tries V2 first, then V1; storing and purging write both (V1 only where it differs).
- A prefix not starting with `kopf.` gets a marker `<prefix>/kopf-managed: "yes"`, so that other Kopf
  operators recognise these annotations as Kopf's and exclude them from their essences.
"""
import base64
import functools
import hashlib
import warnings
from collections.abc import Mapping, MutableMapping
from typing import Any

from kopf._core import essences
from kopf._shared import fields

MAX_NAME_LENGTH = 63
MAX_PREFIX_LENGTH = 189  # 253 (a DNS subdomain) - 63 (a name) - 1 (the slash)
RS_SUFFIX = '-ofDRS'
MARKER_NAME = essences.MARKER_NAME
MARKER_VALUE = 'yes'

kopf_prefixes = essences.kopf_prefixes


def validate_prefix(prefix: str) -> str:
    if not prefix:
        raise ValueError('An annotations prefix must be a non-empty string.')
    if len(prefix) > MAX_PREFIX_LENGTH:
        warnings.warn(f'The annotations prefix is longer than {MAX_PREFIX_LENGTH} characters; '
                      f'Kubernetes may reject the keys: {prefix!r}', UserWarning, stacklevel=3)
    return prefix


def safe_name(name: str) -> str:
    return name.replace('/', '.').replace('<', '_').replace('>', '_')


def hash_suffix(name: str) -> str:
    digest = hashlib.blake2b(name.encode('utf-8'), digest_size=4).digest()
    return '-' + base64.b64encode(digest, altchars=b'-.').decode('ascii').rstrip('=-.')


def body_suffix(body: Mapping[str, Any] | None) -> str:
    """`-ofDRS` for ReplicaSets owned by Deployments, else nothing."""
    if body is None or body.get('kind') != 'ReplicaSet':
        return ''
    owners = fields.resolve(body, ('metadata', 'ownerReferences'), None) or ()
    if any(isinstance(ref, Mapping) and ref.get('kind') == 'Deployment' for ref in owners):
        return RS_SUFFIX
    return ''


def _limit(name: str, max_length: int, *, hashed: str) -> str:
    if len(name) <= max_length:
        return name
    suffix = hash_suffix(hashed)
    return name[:max(0, max_length - len(suffix))] + suffix


def make_v2_key(prefix: str, name: str, body: Mapping[str, Any] | None = None) -> str:
    full = name + body_suffix(body)  # V2 hashes the raw name
    return f'{prefix}/{_limit(safe_name(full), MAX_NAME_LENGTH, hashed=full)}'


def make_v1_key(prefix: str, name: str, body: Mapping[str, Any] | None = None) -> str:
    safe = safe_name(name) + body_suffix(body)  # V1 hashes the safe name
    return f'{prefix}/{_limit(safe, MAX_NAME_LENGTH - len(prefix) - 1, hashed=safe)}'


def make_keys(prefix: str, name: str, *, v1: bool = True, body: Mapping[str, Any] | None = None) -> list[str]:
    """All keys of one name, in the reading order: V2 first, then V1 if enabled and different."""
    return list(_make_keys(prefix, name, v1, body_suffix(body)))


@functools.lru_cache(maxsize=1024)  # a few names per operator (handler ids), asked for in every cycle
def _make_keys(prefix: str, name: str, v1: bool, suffix: str) -> tuple[str, ...]:
    body = None if not suffix else _SUFFIXED_BODY
    keys = [make_v2_key(prefix, name, body)]
    if v1:
        key_v1 = make_v1_key(prefix, name, body)
        if key_v1 not in keys:
            keys.append(key_v1)
    return tuple(keys)


@functools.lru_cache(maxsize=256)  # the handler ids of a resource, asked for in every cycle
def names_of(prefix: str, keys: tuple[str, ...], v1: bool) -> frozenset[str]:
    """All the annotation names of these keys (bodies without a suffix): is any of them in a body at all?"""
    return frozenset(name for key in keys for name in _make_keys(prefix, key, v1, ''))


# The keys depend on the body only through its suffix; this stands for any body that gets one.
_SUFFIXED_BODY: Mapping[str, Any] = {'kind': 'ReplicaSet', 'metadata': {'ownerReferences': [{'kind': 'Deployment'}]}}


def marker_key(prefix: str) -> str | None:
    """The `kopf-managed` marker key for a custom prefix; None for `kopf.*` prefixes."""
    return None if prefix.startswith('kopf.') else f'{prefix}/{MARKER_NAME}'


def read(body: Mapping[str, Any], keys: list[str]) -> str | None:
    annotations = annotations_of(body)
    for key in keys:
        value = annotations.get(key)
        if value is not None:
            return str(value)
    return None


def annotations_of(body: Mapping[str, Any]) -> Mapping[str, Any]:
    """The body's annotations (empty if none): read in every cycle, mostly from plain dicts."""
    metadata = body.get('metadata')
    if type(metadata) is dict:  # the common case: no path walked
        annotations = metadata.get('annotations')
        return annotations if type(annotations) is dict else fields.resolve(metadata, ('annotations',), None) or {}
    return fields.resolve(body, ('metadata', 'annotations'), None) or {}


def write(
        body: Mapping[str, Any], patch: MutableMapping[str, Any], keys: list[str], value: str, *, prefix: str,
) -> None:
    """Write a value under all the keys, and the prefix's marker if it needs one and the body lacks it."""
    for key in keys:
        fields.ensure(patch, ('metadata', 'annotations', key), value)
    marker = marker_key(prefix)
    existing = annotations_of(body)
    if marker is not None and marker not in existing:
        fields.ensure(patch, ('metadata', 'annotations', marker), MARKER_VALUE)


def remove(body: Mapping[str, Any], patch: MutableMapping[str, Any], keys: list[str]) -> None:
    """Null the keys present in the body; drop the ones that are only pending in the patch."""
    existing = annotations_of(body)
    for key in keys:
        if key in existing:
            fields.ensure(patch, ('metadata', 'annotations', key), None)
        elif patch.get('metadata'):  # else nothing is pending there (most purges: no path walked)
            fields.remove(patch, ('metadata', 'annotations', key))
