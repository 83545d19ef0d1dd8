"""Namespace patterns of `kopf run -n ...`: globs, exclusions, comma-separated lists. Pure.

Rules:
- A pattern is a comma-separated list of globs (`team-*`); a glob prefixed with `!` excludes.
- Globs are applied in order and the last one that matches a name decides.
- The first glob is decisive for the default: if it is an exclusion, everything is included unless
  excluded (as if `*` came first); otherwise nothing is included unless included.
- Several patterns (several `-n` options) serve a namespace if any of them does.
- A pattern without glob characters and without exclusions names namespaces exactly (they can be
  watched one by one without listing the cluster's namespaces).
"""
import fnmatch
import re
from collections.abc import Iterable

_GLOB_CHARS = re.compile(r'[*?\[\]]')


def _globs(pattern: str) -> list[str]:
    return [glob.strip() for glob in pattern.split(',') if glob.strip()]


def match_namespace(name: str, pattern: str) -> bool:
    """Whether one pattern (e.g. `team-*,!team-x`) serves the namespace."""
    globs = _globs(pattern)
    if not globs:
        return False
    result = globs[0].startswith('!')
    for glob in globs:
        negated = glob.startswith('!')
        if fnmatch.fnmatchcase(name, glob[1:] if negated else glob):
            result = not negated
    return result


def match_any(name: str, patterns: Iterable[str]) -> bool:
    """Whether any of the patterns serves the namespace."""
    return any(match_namespace(name, pattern) for pattern in patterns)


def exact_names(patterns: Iterable[str]) -> frozenset[str] | None:
    """The namespaces named exactly by the patterns, or None if any pattern needs the namespaces listed."""
    names: set[str] = set()
    for pattern in patterns:
        for glob in _globs(pattern):
            if glob.startswith('!') or _GLOB_CHARS.search(glob):
                return None
            names.add(glob)
    return frozenset(names)


def plain_names(patterns: Iterable[str]) -> frozenset[str]:
    """The namespaces that the patterns include by their plain names (not globs, not exclusions)."""
    names = {glob for pattern in patterns for glob in _globs(pattern)
             if not glob.startswith('!') and not _GLOB_CHARS.search(glob)}
    return frozenset(name for name in names if match_any(name, patterns))
