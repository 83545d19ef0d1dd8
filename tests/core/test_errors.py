import pytest

import kopf


@pytest.mark.parametrize('cls, base', [
    (kopf.TemporaryError, Exception),
    (kopf.PermanentError, Exception),
    (kopf.HandlerTimeoutError, kopf.PermanentError),
    (kopf.HandlerRetriesError, kopf.PermanentError),
    (kopf.AdmissionError, kopf.PermanentError),
])
def test_hierarchy(cls: type[Exception], base: type[Exception]) -> None:
    assert issubclass(cls, base)


@pytest.mark.parametrize('old, new', [
    (kopf.HandlerFatalError, kopf.PermanentError),
    (kopf.HandlerRetryError, kopf.TemporaryError),
])
def test_old_spellings_are_the_same_classes(old: type[Exception], new: type[Exception]) -> None:
    assert old is new
    with pytest.raises(new):
        raise old('boo')


@pytest.mark.parametrize('args, kwargs, message, delay', [
    ((), {}, '', 60),
    (('boo',), {}, 'boo', 60),
    (('boo',), {'delay': 5}, 'boo', 5),
    (('boo', 1.5), {}, 'boo', 1.5),
    (('boo',), {'delay': None}, 'boo', None),
])
def test_temporary_error_delay(args: tuple, kwargs: dict, message: str, delay: float | None) -> None:
    exc = kopf.TemporaryError(*args, **kwargs)
    assert exc.delay == delay
    assert str(exc) == message


@pytest.mark.parametrize('args, kwargs, code', [
    (('no',), {}, 500),
    (('no',), {'code': 555}, 555),
    (('no', 400), {}, 400),
])
def test_admission_error_code(args: tuple, kwargs: dict, code: int) -> None:
    exc = kopf.AdmissionError(*args, **kwargs)
    assert exc.code == code
    assert str(exc) == 'no'


def test_errors_mode_members() -> None:
    assert {mode.name for mode in kopf.ErrorsMode} == {'IGNORED', 'TEMPORARY', 'PERMANENT'}
