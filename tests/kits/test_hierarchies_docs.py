"""Every Python block of docs/hierarchies.md runs; the handler example adopts as the table says."""
from typing import Any

import pytest

import kopf
from kopf._kits import hierarchies
from tests import docs_blocks

BLOCKS = docs_blocks.blocks('hierarchies.md')


registry = docs_blocks.registry_fixture(autouse=True)


def _run(code: str) -> dict[str, Any]:
    return docs_blocks.run(code, '<docs/hierarchies.md>')


def test_the_docs_have_examples() -> None:
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize('code', BLOCKS)
def test_docs_block_runs(code: str) -> None:
    _run(code)


def test_the_handler_example_adopts_the_handled_object() -> None:
    code = next(block for block in BLOCKS if '@kopf.on.create' in block)
    documented = _run(next(block for block in BLOCKS if block.startswith('metadata = ')))['metadata']
    owner = kopf.Body({'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
                       'metadata': {'name': 'kex', 'namespace': 'ns1', 'uid': '...', 'labels': {'app': 'demo'}}})
    create_fn = _run(code)['create_fn']
    with hierarchies.owner_context(owner):
        result = create_fn(spec=owner.spec)
    assert result == {'pod-generate-name': 'kex-'}
    with pytest.raises(LookupError):
        create_fn(spec={})
    pod: dict[str, Any] = {}
    kopf.adopt(pod, owner)
    assert pod['metadata'] == documented
