"""Every Python block of docs/hierarchies.md runs; the handler example adopts as the table says."""
import pathlib
import re
from collections.abc import Iterator
from typing import Any

import pytest

import kopf
from kopf._kits import hierarchies

DOCS = pathlib.Path(__file__).parent.parent.parent / 'docs'
BLOCKS = re.findall(r'```python\n(.*?)```', (DOCS / 'hierarchies.md').read_text(), flags=re.S)


@pytest.fixture(autouse=True)
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
    exec(compile(code, '<docs/hierarchies.md>', 'exec'), namespace)
    return namespace


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
