"""Every Python block of docs/handlers.md and docs/memo.md runs (with its own default registry)."""
import copy
from typing import Any

import pytest

import kopf
from tests import docs_blocks

_blocks = docs_blocks.blocks


registry = docs_blocks.registry_fixture()


def _run(code: str) -> dict[str, Any]:
    return docs_blocks.run(code, ignore_deprecations=True)  # the docs show the old `cooldown=` too


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
