"""The Python examples of docs/persistence.md and docs/settings.md run, and configure what they say."""
import pathlib
import re
import types
from typing import Any

import pytest

import kopf

DOCS = pathlib.Path(__file__).parent.parent.parent / 'docs'


def _blocks(name: str) -> list[str]:
    return re.findall(r'```python\n(.*?)```', (DOCS / name).read_text(), flags=re.S)


class _On:
    @staticmethod
    def startup(**_: Any) -> Any:
        return lambda fn: fn


class _Kopf(types.ModuleType):
    """The real kopf, but with `kopf.on.startup()` as a plain decorator (no registry is touched)."""

    def __getattr__(self, name: str) -> Any:
        return _On if name == 'on' else getattr(kopf, name)


def _run(code: str) -> dict[str, Any]:
    code = re.sub(r'^import kopf$', '', code, flags=re.M)
    namespace: dict[str, Any] = {'kopf': _Kopf('kopf')}
    exec(compile(code, '<docs>', 'exec'), namespace)
    return namespace


@pytest.mark.parametrize('code', _blocks('persistence.md') + _blocks('settings.md'))
def test_docs_example(code: str) -> None:
    namespace = _run(code) if 'config.persistence' not in code or 'def ' in code else None
    if namespace is None:  # a fragment: run it inside a startup handler
        namespace = _run('def configure(config, **_):\n' + ''.join('    ' + line + '\n' for line in code.splitlines()))
    settings = kopf.OperatorSettings()
    if 'configure' in namespace:
        namespace['configure'](settings=settings, config=settings, logger=None, memo=None)
        storages = (settings.persistence.progress_storage, settings.persistence.diffbase_storage)
        assert all(isinstance(s, kopf.ProgressStorage | kopf.DiffBaseStorage) for s in storages)


def test_the_seed_configurations_are_in_the_docs() -> None:
    text = (DOCS / 'persistence.md').read_text()
    for snippet in [
        "kopf.AnnotationsProgressStorage(prefix='my-op.example.com')",
        "kopf.StatusProgressStorage(field='status.my-op')",
        "kopf.SmartProgressStorage(prefix='my-op.example.com', field='status.my-op')",
        "kopf.AnnotationsDiffBaseStorage(prefix='my-op.example.com')",
        "kopf.StatusDiffBaseStorage(field='status.my-op-base')",
    ]:
        assert snippet in text
