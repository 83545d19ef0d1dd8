"""resourceVersions as the records compare and keep them: tables, no loop."""
import pytest

from kopf._core import resourceversions as versions


@pytest.mark.parametrize('rv, key', [(1, None), (5, 0), (5, 2 ** 64 - 1), (10 ** 17, 12345), (0, 7)])
def test_a_resource_version_and_a_key_in_one_int(rv: int, key: int | None) -> None:
    packed = versions.packed(rv, key)
    assert versions.unpacked(packed) == (str(rv), key if rv > 0 else None)  # "0" takes no key: no object has it
    assert packed == rv if key is None or rv == 0 else packed > versions.KEY_MASK


def test_the_echo_of_a_packed_version_is_its_event_resource_version() -> None:
    event = {'type': 'MODIFIED', 'object': {'metadata': {'resourceVersion': '5'}}}
    assert versions.unpacked(versions.packed(5, 3))[0] == versions.rv_of(event)
    assert versions.rv_of(None) is None and versions.rv_of({'object': {}}) is None
