"""Reading manifests for `--apply` and `LocalCluster.apply`: dicts, lists, YAML text or files."""
import os
import pathlib
from collections.abc import Iterable, Mapping
from typing import Any

import yaml

Manifest = Mapping[str, Any] | str | os.PathLike[str] | Iterable[Mapping[str, Any]]


class ManifestError(Exception):
    """A manifest that cannot be read or parsed; the message is one line for the user."""


def load(source: Manifest) -> list[dict[str, Any]]:
    """Objects from a dict, an iterable of dicts, a path, or YAML text (multi-document, `List` kinds unfolded)."""
    if isinstance(source, Mapping):
        return _unfold([dict(source)])
    if isinstance(source, os.PathLike) or (isinstance(source, str) and '\n' not in source
                                           and pathlib.Path(source).is_file()):
        path = pathlib.Path(source)
        try:
            text = path.read_text()
        except OSError as exc:
            raise ManifestError(f'cannot read {path}: {exc.strerror}') from None
        return _parse(text, str(path))
    if isinstance(source, str):
        return _parse(source, '<text>')
    return _unfold([dict(item) for item in source])


def _parse(text: str, origin: str) -> list[dict[str, Any]]:
    try:
        documents = [doc for doc in yaml.safe_load_all(text) if doc is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        where = f' (line {mark.line + 1}, column {mark.column + 1})' if mark is not None else ''
        problem = getattr(exc, 'problem', None) or str(exc).splitlines()[0]
        raise ManifestError(f'malformed YAML in {origin}{where}: {problem}') from None
    for doc in documents:
        if not isinstance(doc, dict) or 'apiVersion' not in doc or 'kind' not in doc:
            raise ManifestError(f'{origin}: every document must be an object with apiVersion and kind')
    return _unfold(documents)


def _unfold(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = []
    for obj in objects:
        if obj.get('kind') == 'List' or (str(obj.get('kind', '')).endswith('List') and 'items' in obj):
            result.extend(_unfold(list(obj.get('items') or [])))
        else:
            result.append(obj)
    return result
