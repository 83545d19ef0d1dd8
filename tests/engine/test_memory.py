"""`kopf._engine.memory`: glibc's malloc_trim and a fixed mmap threshold where there are, else nothing."""
import sys
from collections.abc import Iterator

import pytest

from kopf._engine import libc, memory


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


class NoSymbols:
    """A C library (`ctypes.CDLL`) that has none of the symbols asked for, as musl has no malloc_trim/mallopt."""

    def __init__(self, name: object = None) -> None:
        pass

    def __getattr__(self, name: str) -> object:
        raise AttributeError(name)


def test_a_c_library_without_malloc_trim_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, '_libc', NoSymbols)
    assert memory.release() is False


def no_core() -> None:
    raise ImportError("No module named '_ctypes'")


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='glibc only')
def test_without_ctypes_core_ctypes_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    import platform
    if platform.libc_ver()[0] != 'glibc':
        pytest.skip('not glibc')
    monkeypatch.setattr(libc, '_Library', no_core)
    monkeypatch.delenv('MALLOC_MMAP_THRESHOLD_', raising=False)
    assert memory.release() is True
    assert memory.fix_mmap_threshold() is True


def test_without_ctypes_core_and_a_c_library_without_symbols(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctypes
    monkeypatch.setattr(libc, '_Library', no_core)
    monkeypatch.setattr(ctypes, 'CDLL', NoSymbols)
    monkeypatch.setattr(sys, 'platform', 'linux')
    assert memory.release() is False


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='glibc only')
def test_the_c_functions_are_called_without_importing_ctypes() -> None:
    import platform
    import subprocess
    if platform.libc_ver()[0] != 'glibc':
        pytest.skip('not glibc')
    code = ('import os, sys; os.environ.pop("MALLOC_MMAP_THRESHOLD_", None); from kopf._engine import memory; '
            'print(memory.fix_mmap_threshold(), memory.release(), memory.release(), "ctypes" in sys.modules)')
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert proc.stdout.split() == ['True', 'True', 'True', 'False']


@pytest.fixture
def threshold() -> Iterator[None]:
    import gc
    before = gc.get_threshold()
    gc.set_threshold(700, *before[1:])
    memory._listings, memory._saved, memory._raised = 0, None, None  # not what other tests' dispatchers left
    yield
    gc.set_threshold(*before)
    memory._listings, memory._saved, memory._raised = 0, None, None


@pytest.mark.usefixtures('threshold')
def test_listings_raise_gcs_threshold_and_the_last_one_restores_it() -> None:
    import gc
    assert memory.listing_started(10_000) and gc.get_threshold()[0] == 10_000
    assert memory.listing_started(10_000) and gc.get_threshold()[0] == 10_000  # two streams at once
    memory.listing_ended()
    assert gc.get_threshold()[0] == 10_000
    memory.listing_ended()
    assert gc.get_threshold()[0] == 700


@pytest.mark.usefixtures('threshold')
def test_none_or_a_higher_threshold_already_set_is_left_alone() -> None:
    import gc
    assert not memory.listing_started(None) and gc.get_threshold()[0] == 700
    gc.set_threshold(50_000, *gc.get_threshold()[1:])
    assert not memory.listing_started(10_000) and gc.get_threshold()[0] == 50_000


@pytest.mark.usefixtures('threshold')
def test_a_threshold_changed_by_somebody_else_meanwhile_stays() -> None:
    import gc
    assert memory.listing_started(10_000)
    gc.set_threshold(2_000, *gc.get_threshold()[1:])
    memory.listing_ended()
    assert gc.get_threshold()[0] == 2_000


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
    monkeypatch.delenv('MALLOC_MMAP_THRESHOLD_', raising=False)
    monkeypatch.setattr(memory, '_libc', NoSymbols)
    assert memory.fix_mmap_threshold() is False


def test_the_startup_is_over_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, '_started', False)
    assert memory.startup_over() is True
    assert memory.startup_over() is False
    assert memory.startup_over() is False
