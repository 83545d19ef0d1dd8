"""The metrics' address: `[HOST:]PORT`, localhost unless a host is given. No I/O."""
import pytest

from kopf._metrics.instruments import Address, AddressError


@pytest.mark.parametrize('text, host, port', [
    ('9090', 'localhost', 9090), (9090, 'localhost', 9090), (':9090', 'localhost', 9090),
    ('0.0.0.0:9090', '0.0.0.0', 9090), ('127.0.0.1:0', '127.0.0.1', 0), ('[::1]:9090', '::1', 9090),
    ('metrics.local:80', 'metrics.local', 80),
])
def test_addresses(text: str | int, host: str, port: int) -> None:
    assert Address.parse(text) == Address(host=host, port=port)


@pytest.mark.parametrize('text', ['', 'x', 'host:', 'host:port', '::1:80', '99999', '1.2.3.4:-1', 'http://h:1'])
def test_bad_addresses_name_the_value(text: str) -> None:
    with pytest.raises(AddressError, match=r'\[HOST:\]PORT .*' + repr(text).replace('[', r'\[')):
        Address.parse(text)
