"""JSON on the wire: compact bytes, whichever of orjson and the standard library encodes them."""
import pytest

from kopf._shared import encoding


@pytest.mark.parametrize('value, raw', [
    ({'a': [1, 2.5, None, True]}, b'{"a":[1,2.5,null,true]}'),
    ([], b'[]'),
])
def test_dumps_gives_compact_bytes(value: object, raw: bytes) -> None:
    assert encoding.dumps(value) == raw


def test_text_round_trips_either_way() -> None:  # orjson sends UTF-8, the standard library \u escapes
    assert encoding.loads(encoding.dumps({'name': 'ünïcode'})) == {'name': 'ünïcode'}


def test_integers_beyond_64_bits_are_encoded_too() -> None:
    assert encoding.loads(encoding.dumps({'n': 2 ** 70})) == {'n': 2 ** 70}


@pytest.mark.parametrize('data', [b'{"a": 1}', '{"a": 1}'])
def test_loads_accepts_bytes_and_text(data: bytes | str) -> None:
    assert encoding.loads(data) == {'a': 1}


@pytest.mark.parametrize('data', [b'{"a": ', b'nope', b''])
def test_malformed_input_is_a_value_error(data: bytes) -> None:
    with pytest.raises(ValueError):
        encoding.loads(data)


@pytest.mark.parametrize('text', ['{"a":[1,2.5,"x",null,true]}', '{"nan":NaN,"inf":Infinity}',
                                  '"\\u00e9\\ud83d\\ude00"', '{"k":1,"k":2}'])
def test_stored_text_reads_as_the_standard_library_reads_it(text: str) -> None:
    import json
    expected, got = json.loads(text), encoding.loads_stored(text)
    assert repr(got) == repr(expected)  # NaN != NaN: compared as text


def test_stored_big_integers_read_as_the_bodies_from_the_wire_read_them() -> None:
    text = '{"big":123456789012345678901234567890}'
    assert encoding.loads_stored(text) == encoding.loads(text.encode())


def test_stored_text_that_is_malformed_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        encoding.loads_stored('{"a":')
