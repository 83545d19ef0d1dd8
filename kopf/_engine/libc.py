"""The process's own C library (glibc's `malloc_trim`, `mallopt` for `kopf._engine.memory`), at the first call.

Through `_ctypes`, ctypes' own core: `import ctypes` makes some 40 types, its loaders and `ctypes.pythonapi`
at import (~150 KB of every operator's RSS: 370 KB with the core, 220 KB without) for two calls; `ctypes`
itself where the core's names are not there.
"""
from typing import Any


def load() -> Any:
    """`ctypes.CDLL(None)`-alike: the functions as attributes (a missing one: `AttributeError`), taking and returning
    C ints, and `size_t`, the C type of a `size_t` argument; None if the library cannot be loaded."""
    try:
        return _Library()
    except (ImportError, AttributeError, TypeError):  # not CPython's `_ctypes`: ctypes itself
        pass
    try:
        import ctypes
        library = ctypes.CDLL(None)
        library.size_t = ctypes.c_size_t  # type: ignore[attr-defined]  # as _Library's
        return library
    except OSError:
        return None


class _Library:
    """`ctypes.CDLL(None)` through `_ctypes` alone: the process's own symbols, called as C functions that return
    an `int` (as `CDLL`'s are), and the C types they need."""

    def __init__(self) -> None:
        import _ctypes

        class Int(_ctypes._SimpleCData):  # type: ignore[type-arg]  # = ctypes.c_int
            _type_ = 'i'

        class SizeT(_ctypes._SimpleCData):  # type: ignore[type-arg]  # = ctypes.c_size_t on Linux
            _type_ = 'L'

        class Function(_ctypes.CFuncPtr):  # = CDLL's _FuncPtr
            _flags_ = _ctypes.FUNCFLAG_CDECL
            _restype_ = Int

        self.size_t = SizeT
        self._function = Function
        self._handle = _ctypes.dlopen(None, 0)  # type: ignore[arg-type]  # as CDLL(None): RTLD_LOCAL (+ RTLD_NOW)

    def __getattr__(self, name: str) -> Any:
        return self._function((name, self))  # type: ignore[arg-type]  # AttributeError if there is no such symbol
