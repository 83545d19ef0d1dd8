"""Kubernetes' format library (`format.dns1123Label().validate(s)`, `format.named('...')`) and semver.

The validators return apimachinery's messages (`IsDNS1123Label`, `IsQualifiedName`, ...); semantic
versions are parsed as blang/semver parses them (`semver('1.2.3')`, with `normalize` as the second
argument).
"""
from __future__ import annotations

import base64
import re
import uuid
from collections.abc import Callable
from typing import Any

from kopf._cluster.cel import celtypes
from kopf._cluster.cel.celvalues import NONE, EvalError, Optional, parse_timestamp, register_type
from kopf._cluster.cel.decls import Env, Overload
from kopf._cluster.cel.stdlib import fail

B, INT, S = celtypes.BoolType, celtypes.IntType, celtypes.StringType
FormatType = celtypes.object_type('kubernetes.NamedFormat', {})
SemverType = celtypes.object_type('kubernetes.Semver', {})

LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?'
SUBDOMAIN = LABEL + '(\\.' + LABEL + ')*'
DNS1035 = '[a-z]([-a-z0-9]*[a-z0-9])?'
QNAME = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = ' or '.join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def dns1123_label(value: str) -> list[str]:
    errs = ['must be no more than 63 characters'] if len(value) > 63 else []
    if not re.fullmatch(LABEL, value):
        if re.fullmatch(SUBDOMAIN, value):
            errs.append('must not contain dots')
        else:
            errs.append(regex_error('a lowercase RFC 1123 label must consist of lower case alphanumeric characters '
                                    "or '-', and must start and end with an alphanumeric character", LABEL,
                                    'my-name', '123-abc'))
    return errs


def dns1123_subdomain(value: str) -> list[str]:
    errs = ['must be no more than 253 characters'] if len(value) > 253 else []
    if not re.fullmatch(SUBDOMAIN, value):
        errs.append(regex_error('a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '
                                "'-' or '.', and must start and end with an alphanumeric character", SUBDOMAIN,
                                'example.com'))
    return errs


def dns1035_label(value: str) -> list[str]:
    errs = ['must be no more than 63 characters'] if len(value) > 63 else []
    if not re.fullmatch(DNS1035, value):
        errs.append(regex_error("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
                                'with an alphabetic character, and end with an alphanumeric character', DNS1035,
                                'my-name', 'abc-123'))
    return errs


def qualified_name(value: str) -> list[str]:
    errs: list[str] = []
    parts = value.split('/')
    if len(parts) > 2:
        return [('a qualified name ' + regex_error("must consist of alphanumeric characters, '-', '_' or '.', and "
                                                   'must start and end with an alphanumeric character', QNAME,
                                                   'MyName', 'my.name', '123-abc')
                 + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")]
    name = parts[-1]
    if len(parts) == 2:
        if not parts[0]:
            errs.append('prefix part must be non-empty')
        else:
            errs += ['prefix part ' + m for m in dns1123_subdomain(parts[0])]
    if not name:
        errs.append('name part must be non-empty')
    elif len(name) > 63:
        errs.append('name part must be no more than 63 characters')
    if name and not re.fullmatch(QNAME, name):
        errs.append('name part ' + regex_error("must consist of alphanumeric characters, '-', '_' or '.', and must "
                                               'start and end with an alphanumeric character', QNAME, 'MyName',
                                               'my.name', '123-abc'))
    return errs


def label_value(value: str) -> list[str]:
    errs = ['must be no more than 63 characters'] if len(value) > 63 else []
    if not re.fullmatch(f'({QNAME})?', value):
        errs.append(regex_error("a valid label must be an empty string or consist of alphanumeric characters, '-', "
                                "'_' or '.', and must start and end with an alphanumeric character", f'({QNAME})?',
                                'MyValue', 'my_value', '12345'))
    return errs


def prefixed(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    return lambda v: check(v[:-2] + 'a' if len(v) > 1 and v.endswith('-') else v)


def checked(check: Callable[[str], Any], message: str) -> Callable[[str], list[str]]:
    def run(value: str) -> list[str]:
        try:
            check(value)
        except (ValueError, EvalError):
            return [message]
        return []
    return run


class NamedFormat:
    __slots__ = ('check', 'name')

    def __init__(self, name: str, check: Callable[[str], list[str]]) -> None:
        self.name = name
        self.check = check

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NamedFormat) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)


FORMATS = {
    'dns1123Label': NamedFormat('DNS1123Label', dns1123_label),
    'dns1123Subdomain': NamedFormat('DNS1123Subdomain', dns1123_subdomain),
    'dns1035Label': NamedFormat('DNS1035Label', dns1035_label),
    'qualifiedName': NamedFormat('QualifiedName', qualified_name),
    'dns1123LabelPrefix': NamedFormat('DNS1123LabelPrefix', prefixed(dns1123_label)),
    'dns1123SubdomainPrefix': NamedFormat('DNS1123SubdomainPrefix', prefixed(dns1123_subdomain)),
    'dns1035LabelPrefix': NamedFormat('DNS1035LabelPrefix', prefixed(dns1035_label)),
    'labelValue': NamedFormat('LabelValue', label_value),
    'uri': NamedFormat('URI', lambda v: [] if re.match(r'^([a-zA-Z][a-zA-Z0-9+.-]*:|/)', v)
                       else [f'parse "{v}": invalid URI for request']),
    'uuid': NamedFormat('uuid', checked(uuid.UUID, 'does not match the UUID format')),
    'byte': NamedFormat('byte', checked(lambda v: base64.b64decode(v, validate=True), 'invalid base64')),
    'date': NamedFormat('date', checked(lambda v: parse_timestamp(f'{v}T00:00:00Z'),
                                        'invalid date')),
    'datetime': NamedFormat('datetime', checked(parse_timestamp, 'invalid datetime')),
}


def validate(fmt: NamedFormat, value: Any) -> Optional:
    if type(value) is not str:
        raise fail()
    errors = fmt.check(value)
    return Optional(errors) if errors else NONE


def named(name: Any) -> Optional:
    found = FORMATS.get(name)
    return Optional(found) if found is not None else NONE


# ---- semver (blang/semver, as Kubernetes uses it) ----

class Semver:
    __slots__ = ('build', 'major', 'minor', 'patch', 'pre')

    def __init__(self, major: int, minor: int, patch: int, pre: list[str], build: list[str]) -> None:
        self.major, self.minor, self.patch, self.pre, self.build = major, minor, patch, pre, build

    def key(self) -> tuple[int, int, int]:
        return self.major, self.minor, self.patch

    def compare(self, other: Semver) -> int:
        if self.key() != other.key():
            return 1 if self.key() > other.key() else -1
        if not self.pre or not other.pre:
            return (not self.pre) - (not other.pre)
        for a, b in zip(self.pre, other.pre, strict=False):
            if a == b:
                continue
            if a.isdigit() and b.isdigit():
                return 1 if int(a) > int(b) else -1
            if a.isdigit() != b.isdigit():
                return -1 if a.isdigit() else 1
            return 1 if a > b else -1
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Semver) and self.compare(other) == 0

    def __hash__(self) -> int:
        return hash(self.key())


def parse_semver(text: str, normalize: bool = False) -> Semver:
    if normalize:
        text = text.removeprefix('v')
        core, sep, rest = re.match(r'([0-9.]*)([-+]?)(.*)', text).groups()  # type: ignore[union-attr]
        parts = core.split('.') if core else ['0']
        parts = [p.lstrip('0') or '0' for p in parts] + ['0'] * (3 - len(parts))
        text = '.'.join(parts[:3]) + sep + rest
    m = re.fullmatch(r'(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?', text)
    if m is None:
        if len(text.split('.')) < 3 or '.' not in text:
            raise EvalError('No Major.Minor.Patch elements found')
        raise EvalError(f'Invalid character(s) found in version "{text}"')
    for part in m.groups()[:3]:
        if len(part) > 1 and part.startswith('0'):
            raise EvalError(f'Version number must not contain leading zeroes "{part}"')
    pre = m.group(4).split('.') if m.group(4) else []
    build = m.group(5).split('.') if m.group(5) else []
    return Semver(int(m.group(1)), int(m.group(2)), int(m.group(3)), pre, build)


def semver(text: Any, normalize: Any = False) -> Semver:
    if type(text) is not str:
        raise fail()
    return parse_semver(text, bool(normalize))


def is_semver(text: Any, normalize: Any = False) -> bool:
    try:
        semver(text, normalize)
    except EvalError:
        return False
    return True


def declare(env: Env) -> None:
    register_type(NamedFormat, FormatType)
    register_type(Semver, SemverType)
    f = env.add_function
    m = {'member': True}
    for name, fmt in FORMATS.items():
        f(f'format.{name}', Overload(f'format-{name}', [], FormatType, lambda fmt=fmt: fmt))
    f('validate', Overload('format-validate', [FormatType, S], celtypes.optional_of(celtypes.list_of(S)), validate,
                           **m))
    f('format.named', Overload('format-named', [S], celtypes.optional_of(FormatType), named))
    V = SemverType
    f('semver', Overload('string_to_semver', [S], V, semver), Overload('string_bool_to_semver', [S, B], V, semver))
    f('isSemver', Overload('is_semver_string', [S], B, is_semver),
      Overload('is_semver_string_bool', [S, B], B, is_semver))
    f('isGreaterThan', Overload('semver_is_greater_than', [V, V], B, lambda a, b: a.compare(b) == 1, **m))
    f('isLessThan', Overload('semver_is_less_than', [V, V], B, lambda a, b: a.compare(b) == -1, **m))
    f('compareTo', Overload('semver_compare_to', [V, V], INT, lambda a, b: a.compare(b), **m))
    f('major', Overload('semver_major', [V], INT, lambda v: v.major, **m))
    f('minor', Overload('semver_minor', [V], INT, lambda v: v.minor, **m))
    f('patch', Overload('semver_patch', [V], INT, lambda v: v.patch, **m))
