"""`fieldPath` of a validation rule: apiextensions' `ValidFieldPath` (`.a.b`, `['key']`, `.map['key']`)."""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any


class PathError(ValueError):
    pass


def tokens(path: str) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(path):
        if path[i] == "'":
            j = i + 1
            while j < len(path) and not (path[j] == "'" and path[j - 1] != '\\'):
                j += 1
            out.append(path[i:j + 1])
            i = j + 1
        elif path[i] in '.[]':
            out.append(path[i])
            i += 1
        else:
            j = i
            while j < len(path) and path[j] not in '.[]':
                j += 1
            out.append(path[i:j])
            i = j
    return out


def unescape_single_quote(text: str) -> str:
    def sub(m: re.Match[str]) -> str:
        c = m.group()[1]
        if c in "\\'":
            return c
        raise PathError(f'invalid escape: {m.group()}')
    return re.sub(r'\\.', sub, text)


def walk(path: str, schema: Mapping[str, Any]) -> str:
    """The normalised field path (Go's field.Path rendering), or a PathError with the real text."""
    result = ''
    toks = tokens(path)
    i = 0

    def step(name: str, current: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
        props = current.get('properties')
        if props is not None:
            if name not in props:
                raise PathError('does not refer to a valid field')
            return f'.{name}', props[name]
        additional = current.get('additionalProperties')
        if isinstance(additional, Mapping):
            return f'[{name}]', additional
        raise PathError('does not refer to a valid field')

    while i < len(toks):
        tok = toks[i]
        if tok == '[':
            if i + 1 >= len(toks):
                raise PathError('unexpected end of JSON path')
            quoted = toks[i + 1]
            if len(quoted) < 2 or quoted[0] != "'" or quoted[-1] != "'":
                raise PathError(f'expected single quoted string but got {quoted}')
            part, schema = step(unescape_single_quote(quoted[1:-1]), schema)
            result += part
            if i + 2 >= len(toks):
                raise PathError('unexpected end of JSON path')
            if toks[i + 2] != ']':
                raise PathError(f'expected ] but got {toks[i + 2]}')
            i += 3
        elif tok == '.':
            if i + 1 >= len(toks):
                raise PathError('unexpected end of JSON path')
            part, schema = step(toks[i + 1], schema)
            result += part
            i += 2
        else:
            raise PathError(f'expected [ or . but got: {tok}')
    return result.lstrip('.')


def valid_field_path(path: str, schema: Mapping[str, Any]) -> str | None:
    try:
        return walk(path, schema)
    except PathError:
        return None
