"""The byte comparison's normalization: placeholders where values legitimately differ, every other byte kept."""
import pytest

from . import rawbytes


@pytest.mark.parametrize('raw, text', [
    (b'{"kind":"ConfigMap","metadata":{"name":"a","uid":"1-2","resourceVersion":"7",'
     b'"creationTimestamp":"2026-01-01T00:00:00Z"}}\n',
     '{"kind":"ConfigMap","metadata":{"name":"a","uid":"<uid>","resourceVersion":"<rv>",'
     '"creationTimestamp":"<time>"}}\\n'),
    (b'{"metadata":{"name":"g-x7k2p","generateName":"g-","managedFields":[{"manager":"m","time":"2026-01-01T00:00:01Z"'
     b'},{"manager":"a","time":"2026-01-01T00:00:02Z","fieldsV1":{"f:metadata":{"f:ownerReferences":{"k:{\\"uid\\"'
     b':\\"1-2\\"}":{}}}}}]}}\n',
     '{"metadata":{"name":"<generated>","generateName":"g-","managedFields":[{"manager":"a","time":"<time>",'
     '"fieldsV1":{"f:metadata":{"f:ownerReferences":{"k:{\\"uid\\":\\"<uid>\\"}":{}}}}},'
     '{"manager":"m","time":"<time>"}]}}\\n'),
    (b'{"a":1.0,"b":"\\u003c","c":"\\u00e9"}\n', '{"a":1.0,"b":"\\u003c","c":"\\u00e9"}\\n'),   # kept as written
    (b'{"a": 1}', '{"a":1} <not compact> <no single newline>'),
    (b'{"items":[{"metadata":{"name":"kube-root-ca.crt"}},{"metadata":{"name":"x"}}]}\n',
     '{"items":[{"metadata":{"name":"x"}}]}\\n'),
    (b'{"kind":"Table","columnDefinitions":[{"name":"Name"},{"name":"Age"}],"rows":[{"cells":["x","5s"]}]}\n',
     '{"kind":"Table","columnDefinitions":[{"name":"Name"},{"name":"Age"}],"rows":[{"cells":["x","<age>"]}]}\\n'),
    (b'not json', "<not JSON> b'not json'"),
])
def test_rendered(raw: bytes, text: str) -> None:
    assert rawbytes.rendered(raw) == text


def test_generated_names_in_messages() -> None:
    raw = b'{"message":"configmaps \\"g-x7k2p\\" already exists"}\n'
    expected = '{"message":"configmaps \\"<generated>\\" already exists"}\\n'
    assert rawbytes.rendered(raw, {'g-x7k2p': '<generated>'}) == expected
