"""Running the ```python blocks of docs/*.md in tests: extract them, run them, isolate the registry."""
import pathlib
import re
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import kopf

DOCS = pathlib.Path(__file__).parent.parent / 'docs'


def blocks(page: str | pathlib.Path) -> list[str]:
    """The ```python blocks of a page (a name under docs/ or a path), in order."""
    path = page if isinstance(page, pathlib.Path) else DOCS / page
    return re.findall(r'^```python\n(.*?)^```', path.read_text(), flags=re.S | re.M)


def run(code: str, source: str = '<docs>', *, ignore_deprecations: bool = False) -> dict[str, Any]:
    """Run a block as a module of its own; its namespace is returned."""
    namespace: dict[str, Any] = {'__name__': '__docs__'}
    with warnings.catch_warnings():
        if ignore_deprecations:  # e.g. the docs show the old `cooldown=` too
            warnings.simplefilter('ignore', DeprecationWarning)
        exec(compile(code, source, 'exec'), namespace)
    return namespace


def registry_fixture(*, autouse: bool = False) -> Callable[[], Iterator[kopf.OperatorRegistry]]:
    """A `registry` fixture: a fresh default registry for the blocks' decorators, restored after."""
    @pytest.fixture(autouse=autouse, name='registry')
    def fixture() -> Iterator[kopf.OperatorRegistry]:
        old = kopf.get_default_registry()
        new = kopf.OperatorRegistry()
        kopf.set_default_registry(new)
        try:
            yield new
        finally:
            kopf.set_default_registry(old)
    return fixture
