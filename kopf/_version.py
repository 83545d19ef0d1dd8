"""The version of kopf: the installed package's metadata, read when first asked for.

`VERSION` is the one place to change it: setup.py puts it into the package metadata; a source tree
that is not installed reports it as it is. `kopf.__version__` is looked up lazily (the facade's
`__getattr__`), so that `import kopf` does not import `importlib.metadata`.
"""
import functools

VERSION = '0.1.0'


@functools.cache
def version() -> str:
    import importlib.metadata  # only when the version is asked for
    try:
        return importlib.metadata.version('kopf')
    except importlib.metadata.PackageNotFoundError:  # a source tree on sys.path, not installed
        return VERSION


def version_tuple(text: str) -> tuple[int | str, ...]:
    """`1.2.3` -> (1, 2, 3); `1.2.3.dev4` -> (1, 2, 3, 'dev4'), as setuptools-scm's tuples are."""
    return tuple(int(part) if part.isdigit() else part for part in text.split('.'))


def lazy(name: str) -> object:
    """`__version__` and `__version_tuple__` for the facade's module `__getattr__`."""
    if name == '__version__':
        return version()
    if name == '__version_tuple__':
        return version_tuple(version())
    raise AttributeError(f"module 'kopf' has no attribute {name!r}")
