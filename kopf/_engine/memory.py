"""Give the memory freed after a burst back to the operating system (glibc's `malloc_trim`, `mallopt`).

A large initial listing (10,000 objects at a restart) parses every body at once and runs a cycle on
each; when that is over, most of it is free again, but glibc keeps the freed heap for later and the
process's RSS stays at the burst's peak. `release()` asks glibc to return the free pages at the top
and in the middle of its heaps (`malloc_trim(0)`); Python's own small-object arenas are returned by
Python already when they empty. Elsewhere (musl, macOS, Windows) it does nothing.

`fix_mmap_threshold()` keeps glibc's mmap threshold at its initial 128 KiB. glibc raises it to the size of
every mmapped block freed (up to 32 MiB): after the first TLS connection's 256 KiB receive buffer is freed
(asyncio's, swapped for a small one by `kopf._api.http`), the next ones come from the heap and stay there
once freed. Measured, 15 TLS connections opened at once (a sharded replica's start: a watch and a write
per Lease) left +4.4 MB of RSS, +0.8 MB with the threshold fixed; 50 at once (a burst's pool), +15.0 vs
+2.9 MB. A threshold set by the deployment (`MALLOC_MMAP_THRESHOLD_`) is left as it is.

`ctypes` is imported on the first call only.
"""
import os
import sys
from collections.abc import Callable
from typing import Any

M_MMAP_THRESHOLD = -3  # glibc's `mallopt()` parameter
MMAP_THRESHOLD = 128 * 1024  # bytes: glibc's initial threshold, kept

_trim: Callable[[int], int] | None = None
_looked_up = False


def _libc() -> Any:
    """The process's own C library if it is glibc-like (Linux), else None."""
    if not sys.platform.startswith('linux'):
        return None
    try:
        import ctypes
        return ctypes.CDLL(None)  # glibc has malloc_trim and mallopt, musl has neither
    except OSError:
        return None


def fix_mmap_threshold(size: int = MMAP_THRESHOLD) -> bool:
    """Keep glibc's mmap threshold at `size` (blocks this big go back to the OS when freed); whether it was set."""
    if 'MALLOC_MMAP_THRESHOLD_' in os.environ:
        return False  # the deployment's own setting
    libc = _libc()
    mallopt = getattr(libc, 'mallopt', None) if libc is not None else None
    if mallopt is None:
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, size))


def _lookup() -> Callable[[int], int] | None:
    libc = _libc()
    trim: Callable[[int], int] | None = getattr(libc, 'malloc_trim', None) if libc is not None else None
    if trim is None:
        return None
    import ctypes
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
