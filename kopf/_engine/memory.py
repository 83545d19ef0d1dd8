"""The process's memory around a burst: gc while listing, the heap given back after it (glibc's `malloc_trim`,
`mallopt`).

A large initial listing (10,000 objects at a restart) parses every body at once and runs a cycle on
each; when that is over, most of it is free again, but glibc keeps the freed heap for later and the
process's RSS stays at the burst's peak. `release()` asks glibc to return the free pages at the top
and in the middle of its heaps (`malloc_trim(0)`); Python's own small-object arenas are returned by
Python already when they empty. Elsewhere (musl, macOS, Windows) it does nothing. The start leaves free heap
too (.pyc reads, the login, the discovery: ~0.25 MB): `startup_over()` is true once, at the first listing's end.

While an initial listing is processed, every object's record, memo and cycle allocate thousands of
containers that live on, and the garbage collector's youngest generation (700 allocations by default)
is collected ~40 times per 1,000 objects, promoting them into older generations that are scanned
whole again and again: ~15% of a 100,000-object restart's CPU. `listing_started()` raises the first threshold
(`settings.process.listing_gc_threshold`) while any listing runs; `listing_ended()` restores it after the last one,
unless somebody else changed it meanwhile; a threshold already higher is left as it is.

`fix_mmap_threshold()` keeps glibc's mmap threshold at its initial 128 KiB. glibc raises it to the size of
every mmapped block freed (up to 32 MiB): after the first TLS connection's 256 KiB receive buffer is freed
(asyncio's, swapped for a small one by `kopf._api.http`), the next ones come from the heap and stay there
once freed. Measured, 15 TLS connections opened at once (a sharded replica's start: a watch and a write
per Lease) left +4.4 MB of RSS, +0.8 MB with the threshold fixed; 50 at once (a burst's pool), +15.0 vs
+2.9 MB. A threshold set by the deployment (`MALLOC_MMAP_THRESHOLD_`) is left as it is.

The C library is reached at the first call only (`kopf._engine.libc`).
"""
import gc
import os
import sys
from collections.abc import Callable
from typing import Any

M_MMAP_THRESHOLD = -3  # glibc's `mallopt()` parameter
MMAP_THRESHOLD = 128 * 1024  # bytes: glibc's initial threshold, kept

_trim: Callable[[int], int] | None = None
_looked_up = False


def _libc() -> Any:
    """The process's own C library if it is glibc-like (Linux), else None (`kopf._engine.libc`)."""
    if not sys.platform.startswith('linux'):
        return None
    from kopf._engine import libc  # at the first call: `import kopf` does not pay for it
    return libc.load()


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
    trim.argtypes = [libc.size_t]  # type: ignore[attr-defined]
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


_started = False  # the start's free heap was released (or is about to be)


def startup_over() -> bool:
    """True once per process: the first initial listing is over, the start's freed heap is worth releasing."""
    global _started
    first, _started = not _started, True
    return first


_listings = 0             # listings in progress that raised the threshold
_saved: int | None = None  # the first threshold before the first of them
_raised: int | None = None  # ours, while raised


def listing_started(threshold: int | None) -> bool:
    """A listing begins: raise gc's first threshold to this (None: not at all); whether it counts (end it then)."""
    global _listings, _saved, _raised
    if threshold is None:
        return False
    if _listings == 0:
        current = gc.get_threshold()
        if current[0] >= threshold:
            return False  # somebody's own tuning goes further: theirs stays
        _saved, _raised = current[0], threshold
        gc.set_threshold(threshold, *current[1:])
    _listings += 1
    return True


def listing_ended() -> None:
    """A listing that counted is over: the threshold as it was after the last one (unless changed by others)."""
    global _listings, _saved, _raised
    _listings = max(0, _listings - 1)
    if _listings == 0 and _saved is not None:
        current = gc.get_threshold()
        if current[0] == _raised:
            gc.set_threshold(_saved, *current[1:])
        _saved = _raised = None
