"""RE2 patterns (Go's `regexp`) run by Python's `re`: the differences that matter translated.

`$` and `\\z` anchor at the very end (Python's `$` also matches before a final newline); Go's error
texts for bad patterns are `error parsing regexp: ...`.
"""
from __future__ import annotations

import functools
import re

from kopf._cluster.cel.celvalues import EvalError


@functools.lru_cache(maxsize=512)
def compile_re2(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(translate(pattern))
    except re.error as e:
        raise EvalError(f'error parsing regexp: {e.msg}: `{pattern}`') from None


def translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    in_class = False
    while i < len(pattern):
        ch = pattern[i]
        if ch == '\\' and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append(r'\Z' if nxt == 'z' and not in_class else ch + nxt)
            i += 2
            continue
        if in_class:
            if ch == ']':
                in_class = False
        elif ch == '[':
            in_class = True
            out.append(ch)
            i += 1
            if i < len(pattern) and pattern[i] == '^':
                out.append('^')
                i += 1
            if i < len(pattern) and pattern[i] == ']':
                out.append(r'\]')
                i += 1
            continue
        elif ch == '$':
            out.append(r'\Z')
            i += 1
            continue
        out.append(ch)
        i += 1
    return ''.join(out)
