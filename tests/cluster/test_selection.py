"""Label and field selector parsing and matching."""
import pytest

from kopf._cluster import statuses
from kopf._cluster.store import selection


@pytest.mark.parametrize('text, labels, expected', [
    ('a=1', {'a': '1'}, True), ('a==1', {'a': '2'}, False), ('a!=1', {}, True), ('a!=1', {'a': '1'}, False),
    ('a in (1, 2)', {'a': '2'}, True), ('a notin (1,2)', {'a': '3'}, True), ('a notin (1,2)', {}, True),
    ('a', {'a': ''}, True), ('!a', {'a': ''}, False), ('!a', {}, True),
    ('a=1,b in (x,y),!c', {'a': '1', 'b': 'y'}, True), ('a=1,b in (x,y),!c', {'a': '1', 'b': 'y', 'c': ''}, False),
    ('app.kubernetes.io/name=x', {'app.kubernetes.io/name': 'x'}, True),
])
def test_label_selectors(text: str, labels: dict[str, str], expected: bool) -> None:
    match = selection.matcher(selection.parse_labels(text), [])
    assert match({'metadata': {'labels': labels}}) is expected


def test_label_selector_parse_error() -> None:
    with pytest.raises(statuses.ApiError) as exc:
        selection.parse_labels('a in 1')
    assert exc.value.code == 400 and 'unable to parse requirement' in exc.value.message


def test_field_selectors() -> None:
    allowed = ('metadata.name', 'metadata.namespace', 'involvedObject.name', 'source')
    match = selection.matcher([], selection.parse_fields('metadata.name=x,involvedObject.name!=y,source=kopf',
                                                         allowed))
    obj = {'metadata': {'name': 'x'}, 'involvedObject': {'name': 'z'}, 'source': {'component': 'kopf'}}
    assert match(obj)
    assert not match({**obj, 'involvedObject': {'name': 'y'}})
    with pytest.raises(statuses.ApiError) as exc:
        selection.parse_fields('spec.foo=1', allowed)
    assert exc.value.message == 'field label not supported: spec.foo'
