"""Duplicate fields of JSON bodies, found as strict decoding finds them (and only looked for when they may be)."""
import json

import pytest

from kopf._cluster import jsoncodec
from kopf._cluster.web import duplicates


@pytest.mark.parametrize('raw, found', [
    (b'{"spec": {"replicas": 2, "replicas": 3}}', ['spec.replicas']),
    (b'{"a":1,"a":2,"b":{"c":[{"d":1,"d":2}]}}', ['a', 'b.c[0].d']),
    (b'{"a": 1, "b": [1, 2], "c": {"d": "\\u00e9"}}', []),   # longer by its escape only: none
    (b'{"a":1}', []),
    (b'[1, 2]', []),
])
def test_duplicates(raw: bytes, found: list[str]) -> None:
    assert duplicates.duplicates(raw, json.loads(raw), jsoncodec.dumps) == found


def test_yaml_duplicates_by_line() -> None:
    raw = b'\napiVersion: x\nkind: y\nspec:\n  foo: 1\n  foo: 2\n  bar: {a: 1, a: 2}\n'
    assert duplicates.yaml_duplicates(raw) == ['line 6: key "foo" already set in map',
                                               'line 7: key "a" already set in map']
