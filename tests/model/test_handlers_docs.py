"""Every Python block of docs/handlers.md and docs/memo.md runs (with its own default registry)."""
import copy
import pathlib
import re
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

import kopf

DOCS = pathlib.Path(__file__).parent.parent.parent / 'docs'


def _blocks(name: str) -> list[str]:
    return re.findall(r'```python\n(.*?)```', (DOCS / name).read_text(), flags=re.S)


@pytest.fixture
def registry() -> Iterator[kopf.OperatorRegistry]:
    old = kopf.get_default_registry()
    new = kopf.OperatorRegistry()
    kopf.set_default_registry(new)
    try:
        yield new
    finally:
        kopf.set_default_registry(old)


def _run(code: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {'__name__': '__docs__'}
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)  # the docs show the old `cooldown=` too
        exec(compile(code, '<docs>', 'exec'), namespace)
    return namespace


@pytest.mark.parametrize('code', _blocks('handlers.md') + _blocks('memo.md'))
def test_docs_example(registry: kopf.OperatorRegistry, code: str) -> None:
    namespace = _run(code)
    for handler in registry.handlers:  # whatever is registered is a function of the block
        assert namespace.get(handler.fn.__name__) is handler.fn or handler.fn.__name__ == '<lambda>'


def test_the_docs_have_examples() -> None:
    assert len(_blocks('handlers.md')) >= 8
    assert len(_blocks('memo.md')) >= 3


def test_the_memo_seed_scenario_from_the_docs(registry: kopf.OperatorRegistry) -> None:
    code = next(block for block in _blocks('memo.md') if 'create_fn_2' in block)
    namespace = _run(code)
    operator_memo = kopf.Memo()
    namespace['configure'](memo=operator_memo)
    memo1, memo2 = copy.copy(operator_memo), copy.copy(operator_memo)
    with pytest.raises(AttributeError):
        namespace['create_fn_1'](memo=memo1, name='one')
    namespace['create_fn_2'](memo=memo1)
    assert namespace['create_fn_1'](memo=memo1, name='one') == 100
    with pytest.raises(AttributeError):  # another object's memo starts without it
        namespace['create_fn_1'](memo=memo2, name='two')
    assert operator_memo.seen == {'one', 'two'} and 'xyz' not in operator_memo
    assert [h.backoff for h in registry.changing] == [1, None]
