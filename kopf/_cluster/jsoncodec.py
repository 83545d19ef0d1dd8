"""JSON encoding for the emulator's hot paths: `orjson` when installed, the standard library otherwise.

Everything the server sends is compact JSON with no embedded newlines (watch framing relies on it).
"""
import json
from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is an optional extra
    orjson = None  # type: ignore[assignment]


def dumps(obj: Any) -> bytes:
    """Compact JSON bytes of an object."""
    if orjson is not None:
        return orjson.dumps(obj)
    return json.dumps(obj, separators=(',', ':'), ensure_ascii=False).encode('utf-8')


def loads(data: bytes | str) -> Any:
    """Parse JSON bytes or text; raises ValueError on malformed input."""
    if orjson is not None:
        return orjson.loads(data)
    return json.loads(data)


def clone(obj: Any) -> Any:
    """A deep copy of a JSON-compatible value (faster than copy.deepcopy for our dicts)."""
    return loads(dumps(obj))
