"""JSON on the wire: `orjson` when installed (the `fast` extra), the standard library otherwise. Pure.

- `dumps()` gives compact UTF-8 bytes; values that orjson refuses (e.g. integers beyond 64 bits) are
  encoded by the standard library instead, so the choice never changes what can be sent.
- `loads()` accepts bytes or text.
- orjson is imported on first use, not by `import kopf` (tests/test_layers.py).
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


def dumps(obj: Any) -> bytes:
    """Compact JSON bytes of a value."""
    orjson = _orjson if _orjson is not _UNKNOWN else _fast()
    if orjson is not None:
        try:
            return bytes(orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS))
        except TypeError:
            pass  # e.g. an int over 64 bits: the standard library encodes it (or raises the usual error)
    return json.dumps(obj, separators=(',', ':')).encode('utf-8')


def loads(data: bytes | str) -> Any:
    """Parse JSON bytes or text; raises ValueError on malformed input."""
    orjson = _orjson if _orjson is not _UNKNOWN else _fast()
    if orjson is not None:
        return orjson.loads(data)
    return json.loads(data)
