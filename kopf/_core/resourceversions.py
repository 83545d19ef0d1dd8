"""Resource versions as the objects' records compare and keep them. Pure, no I/O.

- `rv_of(event)`: the resourceVersion of an event's object (a string), or None.
- `is_consistent(rv, expected)`: whether a body of `rv` is at least as new as `expected` (numbers compared).
- `packed(rv, key)` / `unpacked(value)`: an idle record that awaits only the echo of our patch keeps the answer's
  resourceVersion (a number) and, when known, the key of the echo's watch line (`kopf._api.watchstate.echo_key`,
  64 bits) in one int: the resourceVersion above the key's bits; a resourceVersion alone without a key.
"""
from collections.abc import Mapping
from typing import Any

KEY_BITS = 64
KEY_MASK = (1 << KEY_BITS) - 1


def rv_of(event: Mapping[str, Any] | None) -> str | None:
    rv = ((event or {}).get('object', {}).get('metadata') or {}).get('resourceVersion')
    return None if rv is None else str(rv)


def is_consistent(rv: str | None, expected: str | None) -> bool:
    """Whether a body of `rv` is at least as new as `expected` (numeric resourceVersions compared)."""
    if expected is None or rv == expected:
        return True
    if rv is not None and rv.isdigit() and expected.isdigit():
        return int(rv) >= int(expected)
    return False


def packed(rv: int, key: int | None) -> int:
    """A resourceVersion (a positive number for a key to go with it) and the echo's key, if any, in one int."""
    return rv << KEY_BITS | key if key is not None and rv > 0 else rv


def unpacked(value: int) -> tuple[str, int | None]:
    """The resourceVersion (as a string) and the echo's key (None: not known) of a `packed()` int."""
    rv = value >> KEY_BITS
    return (str(rv), value & KEY_MASK) if rv else (str(value), None)
