"""Loading the operator's code for `kopf run`: files (as `__kopf_script_<idx>__<path>`), then modules.

Each file's directory is prepended to `sys.path` (so its sibling modules import); files are
executed in order, then the `-m` modules are imported in order. A failure is a `LoadingError`
naming the file or module and the error (the CLI prints it, no traceback).
"""
import importlib
import importlib.util
import os.path
import sys
from collections.abc import Iterable


class LoadingError(Exception):
    """A file or module of the operator could not be loaded."""


def load(paths: Iterable[str], modules: Iterable[str]) -> None:
    for idx, path in enumerate(paths):
        _load_file(idx, path)
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:
            raise LoadingError(f'Cannot import the module {name!r}: {type(exc).__name__}: {exc}') from exc


def _load_file(idx: int, path: str) -> None:
    if not os.path.isfile(path):
        raise LoadingError(f'No such file: {path}')
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)
    name = f'__kopf_script_{idx}__{path}'
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise LoadingError(f'Cannot load {path}: not a Python file?')
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise LoadingError(f'Cannot load {path}: {type(exc).__name__}: {exc}') from exc
