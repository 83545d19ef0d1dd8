"""Applying: one request per endpoint — merge content and callables folded into one JSON-patch."""
from typing import Any

import pytest

from kopf._core import patches
from kopf._engine import applying

BODY = {'metadata': {'name': 'x', 'resourceVersion': '5', 'finalizers': ['a']}, 'spec': {'f': 1}}


def add_finalizer(body: dict) -> None:
    body['metadata']['finalizers'].append('kopf')


def test_a_patch_without_callables_is_sent_as_is() -> None:
    patch = patches.Patch({'status': {'x': 1}})
    assert applying.fold(patch) is patch


def test_callables_alone_are_sent_as_is() -> None:
    patch = patches.Patch(fns=[add_finalizer])
    assert applying.fold(patch) is patch


def test_merge_content_is_folded_into_the_json_patch() -> None:
    patch = patches.Patch({'metadata': {'annotations': {'k/v': 'x'}}, 'spec': {'f': None}}, fns=[add_finalizer])
    folded = applying.fold(patch)
    assert not len(folded) and len(folded.fns) == 2
    ops = folded.as_json_patch(BODY)
    assert {'op': 'add', 'path': '/metadata/finalizers/1', 'value': 'kopf'} in ops
    assert {'op': 'add', 'path': '/metadata/annotations', 'value': {'k/v': 'x'}} in ops
    assert {'op': 'remove', 'path': '/spec/f'} in ops
    assert BODY['metadata']['finalizers'] == ['a']  # the body itself is untouched


@pytest.mark.parametrize('content, writes', [
    ({'status': {'x': 1}}, False),                            # a handler's result: the annotations are the body's
    ({'metadata': {'labels': {'a': 'b'}}}, False),
    ({'metadata': {'annotations': {'k': 'v'}}}, True),
    ({'metadata': {'annotations': {'k': None}}}, True),        # budgeted as before (removing never exceeds it)
    ({'metadata': {'annotations': {}}}, True),
])
def test_only_a_patch_that_writes_annotations_is_budgeted(content: dict[str, Any], writes: bool) -> None:
    patch = patches.Patch(content)
    assert applying._writes_annotations(patch) is writes
