"""The event loop of `kopf run`: uvloop when installed, unless turned off."""
import asyncio
import importlib.util

import pytest

from kopf._kits import loops

HAS_UVLOOP = importlib.util.find_spec('uvloop') is not None


def test_no_uvloop_is_asyncios_own_loop() -> None:
    assert loops.loop_factory(False) is None


@pytest.mark.skipif(not HAS_UVLOOP, reason='uvloop is not installed')
def test_uvloop_when_installed_or_asked_for() -> None:
    import uvloop
    assert loops.loop_factory(None) is uvloop.new_event_loop
    assert loops.loop_factory(True) is uvloop.new_event_loop


def test_uvloop_asked_for_but_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, 'find_spec', lambda name: None)
    assert loops.loop_factory(None) is None
    with pytest.raises(loops.LoopError, match=r'pip install "kopf\[uvloop\]"'):
        loops.loop_factory(True)


@pytest.mark.parametrize('wanted', [False, None])
def test_run_runs_to_the_end_in_the_chosen_loop(wanted: bool | None) -> None:
    seen: list[str] = []

    async def main() -> None:
        seen.append(type(asyncio.get_running_loop()).__module__)

    loops.run(main(), loops.loop_factory(wanted))
    expected = 'uvloop' if wanted is None and HAS_UVLOOP else 'asyncio.unix_events'
    assert seen == [expected]


def test_kopf_run_uvloop_without_uvloop_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from kopf import cli
    monkeypatch.setattr(importlib.util, 'find_spec', lambda name: None)
    result = CliRunner().invoke(cli.main, ['run', '-A', '--uvloop', 'nonexistent.py'])
    assert result.exit_code == 2
    assert '--uvloop needs uvloop: pip install "kopf[uvloop]" (or run with --no-uvloop).' in result.stderr
