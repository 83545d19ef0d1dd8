"""The resource classes that `kopf crd TARGET...` names: `PATH.py[:CLASS]` or `MODULE[:CLASS]`.

A file is executed as `kopf run` executes it (its directory first on `sys.path`); a module is imported.
Without `:CLASS`, every declared class in its namespace (its own and the ones it imports) is taken, in
the order of declaration; with it, that class. Errors name the target.
"""
import importlib
import importlib.util
import os.path
import sys
import types
from collections.abc import Iterable
from typing import Any

from kopf._typed import declaring


class FindingError(Exception):
    """A target that cannot be loaded, or that has no such class, or no resource classes at all."""


def find(targets: Iterable[str]) -> list[type]:
    found: list[type] = []
    for target in targets:
        for cls in _classes(target):
            if cls not in found:
                found.append(cls)
    return found


def loaded(module_names: Iterable[str], *, since: int = 0) -> list[type]:
    """The classes declared since `since` (in DECLARED), and those in these loaded modules' namespaces."""
    found = list(declaring.DECLARED[since:])
    for name in module_names:
        module = sys.modules.get(name)
        for value in vars(module).values() if module is not None else ():
            if declaring.declaration_of(value) is not None and value not in found:
                found.append(value)
    order = {cls: index for index, cls in enumerate(declaring.DECLARED)}
    return sorted(found, key=lambda cls: order.get(cls, len(order)))


def _classes(target: str) -> list[type]:
    source, _, name = target.partition(':') if not _is_file(target) else _split_file(target)
    namespace = _load(source)
    if name:
        cls = namespace.get(name)
        if cls is None:
            raise FindingError(f'{source} has no class {name!r}.')
        if declaring.declaration_of(cls) is None:
            raise FindingError(f'{source}:{name} is not declared with @kopf.custom_resource(...).')
        return [cls]
    order = {cls: index for index, cls in enumerate(declaring.DECLARED)}
    classes = sorted({value for value in namespace.values() if declaring.declaration_of(value) is not None},
                     key=lambda cls: order.get(cls, len(order)))
    if not classes:
        raise FindingError(f'{source} declares no resource classes (@kopf.custom_resource(...)).')
    return classes


def _is_file(target: str) -> bool:
    return '.py' in target or os.path.sep in target


def _split_file(target: str) -> tuple[str, str, str]:
    path, sep, name = target.rpartition(':')
    if not sep or not path.endswith('.py'):
        return target, '', ''
    return path, sep, name


def _load(source: str) -> dict[str, Any]:
    try:
        if _is_file(source):
            directory = os.path.dirname(os.path.abspath(source))
            if directory not in sys.path:
                sys.path.insert(0, directory)
            return vars(_load_file(source, directory))
        return vars(importlib.import_module(source))
    except FileNotFoundError:
        raise FindingError(f'Cannot read {source}: no such file.') from None
    except Exception as exc:
        what = 'execute' if _is_file(source) else 'import'
        raise FindingError(f'Cannot {what} {source}: {type(exc).__name__}: {exc}') from exc


def _load_file(path: str, directory: str) -> types.ModuleType:
    """The file as a module named by its stem (so classes show as `models:Database`, and their source is found)."""
    if not os.path.exists(path):
        raise FileNotFoundError(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    name = stem if stem.isidentifier() and stem not in sys.modules else f'__kopf_crd__{len(sys.modules)}__{stem}'
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None   # a path ending with .py
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
