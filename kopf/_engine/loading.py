"""Loading the operator's code for `kopf run`: files (as `__kopf_script_<idx>__<path>`), then modules.

Each file's directory is prepended to `sys.path` (so its sibling modules import); files are
executed in order, then the `-m` modules are imported in order. A failure is a `LoadingError`
naming the file or module and the error; its `details` are the traceback of the user's frames only
(not importlib's, not kopf's), so the file and line of the mistake show without `--debug`; the CLI
prints them, then the one-line summary last.
"""
import importlib
import importlib.util
import os.path
import sys
import traceback
from collections.abc import Iterable
from typing import Any

_KOPF_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_IMPORTLIB_DIR = os.path.dirname(os.path.abspath(importlib.__file__))


class LoadingError(Exception):
    """A file or module of the operator could not be loaded; `details`: the traceback of the user's frames."""

    def __init__(self, message: str, details: str = '') -> None:
        super().__init__(message)
        self.details = details


def user_traceback(exc: BaseException) -> str:
    """The traceback of `exc` without importlib's and kopf's frames (a decorator's error shows the decorated line)."""
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__)
              if not frame.filename.startswith(('<frozen ', _KOPF_DIR + os.sep, _IMPORTLIB_DIR + os.sep))]
    if not frames and not isinstance(exc, SyntaxError):
        return ''  # e.g. a module that is not found: the one-line summary says it all
    lines = ['Traceback (most recent call last):\n', *traceback.format_list(frames)] if frames else []
    return ''.join(lines + traceback.format_exception_only(type(exc), exc)).rstrip('\n')


def load(paths: Iterable[str], modules: Iterable[str]) -> None:
    for idx, path in enumerate(paths):
        _load_file(idx, path)
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:
            raise LoadingError(f'Cannot import the module {name!r}: {type(exc).__name__}: {exc}',
                               user_traceback(exc)) from exc


def nothing_registered(registry: Any, paths: Iterable[str], modules: Iterable[str]) -> str | None:
    """The warning when the loaded code registered no handlers at all (None if it did).

    The usual cause: a decorator without its parentheses (`@kopf.on.create` instead of
    `@kopf.on.create(...)`): the function is taken for a resource selector, and nothing is registered.
    """
    if registry.handlers:
        return None
    loaded = [*paths, *(f'-m {name}' for name in modules)]
    what = ', '.join(loaded) if loaded else 'no files or modules given'
    return (f'No handlers are registered (loaded: {what}). Is a decorator used without parentheses, '
            f'e.g. @kopf.on.create instead of @kopf.on.create(...)?')


def script_name(idx: int, path: str) -> str:
    """The module name of the idx-th file (in `sys.modules` while the operator runs)."""
    return f'__kopf_script_{idx}__{path}'


def _load_file(idx: int, path: str) -> None:
    if not os.path.isfile(path):
        raise LoadingError(f'No such file: {path}')
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)
    name = script_name(idx, path)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise LoadingError(f'Cannot load {path}: not a Python file?')
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise LoadingError(f'Cannot load {path}: {type(exc).__name__}: {exc}', user_traceback(exc)) from exc
