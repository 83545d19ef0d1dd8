"""`kopf._engine.memory`: glibc's malloc_trim and a fixed mmap threshold where there are, else nothing."""
import sys

import pytest

from kopf._engine import memory


@pytest.fixture(autouse=True)
def fresh_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, '_trim', None)
    monkeypatch.setattr(memory, '_looked_up', False)


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='glibc only')
def test_glibc_gives_the_memory_back() -> None:
    import platform
    if platform.libc_ver()[0] != 'glibc':
        pytest.skip('not glibc')
    assert memory.release() is True
    assert memory.release() is True  # looked up once, called every time


def test_elsewhere_it_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, 'platform', 'darwin')
    assert memory.release() is False


def test_a_c_library_without_malloc_trim_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctypes

    class NoTrim:
        def __init__(self, name: object) -> None:
            pass

        def __getattr__(self, name: str) -> object:
            raise AttributeError(name)  # as musl: no such symbol
    monkeypatch.setattr(ctypes, 'CDLL', NoTrim)
    assert memory.release() is False


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='glibc only')
def test_glibc_keeps_a_fixed_mmap_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    import platform
    if platform.libc_ver()[0] != 'glibc':
        pytest.skip('not glibc')
    monkeypatch.delenv('MALLOC_MMAP_THRESHOLD_', raising=False)
    assert memory.fix_mmap_threshold() is True


def test_a_threshold_of_the_deployment_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('MALLOC_MMAP_THRESHOLD_', '65536')
    assert memory.fix_mmap_threshold() is False


def test_no_mmap_threshold_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv('MALLOC_MMAP_THRESHOLD_', raising=False)
    monkeypatch.setattr(sys, 'platform', 'darwin')
    assert memory.fix_mmap_threshold() is False


def test_no_mmap_threshold_without_mallopt(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctypes

    class NoMallopt:
        def __init__(self, name: object) -> None:
            pass

        def __getattr__(self, name: str) -> object:
            raise AttributeError(name)  # as musl: no such symbol
    monkeypatch.delenv('MALLOC_MMAP_THRESHOLD_', raising=False)
    monkeypatch.setattr(ctypes, 'CDLL', NoMallopt)
    assert memory.fix_mmap_threshold() is False
