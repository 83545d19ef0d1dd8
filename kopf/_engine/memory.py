"""Give the memory freed after a burst back to the operating system (glibc's `malloc_trim`).

A large initial listing (10,000 objects at a restart) parses every body at once and runs a cycle on
each; when that is over, most of it is free again, but glibc keeps the freed heap for later and the
process's RSS stays at the burst's peak. `release()` asks glibc to return the free pages at the top
and in the middle of its heaps (`malloc_trim(0)`); Python's own small-object arenas are returned by
Python already when they empty. Elsewhere (musl, macOS, Windows) it does nothing.

`ctypes` is imported on the first call only: an operator that never lists many objects never loads it.
"""
import sys
from collections.abc import Callable

_trim: Callable[[int], int] | None = None
_looked_up = False


def _lookup() -> Callable[[int], int] | None:
    if not sys.platform.startswith('linux'):
        return None
    try:
        import ctypes  # only after a large resumption
        libc = ctypes.CDLL(None)  # the process's own C library: glibc has malloc_trim, musl has not
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]  # type: ignore[attr-defined]
    trim.restype = ctypes.c_int  # type: ignore[attr-defined]
    return trim


def release() -> bool:
    """Return the free heap memory to the OS; whether the C library could (False: not glibc)."""
    global _trim, _looked_up
    if not _looked_up:
        _trim, _looked_up = _lookup(), True
    if _trim is None:
        return False
    _trim(0)
    return True
