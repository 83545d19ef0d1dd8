"""JSON as it goes over the wire, for the API client and the local cluster alike. Pure.

- `orjson` when installed (the `fast` extra), the standard library otherwise; orjson is imported on
  first use, not by `import kopf` (tests/test_layers.py).
- `dumps()` gives compact UTF-8 bytes with no embedded newlines (the watch framing relies on it);
  values that orjson refuses (integers beyond 64 bits, non-string keys) are encoded by the standard
  library instead, so the choice never changes what can be sent.
- `loads()` accepts bytes or text; malformed input (or nesting too deep to parse) is a ValueError.
- `compact()` gives the text of annotation values as upstream writes them (Python's compact `json.dumps`:
  ASCII, non-ASCII escaped), so an object's annotations read the same whichever framework wrote them.
"""
import json
from types import ModuleType
from typing import Any

_UNKNOWN: Any = object()
_orjson: ModuleType | None = _UNKNOWN


def _fast() -> ModuleType | None:
    global _orjson
    if _orjson is _UNKNOWN:
        try:
            import orjson
        except ImportError:  # pragma: no cover - orjson is an optional extra
            _orjson = None
        else:
            _orjson = orjson
    return _orjson


def fast() -> bool:
    """Whether orjson parses (it also rejects strings that are not UTF-8, such as lone surrogates)."""
    return (_orjson if _orjson is not _UNKNOWN else _fast()) is not None


def dumps(obj: Any) -> bytes:
    """Compact JSON bytes of a value."""
    orjson = _orjson if _orjson is not _UNKNOWN else _fast()
    if orjson is not None:
        try:
            return bytes(orjson.dumps(obj))
        except TypeError:
            pass  # e.g. an int over 64 bits, a non-string key: the standard library (or its usual error)
    return json.dumps(obj, separators=(',', ':'), ensure_ascii=False).encode('utf-8')


compact = json.JSONEncoder(separators=(',', ':')).encode  # = json.dumps(..., separators=...), made once


def loads(data: bytes | str) -> Any:
    """Parse JSON bytes or text; raises ValueError on malformed input."""
    orjson = _orjson if _orjson is not _UNKNOWN else _fast()
    if orjson is not None:
        return orjson.loads(data)
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError('exceeded max depth') from None


def loads_stored(text: str) -> Any:
    """Parse JSON text that a framework stored (a diff-base) as `loads()` parses the bodies it is compared with.

    orjson when installed (integers beyond 64 bits become floats, as in the bodies from the wire, so a
    stored value and the body's value stay comparable); the standard library for what orjson refuses and
    Python's `json` accepts (`NaN`, `Infinity`), as before.
    """
    orjson = _orjson if _orjson is not _UNKNOWN else _fast()
    if orjson is not None:
        try:
            return orjson.loads(text)
        except ValueError:
            pass
    return json.loads(text)
