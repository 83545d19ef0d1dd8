"""Label and field selectors: parsing the query syntax and matching objects (`labelSelector=`, `fieldSelector=`)."""
import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kopf._cluster import statuses

_KEY = r'[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?'
_SET = re.compile(rf'^\s*(!?)\s*({_KEY})\s*(?:(in|notin)\s*\(([^)]*)\))?\s*$')
_CMP = re.compile(rf'^\s*({_KEY})\s*(==|=|!=)\s*([-A-Za-z0-9_.]*)\s*$')


@dataclasses.dataclass(frozen=True)
class Requirement:
    key: str
    op: str          # '=', '!=', 'in', 'notin', 'exists', '!'
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, Any]) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        if self.op == 'exists':
            return present
        if self.op == '!':
            return not present
        if self.op in ('=', 'in'):
            return present and value in self.values
        return not present or value not in self.values   # '!=' and 'notin'


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    terms, depth, current = [], 0, ''
    for char in text:
        depth += (char == '(') - (char == ')')
        if char == ',' and depth == 0:
            terms.append(current)
            current = ''
        else:
            current += char
    terms.append(current)
    return [t for t in terms if t.strip()]


def parse_labels(text: str | None) -> list[Requirement]:
    if not text:
        return []
    return [_parse_label_term(term) for term in _split_terms(text)]


def _parse_label_term(term: str) -> Requirement:
    cmp = _CMP.match(term)
    if cmp:
        key, op, value = cmp.group(1), cmp.group(3), cmp.group(4)
        _check_key(key)
        return Requirement(key, '!=' if op == '!=' else '=', (value,))
    match = _SET.match(term)
    if not match:
        raise statuses.bad_request(f'unable to parse requirement: found {term.strip()!r}, expected: identifier')
    bang, key, op, values = match.group(1), match.group(2), match.group(4), match.group(5)
    _check_key(key)
    if op:
        if bang:
            raise statuses.bad_request(f'unable to parse requirement: found {term.strip()!r}')
        return Requirement(key, op, tuple(v.strip() for v in values.split(',') if v.strip()))
    return Requirement(key, '!' if bang else 'exists')


_NAME = re.compile(r'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')
_PREFIX = re.compile(r'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')


def _check_key(key: str) -> None:
    """A label key in a selector is a qualified name, as in objects (a real server: 400 if not)."""
    prefix, slash, name = key.strip().rpartition('/')
    if '/' in prefix or not _NAME.fullmatch(name) or len(name) > 63 or (
            slash and (not _PREFIX.fullmatch(prefix) or len(prefix) > 253)):
        raise statuses.bad_request(
            f'unable to parse requirement: <nil>: Invalid value: "{key.strip()}": a qualified name must consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')")


def parse_fields(text: str | None, allowed: Sequence[str]) -> list[Requirement]:
    if not text:
        return []
    requirements = []
    for term in _split_terms(text):
        match = re.match(r'^\s*([^=!]+?)\s*(==|=|!=)\s*(.*?)\s*$', term)
        if not match:
            raise statuses.bad_request(f'invalid selector: {term!r}; can\'t understand {term!r}')
        field, op, value = match.groups()
        if field not in allowed:
            raise statuses.bad_request(f'field label not supported: {field}')
        requirements.append(Requirement(field, '!=' if op == '!=' else '=', (value,)))
    return requirements


def field_value(obj: Mapping[str, Any], field: str) -> str:
    """The string a field selector compares against; `source` means `source.component` for events."""
    if field == 'source':
        field = 'source.component'
    current: Any = obj
    for part in field.split('.'):
        current = current.get(part) if isinstance(current, Mapping) else None
    if isinstance(current, bool) or field in BOOLEAN_FIELDS:   # strconv.FormatBool of a Go bool: unset is false
        return 'true' if current else 'false'
    return '' if current is None else str(current)


BOOLEAN_FIELDS = frozenset({'spec.unschedulable'})   # nodes' (the only boolean field label of the built-ins)


def matcher(labels: Sequence[Requirement], fields: Sequence[Requirement]) -> Callable[[Mapping[str, Any]], bool]:
    """A predicate over whole objects; cheap when there are no requirements."""
    if not labels and not fields:
        return lambda obj: True

    def matches(obj: Mapping[str, Any]) -> bool:
        meta = obj.get('metadata') or {}
        obj_labels = meta.get('labels') or {}
        if not all(req.matches(obj_labels) for req in labels):
            return False
        return all(req.matches({req.key: field_value(obj, req.key)}) for req in fields)

    return matches
