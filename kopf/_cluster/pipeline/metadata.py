"""Server-side metadata rules: names, generated names, timestamps, and the ObjectMeta field set."""
import datetime
import random
import re
import time
from collections.abc import Mapping
from typing import Any

from kopf._cluster import statuses

SUBDOMAIN_RE = r'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'
LABEL_RE = r'[a-z0-9]([-a-z0-9]*[a-z0-9])?'
DNS1035_RE = r'[a-z]([-a-z0-9]*[a-z0-9])?'   # Services: a label that starts with a letter
GENERATED_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789'
OBJECT_META_FIELDS = frozenset({
    'name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation',
    'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations',
    'ownerReferences', 'finalizers', 'managedFields',
})
SERVER_FIELDS = ('uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation')

_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                  "and must start and end with an alphanumeric character (e.g. 'example.com', "
                  f"regex used for validation is '{SUBDOMAIN_RE}')")
_DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
                f"regex used for validation is '{DNS1035_RE}')")
_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
              "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
              f"regex used for validation is '{LABEL_RE}')")


def name_causes(name: str, rule: str, field: str = 'metadata.name') -> list[dict[str, str]]:
    """Validation causes for a name under the 'subdomain', 'label', 'dns1035' or 'path' rule (empty if valid)."""
    if rule == 'path':   # RBAC objects: any path segment (`ValidatePathSegmentName`)
        bad = [f"may not be '{name}'"] if name in ('.', '..') else []
        bad += [f"may not contain '{char}'" for char in '/%' if char in name]
        return [statuses.cause('FieldValueInvalid', field, f'Invalid value: "{name}": {text}') for text in bad]
    regex, limit, text = {'label': (LABEL_RE, 63, _LABEL_MSG), 'dns1035': (DNS1035_RE, 63, _DNS1035_MSG)}.get(
        rule, (SUBDOMAIN_RE, 253, _SUBDOMAIN_MSG))
    causes = []
    if len(name) > limit:
        causes.append(statuses.cause('FieldValueInvalid', field,
                                     f'Invalid value: "{name}": must be no more than {limit} characters'))
    if not re.fullmatch(regex, name):
        causes.append(statuses.cause('FieldValueInvalid', field, f'Invalid value: "{name}": {text}'))
    return causes


def generate_name(prefix: str) -> str:
    return prefix[:58] + ''.join(random.choices(GENERATED_ALPHABET, k=5))


def now(micro: bool = False) -> str:
    if micro:
        return render(datetime.datetime.now(datetime.UTC), micro)
    global _rendered
    second = int(time.time())   # the clock of datetime.now(); a second's text is rendered once
    rendered = _rendered
    if rendered[0] != second:
        rendered = _rendered = (second, render(datetime.datetime.fromtimestamp(second, datetime.UTC)))
    return rendered[1]


_rendered: tuple[int, str] = (-1, '')   # the second that `now()` rendered last, and its text


def render(moment: datetime.datetime, micro: bool = False) -> str:
    moment = moment.astimezone(datetime.UTC)
    if micro:
        return moment.strftime('%Y-%m-%dT%H:%M:%S.%fZ')
    return moment.strftime('%Y-%m-%dT%H:%M:%SZ')


def canonical_time(value: Any, micro: bool = False) -> Any:
    """Re-render an RFC 3339 timestamp canonically (Time: seconds; MicroTime: 6 digits); others untouched."""
    if not isinstance(value, str) or not value:
        return value
    text = value.replace('Z', '+00:00').replace('z', '+00:00')
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        return value
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return render(moment, micro)


_META_TYPES: dict[str, tuple[type, ...]] = {   # ObjectMeta's fields that the pipeline reads before the schema
    'name': (str,), 'generateName': (str,), 'namespace': (str,), 'resourceVersion': (str,), 'uid': (str,),
    'labels': (dict,), 'annotations': (dict,), 'finalizers': (list,), 'ownerReferences': (list,),
}
_GO_TYPES = {'labels': 'map[string]string', 'annotations': 'map[string]string', 'finalizers': '[]string',
             'ownerReferences': '[]v1.OwnerReference'}


def type_error(meta: Mapping[str, Any], kind: str, version: str, custom: bool) -> statuses.ApiError | None:
    """A value of the wrong JSON type in ObjectMeta, as Go's decoding reports it (a 400), or None.

    Built-ins name the field from the object's root (`ObjectMeta.metadata.name`), custom resources
    from ObjectMeta's (`ObjectMeta.name`), as a real server does."""
    for field, types in _META_TYPES.items():
        value = meta.get(field)
        inner = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        wrong = value is not None and not isinstance(value, types)
        bad_item = field in ('labels', 'annotations', 'finalizers') and not wrong and any(
            not isinstance(item, str) for item in inner)
        if wrong or bad_item:
            shown = next((i for i in inner if not isinstance(i, str)), None) if bad_item else value
            actual = ('bool' if isinstance(shown, bool) else 'number' if isinstance(shown, (int, float))
                      else 'string' if isinstance(shown, str) else 'array' if isinstance(shown, list)
                      else 'object' if isinstance(shown, dict) else 'null')
            expected = 'string' if bad_item or types == (str,) else _GO_TYPES[field]
            path = f'ObjectMeta.{field}' if custom else f'ObjectMeta.metadata.{field}'
            return statuses.bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: json: '
                                        f'cannot unmarshal {actual} into Go struct field {path} of type {expected}')
    return None


def normalise(meta: Mapping[str, Any]) -> dict[str, Any]:
    """Drop nulls and empty collections; unknown keys stay for the schema layer to report and prune."""
    clean = {key: value for key, value in meta.items() if value is not None}
    for key in ('labels', 'annotations'):
        if key in clean and not clean[key]:
            del clean[key]
    for key in ('finalizers', 'ownerReferences', 'managedFields'):
        if key in clean and not clean[key]:
            del clean[key]
    return clean   # server-set timestamps are never taken from clients, so need no re-rendering


_LABEL_NAME = re.compile(r'([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)')
_LABEL_VALUE = re.compile(r'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')


def label_causes(meta: Mapping[str, Any], stored: Mapping[str, Any] | None = None) -> list[dict[str, str]]:
    """Validation of label keys and values, and annotation keys (qualified names). `stored`: the stored object's
    metadata (an update's): its very same labels or annotations were checked when it was stored."""
    causes = []
    for section in ('labels', 'annotations'):
        mapping = meta.get(section) or {}
        if not mapping or (stored is not None and mapping is stored.get(section)):
            continue   # nothing to check; or the stored one's very map, checked when stored
        if not isinstance(mapping, Mapping):
            causes.append(statuses.cause('FieldValueTypeInvalid', f'metadata.{section}',
                                         'Invalid value: must be a map of strings'))
            continue
        for key, value in mapping.items():
            causes.extend(_key_causes(f'metadata.{section}', key))
            if not isinstance(value, str):
                causes.append(statuses.cause('FieldValueTypeInvalid', f'metadata.{section}.{key}',
                                             f'Invalid value: {value!r}: must be a string'))
            elif section == 'labels' and (len(value) > 63 or not _LABEL_VALUE.fullmatch(value)):
                causes.append(statuses.cause('FieldValueInvalid', 'metadata.labels',
                                             f'Invalid value: "{value}": a valid label must be an empty string or '
                                             "consist of alphanumeric characters, '-', '_' or '.', and must start "
                                             'and end with an alphanumeric character'))
    annotations = meta.get('annotations')
    if (stored is None or annotations is not stored.get('annotations')) and isinstance(annotations, Mapping) \
            and _size(annotations) > ANNOTATIONS_LIMIT:
        causes.append(statuses.cause('FieldValueTooLong', 'metadata.annotations',
                                     f'Too long: may not be more than {ANNOTATIONS_LIMIT} bytes'))
    return causes


ANNOTATIONS_LIMIT = 256 * 1024  # the total of keys and values, as a real server counts it


def _size(annotations: Mapping[str, Any]) -> int:
    return sum(len(str(k).encode()) + len(str(v).encode()) for k, v in annotations.items())


_VALID_KEYS: set[str] = set()   # label/annotation keys seen valid (the same few keys come with every write)


def _key_causes(field: str, key: str) -> list[dict[str, str]]:
    if key in _VALID_KEYS:
        return []
    causes = _check_key(field, key)
    if not causes:
        if len(_VALID_KEYS) >= 10000:
            _VALID_KEYS.clear()
        _VALID_KEYS.add(key)
    return causes


def _check_key(field: str, key: str) -> list[dict[str, str]]:
    prefix, _, name = key.rpartition('/')
    ok = bool(_LABEL_NAME.fullmatch(name)) and len(name) <= 63
    ok = ok and (not prefix or (len(prefix) <= 253 and bool(re.fullmatch(SUBDOMAIN_RE, prefix))))
    if ok:
        return []
    message = (f'Invalid value: "{key}": name part must consist of alphanumeric characters, \'-\', \'_\' or '
               "'.', and must start and end with an alphanumeric character")
    empty = [statuses.cause('FieldValueInvalid', field, f'Invalid value: "{key}": name part must be non-empty')]
    return (empty if not name else []) + [statuses.cause('FieldValueInvalid', field, message)]
