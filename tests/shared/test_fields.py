import pytest

from kopf._shared.fields import MISSING, ensure, parse_field, remove, resolve


@pytest.mark.parametrize('spec, expected', [
    (None, ()),
    ('', ()),
    ('spec', ('spec',)),
    ('spec.x.y', ('spec', 'x', 'y')),
    (['spec', 'x'], ('spec', 'x')),
    (('spec', 'a.b'), ('spec', 'a.b')),
])
def test_parse_field(spec: object, expected: tuple[str, ...]) -> None:
    assert parse_field(spec) == expected  # type: ignore[arg-type]


def test_parse_field_rejects_garbage() -> None:
    with pytest.raises(TypeError, match='dotted string'):
        parse_field(123)  # type: ignore[arg-type]


def test_resolve_distinguishes_missing_from_none() -> None:
    body = {'spec': {'x': None, 'y': 1}}
    assert resolve(body, ('spec', 'x')) is None
    assert resolve(body, ('spec', 'z')) is MISSING
    assert resolve(body, ('spec', 'y', 'deeper')) is MISSING
    assert resolve(body, ('spec', 'z'), 'default') == 'default'
    assert resolve(body, ()) is body


def test_ensure_and_remove() -> None:
    body: dict[str, object] = {}
    ensure(body, ('status', 'kopf', 'progress'), {'a': 1})
    assert body == {'status': {'kopf': {'progress': {'a': 1}}}}
    remove(body, ('status', 'kopf', 'progress'))
    assert body == {}
    remove(body, ('absent', 'path'))
    assert body == {}
